//! Python plugin folders: `pyproject.toml` (its `[project] name`) and a module that defines
//! `plugin` with the Python SDK (`plugin.py`, or `[tool.agent-host] module`), built with
//! componentize-py against the contract's `viewing-plugin` world.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Progress, command, sdk, stamp, toolchain};
use crate::plugins::error::LoadError;

/// The module the build writes beside the plugin's: it exports the plugin the SDK's way.
const APP_MODULE: &str = "agent_host_app";

/// Builds the Python plugin folder `dir` (or reuses its last build, when nothing changed).
pub(super) fn build(dir: &Path, progress: Progress<'_>) -> Result<PathBuf, LoadError> {
    let dir = &std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let fail = |detail: String| LoadError::Build { path: dir.to_path_buf(), detail };
    let project = Project::read(dir).map_err(&fail)?;
    let toolchain = toolchain::ensure("python", progress).map_err(&fail)?;
    let sdk = sdk::unpack().map_err(&fail)?;
    let digest = stamp::digest(dir, &[&sdk.digest, &toolchain.stamp]).map_err(&fail)?;
    let output = dir.join("build");
    let component = output.join(&project.file);
    if let Some(component) = stamp::reusable(&component, &digest) {
        return Ok(component);
    }
    progress(&format!("Building {} (Python) with componentize-py", project.name));
    std::fs::create_dir_all(&output)
        .map_err(|error| fail(format!("cannot create {}: {error}", output.display())))?;
    // Each build in its own folder, so two hosts building this folder at once do not meet.
    let staging = tempfile::tempdir_in(&output)
        .map_err(|error| fail(format!("cannot write in {}: {error}", output.display())))?;
    let app = format!(
        "from agent_host_sdk import export\nfrom {module} import plugin\n\nGuest, Compactor, Viewer = export(plugin)\n",
        module = project.module
    );
    std::fs::write(staging.path().join(format!("{APP_MODULE}.py")), app)
        .map_err(|error| fail(error.to_string()))?;
    let built = staging.path().join("component.wasm");
    let mut componentize =
        Command::new(toolchain::require(&toolchain.venv_bin("componentize-py")).map_err(&fail)?);
    componentize
        .current_dir(dir)
        .arg("-d")
        .arg(sdk.wit())
        .args(["-w", "viewing-plugin", "componentize", "-p"])
        .arg(staging.path())
        .arg("-p")
        .arg(dir)
        .arg("-p")
        .arg(sdk.python())
        .arg(APP_MODULE)
        .arg("-o")
        .arg(&built)
        // The build runs the plugin's module once; its bytecode has no use in the folder.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        // componentize-py is Rust: a backtrace would bury the plugin's own Python error.
        .env("RUST_BACKTRACE", "0");
    command::run(componentize, "componentize-py", |_| false, progress).map_err(&fail)?;
    std::fs::rename(&built, &component)
        .map_err(|error| fail(format!("cannot move the component into place: {error}")))?;
    stamp::record(&component, &digest).map_err(&fail)?;
    Ok(component)
}

/// What `pyproject.toml` says of the plugin.
struct Project {
    /// The `[project] name`, which names the component file.
    name: String,
    /// The component's file name, from the name.
    file: String,
    /// The module that defines `plugin`.
    module: String,
}

impl Project {
    fn read(dir: &Path) -> Result<Self, String> {
        let manifest = dir.join("pyproject.toml");
        let text = std::fs::read_to_string(&manifest)
            .map_err(|error| format!("cannot read {}: {error}", manifest.display()))?;
        let table: toml::Table =
            toml::from_str(&text).map_err(|error| format!("{}: {error}", manifest.display()))?;
        let name = table
            .get("project")
            .and_then(|project| project.get("name"))
            .and_then(|name| name.as_str())
            .ok_or_else(|| format!("{} has no [project] name", manifest.display()))?
            .to_owned();
        let module = match table
            .get("tool")
            .and_then(|tool| tool.get("agent-host"))
            .and_then(|own| own.get("module"))
        {
            None => "plugin".to_owned(),
            Some(module) => module
                .as_str()
                .ok_or_else(|| format!("{}: [tool.agent-host] module must be a string", manifest.display()))?
                .to_owned(),
        };
        if !dir.join(format!("{module}.py")).is_file() {
            return Err(format!(
                "{} names the module `{module}`, but {module}.py is not in {}; write the plugin there \
                 (`plugin = Plugin(...)`), or name another with [tool.agent-host] module",
                manifest.display(),
                dir.display()
            ));
        }
        let file = super::component_file(&manifest, &name)?;
        Ok(Self { name, file, module })
    }
}
