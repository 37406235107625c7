//! Crate folders: built with cargo for `wasm32-wasip2`, incrementally, in two steps in the
//! OS sandbox (`command.rs`). `cargo fetch` downloads the dependencies with the network on
//! and the cargo home writable, and runs none of the folder's code: it runs from `/`, so the
//! folder's `.cargo/config.toml` (which may name programs) is not read, and no wrapper runs.
//! `cargo build --offline` then runs the build scripts and proc macros with no network, the
//! cargo home and the toolchain read-only (its registry token hidden), the workspace and its
//! local packages read-only and the target folder writable.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use super::Progress;
use super::command::{self, BuildSandbox, Step};
use crate::config::{CrateLayout, on_path};
use crate::plugins::error::LoadError;
use crate::sandbox::Stream;
use crate::unpoisoned::LockUnpoisoned as _;

const TARGET: &str = "wasm32-wasip2";

/// Builds the crate at `dir` in release mode for `wasm32-wasip2` and returns its `.wasm`,
/// reporting each crate cargo compiles to `progress`. Incremental: an unchanged crate costs
/// one cargo fetch and one build that compile nothing (and report nothing).
pub fn build_crate(dir: &Path, sandbox: &BuildSandbox, progress: Progress<'_>) -> Result<PathBuf, LoadError> {
    let dir = &std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let fail = |detail: String| LoadError::Build { path: dir.to_path_buf(), detail };
    let manifest = dir.join("Cargo.toml");
    let package_name = package_name(&manifest).map_err(&fail)?;
    let cargo = Cargo::prepare(dir).map_err(&fail)?;
    tracing::info!(crate_dir = %dir.display(), "building plugin for {TARGET}");
    cargo.fetch(sandbox, &manifest, progress).map_err(&fail)?;
    let built = cargo.build(sandbox, &manifest, &[], progress).map_err(&fail)?;
    let artifact = built.iter().find_map(|line| wasm_artifact(line, &package_name));
    artifact.ok_or_else(|| {
        fail(format!("cargo built `{package_name}` but produced no .wasm: is its crate-type cdylib?"))
    })
}

/// Builds every crate of the cargo workspace at `dir` for `wasm32-wasip2` and returns the
/// `.wasm` of each, by package name (with `-`). One cargo run builds them in parallel.
pub fn build_workspace(
    dir: &Path,
    sandbox: &BuildSandbox,
) -> Result<std::collections::BTreeMap<String, PathBuf>, LoadError> {
    let dir = &std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let fail = |detail: String| LoadError::Build { path: dir.to_path_buf(), detail };
    let manifest = dir.join("Cargo.toml");
    let cargo = Cargo::prepare(dir).map_err(&fail)?;
    cargo.fetch(sandbox, &manifest, &|_| {}).map_err(&fail)?;
    let built = cargo.build(sandbox, &manifest, &["--workspace"], &|_| {}).map_err(&fail)?;
    let mut artifacts = std::collections::BTreeMap::new();
    for line in &built {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        let Some(name) = message["target"]["name"].as_str() else { continue };
        if let Some(path) = wasm_artifact(line, name) {
            artifacts.insert(name.replace('_', "-"), path);
        }
    }
    Ok(artifacts)
}

/// How the host runs cargo for one crate folder, and what the build sees.
struct Cargo {
    dir: PathBuf,
    /// `$CARGO` (the cargo that runs the host's own build or tests), else `cargo` on `PATH`.
    program: PathBuf,
    home: PathBuf,
    rustup_home: Option<PathBuf>,
    /// The toolchain rustup picks for the folder, named to cargo's rustup proxies in the
    /// sandbox, which may not read the folder's `rust-toolchain.toml` from where they run.
    toolchain: Option<String>,
    layout: CrateLayout,
}

impl Cargo {
    fn prepare(dir: &Path) -> Result<Self, String> {
        ensure_target(dir)?;
        let program = std::env::var_os("CARGO").map(PathBuf::from).or_else(|| on_path("cargo")).ok_or(
            "cargo is not installed, or not on PATH: a crate folder needs a Rust toolchain to build",
        )?;
        let home_folder = |variable: &str, default: &str| {
            std::env::var_os(variable)
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(default)))
        };
        let home = home_folder("CARGO_HOME", ".cargo").ok_or("neither CARGO_HOME nor HOME is set")?;
        let layout = CrateLayout::of(dir);
        std::fs::create_dir_all(&layout.target_dir)
            .map_err(|error| format!("cannot make {}: {error}", layout.target_dir.display()))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            program,
            home,
            rustup_home: home_folder("RUSTUP_HOME", ".rustup").filter(|folder| folder.is_dir()),
            toolchain: std::env::var("RUSTUP_TOOLCHAIN").ok().or_else(|| active_toolchain(dir)),
            layout,
        })
    }

    /// A cargo step started in `workdir`: the toolchain, the cargo home and the crate's
    /// packages read-only, its target folder writable.
    fn step(&self, workdir: &Path) -> Step {
        let mut step = Step::new(&self.program, workdir)
            .env("CARGO_HOME", &self.home)
            .env("CARGO_TARGET_DIR", &self.layout.target_dir)
            .on_path(&self.home.join("bin"))
            .read_only(&self.home)
            .hide(&self.home.join("credentials.toml"))
            .hide(&self.home.join("credentials"))
            .writable(&self.layout.target_dir);
        if let Some(rustup_home) = &self.rustup_home {
            step = step.env("RUSTUP_HOME", rustup_home).read_only(rustup_home);
        }
        if let Some(toolchain) = &self.toolchain {
            step = step.env("RUSTUP_TOOLCHAIN", toolchain);
        }
        if let Some(bin) = self.program.parent() {
            step = step.on_path(bin);
            // A toolchain installed outside rustup's and the system's folders.
            if let Some(prefix) = bin.parent().filter(|prefix| !prefix.starts_with("/usr")) {
                step = step.read_only(prefix);
            }
        }
        for package in self.layout.packages.iter().chain(&self.layout.workspace_root) {
            step = step.read_only(package);
            if let Some(repository) = repository(package) {
                step = step.read_only(&repository);
            }
        }
        step.read_only(&self.dir)
    }

    /// `cargo fetch`: the network on, the cargo home and the workspace (its lock file)
    /// writable, none of the folder's code or settings in play.
    fn fetch(&self, sandbox: &BuildSandbox, manifest: &Path, progress: Progress<'_>) -> Result<(), String> {
        let mut step = self
            .step(Path::new("/"))
            .fetching()
            .writable(&self.home)
            // The host's own platform too: a proc macro's dependencies (pest's stack guard,
            // say) run at build time, and `--target` alone leaves them out of the fetch.
            .args(["fetch", "--target", TARGET, "--target", "host-tuple", "--manifest-path"])
            .arg(manifest)
            .env("CARGO_BUILD_RUSTC_WRAPPER", "")
            .env("CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER", "");
        if let Some(root) = &self.layout.workspace_root {
            step = step.writable(root);
        }
        let reported = |line: &str| line.trim_start().starts_with("Downloaded");
        command::run(sandbox, step, "cargo fetch (the plugin's dependencies)", reported, progress).map(|_| ())
    }

    /// `cargo build --offline` with `extra` arguments, in the folder, the network off;
    /// the JSON messages it printed. Each crate it compiles is reported to `progress`.
    fn build(
        &self,
        sandbox: &BuildSandbox,
        manifest: &Path,
        extra: &[&str],
        progress: Progress<'_>,
    ) -> Result<Vec<String>, String> {
        let step = self
            .step(&self.dir)
            .args([
                "build",
                "--offline",
                "--release",
                "--target",
                TARGET,
                "--message-format=json-render-diagnostics",
            ])
            .args(extra)
            .arg("--manifest-path")
            .arg(manifest);
        let messages = Mutex::new(Vec::new());
        let stderr = Mutex::new(Vec::new());
        let status = command::run_lines(sandbox, step, "cargo build", &|stream, line| match stream {
            Stream::Stdout => messages.lock_unpoisoned().push(line.to_owned()),
            Stream::Stderr => {
                if line.trim_start().starts_with("Compiling") {
                    progress(line.trim());
                }
                stderr.lock_unpoisoned().push(line.to_owned());
            }
        })?;
        if status != Some(0) {
            // The compiler's messages, without the progress lines around them.
            let stderr = stderr.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
            let errors =
                stderr.iter().map(String::as_str).filter(|line| !line.trim_start().starts_with("Compiling"));
            return Err(command::failure("cargo build", status, errors));
        }
        Ok(messages.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }
}

/// The git repository that holds `package`, which its build may read (the plugin SDK's
/// bindings read the contract two folders up) — never a home folder or one above it, which
/// holds far more than code.
fn repository(package: &Path) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").and_then(|home| std::fs::canonicalize(home).ok());
    let package = std::fs::canonicalize(package).ok()?;
    let root = package.ancestors().find(|folder| folder.join(".git").exists())?;
    let too_wide = root == Path::new("/") || home.as_deref().is_some_and(|home| home.starts_with(root));
    (!too_wide).then(|| root.to_path_buf())
}

/// The toolchain rustup uses in `dir` (its `rust-toolchain.toml`, an override, the default).
fn active_toolchain(dir: &Path) -> Option<String> {
    let output = Command::new("rustup").current_dir(dir).args(["show", "active-toolchain"]).output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace().next().filter(|_| output.status.success()).map(str::to_owned)
}

/// Installs the wasm target when rustup knows the toolchain but not the target yet.
fn ensure_target(dir: &Path) -> Result<(), String> {
    let installed = Command::new("rustup").current_dir(dir).args(["target", "list", "--installed"]).output();
    match installed {
        Ok(output) if String::from_utf8_lossy(&output.stdout).lines().any(|t| t.trim() == TARGET) => Ok(()),
        Ok(_) => {
            tracing::info!("installing the {TARGET} target with rustup");
            let status = Command::new("rustup")
                .current_dir(dir)
                .args(["target", "add", TARGET])
                .status()
                .map_err(|error| format!("cannot run rustup: {error}"))?;
            if status.success() { Ok(()) } else { Err(format!("`rustup target add {TARGET}` failed")) }
        }
        // No rustup: the toolchain is managed some other way; let cargo report what is missing.
        Err(_) => Ok(()),
    }
}

fn package_name(manifest: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|error| format!("cannot read {}: {error}", manifest.display()))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|error| format!("{}: {error}", manifest.display()))?;
    table
        .get("package")
        .and_then(|package| package.get("name"))
        .and_then(|name| name.as_str())
        .map(str::to_owned)
        .ok_or_else(|| format!("{} has no [package] name", manifest.display()))
}

/// The `.wasm` path in a cargo `compiler-artifact` message for `package`, if that is one.
fn wasm_artifact(line: &str, package: &str) -> Option<PathBuf> {
    let message: serde_json::Value = serde_json::from_str(line).ok()?;
    if message["reason"] != "compiler-artifact"
        || message["target"]["name"].as_str()?.replace('_', "-") != package.replace('_', "-")
    {
        return None;
    }
    message["filenames"]
        .as_array()?
        .iter()
        .filter_map(|name| name.as_str())
        .find(|name| name.ends_with(".wasm"))
        .map(PathBuf::from)
}
