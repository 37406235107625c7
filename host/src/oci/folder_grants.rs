//! The grants a plugin folder declares in its own manifest, beside its name and version:
//! `[package.metadata.agent-host.grants]` in a crate's Cargo.toml,
//! `[tool.agent-host.grants]` in a Python folder's pyproject.toml, `"agent-host": {"grants":
//! {...}}` in a TypeScript folder's package.json.

use std::path::Path;

use super::declared_grants::DeclaredGrants;
use crate::config::PluginSource;

/// What the folder `folder` declares (nothing, for a `.wasm` or a folder that declares none);
/// `Err` names the file and what in it is wrong.
pub fn declared_in_folder(folder: &Path) -> Result<DeclaredGrants, String> {
    let (file, table) = match PluginSource::of(folder) {
        Some(PluginSource::Crate) => {
            ("Cargo.toml", ["package", "metadata", "agent-host", "grants"].as_slice())
        }
        Some(PluginSource::Python) => ("pyproject.toml", ["tool", "agent-host", "grants"].as_slice()),
        Some(PluginSource::TypeScript) => ("package.json", ["agent-host", "grants"].as_slice()),
        Some(PluginSource::Component) | None => return Ok(DeclaredGrants::default()),
    };
    let path = folder.join(file);
    let text = std::fs::read_to_string(&path).map_err(|error| format!("{}: {error}", path.display()))?;
    let document: serde_json::Value = if file.ends_with(".json") {
        serde_json::from_str(&text).map_err(|error| format!("{}: {error}", path.display()))?
    } else {
        let value: toml::Value =
            toml::from_str(&text).map_err(|error| format!("{}: {error}", path.display()))?;
        serde_json::to_value(value).map_err(|error| format!("{}: {error}", path.display()))?
    };
    let Some(grants) = table.iter().try_fold(&document, |value, key| value.get(key)) else {
        return Ok(DeclaredGrants::default());
    };
    serde_json::from_value(grants.clone())
        .map_err(|error| format!("{}: `{}`: {error}", path.display(), table.join(".")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_language_declares_grants_in_its_own_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let rust = dir.path().join("rs");
        std::fs::create_dir_all(&rust).unwrap();
        std::fs::write(
            rust.join("Cargo.toml"),
            "[package]\nname = \"x\"\n[package.metadata.agent-host.grants]\nprocess = true\n\
             dirs = { \"/workspace\" = { write = true } }\n",
        )
        .unwrap();
        let declared = declared_in_folder(&rust).unwrap();
        assert!(declared.process && declared.dirs["/workspace"].write);

        let python = dir.path().join("py");
        std::fs::create_dir_all(&python).unwrap();
        std::fs::write(python.join("pyproject.toml"), "[tool.agent-host.grants]\nread_state = [\"lamp\"]\n")
            .unwrap();
        assert_eq!(declared_in_folder(&python).unwrap().read_state, ["lamp"]);

        let typescript = dir.path().join("ts");
        std::fs::create_dir_all(&typescript).unwrap();
        std::fs::write(typescript.join("package.json"), r#"{"agent-host": {"grants": {"model": true}}}"#)
            .unwrap();
        assert!(declared_in_folder(&typescript).unwrap().model);

        std::fs::write(typescript.join("package.json"), r#"{"agent-host": {"grants": {"modle": true}}}"#)
            .unwrap();
        let error = declared_in_folder(&typescript).unwrap_err();
        assert!(error.contains("package.json") && error.contains("modle"), "{error}");
    }
}
