//! Where a started MCP server's code comes from, which no plugin may be granted to write.
//!
//! A server runs natively, as the operator (RELIABILITY.md says why), so a plugin — or the
//! model through one — that could write any file the server loads would run code as the
//! operator the next time the server starts. What a start reads code from: the folder it
//! starts in (`node ./x.js` and `npx` resolve from it, and so do `node_modules` folders
//! above it), the command as `PATH` resolves it and every `PATH` folder searched before it
//! (a file put there would shadow it), the script an interpreter is handed, any file it is
//! handed that is code, and the package caches `npx` and `uvx` run packages from. Python's
//! habit of putting the working folder first on `sys.path` is switched off at start
//! (`PYTHONSAFEPATH`, `mcp/launch.rs`), so `python3 -m NAME` needs no check of its own.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::McpServerConfig;
use super::grants::{Sensitive, real_path};

/// Programs that run the file named by their first argument that is not an option.
const INTERPRETERS: &[&str] = &[
    "python", "python3", "pypy", "pypy3", "node", "nodejs", "bun", "deno", "ruby", "perl", "php", "sh",
    "bash", "dash", "zsh", "ksh", "fish", "lua", "luajit", "Rscript", "tsx", "ts-node",
];

/// A file handed to a server that a program would load as code, by its extension.
const CODE_EXTENSIONS: &[&str] = &[
    "py", "pyc", "pth", "js", "mjs", "cjs", "ts", "mts", "cts", "sh", "rb", "pl", "php", "lua", "jar", "wasm",
];

/// A package runner's names, and the caches the packages it runs are unpacked into.
struct PackageRunner {
    names: &'static [&'static str],
    /// Each cache as the variable that moves it, else its folder under `HOME`.
    caches: &'static [(&'static str, &'static str)],
}

const PACKAGE_RUNNERS: &[PackageRunner] = &[
    PackageRunner {
        names: &["npx", "npm", "pnpm", "pnpx", "yarn"],
        caches: &[("npm_config_cache", ".npm"), ("NPM_CONFIG_CACHE", ".npm")],
    },
    PackageRunner {
        names: &["uvx", "uv"],
        caches: &[("UV_CACHE_DIR", ".cache/uv"), ("UV_TOOL_DIR", ".local/share/uv")],
    },
    PackageRunner { names: &["pipx"], caches: &[("PIPX_HOME", ".local/pipx")] },
    PackageRunner { names: &["bunx"], caches: &[("BUN_INSTALL_CACHE_DIR", ".bun/install/cache")] },
];

/// Every path server `server` runs code from when started in `cwd` (absolute).
pub(super) fn server_code(server: &McpServerConfig, cwd: &Path) -> Vec<Sensitive> {
    let Some(command) = server.command.as_deref() else { return Vec::new() };
    let name = &server.name;
    let mut paths = vec![path(cwd, false, &format!("the folder MCP server `{name}` starts in"))];
    for folder in cwd.ancestors() {
        paths.push(path(
            &folder.join("node_modules"),
            true,
            &format!("packages MCP server `{name}` resolves from its folder"),
        ));
    }
    let program = Path::new(command);
    if command.contains('/') {
        paths.push(path(&cwd.join(program), false, &format!("the program of MCP server `{name}`")));
    } else {
        for (folder, found) in searched_path_folders(command, cwd) {
            let what = if found { "the program of" } else { "a folder on PATH searched for" };
            paths.push(path(&folder.join(command), false, &format!("{what} MCP server `{name}`")));
            paths.push(path(&folder, false, &format!("a folder on PATH searched for MCP server `{name}`")));
        }
    }
    let program_name = program.file_name().and_then(|n| n.to_str()).unwrap_or(command);
    let runs_a_script = INTERPRETERS.iter().any(|interpreter| {
        program_name == *interpreter
            || program_name
                .strip_prefix(interpreter)
                .is_some_and(|version| version.chars().all(|c| c.is_ascii_digit() || c == '.'))
    });
    let script = runs_a_script.then(|| server.args.iter().find(|arg| !arg.starts_with('-'))).flatten();
    for arg in &server.args {
        let handed =
            cwd.join(arg.split_once('=').filter(|(o, _)| o.starts_with('-')).map_or(&arg[..], |(_, v)| v));
        let is_code =
            Path::new(arg).extension().and_then(|e| e.to_str()).is_some_and(|e| CODE_EXTENSIONS.contains(&e));
        if Some(arg) == script || is_code {
            paths.push(path(
                &handed,
                handed.is_dir(),
                &format!("code MCP server `{name}` is handed (`{arg}`)"),
            ));
        }
    }
    for runner in PACKAGE_RUNNERS {
        if runner.names.contains(&program_name) {
            for (variable, under_home) in runner.caches {
                if let Some(cache) = cache_folder(variable, under_home) {
                    paths.push(path(
                        &cache,
                        true,
                        &format!("the package cache `{program_name}` runs MCP server `{name}` from"),
                    ));
                }
            }
        }
    }
    paths
}

/// The `PATH` folders searched for `command` up to the one that holds it (all of them when
/// none does), each with whether it holds it. A relative entry is relative to `cwd`.
fn searched_path_folders(command: &str, cwd: &Path) -> Vec<(PathBuf, bool)> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/bin:/bin"));
    let mut searched = Vec::new();
    for folder in std::env::split_paths(&path) {
        let folder = cwd.join(folder);
        let found = folder.join(command).is_file();
        searched.push((folder, found));
        if found {
            break;
        }
    }
    searched
}

/// The cache folder `variable` names, else `HOME/under_home`.
fn cache_folder(variable: &str, under_home: &str) -> Option<PathBuf> {
    match std::env::var_os(variable) {
        Some(named) if !named.is_empty() => Some(PathBuf::from(named)),
        _ => std::env::var_os("HOME").map(|home| PathBuf::from(home).join(under_home)),
    }
}

fn path(at: &Path, folder: bool, what: &str) -> Sensitive {
    let at = real_path(at);
    Sensitive { what: format!("{what} ({})", at.display()), path: at, folder }
}

impl super::Config {
    /// Why server `server` may not be started in `cwd` under this deployment, if it may
    /// not: a plugin is granted to write where it runs code from. What `[[mcp]]` entries
    /// are checked against when the config loads, for a server a client asks for (an
    /// editor's `mcpServers`).
    pub fn server_code_refusal(&self, server: &McpServerConfig, cwd: &Path) -> Option<String> {
        let code = server_code(server, cwd);
        for (index, plugin) in self.plugins.iter().enumerate().filter(|(_, plugin)| plugin.enabled) {
            for (guest, grant) in plugin.grants.dirs.iter().filter(|(_, grant)| grant.write) {
                if let Some((found, relation)) =
                    code.iter().find_map(|item| super::grants::overlap(&grant.host, item))
                {
                    return Some(format!(
                        "plugin[{index}] ({}) is granted to write \"{guest}\" ({}), which {relation} {}: a \
                         plugin that wrote there would run code as the operator when the server starts; \
                         give the server a command and files outside every writable grant",
                        plugin.origin_label(),
                        grant.host.display(),
                        found.what,
                    ));
                }
            }
        }
        None
    }
}
