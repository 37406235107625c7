//! The guest SDKs and the contract, carried in the binary and written out once per host
//! version for builds of Python and TypeScript folders to import: a plugin folder needs
//! nothing but its own files. The Rust SDK likewise, for a Rust plugin folder made by
//! `agent-host plugin new` to depend on.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

/// (path under the SDK folder, text) for every file a build reads.
const FILES: &[(&str, &str)] = &[
    ("wit/plugin.wit", include_str!("../../../../wit/plugin.wit")),
    (
        "python/agent_host_sdk/__init__.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/__init__.py"),
    ),
    (
        "python/agent_host_sdk/bindings.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/bindings.py"),
    ),
    (
        "python/agent_host_sdk/component.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/component.py"),
    ),
    (
        "python/agent_host_sdk/contribution.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/contribution.py"),
    ),
    (
        "python/agent_host_sdk/convert.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/convert.py"),
    ),
    (
        "python/agent_host_sdk/errors.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/errors.py"),
    ),
    (
        "python/agent_host_sdk/guest.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/guest.py"),
    ),
    ("python/agent_host_sdk/host.py", include_str!("../../../../plugins/sdk-python/agent_host_sdk/host.py")),
    (
        "python/agent_host_sdk/imports.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/imports.py"),
    ),
    (
        "python/agent_host_sdk/manifest.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/manifest.py"),
    ),
    (
        "python/agent_host_sdk/outcomes.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/outcomes.py"),
    ),
    (
        "python/agent_host_sdk/plugin.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/plugin.py"),
    ),
    (
        "python/agent_host_sdk/readings.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/readings.py"),
    ),
    (
        "python/agent_host_sdk/schema.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/schema.py"),
    ),
    (
        "python/agent_host_sdk/types.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/types.py"),
    ),
    (
        "python/agent_host_sdk/verdicts.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/verdicts.py"),
    ),
    ("python/agent_host_sdk/view.py", include_str!("../../../../plugins/sdk-python/agent_host_sdk/view.py")),
    (
        "python/agent_host_sdk/testing/__init__.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/testing/__init__.py"),
    ),
    (
        "python/agent_host_sdk/testing/harness.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/testing/harness.py"),
    ),
    (
        "python/agent_host_sdk/testing/session.py",
        include_str!("../../../../plugins/sdk-python/agent_host_sdk/testing/session.py"),
    ),
    ("typescript/bindings.ts", include_str!("../../../../plugins/sdk-typescript/bindings.ts")),
    ("typescript/contribution.ts", include_str!("../../../../plugins/sdk-typescript/contribution.ts")),
    ("typescript/convert.ts", include_str!("../../../../plugins/sdk-typescript/convert.ts")),
    ("typescript/errors.ts", include_str!("../../../../plugins/sdk-typescript/errors.ts")),
    ("typescript/export.ts", include_str!("../../../../plugins/sdk-typescript/export.ts")),
    ("typescript/guest.ts", include_str!("../../../../plugins/sdk-typescript/guest.ts")),
    ("typescript/host.ts", include_str!("../../../../plugins/sdk-typescript/host.ts")),
    ("typescript/imports.ts", include_str!("../../../../plugins/sdk-typescript/imports.ts")),
    ("typescript/index.ts", include_str!("../../../../plugins/sdk-typescript/index.ts")),
    ("typescript/judge.ts", include_str!("../../../../plugins/sdk-typescript/judge.ts")),
    ("typescript/outcomes.ts", include_str!("../../../../plugins/sdk-typescript/outcomes.ts")),
    ("typescript/plugin.ts", include_str!("../../../../plugins/sdk-typescript/plugin.ts")),
    ("typescript/readings.ts", include_str!("../../../../plugins/sdk-typescript/readings.ts")),
    ("typescript/schema.ts", include_str!("../../../../plugins/sdk-typescript/schema.ts")),
    ("typescript/types.ts", include_str!("../../../../plugins/sdk-typescript/types.ts")),
    ("typescript/view.ts", include_str!("../../../../plugins/sdk-typescript/view.ts")),
    ("typescript/testing/harness.ts", include_str!("../../../../plugins/sdk-typescript/testing/harness.ts")),
    ("typescript/testing/index.ts", include_str!("../../../../plugins/sdk-typescript/testing/index.ts")),
    ("typescript/testing/session.ts", include_str!("../../../../plugins/sdk-typescript/testing/session.ts")),
    ("typescript/package.json", include_str!("../../../../plugins/sdk-typescript/package.json")),
    (
        "typescript/wit/judging-plugin.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/judging-plugin.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-agents.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-agents.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-compactor.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-compactor.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-edits.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-edits.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-events.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-events.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-guest.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-guest.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-history.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-history.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-hook-filter.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-hook-filter.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-judge.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-judge.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-log.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-log.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-meter.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-meter.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-model.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-model.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-process.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-process.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-reuse.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-reuse.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-state.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-state.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-tools.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-tools.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-types.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-types.d.ts"),
    ),
    (
        "typescript/wit/interfaces/agent-host-plugin-viewer.d.ts",
        include_str!("../../../../plugins/sdk-typescript/wit/interfaces/agent-host-plugin-viewer.d.ts"),
    ),
];

/// The SDK files on disk.
pub(super) struct Sdk {
    pub root: PathBuf,
    /// A digest of every file: part of every build's stamp, so a new SDK rebuilds.
    pub digest: String,
}

impl Sdk {
    pub fn wit(&self) -> PathBuf {
        self.root.join("wit").join("plugin.wit")
    }

    pub fn python(&self) -> PathBuf {
        self.root.join("python")
    }

    pub fn typescript(&self) -> PathBuf {
        self.root.join("typescript")
    }
}

/// The SDK folder under the toolchains folder, written the first time this host version
/// builds a plugin folder.
pub(super) fn unpack() -> Result<Sdk, String> {
    let (root, digest) = write_once("sdk", FILES)?;
    Ok(Sdk { root, digest })
}

include!(concat!(env!("OUT_DIR"), "/rust_sdk.rs"));

/// The Rust guest SDK as a crate of its own (the build script's copy of `plugins/sdk`, with
/// the contract inside it), written under the toolchains folder once per host version: the
/// folder a new Rust plugin's `Cargo.toml` points at, wherever the plugin lives.
pub fn rust_sdk() -> Result<PathBuf, String> {
    write_once("sdk-rust", RUST_SDK_FILES).map(|(root, _)| root)
}

/// `files` under `<toolchains>/<kind>/<digest of the files>/`, written the first time (into a
/// temporary folder moved into place, so a host writing beside this one never reads half of
/// it); the folder and the digest.
fn write_once(kind: &str, files: &[(&str, &str)]) -> Result<(PathBuf, String), String> {
    let mut hasher = Sha256::new();
    for (path, text) in files {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.update([0]);
    }
    let digest = hex::encode(&hasher.finalize()[..8]);
    let parent = super::toolchain::home().join(kind);
    let root = parent.join(&digest);
    if root.is_dir() {
        return Ok((root, digest));
    }
    let fail =
        |error: std::io::Error| format!("cannot write the plugin SDK under {}: {error}", parent.display());
    std::fs::create_dir_all(&parent).map_err(fail)?;
    let staging = tempfile::tempdir_in(&parent).map_err(fail)?;
    for (path, text) in files {
        let file = staging.path().join(path);
        std::fs::create_dir_all(file.parent().expect("every SDK file is in a folder")).map_err(fail)?;
        std::fs::write(&file, text).map_err(fail)?;
    }
    let staged = staging.keep();
    match std::fs::rename(&staged, &root) {
        Ok(()) => {}
        // Another host put the same files there first.
        Err(_) if root.is_dir() => {
            let _ = std::fs::remove_dir_all(&staged);
        }
        Err(error) => return Err(fail(error)),
    }
    Ok((root, digest))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every file of the two SDKs a build or a plugin's unit tests read is carried, so none is
    /// left behind when a file is added (a new contract interface's types, say).
    #[test]
    fn every_sdk_file_is_carried() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the repository");
        let mut on_disk = Vec::new();
        for (sdk, carried_as, endings) in [
            ("plugins/sdk-python/agent_host_sdk", "python/agent_host_sdk", &[".py"][..]),
            // package.json says the SDK's modules have no side effects, for tests' bundles.
            ("plugins/sdk-typescript", "typescript", &[".ts", "/package.json"][..]),
        ] {
            collect(&root.join(sdk), &root.join(sdk), carried_as, endings, &mut on_disk);
        }
        on_disk.sort();
        let mut carried: Vec<String> = super::FILES
            .iter()
            .map(|(path, _)| (*path).to_owned())
            .filter(|path| !path.starts_with("wit/"))
            .collect();
        carried.sort();
        assert_eq!(carried, on_disk);
    }

    fn collect(root: &Path, dir: &Path, carried_as: &str, endings: &[&str], found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("an SDK folder") {
            let path = entry.expect("an entry").path();
            let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
            if path.is_dir() {
                // The SDKs' own tests are not part of a plugin's build.
                if name != "tests" && name != "__pycache__" {
                    collect(root, &path, carried_as, endings, found);
                }
            } else {
                let relative = path.strip_prefix(root).expect("under the SDK").to_string_lossy().into_owned();
                let carried = format!("{carried_as}/{relative}");
                if endings.iter().any(|ending| carried.ends_with(ending)) {
                    found.push(carried);
                }
            }
        }
    }
}
