//! Python plugin folders: `pyproject.toml` (its `[project] name`, and `dependencies`, pure
//! Python, installed into the build) and a module that defines `plugin` with the Python SDK
//! (`plugin.py`, or `[tool.agent-host] module`), built with componentize-py against the
//! contract's `judging-plugin` world (every export the SDK has; a plugin that judges nothing
//! says so through the `judge` export's `spec`). Every step runs in the OS sandbox
//! (`command.rs`): the syntax check (`python/syntax.rs`) and componentize-py without the
//! network, pip with it, to fetch wheels only.

mod syntax;

use std::path::{Path, PathBuf};

use super::command::{self, BuildSandbox, Step};
use super::folder::{self, Prepared};
use super::{Progress, toolchain};
use crate::plugins::error::LoadError;
use syntax::Checked;

/// The module the build writes beside the plugin's: it exports the plugin the SDK's way.
const APP_MODULE: &str = "agent_host_app";

/// Builds the Python plugin folder `dir` (or reuses its last build, when nothing changed).
pub(super) fn build(
    dir: &Path,
    sandbox: &BuildSandbox,
    progress: Progress<'_>,
) -> Result<PathBuf, LoadError> {
    let dir = &std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let fail = |detail: String| LoadError::Build { path: dir.to_path_buf(), detail };
    let project = Project::read(dir).map_err(&fail)?;
    let build = match folder::prepare(dir, "python", &project.file, progress).map_err(&fail)? {
        Prepared::Kept(component) => return Ok(component),
        Prepared::Build(build) => build,
    };
    // Python's own words for a syntax error, before a build that would bury them.
    let python = toolchain::require(build.toolchain.venv_bin("python")).map_err(&fail)?;
    let checked = syntax::check(sandbox, python_step(&build, &python, dir), dir).map_err(&fail)?;
    if let Checked::Error(error) = &checked {
        return Err(fail(syntax_error(error)));
    }
    progress(&format!("Building {} (Python) with componentize-py", project.name));
    let app = format!(
        "from agent_host_sdk import export\nfrom {module} import plugin\n\nGuest, Compactor, Viewer, Judge = export(plugin)\n",
        module = project.module
    );
    build.write(&format!("{APP_MODULE}.py"), &app).map_err(&fail)?;
    let dependencies = build.staged("dependencies");
    std::fs::create_dir_all(&dependencies).map_err(|error| fail(error.to_string()))?;
    if !project.dependencies.is_empty() {
        install_dependencies(sandbox, &build, &project.dependencies, &dependencies, progress)
            .map_err(&fail)?;
    }
    let built = build.staged("component.wasm");
    let tool = toolchain::require(build.toolchain.venv_bin("componentize-py")).map_err(&fail)?;
    let componentize = python_step(&build, &tool, dir)
        .read_only(dir)
        .read_only(&build.sdk.root)
        .arg("-d")
        .arg(build.sdk.wit())
        .args(["-w", "judging-plugin", "componentize", "-p"])
        .arg(build.staging.path())
        .arg("-p")
        .arg(dir)
        .arg("-p")
        .arg(build.sdk.python())
        .arg("-p")
        .arg(&dependencies)
        .arg(APP_MODULE)
        .arg("-o")
        .arg(&built)
        // componentize-py is Rust: a backtrace would bury the plugin's own Python error.
        .env("RUST_BACKTRACE", "0");
    if let Err(error) = command::run(sandbox, componentize, "componentize-py", |_| false, progress) {
        return Err(fail(match checked {
            // componentize-py met the error the check found: Python's words alone.
            Checked::Doubtful(found) if error.contains("SyntaxError") => syntax_error(&found),
            _ => error,
        }));
    }
    build.finish(&built).map_err(&fail)
}

/// A syntax error as the check reported it, Python's words after one line that says so.
fn syntax_error(found: &str) -> String {
    format!("its Python does not compile:\n{found}")
}

/// A step that runs the toolchain's `program` (a script of its virtual environment) in
/// `workdir`: the toolchain and the interpreter it was made from read-only, the staging
/// folder writable.
fn python_step(build: &folder::FolderBuild, program: &Path, workdir: &Path) -> Step {
    let mut step = Step::new(program, workdir)
        .read_only(&build.toolchain.dir)
        .writable(build.staging.path())
        .on_path(&build.toolchain.dir.join("venv").join("bin"))
        // A build runs the plugin's module once; its bytecode has no use in the folder.
        .env("PYTHONDONTWRITEBYTECODE", "1");
    if let Some(prefix) = base_interpreter(&build.toolchain.dir.join("venv")) {
        step = step.read_only(&prefix);
    }
    step
}

/// The installation the virtual environment `venv` was made from (`home` in its
/// `pyvenv.cfg` is that installation's `bin`), whose interpreter its `python` links to.
fn base_interpreter(venv: &Path) -> Option<PathBuf> {
    let settings = std::fs::read_to_string(venv.join("pyvenv.cfg")).ok()?;
    let home = settings.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })?;
    std::fs::canonicalize(home).ok()?.parent().map(Path::to_path_buf)
}

/// Why `requirement` may not be installed, if it may not: only a plain requirement (a name,
/// extras, version specifiers, a marker) is. A URL or a path (`dep @ https://…/dep.tar.gz`,
/// `./dep`) is built from source by its own build backend, which would run its code, and an
/// option (`--index-url …`) would change where pip looks.
fn requirement_problem(requirement: &str) -> Option<String> {
    use std::str::FromStr as _;
    match pep508_rs::Requirement::<pep508_rs::VerbatimUrl>::from_str(requirement) {
        Ok(parsed) => matches!(parsed.version_or_url, Some(pep508_rs::VersionOrUrl::Url(_))).then(|| {
            format!(
                "`{requirement}` names a URL or a path; only plain requirements from the package index \
                 are installed (a name, extras, versions and a marker, such as `attrs>=23`), as wheels"
            )
        }),
        Err(error) => Some(format!(
            "`{requirement}` is not a plain requirement (a name, extras, versions and a marker, such as \
             `attrs>=23`): {}",
            error.message
        )),
    }
}

/// The Python the component carries, for which dependencies are chosen.
const COMPONENT_PYTHON: &str = "3.14";

/// Installs `[project] dependencies` into `target`, as wheels of pure Python only: the
/// component carries its own interpreter, and a package built for this machine's would not
/// load in it, so pip refuses one here, naming it, rather than the build failing later.
fn install_dependencies(
    sandbox: &BuildSandbox,
    build: &folder::FolderBuild,
    dependencies: &[String],
    target: &Path,
    progress: Progress<'_>,
) -> Result<(), String> {
    progress(&format!("Installing {}", dependencies.join(", ")));
    let pip = toolchain::require(build.toolchain.venv_bin("pip"))?;
    let step = python_step(build, &pip, build.staging.path())
        .fetching()
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-input",
            "--no-cache-dir",
            "--target",
        ])
        .arg(target)
        .args(["--only-binary=:all:", "--platform", "any", "--implementation", "py"])
        .args(["--python-version", COMPONENT_PYTHON])
        // What follows is requirements alone, even one that looks like an option.
        .arg("--")
        .args(dependencies);
    command::run(sandbox, step, "pip (the plugin's dependencies)", |_| false, progress).map(|_| ())
}

/// What `pyproject.toml` says of the plugin.
struct Project {
    /// The `[project] name`, which names the component file.
    name: String,
    /// The component's file name, from the name.
    file: String,
    /// The module that defines `plugin`.
    module: String,
    /// `[project] dependencies`, as pip reads them.
    dependencies: Vec<String>,
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
        let dependencies = match table.get("project").and_then(|project| project.get("dependencies")) {
            None => Vec::new(),
            Some(toml::Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("{}: [project] dependencies must be strings", manifest.display()))?,
            Some(_) => return Err(format!("{}: [project] dependencies must be a list", manifest.display())),
        };
        if let Some(problem) = dependencies.iter().find_map(|requirement| requirement_problem(requirement)) {
            return Err(format!("{}: [project] dependencies: {problem}", manifest.display()));
        }
        let file = super::component_file(&manifest, &name)?;
        Ok(Self { name, file, module, dependencies })
    }
}

#[cfg(test)]
mod tests {
    use super::requirement_problem;

    #[test]
    fn only_plain_requirements_are_installed() {
        for plain in ["attrs", "attrs>=23,<25", "requests[socks]==2.32.3", "tomli; python_version < '3.11'"] {
            assert_eq!(requirement_problem(plain), None, "{plain}");
        }
        for (refused, said) in [
            ("dep @ http://127.0.0.1:1/dep-0.1.tar.gz", "names a URL or a path"),
            ("dep @ file:///tmp/dep", "names a URL or a path"),
            ("./dep", "is not a plain requirement"),
            ("/tmp/dep-0.1.tar.gz", "is not a plain requirement"),
            ("--index-url=http://127.0.0.1:1/simple", "is not a plain requirement"),
            ("-e .", "is not a plain requirement"),
        ] {
            let problem = requirement_problem(refused).unwrap_or_else(|| panic!("{refused} passed"));
            assert!(problem.contains(said), "{refused}: {problem}");
        }
    }
}
