//! Issue 29's lines (High 4, Medium 10), run for real in the OS sandbox as the oracle runs
//! them: each first runs with `sh -c` in a bare sandbox to show it really deletes its
//! folder or writes `X`, then goes through the real `shell` tool (dash in the same sandbox)
//! with the real `permissions` plugin in front: past an `rm *` deny rule the folder
//! survives; under `read-only` with allow rules for `find *`, `sed -n *`, `tar -tf *`,
//! `git log *` and `git status`, `X` is never written; and the shell tool's git runs no
//! `core.fsmonitor` or hook a repository names.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use agent_host::sandbox::{RunLimits, Sandbox, SandboxSpec};
use serde_json::json;

use super::{call, refused};
use crate::support::{FakeModel, TestHost, plugin_block};

/// Runs `line` with `sh -c` in a bare sandbox whose only writable folder is `workspace`.
async fn run_in_sandbox(line: &str, workspace: &Path) {
    let sandbox = Sandbox::confined().expect("this kernel builds the sandbox");
    let spec = SandboxSpec::new("/bin/sh")
        .arg("-c")
        .arg(line)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .workdir(workspace)
        .read_write(workspace);
    let limits = RunLimits { timeout: Duration::from_secs(20), max_output_bytes: 4096 };
    sandbox.run(&spec, limits).await.expect("the sandbox runs the line");
}

/// The real `shell` tool over `workspace` behind the real `permissions` with `config`.
async fn shell_behind(config: &str, workspace: &Path) -> TestHost {
    let plugins = format!(
        "{}{}",
        plugin_block(
            "shell",
            &format!(
                "[plugin.limits]\ntimeout_ms = 20000\n[plugin.grants]\nprocess = true\n[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"{}\", write = true }}",
                workspace.display()
            )
        ),
        plugin_block("permissions", &format!("[plugin.config]\n{config}"))
    );
    TestHost::with_plugins(&FakeModel::start().await, &plugins).await
}

/// A workspace holding `notes.txt`, an archive `a.tar` of it, and a git repository with
/// one commit.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("notes.txt"), "one\ntwo\n").unwrap();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(root)
            .output()
            .expect("git runs");
        assert!(status.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&status.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "notes.txt"]);
    git(&["commit", "-qm", "first"]);
    let tar = Command::new("tar").args(["-cf", "a.tar", "notes.txt"]).current_dir(root).status().unwrap();
    assert!(tar.success());
    dir
}

/// Each line deletes the folder it names (`v1`, `v2`, …) when nothing stops it.
const DELETING: &[(&str, &str)] = &[
    ("v1", "echo 'rm -rf v1' | xargs -I{} sh -c {}"),
    ("v2", "env -iS'rm -rf v2'"),
    ("v3", "python3 <<'EOF'\nimport os\nos.system('rm -rf v3')\nEOF"),
    ("v4", "setpriv rm -rf v4"),
    ("v5", "prlimit --nofile=64 rm -rf v5"),
    ("v6", "tar -cf /tmp/b.tar --checkpoint=1 --checkpoint-action=exec='rm -rf v6' notes.txt"),
    ("v7", "sed -n '1e rm -rf v7' notes.txt"),
    ("v8", "ed -s notes.txt <<'EOF'\n!rm -rf v8\nq\nEOF"),
    ("v9", "gdb -batch -nx -ex 'shell rm -rf v9'"),
    ("v10", "git -c alias.x='!rm -rf v10' x"),
];

#[tokio::test]
async fn gadgets_past_an_rm_deny_rule_delete_nothing() {
    let shown = workspace();
    for (folder, line) in DELETING {
        std::fs::create_dir_all(shown.path().join(folder).join("sub")).unwrap();
        run_in_sandbox(line, shown.path()).await;
        assert!(!shown.path().join(folder).exists(), "`{line}` should really delete {folder} in the sandbox");
    }
    let guarded = workspace();
    let test = shell_behind(
        r#"preset = "trust"
rules = [{ tool = "shell", args = { command = "rm *" }, decision = "deny", reason = "no deleting" }]"#,
        guarded.path(),
    )
    .await;
    let session = test.session();
    for (folder, line) in DELETING {
        std::fs::create_dir_all(guarded.path().join(folder).join("sub")).unwrap();
        let result = call(&test, &session, "shell", json!({ "command": line })).await;
        assert!(refused(&result) && result.output.contains("no deleting"), "`{line}`: {}", result.output);
        assert!(guarded.path().join(folder).join("sub").exists(), "`{line}` deleted {folder}");
    }
    // The rule still lets everyday lines run.
    let fine = call(&test, &session, "shell", json!({ "command": "sed -n 1p notes.txt" })).await;
    assert!(fine.ok && fine.output.contains("one"), "{}", fine.output);
}

/// Each line writes `X` (creates it, or runs `touch X`) when nothing stops it.
const STRETCHING: &[&str] = &[
    "find . -maxdepth 0 -exec touch X \\;",
    "find . -maxdepth 0 -fprint X",
    "sed -n '1e touch X' notes.txt",
    "sed -n 'w X' notes.txt",
    "tar -tf a.tar --checkpoint=1 --checkpoint-action=exec='touch X'",
    "git log --output=X",
];

const READ_ONLY_WITH_ALLOWS: &str = r#"preset = "read-only"
rules = [
  { tool = "shell", args = { command = "find *" }, decision = "allow" },
  { tool = "shell", args = { command = "sed -n *" }, decision = "allow" },
  { tool = "shell", args = { command = "tar -tf *" }, decision = "allow" },
  { tool = "shell", args = { command = "git log *" }, decision = "allow" },
  { tool = "shell", args = { command = "git status" }, decision = "allow" },
]"#;

#[tokio::test]
async fn allow_rules_under_read_only_do_not_stretch_to_running_or_writing() {
    for line in STRETCHING {
        let shown = workspace();
        run_in_sandbox(line, shown.path()).await;
        assert!(shown.path().join("X").exists(), "`{line}` should really write X in the sandbox");
    }
    let guarded = workspace();
    let test = shell_behind(READ_ONLY_WITH_ALLOWS, guarded.path()).await;
    let session = test.session();
    for line in STRETCHING {
        let result = call(&test, &session, "shell", json!({ "command": line })).await;
        assert!(refused(&result) && result.output.contains("read-only"), "`{line}`: {}", result.output);
    }
    assert!(!guarded.path().join("X").exists(), "a refused line ran");
    // What the rules name still runs.
    for line in ["find . -maxdepth 0", "sed -n 2p notes.txt", "tar -tf a.tar", "git log --oneline -n 1"] {
        let result = call(&test, &session, "shell", json!({ "command": line })).await;
        assert!(result.ok && result.output.contains("exit status: 0"), "`{line}`: {}", result.output);
    }
}

/// The model can write `.git/config` first; a `git status` the policy vouches for then runs
/// no `core.fsmonitor` and no hook of the repository's.
#[tokio::test]
async fn a_vouched_for_git_runs_no_program_of_the_repositorys_config() {
    let shown = workspace();
    let configure = |root: &Path| {
        let status = Command::new("git")
            .args(["config", "core.fsmonitor", "touch X; false"])
            .current_dir(root)
            .status()
            .unwrap();
        assert!(status.success());
    };
    configure(shown.path());
    run_in_sandbox("git status", shown.path()).await;
    assert!(shown.path().join("X").exists(), "git status should really run core.fsmonitor in the sandbox");

    let guarded = workspace();
    configure(guarded.path());
    let test = shell_behind(READ_ONLY_WITH_ALLOWS, guarded.path()).await;
    let session = test.session();
    let result = call(&test, &session, "shell", json!({ "command": "git status" })).await;
    assert!(result.ok && result.output.contains("On branch main"), "{}", result.output);
    assert!(!guarded.path().join("X").exists(), "git status ran the repository's core.fsmonitor");
}

/// A hook the model wrote into `.git/hooks` does not run from the shell tool's git either.
#[tokio::test]
async fn the_shell_tools_git_runs_no_hook_of_the_repositorys() {
    let commit = "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m next";
    let add_hook = |root: &Path| {
        let hook = root.join(".git/hooks/pre-commit");
        std::fs::write(&hook, "#!/bin/sh\ntouch X\n").unwrap();
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    };
    let shown = workspace();
    add_hook(shown.path());
    run_in_sandbox(commit, shown.path()).await;
    assert!(shown.path().join("X").exists(), "git commit should really run the hook in the sandbox");

    let guarded = workspace();
    add_hook(guarded.path());
    let test = shell_behind(r#"preset = "trust""#, guarded.path()).await;
    let result = call(&test, &test.session(), "shell", json!({ "command": commit })).await;
    assert!(result.ok && result.output.contains("exit status: 0"), "{}", result.output);
    assert!(!guarded.path().join("X").exists(), "the shell tool's git ran the repository's pre-commit hook");
}
