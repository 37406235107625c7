//! The stock plugins (`plugins/stock.toml`), built for `wasm32-wasip2` and embedded:
//! `$OUT_DIR/builtins.rs` holds `CARRIED`, each plugin's folder name and its component's bytes.
//!
//! Each folder is built exactly as the host builds a plugin crate folder
//! (`src/plugins/source/cargo.rs`): `cargo fetch`, then `cargo build --offline --release
//! --target wasm32-wasip2` on the folder's manifest, from the folder, into the plugins
//! workspace's own target folder, with no flags or wrappers of this build. So the host's
//! later build of `plugins/todo` (the test suite's, a developer's `path = "plugins/todo"`)
//! finds it fresh and compiles nothing, and a plugin is never built twice.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{Paths, read_toml};

const TARGET: &str = "wasm32-wasip2";

/// Builds the stock plugins and writes `$OUT_DIR/builtins.rs`.
pub fn embed(Paths { root, plugins, out }: &Paths) -> Result<(), String> {
    let stock = stock_folders(plugins)?;
    rerun_if_changed(root, plugins, &stock)?;
    ensure_target(plugins)?;
    let cargo = Cargo::new(plugins)?;
    cargo.fetch(&plugins.join("Cargo.toml"))?;
    let mut entries = String::new();
    for name in &stock {
        let folder = plugins.join(name);
        cargo.build(&folder)?;
        let package = package_name(&folder)?;
        let built = plugins
            .join("target")
            .join(TARGET)
            .join("release")
            .join(format!("{}.wasm", package.replace('-', "_")));
        // A copy of its own: the host's later builds of the folder may write the original
        // anew, which must not make this crate compile again.
        let carried = out.join(format!("{name}.wasm"));
        std::fs::copy(&built, &carried)
            .map_err(|error| format!("cannot copy {} to {}: {error}", built.display(), carried.display()))?;
        entries.push_str(&format!("    ({name:?}, include_bytes!({:?})),\n", carried.display().to_string()));
    }
    let code = format!(
        "/// The stock plugins this binary carries: each folder's name under `plugins/` and its\n\
         /// component, in `plugins/stock.toml`'s order.\n\
         pub(super) const CARRIED: &[(&str, &[u8])] = &[\n{entries}];\n"
    );
    std::fs::write(out.join("builtins.rs"), code)
        .map_err(|error| format!("cannot write builtins.rs: {error}"))
}

/// The folder names `plugins/stock.toml` lists, each a crate folder of the workspace.
fn stock_folders(plugins: &Path) -> Result<Vec<String>, String> {
    let list = plugins.join("stock.toml");
    let table = read_toml(&list)?;
    let names = table
        .get("plugins")
        .and_then(|names| names.as_array())
        .ok_or_else(|| format!("{} has no `plugins = [...]` list of folder names", list.display()))?;
    names
        .iter()
        .map(|name| {
            let name =
                name.as_str().ok_or_else(|| format!("{}: `plugins` holds a non-string", list.display()))?;
            if !plugins.join(name).join("Cargo.toml").is_file() {
                return Err(format!(
                    "{} names `{name}`, which is no crate folder in {}",
                    list.display(),
                    plugins.display()
                ));
            }
            Ok(name.to_owned())
        })
        .collect()
}

fn package_name(folder: &Path) -> Result<String, String> {
    let manifest = folder.join("Cargo.toml");
    let table = read_toml(&manifest)?;
    table
        .get("package")
        .and_then(|package| package.get("name"))
        .and_then(|name| name.as_str())
        .map(str::to_owned)
        .ok_or_else(|| format!("{} has no [package] name", manifest.display()))
}

/// What the components are built from: each stock folder's sources and manifest, the
/// libraries of the workspace they use (`[workspace.dependencies]` with a `path`: the SDK,
/// the completion loop...), the workspace's manifest and lock file, and the contract. Never
/// the target folder, which the build writes: an unchanged tree does not run this again.
fn rerun_if_changed(root: &Path, plugins: &Path, stock: &[String]) -> Result<(), String> {
    let mut inputs = vec![
        plugins.join("stock.toml"),
        plugins.join("Cargo.toml"),
        plugins.join("Cargo.lock"),
        root.join("wit"),
    ];
    let workspace = read_toml(&plugins.join("Cargo.toml"))?;
    let libraries = workspace
        .get("workspace")
        .and_then(|workspace| workspace.get("dependencies"))
        .and_then(|dependencies| dependencies.as_table())
        .into_iter()
        .flatten()
        .filter_map(|(_, dependency)| dependency.get("path").and_then(|path| path.as_str()));
    let folders = stock.iter().map(String::as_str).chain(libraries);
    for folder in folders {
        inputs.push(plugins.join(folder).join("Cargo.toml"));
        inputs.push(plugins.join(folder).join("src"));
    }
    for input in inputs {
        println!("cargo:rerun-if-changed={}", input.display());
    }
    Ok(())
}

/// Installs the wasm target when rustup knows the toolchain but not the target yet, as
/// `scripts/test.sh` and the host itself do.
fn ensure_target(plugins: &Path) -> Result<(), String> {
    let installed =
        Command::new("rustup").current_dir(plugins).args(["target", "list", "--installed"]).output();
    match installed {
        Ok(output) if String::from_utf8_lossy(&output.stdout).lines().any(|line| line.trim() == TARGET) => {
            Ok(())
        }
        Ok(_) => {
            let status = Command::new("rustup")
                .current_dir(plugins)
                .args(["target", "add", TARGET])
                .stdout(Stdio::from(std::io::stderr()))
                .status()
                .map_err(|error| format!("cannot run rustup: {error}"))?;
            if status.success() {
                Ok(())
            } else {
                Err(format!("`rustup target add {TARGET}` failed; install the target and build again"))
            }
        }
        // No rustup: the toolchain is managed some other way; cargo says what is missing.
        Err(_) => Ok(()),
    }
}

/// Cargo as the host runs it for a plugin crate folder: the same program, cargo and rustup
/// homes and toolchain, the workspace's own target folder, and none of this build's
/// environment (its target folder, target, flags, wrappers, profile), which would make
/// the artifacts differ from the host's and be built twice.
struct Cargo {
    program: PathBuf,
    home: PathBuf,
    rustup_home: Option<PathBuf>,
    toolchain: Option<String>,
    target_dir: PathBuf,
}

impl Cargo {
    fn new(plugins: &Path) -> Result<Self, String> {
        let home_folder = |variable: &str, default: &str| {
            std::env::var_os(variable)
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(default)))
        };
        Ok(Self {
            program: std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from),
            home: home_folder("CARGO_HOME", ".cargo").ok_or("neither CARGO_HOME nor HOME is set")?,
            rustup_home: home_folder("RUSTUP_HOME", ".rustup").filter(|folder| folder.is_dir()),
            toolchain: std::env::var("RUSTUP_TOOLCHAIN").ok().or_else(|| active_toolchain(plugins)),
            target_dir: plugins.join("target"),
        })
    }

    /// A cargo command started in `workdir` with a clean environment: only what the host's
    /// build step sets (`command.rs`), the `PATH` and `HOME` to find the toolchain, and the
    /// outer cargo's jobserver, so the nested build shares its jobs rather than doubling them.
    fn command(&self, workdir: &Path) -> Command {
        let mut command = Command::new(&self.program);
        command
            .current_dir(workdir)
            .env_clear()
            .env("CARGO_HOME", &self.home)
            .env("CARGO_TARGET_DIR", &self.target_dir)
            .env("LANG", "C.UTF-8")
            // Its progress and errors go where cargo shows a build script's output; stdout
            // is read by cargo as this script's instructions.
            .stdout(Stdio::from(std::io::stderr()));
        for variable in ["PATH", "HOME", "CARGO_MAKEFLAGS"] {
            if let Some(value) = std::env::var_os(variable) {
                command.env(variable, value);
            }
        }
        if let Some(rustup_home) = &self.rustup_home {
            command.env("RUSTUP_HOME", rustup_home);
        }
        if let Some(toolchain) = &self.toolchain {
            command.env("RUSTUP_TOOLCHAIN", toolchain);
        }
        command
    }

    /// `cargo fetch` of the whole workspace's lock file, as the host fetches before a build.
    fn fetch(&self, manifest: &Path) -> Result<(), String> {
        let mut command = self.command(Path::new("/"));
        command
            .args(["fetch", "--target", TARGET, "--target", "host-tuple", "--manifest-path"])
            .arg(manifest)
            .env("CARGO_BUILD_RUSTC_WRAPPER", "")
            .env("CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER", "");
        run_step(command, "cargo fetch (the stock plugins' dependencies)")
    }

    /// `cargo build --offline --release --target wasm32-wasip2` of the crate folder `folder`.
    fn build(&self, folder: &Path) -> Result<(), String> {
        let mut command = self.command(folder);
        command
            .args(["build", "--offline", "--release", "--target", TARGET, "--manifest-path"])
            .arg(folder.join("Cargo.toml"));
        run_step(command, &format!("cargo build of {}", folder.display()))
    }
}

fn run_step(mut command: Command, what: &str) -> Result<(), String> {
    let status = command.status().map_err(|error| format!("{what}: cannot run cargo: {error}"))?;
    if status.success() { Ok(()) } else { Err(format!("{what} failed ({status}); its errors are above")) }
}

/// The toolchain rustup uses in `dir` (its `rust-toolchain.toml`, an override, the default).
fn active_toolchain(dir: &Path) -> Option<String> {
    let output = Command::new("rustup").current_dir(dir).args(["show", "active-toolchain"]).output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace().next().filter(|_| output.status.success()).map(str::to_owned)
}
