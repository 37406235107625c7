//! The Rust guest SDK (`plugins/sdk`) and the contract (`wit/plugin.wit`) as one crate that
//! stands alone: `$OUT_DIR/rust_sdk.rs` holds `RUST_SDK_FILES`, (path in the crate, text),
//! which `agent-host plugin new --lang rust` writes out for a plugin folder anywhere to use.
//! Two things differ from the checkout, both because the copy has no workspace around it:
//! its manifest states what it took from `plugins/Cargo.toml` (`workspace = true`), and the
//! contract sits inside the crate (`wit/`) rather than two folders up, which a plugin's
//! build in the OS sandbox could not read.

use std::path::Path;

use super::{Paths, read_toml};

/// Where the SDK's bindings read the contract, in the checkout and in the copy.
const WIT_IN_CHECKOUT: &str = r#"path: "../../wit","#;
const WIT_IN_COPY: &str = r#"path: "wit","#;

pub fn embed(Paths { root, plugins, out }: &Paths) -> Result<(), String> {
    let sdk = plugins.join("sdk");
    let copy = out.join("rust-sdk");
    let mut files = vec![("Cargo.toml".to_owned(), standalone_manifest(plugins)?)];
    let mut sources = Vec::new();
    collect(&sdk.join("src"), &mut sources)?;
    sources.sort();
    for source in sources {
        let relative = source.strip_prefix(&sdk).map_err(|error| error.to_string())?;
        let text = read(&source)?;
        let text = if relative == Path::new("src/lib.rs") {
            if !text.contains(WIT_IN_CHECKOUT) {
                return Err(format!(
                    "{} no longer reads the contract at {WIT_IN_CHECKOUT}",
                    source.display()
                ));
            }
            text.replace(WIT_IN_CHECKOUT, WIT_IN_COPY)
        } else {
            text
        };
        files.push((relative.display().to_string(), text));
    }
    files.push(("wit/plugin.wit".to_owned(), read(&root.join("wit/plugin.wit"))?));
    let mut entries = String::new();
    for (relative, text) in &files {
        let file = copy.join(relative);
        if let Some(folder) = file.parent() {
            std::fs::create_dir_all(folder).map_err(|error| format!("{}: {error}", folder.display()))?;
        }
        std::fs::write(&file, text).map_err(|error| format!("{}: {error}", file.display()))?;
        entries.push_str(&format!("    ({relative:?}, include_str!({:?})),\n", file.display().to_string()));
    }
    let code = format!(
        "/// The Rust guest SDK as a crate of its own: (path in the crate, text).\n\
         pub(super) const RUST_SDK_FILES: &[(&str, &str)] = &[\n{entries}];\n"
    );
    std::fs::write(out.join("rust_sdk.rs"), code)
        .map_err(|error| format!("cannot write rust_sdk.rs: {error}"))
}

/// `plugins/sdk/Cargo.toml` with every `workspace = true` replaced by the workspace's value,
/// its lints left out (they are the workspace's checks, not the crate's), and a `[workspace]`
/// of its own.
fn standalone_manifest(plugins: &Path) -> Result<String, String> {
    let workspace = read_toml(&plugins.join("Cargo.toml"))?;
    let inherited = |table: &str| {
        workspace
            .get("workspace")
            .and_then(|w| w.get(table))
            .and_then(|t| t.as_table())
            .cloned()
            .unwrap_or_default()
    };
    let (package_values, dependency_values) = (inherited("package"), inherited("dependencies"));
    let mut manifest = read_toml(&plugins.join("sdk/Cargo.toml"))?;
    manifest.remove("lints");
    let from_workspace = |value: &toml::Value| value.get("workspace").and_then(|w| w.as_bool()) == Some(true);
    if let Some(package) = manifest.get_mut("package").and_then(|p| p.as_table_mut()) {
        for (key, value) in package.iter_mut() {
            if from_workspace(value) {
                *value =
                    package_values.get(key).cloned().ok_or(format!("the workspace sets no package.{key}"))?;
            }
        }
    }
    if let Some(dependencies) = manifest.get_mut("dependencies").and_then(|d| d.as_table_mut()) {
        for (name, value) in dependencies.iter_mut() {
            if from_workspace(value) {
                *value = dependency_values
                    .get(name)
                    .cloned()
                    .ok_or(format!("the workspace has no dependency {name}"))?;
            }
        }
    }
    manifest.insert("workspace".to_owned(), toml::Table::new().into());
    toml::to_string(&manifest).map_err(|error| error.to_string())
}

fn collect(folder: &Path, found: &mut Vec<std::path::PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(folder).map_err(|error| format!("{}: {error}", folder.display()))?;
    for entry in entries {
        let path = entry.map_err(|error| error.to_string())?.path();
        if path.is_dir() {
            collect(&path, found)?;
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            found.push(path);
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|error| format!("cannot read {}: {error}", path.display()))
}
