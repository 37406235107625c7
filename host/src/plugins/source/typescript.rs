//! TypeScript plugin folders: `package.json` (its `name`, and `main`, the module that
//! default-exports the plugin, `plugin.ts` unless it says) built in three steps: type-checked
//! with `tsc`, bundled with the SDK by `esbuild`, made a component by componentize-js against
//! the contract's `judging-plugin` world (every export: `guest`, `compactor`, `viewer` and
//! `judge`; the SDK's `spec`s say which hooks a plugin really answers).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::folder::{self, Prepared};
use super::{Progress, command, toolchain};
use crate::plugins::error::LoadError;

/// Builds the TypeScript plugin folder `dir` (or reuses its last build, when nothing changed).
pub(super) fn build(dir: &Path, progress: Progress<'_>) -> Result<PathBuf, LoadError> {
    let dir = &std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let fail = |detail: String| LoadError::Build { path: dir.to_path_buf(), detail };
    let package = Package::read(dir).map_err(&fail)?;
    let build = match folder::prepare(dir, "typescript", &package.file, progress).map_err(&fail)? {
        Prepared::Kept(component) => return Ok(component),
        Prepared::Build(build) => build,
    };
    progress(&format!("Building {} (TypeScript) with {}", package.name, package.engine.builder()));
    let sdk = build.sdk.typescript();
    let entry = build.write("entry.ts", &entry(&dir.join(&package.main))).map_err(&fail)?;
    let config = build.write("tsconfig.json", &tsconfig(&sdk)).map_err(&fail)?;

    let tool = |name: &str| toolchain::require(build.toolchain.node_bin(name)).map_err(&fail);
    let mut check = Command::new(tool("tsc")?);
    check.current_dir(dir).arg("-p").arg(&config);
    command::run(check, "tsc (the type check)", |_| false, progress).map_err(&fail)?;

    let bundle = build.staged("plugin.js");
    let mut esbuild = Command::new(tool("esbuild")?);
    esbuild
        .current_dir(dir)
        .arg(&entry)
        .args(["--bundle", "--format=esm", "--platform=neutral", "--target=es2022", "--log-level=warning"])
        .arg("--external:agent-host:*")
        .arg(format!("--alias:agent-host-sdk={}", sdk.join("index.ts").display()))
        .arg(format!("--outfile={}", bundle.display()));
    command::run(esbuild, "esbuild", |_| false, progress).map_err(&fail)?;

    let built = build.staged("component.wasm");
    let (mut componentize, step) = match package.engine {
        Engine::StarlingMonkey => {
            let mut command = Command::new(tool("componentize-js")?);
            command
                .arg(&bundle)
                .arg("--wit")
                .arg(build.sdk.wit())
                .args(["--world-name", "judging-plugin", "--disable", "http", "fetch-event", "-o"])
                .arg(&built);
            (command, "componentize-js")
        }
        Engine::QuickJs => {
            let mut command = Command::new(tool("componentize-qjs")?);
            command
                .arg("--wit")
                .arg(build.sdk.wit())
                .arg("--js")
                .arg(&bundle)
                // Synchronous exports, as the contract's are.
                .args(["--world", "judging-plugin", "--sync", "--output"])
                .arg(&built);
            (command, "componentize-qjs")
        }
    };
    componentize.current_dir(dir).env("RUST_BACKTRACE", "0");
    command::run(componentize, step, |_| false, progress).map_err(&fail)?;
    build.finish(&built).map_err(&fail)
}

/// The module componentize-js reads: the plugin's default export, exported the SDK's way.
fn entry(main: &Path) -> String {
    format!(
        "import plugin from {main:?};\nimport {{ exportPlugin }} from \"agent-host-sdk\";\n\nexport const {{ guest, compactor, viewer, judge }} = exportPlugin(plugin);\n",
        main = main.display().to_string()
    )
}

/// The type check's settings: strict, with the SDK and the contract's types in view.
fn tsconfig(sdk: &Path) -> String {
    let sdk = sdk.display().to_string();
    serde_json::json!({
        "compilerOptions": {
            "strict": true,
            "noEmit": true,
            "target": "es2022",
            "module": "es2022",
            "moduleResolution": "bundler",
            "allowImportingTsExtensions": true,
            "paths": { "agent-host-sdk": [format!("{sdk}/index.ts")] },
        },
        "files": ["entry.ts", format!("{sdk}/wit/judging-plugin.d.ts")],
    })
    .to_string()
}

/// The JavaScript engine the component carries: componentize-js's StarlingMonkey (the
/// default), or QuickJS (`"agent-host": { "engine": "quickjs" }` in package.json), a
/// component a tenth the size that compiles and starts in a fraction of the time, for
/// slower JavaScript (BENCHMARKS.md, "Issue 34").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Engine {
    StarlingMonkey,
    QuickJs,
}

impl Engine {
    fn builder(self) -> &'static str {
        match self {
            Engine::StarlingMonkey => "componentize-js",
            Engine::QuickJs => "componentize-qjs",
        }
    }
}

/// What `package.json` says of the plugin.
struct Package {
    /// Its `name`, which names the component file.
    name: String,
    /// The component's file name, from the name.
    file: String,
    /// The module that default-exports the plugin, relative to the folder.
    main: String,
    engine: Engine,
}

impl Package {
    fn read(dir: &Path) -> Result<Self, String> {
        let manifest = dir.join("package.json");
        let text = std::fs::read_to_string(&manifest)
            .map_err(|error| format!("cannot read {}: {error}", manifest.display()))?;
        let package: serde_json::Value =
            serde_json::from_str(&text).map_err(|error| format!("{}: {error}", manifest.display()))?;
        let name = package["name"]
            .as_str()
            .ok_or_else(|| format!("{} has no \"name\"", manifest.display()))?
            .to_owned();
        let main = match &package["main"] {
            serde_json::Value::Null => "plugin.ts".to_owned(),
            serde_json::Value::String(main) => main.clone(),
            _ => return Err(format!("{}: \"main\" must be a string", manifest.display())),
        };
        if !dir.join(&main).is_file() {
            return Err(format!(
                "{} names the module `{main}`, but it is not in {}; write the plugin there \
                 (`export default new Plugin(...)`), or name another with \"main\"",
                manifest.display(),
                dir.display()
            ));
        }
        let engine = match package["agent-host"]["engine"].as_str() {
            None | Some("starlingmonkey") => Engine::StarlingMonkey,
            Some("quickjs") => Engine::QuickJs,
            Some(other) => {
                return Err(format!(
                    "{}: \"agent-host\".\"engine\" is `{other}`; it is \"starlingmonkey\" (the default) or \"quickjs\"",
                    manifest.display()
                ));
            }
        };
        let file = super::component_file(&manifest, &name)?;
        Ok(Self { name, file, main, engine })
    }
}
