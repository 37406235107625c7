//! TypeScript plugin folders: `package.json` (its `name`, and `main`, the module that
//! default-exports the plugin, `plugin.ts` unless it says) built in three steps: type-checked
//! with `tsc`, bundled with the SDK by `esbuild`, made a component by componentize-js against
//! the contract's `judging-plugin` world (every export: `guest`, `compactor`, `viewer` and
//! `judge`; the SDK's `spec`s say which hooks a plugin really answers). Every step runs in the
//! OS sandbox with no network (`command.rs`), seeing the folder, the SDK and the toolchain;
//! and the bundle may hold no file from outside them (`bundle_inputs_problem`), so a plugin
//! cannot carry a host file to the model by importing it.

use std::path::{Path, PathBuf};

use super::command::{self, BuildSandbox, Step};
use super::folder::{self, Prepared};
use super::{Progress, toolchain};
use crate::config::on_path;
use crate::plugins::error::LoadError;

/// Builds the TypeScript plugin folder `dir` (or reuses its last build, when nothing changed).
pub(super) fn build(
    dir: &Path,
    sandbox: &BuildSandbox,
    progress: Progress<'_>,
) -> Result<PathBuf, LoadError> {
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

    let tool = |name: &str| {
        let program = toolchain::require(build.toolchain.node_bin(name)).map_err(&fail)?;
        Ok::<_, LoadError>(node_step(&build, &program, dir))
    };
    let check = tool("tsc")?.arg("-p").arg(&config);
    command::run(sandbox, check, "tsc (the type check)", |_| false, progress).map_err(&fail)?;

    let bundle = build.staged("plugin.js");
    let inputs = build.staged("inputs.json");
    let esbuild = tool("esbuild")?
        .arg(&entry)
        .args(["--bundle", "--format=esm", "--platform=neutral", "--target=es2022", "--log-level=warning"])
        .arg("--external:agent-host:*")
        .arg(format!("--alias:agent-host-sdk={}", sdk.join("index.ts").display()))
        .arg(format!("--outfile={}", bundle.display()))
        .arg(format!("--metafile={}", inputs.display()));
    command::run(sandbox, esbuild, "esbuild", |_| false, progress).map_err(&fail)?;
    let sdk = std::fs::canonicalize(&build.sdk.root).unwrap_or_else(|_| build.sdk.root.clone());
    let allowed = [dir.to_path_buf(), sdk, build.staging.path().to_path_buf()];
    if let Some(problem) = bundle_inputs_problem(&inputs, dir, &allowed) {
        return Err(fail(problem));
    }

    let built = build.staged("component.wasm");
    let (componentize, step) = match package.engine {
        Engine::StarlingMonkey => {
            let command = tool("componentize-js")?
                .arg(&bundle)
                .arg("--wit")
                .arg(build.sdk.wit())
                .args(["--world-name", "judging-plugin", "--disable", "http", "fetch-event", "-o"])
                .arg(&built);
            (command, "componentize-js")
        }
        Engine::QuickJs => {
            let command = tool("componentize-qjs")?
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
    let componentize = componentize.env("RUST_BACKTRACE", "0");
    command::run(sandbox, componentize, step, |_| false, progress).map_err(&fail)?;
    build.finish(&built).map_err(&fail)
}

/// A step that runs the toolchain's `program` in the folder `dir`: the folder (with its own
/// `node_modules`), the SDK and the toolchain read-only, the staging folder writable, and
/// `node` wherever the host finds it.
fn node_step(build: &folder::FolderBuild, program: &Path, dir: &Path) -> Step {
    let mut step = Step::new(program, dir)
        .read_only(dir)
        .read_only(&build.sdk.root)
        .read_only(&build.toolchain.dir)
        .writable(build.staging.path());
    if let Some(bin) = on_path("node")
        .and_then(|node| std::fs::canonicalize(node).ok())
        .and_then(|node| node.parent().map(Path::to_path_buf))
    {
        step = step.on_path(&bin);
        // A node installed outside the system's folders (nvm, a tarball).
        if let Some(prefix) = bin.parent().filter(|prefix| !prefix.starts_with("/usr")) {
            step = step.read_only(prefix);
        }
    }
    step
}

/// Why the bundle esbuild made may not be used, if it may not: it holds a file from outside
/// `allowed` (the folder, the SDK, the build's own files), after links — an import by
/// absolute path, a `text` import of a host file, a link out of the folder. `metafile` is
/// esbuild's account of its inputs, named relative to `dir`, where it ran.
fn bundle_inputs_problem(metafile: &Path, dir: &Path, allowed: &[PathBuf]) -> Option<String> {
    let text = match std::fs::read_to_string(metafile) {
        Ok(text) => text,
        Err(error) => {
            return Some(format!(
                "esbuild did not say what the bundle holds ({}: {error})",
                metafile.display()
            ));
        }
    };
    let meta: serde_json::Value = match serde_json::from_str(&text) {
        Ok(meta) => meta,
        Err(error) => return Some(format!("esbuild's account of the bundle is not JSON: {error}")),
    };
    let inputs = meta["inputs"]
        .as_object()
        .map(|inputs| inputs.keys().cloned().collect::<Vec<_>>())
        .unwrap_or_default();
    for input in inputs {
        // Namespaced inputs (`agent-host:plugin/...`, left external) are no files.
        if input.contains(':') && !input.starts_with('/') {
            continue;
        }
        let path = dir.join(&input);
        let real = std::fs::canonicalize(&path).unwrap_or(path);
        if !allowed.iter().any(|folder| real.starts_with(folder)) {
            return Some(format!(
                "the plugin imports {}, which is outside its folder: a plugin's bundle holds only its \
                 own files, its node_modules and the SDK",
                real.display()
            ));
        }
    }
    None
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
