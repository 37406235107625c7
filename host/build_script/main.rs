//! The host's build script, two jobs: the stock plugins built and embedded (`builtins.rs`),
//! and the Rust guest SDK carried as a crate of its own for `agent-host plugin new`
//! (`rust_sdk.rs`). A failure stops the build with a line saying which and why.

mod builtins;
mod rust_sdk;

use std::path::{Path, PathBuf};

/// Where the build reads and writes.
pub struct Paths {
    /// The repository.
    pub root: PathBuf,
    /// The plugins workspace, `plugins/`, canonical (as the host names a folder it builds).
    pub plugins: PathBuf,
    /// `$OUT_DIR`.
    pub out: PathBuf,
}

fn main() {
    let done = paths().and_then(|paths| {
        builtins::embed(&paths)
            .map_err(|error| format!("building the stock plugins the binary carries failed: {error}"))?;
        rust_sdk::embed(&paths).map_err(|error| format!("carrying the Rust plugin SDK failed: {error}"))
    });
    if let Err(error) = done {
        // Cargo shows a failed build script's stderr; this is its last line.
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn paths() -> Result<Paths, String> {
    let env =
        |name: &str| std::env::var_os(name).map(PathBuf::from).ok_or(format!("cargo did not set {name}"));
    let host = env("CARGO_MANIFEST_DIR")?;
    let root = host.parent().ok_or("host/ sits in the repository")?.to_path_buf();
    let plugins = root.join("plugins");
    let plugins =
        std::fs::canonicalize(&plugins).map_err(|error| format!("{}: {error}", plugins.display()))?;
    Ok(Paths { root, plugins, out: env("OUT_DIR")? })
}

pub fn read_toml(path: &Path) -> Result<toml::Table, String> {
    let text =
        std::fs::read_to_string(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    text.parse::<toml::Table>().map_err(|error| format!("{}: {error}", path.display()))
}
