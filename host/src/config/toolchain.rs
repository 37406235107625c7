//! What the host runs as the operator, which no grant may make writable: `cargo` and
//! `rustup` as the host finds them (`$CARGO`, then `PATH`), the homes they run from
//! (`CARGO_HOME`, `RUSTUP_HOME`), the interpreters and the toolchains folder that build
//! Python and TypeScript plugin folders, and for every plugin given as a crate folder, the local
//! packages its build compiles (its path dependencies and workspace members, whose build
//! scripts run as the operator), its workspace's cargo settings and the folder cargo builds
//! it into. A plugin that could write any of them would run its code as the operator at the
//! next start or reload. The same holds for what a started MCP server runs
//! (`server_code.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::Config;
use super::grants::{Sensitive, real_path};

/// Everything above that exists or is named, resolved.
pub(super) fn executed(config: &Config) -> Vec<Sensitive> {
    let mut paths = Vec::new();
    let cargo = std::env::var_os("CARGO").map(PathBuf::from).or_else(|| on_path("cargo"));
    let programs = [
        ("cargo", cargo),
        ("rustup", on_path("rustup")),
        ("bash", on_path("bash")),
        ("python3", on_path("python3")),
        ("node", on_path("node")),
    ];
    for (program, found) in programs {
        let Some(found) = found else { continue };
        let what = format!("`{program}` as the host runs it");
        // The name the host runs and the file it leads to (`cargo` is often a link to rustup).
        if let (Some(folder), Some(name)) = (found.parent(), found.file_name()) {
            paths.push(file(real_path(folder).join(name), &what));
        }
        paths.push(file(real_path(&found), &what));
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    for (variable, default) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
        let named = std::env::var_os(variable).map(PathBuf::from);
        if let Some(path) = named.or_else(|| home.as_ref().map(|home| home.join(default))) {
            paths.push(folder(
                real_path(&path),
                &format!("{variable}, the toolchain the host builds plugins with"),
            ));
        }
    }
    paths.push(folder(
        real_path(&super::toolchains_home()),
        "the toolchains folder, whose tools build Python and TypeScript plugins",
    ));
    for (index, plugin) in config.plugins.iter().enumerate() {
        let Some(dir) = plugin.local_path().map(|path| config.resolve(path)) else { continue };
        if plugin.enabled && super::PluginSource::of(&dir) == Some(super::PluginSource::Crate) {
            paths.extend(crate_paths(&dir, index));
        }
    }
    for server in config.mcp.iter().filter(|server| server.enabled) {
        let cwd = config.resolve(server.cwd.as_deref().unwrap_or(Path::new(".")));
        paths.extend(super::server_code::server_code(server, &cwd));
    }
    paths
}

/// The packages, settings and target folder of the crate at `dir` (plugin `index`'s).
fn crate_paths(dir: &Path, index: usize) -> Vec<Sensitive> {
    let build = CrateLayout::of(dir);
    let mut paths: Vec<Sensitive> = build
        .packages
        .iter()
        .map(|package| {
            folder(real_path(package), &format!("a local package plugin[{index}]'s build compiles"))
        })
        .collect();
    if let Some(root) = &build.workspace_root {
        let root = real_path(root);
        // Its manifest and lock are in the root itself, which holds the crate.
        paths.push(folder(root.join(".cargo"), &format!("cargo's settings for plugin[{index}]'s build")));
    }
    paths
        .push(folder(real_path(&build.target_dir), &format!("the folder cargo builds plugin[{index}] into")));
    paths
}

/// What a crate's build reads and writes, as cargo reports it: what the build's sandbox
/// shows it (`plugins/source/cargo.rs`), and what no grant may make writable.
#[derive(Debug, Clone)]
pub struct CrateLayout {
    /// The crate, its workspace's members and their path dependencies.
    pub packages: Vec<PathBuf>,
    pub workspace_root: Option<PathBuf>,
    /// Where cargo builds it: the build is told this folder (`CARGO_TARGET_DIR`), so what
    /// is checked here is where it writes.
    pub target_dir: PathBuf,
}

impl CrateLayout {
    /// From `cargo metadata`, or when cargo cannot say, from the crate's own `Cargo.toml`:
    /// its `path` dependencies and its `target` folder.
    pub fn of(dir: &Path) -> Self {
        Self::from_metadata(dir).unwrap_or_else(|| Self::from_manifest(dir))
    }

    /// `cargo metadata --no-deps`: it needs no registry, and names the workspace's members
    /// and each one's `path` dependencies (those of a path dependency outside the workspace
    /// are not listed). It runs natively: it reads the manifests and the folder's cargo
    /// settings (its `target-dir`), and compiles and runs nothing; wrappers are switched off.
    fn from_metadata(dir: &Path) -> Option<Self> {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut command = Command::new(cargo);
        command
            .args(["metadata", "--format-version", "1", "--no-deps", "--offline", "--manifest-path"])
            .arg(dir.join("Cargo.toml"))
            .env("CARGO_BUILD_RUSTC_WRAPPER", "")
            .env("CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER", "")
            .current_dir(dir);
        // As `plugins::source` runs cargo: its own target folder, none of an outer build's.
        for variable in ["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET", "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS"] {
            command.env_remove(variable);
        }
        let output = command.output().ok().filter(|output| output.status.success())?;
        let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
        let mut packages = Vec::new();
        for package in metadata["packages"].as_array()? {
            if let Some(manifest) = package["manifest_path"].as_str().map(Path::new) {
                packages.extend(manifest.parent().map(Path::to_path_buf));
            }
            let dependencies = package["dependencies"].as_array().into_iter().flatten();
            packages
                .extend(dependencies.filter_map(|dependency| dependency["path"].as_str()).map(PathBuf::from));
        }
        packages.sort();
        packages.dedup();
        Some(Self {
            packages,
            workspace_root: metadata["workspace_root"].as_str().map(PathBuf::from),
            target_dir: PathBuf::from(metadata["target_directory"].as_str()?),
        })
    }

    fn from_manifest(dir: &Path) -> Self {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml"))
            .ok()
            .and_then(|text| text.parse::<toml::Table>().ok())
            .unwrap_or_default();
        let mut packages = vec![dir.to_path_buf()];
        for table in ["dependencies", "dev-dependencies", "build-dependencies"] {
            let Some(dependencies) = manifest.get(table).and_then(|table| table.as_table()) else { continue };
            for dependency in dependencies.values() {
                if let Some(path) = dependency.get("path").and_then(|path| path.as_str()) {
                    packages.push(dir.join(path));
                }
            }
        }
        Self { packages, workspace_root: Some(dir.to_path_buf()), target_dir: dir.join("target") }
    }
}

/// The first `name` on `PATH`, as a shell would run it.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|folder| folder.join(name)).find(|candidate| candidate.is_file())
}

fn file(path: PathBuf, what: &str) -> Sensitive {
    Sensitive { what: format!("{what} ({})", path.display()), path, folder: false }
}

fn folder(path: PathBuf, what: &str) -> Sensitive {
    Sensitive { what: format!("{what} ({})", path.display()), path, folder: true }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_cargo_the_manifests_path_dependencies_and_target_folder_are_used() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = dir.path().join("plugin");
        std::fs::create_dir_all(&plugin).unwrap();
        std::fs::write(
            plugin.join("Cargo.toml"),
            "[package]\nname = \"p\"\n[dependencies]\nshared = { path = \"../shared\" }\nserde = \"1\"\n\
             [build-dependencies]\ngen = { path = \"gen\" }\n",
        )
        .unwrap();
        let build = CrateLayout::from_manifest(&plugin);
        assert_eq!(build.packages, [plugin.clone(), plugin.join("../shared"), plugin.join("gen")]);
        assert_eq!(build.target_dir, plugin.join("target"));
    }
}
