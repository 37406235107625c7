//! Permission verdicts against what a line really runs. Every generated line is decided by
//! the real `permissions` component and then run for real by `sh` (dash, which runs the
//! shell tool's lines) inside the OS sandbox, where `rm`, `curl`, `touch`, `cat` and `git`
//! are recorders: bound over the system's programs and first on `PATH`, each one appends
//! its name and arguments to a log. The oracle is the log, not the policy's reader: a line
//! the policy allowed must have run no denied program (deny rules), or nothing but the
//! allowed commands (allow rules).

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_host::sandbox::{RunLimits, Sandbox, SandboxSpec};
use proptest::prelude::*;
use serde_json::json;

use super::permissions::{ALLOW_RULES, DENY_RULES, host, line};
use crate::support::TestHost;

/// The programs replaced by recorders.
const RECORDED: &[&str] = &["rm", "curl", "touch", "cat", "git"];

/// Wrappers and constructions that run the program after them, with their own options:
/// the shapes that dodged deny rules before the policy read lines with a real parser.
const WRAPPERS: &[&str] = &[
    "</dev/null ",
    "timeout -s KILL 5 ",
    "timeout -k 1 5 ",
    "flock /tmp/l ",
    "nice -n 5 ",
    "env -u HOME ",
    "env X=1 ",
    "time -p ",
    "command -- ",
    "stdbuf -oL ",
    "setsid ",
    "nohup ",
    "setpriv ",
    "prlimit --nofile=64 ",
    "env -i ",
];

/// Programs with their arguments, as the model would write them; `x/f` and `notes.txt`
/// exist in the workspace.
const PROGRAMS: &[&str] =
    &["rm -rf x", "rm notes.txt", "touch X", "cat notes.txt", "git status", "git push", "ls", "echo hi"];

/// Lines that hand a program to something else to run.
fn handed_over(program: &str) -> Vec<String> {
    let quoted = program.replace('\'', "'\\''");
    vec![
        format!("echo {program} | sh"),
        format!("env -S '{quoted}'"),
        format!("sh -c -e '{quoted}'"),
        format!("bash -c -- '{quoted}'"),
        format!("trap '{quoted}' EXIT"),
        format!("eval '{quoted}'"),
        format!("printf 'x\\n' | xargs -n 1 -P 4 {program}"),
        format!("find . -name f -exec {program} {{}} +"),
        format!("printf '%s\\n' '{quoted}' | xargs -I{{}} sh -c {{}}"),
        format!("env -iS'{quoted}'"),
        format!("sed -n '1e {quoted}' notes.txt"),
        format!("python3 <<'EOF'\nimport os\nos.system('{program}')\nEOF"),
        format!("git -c alias.x='!{quoted}' x"),
        format!("git status #'\n{program}"),
        format!("git status $'\\' ; {program} ; #'"),
    ]
}

fn tricky_line() -> impl Strategy<Value = String> {
    let program = prop::sample::select(PROGRAMS.to_vec());
    prop_oneof![
        (prop::sample::select(WRAPPERS.to_vec()), program.clone())
            .prop_map(|(wrapper, program)| format!("{wrapper}{program}")),
        (program, any::<prop::sample::Index>()).prop_map(|(program, index)| {
            let lines = handed_over(program);
            lines[index.index(lines.len())].clone()
        }),
    ]
}

/// Commands the allow rules cover, chained, sometimes with a trick or another command
/// after them: what an allow rule must not stretch over.
fn allowed_looking_line() -> impl Strategy<Value = String> {
    let allowed = prop::sample::select(vec!["git status", "git status -s", "ls", "ls -la", "ls x"]);
    let separator = prop::sample::select(vec![" && ", "; ", " | ", "\n", " || "]);
    (prop::collection::vec((allowed, separator), 1..4), prop::option::weighted(0.5, tricky_line())).prop_map(
        |(parts, tail)| {
            let mut line = String::new();
            for (index, (command, separator)) in parts.iter().enumerate() {
                if index > 0 {
                    line.push_str(separator);
                }
                line.push_str(command);
            }
            if let Some(tail) = tail {
                line.push_str("; ");
                line.push_str(&tail);
            }
            line
        },
    )
}

/// Any line: the composed lines of the rules' fuzzer, a trick, or allowed commands with
/// something after them.
fn any_line() -> impl Strategy<Value = String> {
    prop_oneof![line().prop_map(|(line, _)| line), tricky_line(), allowed_looking_line()]
}

/// A recorder for each recorded program, a log it appends to, and the workspace lines run in.
struct Stage {
    _dir: tempfile::TempDir,
    bin: PathBuf,
    log: PathBuf,
    workspace: PathBuf,
}

impl Stage {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (bin, logs, workspace) = (root.join("bin"), root.join("logs"), root.join("workspace"));
        for folder in [&bin, &logs, &workspace] {
            std::fs::create_dir(folder).unwrap();
        }
        let log = logs.join("ran");
        for program in RECORDED {
            let script = format!("#!/bin/sh\nprintf '%s\\n' \"{program} $*\" >> {}\n", log.display());
            let path = bin.join(program);
            std::fs::write(&path, script).unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        }
        Self { _dir: dir, bin, log, workspace }
    }

    /// Runs `line` with `sh -c` in a fresh workspace; returns what the recorders logged.
    async fn ran(&self, sandbox: &Sandbox, line: &str) -> Vec<String> {
        let _ = std::fs::remove_dir_all(&self.workspace);
        std::fs::create_dir_all(self.workspace.join("x")).unwrap();
        std::fs::write(self.workspace.join("x/f"), "f").unwrap();
        std::fs::write(self.workspace.join("notes.txt"), "notes").unwrap();
        let _ = std::fs::remove_file(&self.log);
        let mut spec = SandboxSpec::new("/bin/sh")
            .arg("-c")
            .arg(line)
            .env("PATH", format!("{}:/usr/local/bin:/usr/bin:/bin", self.bin.display()))
            .workdir(&self.workspace)
            .read_write(&self.workspace)
            .read_write(self.log.parent().unwrap())
            .read_only(&self.bin);
        for program in RECORDED {
            for folder in ["/usr/bin", "/usr/local/bin"] {
                let real = Path::new(folder).join(program);
                if real.exists() {
                    spec = spec.bind_ro(self.bin.join(program), real);
                }
            }
        }
        let limits = RunLimits { timeout: Duration::from_secs(5), max_output_bytes: 4096 };
        sandbox.run(&spec, limits).await.expect("the sandbox runs the line");
        std::fs::read_to_string(&self.log).unwrap_or_default().lines().map(str::to_owned).collect()
    }
}

/// Whether the policy lets `line` run (`remember` stands in for the shell tool).
async fn allowed(test: &TestHost, line: &str) -> bool {
    let session = test.session();
    let mut locked = session.lock().await;
    let arguments = json!({"key": "k", "value": 1, "command": line});
    let result = test
        .host
        .invoke_tool(&mut locked, "remember", &arguments, &*test.events)
        .await
        .expect("the call runs");
    test.take_events();
    assert!(
        !result.output.contains("policy plugin failed"),
        "the policy trapped on {line:?}: {}",
        result.output
    );
    result.ok
}

/// Runs `cases` lines through the policy and the sandbox; `forbidden` says which logged
/// runs an allowed line must not have made. Returns (allowed, refused, refused that ran
/// nothing forbidden) for the report.
fn check(rules: &str, cases: u32, forbidden: fn(&str) -> bool) -> (u32, u32, u32) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let test = runtime.block_on(host(rules));
    let sandbox = Sandbox::confined().expect("this kernel builds the sandbox");
    let stage = Stage::new();
    let counts = std::cell::Cell::new((0, 0, 0));
    let mut runner = super::runner(cases);
    runner
        .run(&any_line(), |line| {
            let (verdict, ran) =
                runtime.block_on(async { (allowed(&test, &line).await, stage.ran(&sandbox, &line).await) });
            let bad: Vec<&String> = ran.iter().filter(|run| forbidden(run)).collect();
            let (mut allowed_count, mut refused, mut refused_harmless) = counts.get();
            if verdict {
                allowed_count += 1;
                prop_assert!(bad.is_empty(), "allowed, yet it ran {bad:?}:\n{line}");
            } else {
                refused += 1;
                refused_harmless += u32::from(bad.is_empty());
            }
            counts.set((allowed_count, refused, refused_harmless));
            Ok(())
        })
        .unwrap();
    counts.get()
}

#[test]
fn a_line_the_deny_rules_allow_runs_no_denied_program() {
    let (allowed, refused, harmless) =
        check(DENY_RULES, 150, |run| run.starts_with("rm ") || run.starts_with("curl "));
    println!(
        "fuzz permissions oracle (deny rules): {allowed} allowed, {refused} refused, {harmless} of them ran nothing denied"
    );
    assert!(allowed > 0 && refused > 0, "the generator must give both verdicts");
}

#[test]
fn a_line_the_allow_rules_allow_runs_only_allowed_commands() {
    let (allowed, refused, harmless) =
        check(ALLOW_RULES, 150, |run| !(run == "git status" || run.starts_with("git status ")));
    println!(
        "fuzz permissions oracle (allow rules): {allowed} allowed, {refused} refused, {harmless} of them ran nothing else"
    );
    assert!(allowed > 0 && refused > 0, "the generator must give both verdicts");
}

/// The recorders see what really runs: the oracle would catch an allowed `rm`.
#[tokio::test]
async fn the_recorders_see_programs_however_they_are_reached() {
    let sandbox = Sandbox::confined().expect("this kernel builds the sandbox");
    let stage = Stage::new();
    for line in
        ["rm -rf x", "/bin/rm x", "/usr/bin/rm x", "env -S 'rm -rf x'", "find . -name f -exec rm {} +"]
    {
        let ran = stage.ran(&sandbox, line).await;
        assert!(ran.iter().any(|run| run.starts_with("rm ")), "{line}: {ran:?}");
    }
    assert!(stage.workspace.join("x/f").exists(), "a recorder ran instead of rm");
    let ran = stage.ran(&sandbox, "echo rm -rf x").await;
    assert!(ran.is_empty(), "{ran:?}");
}
