//! What git keeps: sources, never a plugin's build output. A component, a bundle or bytecode
//! committed by accident goes stale beside its source, and a host that finds it fresh would
//! load it in the source's place; the root `.gitignore` keeps them out, and this checks that
//! it does and that nothing tracked slipped past it.

use std::process::Command;

use crate::support::repo_root;

/// The folders plugin builds write (cargo's, the Python and TypeScript builds', Python's
/// bytecode caches).
const BUILD_FOLDERS: &[&str] = &["build", "target", "__pycache__"];

/// Whether `path` (relative to the repository, `/`-separated) is a plugin's build output.
fn is_build_output(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let in_plugins = parts.first() == Some(&"plugins");
    path.ends_with(".pyc")
        || (in_plugins && parts[..parts.len() - 1].iter().any(|part| BUILD_FOLDERS.contains(part)))
}

fn git(args: &[&str]) -> std::process::Output {
    Command::new("git").current_dir(repo_root()).args(args).output().expect("git runs")
}

#[test]
fn no_tracked_file_is_plugin_build_output() {
    let listed = git(&["ls-files", "-z"]);
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let files = String::from_utf8(listed.stdout).unwrap();
    let files: Vec<&str> = files.split('\0').filter(|path| !path.is_empty()).collect();
    assert!(files.contains(&"plugins/stock.toml"), "the checkout's files were listed");
    let built: Vec<&&str> = files.iter().filter(|path| is_build_output(path)).collect();
    assert!(built.is_empty(), "git tracks plugin build output (git rm --cached them): {built:?}");
}

#[test]
fn the_gitignore_covers_every_plugin_build_output() {
    let samples = [
        "plugins/target/wasm32-wasip2/release/todo.wasm",
        "plugins/triage-modes-py/build/triage-modes.wasm",
        "plugins/triage-modes-ts/build/bundle.js",
        "plugins/triage-modes-py/__pycache__/stages.cpython-312.pyc",
        "plugins/sdk-python/agent_host_sdk/plugin.cpython-312.pyc",
        "plugins/testing/judge-py/build/judge.wasm",
        "plugins/some-author/target/release/out.wasm",
    ];
    for sample in samples {
        assert!(is_build_output(sample), "{sample}");
        let ignored = git(&["check-ignore", "--no-index", "-q", sample]);
        assert!(ignored.status.success(), "the root .gitignore does not ignore {sample}");
    }
    for source in
        ["plugins/todo/src/lib.rs", "plugins/triage-modes-py/plugin.py", "host/build_script/main.rs"]
    {
        assert!(!is_build_output(source), "{source}");
        let ignored = git(&["check-ignore", "--no-index", "-q", source]);
        assert!(!ignored.status.success(), "the root .gitignore ignores the source {source}");
    }
}
