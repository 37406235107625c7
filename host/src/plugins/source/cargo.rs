//! Crate folders: built with cargo for `wasm32-wasip2`, incrementally.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::Progress;
use crate::plugins::error::LoadError;

const TARGET: &str = "wasm32-wasip2";

/// Builds the crate at `dir` in release mode for `wasm32-wasip2` and returns its `.wasm`,
/// reporting each crate cargo compiles to `progress`. Incremental: an unchanged crate costs
/// one cargo invocation that compiles nothing (and reports nothing).
pub fn build_crate(dir: &Path, progress: Progress<'_>) -> Result<PathBuf, LoadError> {
    let dir = &std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let fail = |detail: String| LoadError::Build { path: dir.to_path_buf(), detail };
    ensure_target(dir).map_err(&fail)?;
    let manifest = dir.join("Cargo.toml");
    let package_name = package_name(&manifest).map_err(&fail)?;
    tracing::info!(crate_dir = %dir.display(), "building plugin for {TARGET}");
    let mut child = cargo(dir)
        .args(["build", "--release", "--target", TARGET, "--message-format=json-render-diagnostics"])
        .arg("--manifest-path")
        .arg(&manifest)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| fail(format!("cannot run cargo: {error}")))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let (artifact, stderr) = std::thread::scope(|scope| {
        // Read stderr on its own thread (a full pipe would stall cargo), reporting progress
        // as crates compile, and keep it for the error message.
        let reader = scope.spawn(move || {
            let mut kept = Vec::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.trim_start().starts_with("Compiling") {
                    progress(line.trim());
                }
                kept.push(line);
            }
            kept
        });
        let mut artifact = None;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(path) = wasm_artifact(&line, &package_name) {
                artifact = Some(path);
            }
        }
        (artifact, reader.join().unwrap_or_default())
    });
    let status = child.wait().map_err(|error| fail(error.to_string()))?;
    if !status.success() {
        // The compiler's messages, without the progress lines around them.
        let errors: Vec<&str> = stderr
            .iter()
            .map(String::as_str)
            .filter(|line| !line.trim().is_empty() && !line.trim_start().starts_with("Compiling"))
            .collect();
        let tail = errors[errors.len().saturating_sub(30)..].join("\n");
        return Err(fail(format!("cargo build failed:\n{tail}")));
    }
    artifact.ok_or_else(|| {
        fail(format!("cargo built `{package_name}` but produced no .wasm: is its crate-type cdylib?"))
    })
}

/// Builds every crate of the cargo workspace at `dir` for `wasm32-wasip2` and returns the
/// `.wasm` of each, by package name (with `-`). One cargo run builds them in parallel.
pub fn build_workspace(dir: &Path) -> Result<std::collections::BTreeMap<String, PathBuf>, LoadError> {
    let fail = |detail: String| LoadError::Build { path: dir.to_path_buf(), detail };
    ensure_target(dir).map_err(&fail)?;
    let output = cargo(dir)
        .args([
            "build",
            "--release",
            "--workspace",
            "--target",
            TARGET,
            "--message-format=json-render-diagnostics",
        ])
        .output()
        .map_err(|error| fail(format!("cannot run cargo: {error}")))?;
    if !output.status.success() {
        return Err(fail(format!("cargo build failed:\n{}", String::from_utf8_lossy(&output.stderr))));
    }
    let mut artifacts = std::collections::BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        let Some(name) = message["target"]["name"].as_str() else { continue };
        if let Some(path) = wasm_artifact(line, name) {
            artifacts.insert(name.replace('_', "-"), path);
        }
    }
    Ok(artifacts)
}

/// A cargo command for a nested build: its own target folder (never the outer build's,
/// whose lock it would wait on) and none of the outer build's per-crate settings.
fn cargo(dir: &Path) -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.current_dir(dir);
    for variable in ["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET", "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS"] {
        command.env_remove(variable);
    }
    command
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
