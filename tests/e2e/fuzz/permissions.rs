//! Permission rules against shell commands, through the real `permissions` component:
//! command lines built from simple commands chained with `;`, `&&`, `||`, `|`, `&` and
//! newlines, with the command word disguised (quoted, escaped, split by quotes or a line
//! continuation, named by its path), put behind prefixes (`X=1`, `env`, `command`, `sudo`,
//! `nohup`, …) or inside wrappers (`$(…)`, backticks, subshells, groups, `sh -c`, `eval`,
//! `if`/`while` bodies), with quoting tricks in the arguments. Properties: a line that runs
//! a denied command is never allowed; a prefix allow never stretches over a command it does
//! not cover; plain lines that run only allowed commands, and that both dash and bash parse
//! (`-n`), are allowed; lines with no denied command that both shells parse run past deny
//! rules; the plugin never traps.

use agent_host::agent::SessionHandle;
use agent_host::tools::ToolResult;
use proptest::prelude::*;
use serde_json::json;

use crate::support::{FakeModel, TestHost, plugin_block};

/// What a simple command is with respect to the rules of the two hosts below.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Matched by a deny rule (`rm`, `curl*`).
    Denied,
    /// Matched by an allow rule (`git status`, `ls*`).
    Allowed,
    /// Matched by no rule.
    Other,
}

const COMMANDS: &[(&str, &str, Kind)] = &[
    ("rm", " -rf /", Kind::Denied),
    ("rm", " notes.txt", Kind::Denied),
    ("curl", " http://example.invalid/x", Kind::Denied),
    ("git", " status", Kind::Allowed),
    ("git", " status -s", Kind::Allowed),
    ("ls", "", Kind::Allowed),
    ("ls", " -la", Kind::Allowed),
    ("cat", " notes.txt", Kind::Other),
    ("echo", " hi", Kind::Other),
    ("git", " push", Kind::Other),
];

/// Ways to write the command word so the shell still runs the same program.
fn disguise(word: &str, how: u8) -> String {
    let (first, rest) = word.split_at(1);
    match how {
        0 => format!("\\{word}"),
        1 => format!("'{word}'"),
        2 => format!("\"{word}\""),
        3 => format!("{first}''{rest}"),
        4 => format!("{first}\"\"{rest}"),
        5 => format!("{first}\\{rest}"),
        6 => format!("$'{word}'"),
        7 => format!("/bin/{word}"),
        8 => format!("/usr/bin/{word}"),
        9 => format!("{first}\\\n{rest}"),
        10 => format!("{word}${{IFS}}"),
        _ => word.to_owned(),
    }
}

/// Words the shell skips before the command: assignments, reserved words, wrappers.
const PREFIXES: &[&str] = &[
    "X=1 ",
    "A=b C='d e' ",
    "env ",
    "env -i X=1 ",
    "command ",
    "exec ",
    "nohup ",
    "time ",
    "sudo ",
    "sudo -u root ",
    "nice -n 5 ",
    "timeout 5 ",
    "xargs ",
    "! ",
    "builtin command ",
];

/// Argument text with quoting tricks; none of it runs anything.
const ARGUMENTS: &[&str] = &[
    " \"a;b\"",
    " 'x && y'",
    " \"a\\\"b\"",
    " $'it\\'s'",
    " \"\\\\\"",
    " 'a'\\''b'",
    " a\\;b",
    " \"$HOME\"",
    " 'q|r'",
    " \"#\"",
];

/// Where the simple command sits. `true` when the line runs the command's *output* as a
/// command too, so nothing can be said about what runs.
fn wrap(command: &str, how: u8) -> (String, bool) {
    let single_quoted = command.replace('\'', "'\\''");
    let double_quoted =
        command.replace('\\', "\\\\").replace('"', "\\\"").replace('$', "\\$").replace('`', "\\`");
    match how {
        0 => (format!("({command})"), false),
        1 => (format!("{{ {command}; }}"), false),
        2 => (format!("$({command})"), true),
        3 => (format!("`{command}`"), true),
        4 => (format!("echo \"$({command})\""), false),
        5 => (format!("echo x \"`{double_quoted}`\""), false),
        6 => (format!("sh -c '{single_quoted}'"), false),
        7 => (format!("bash -c \"{double_quoted}\""), false),
        8 => (format!("eval '{single_quoted}'"), false),
        9 => (format!("if true; then {command}; fi"), false),
        10 => (format!("while false; do {command}; done"), false),
        11 => (format!("for i in 1; do {command}; done"), false),
        12 => (format!("cat <({command})"), false),
        _ => (command.to_owned(), false),
    }
}

const SEPARATORS: &[&str] = &[";", " && ", " || ", " | ", "\n", " & ", " ;\n", "|"];

/// One simple command of a line and how it is written.
#[derive(Debug, Clone)]
pub struct Written {
    pub kind: Kind,
    pub text: String,
    /// Written exactly as the rule names it: no disguise, prefix or wrapper.
    pub plain: bool,
    /// Its program is known only at run time: its output runs as a command (`$(…)` or
    /// backticks standing alone) or its name holds an expansion (`${IFS}`). Deny rules
    /// refuse such a command whatever it is.
    pub unreadable: bool,
}

pub fn written() -> impl Strategy<Value = Written> {
    let pick = prop::sample::select((0..COMMANDS.len()).collect::<Vec<_>>());
    (
        pick,
        prop_oneof![3 => Just(99u8), 2 => 0u8..11],
        prop_oneof![3 => Just(99usize), 1 => 0..PREFIXES.len()],
        prop::option::weighted(0.2, prop::sample::select(ARGUMENTS.to_vec())),
        prop_oneof![3 => Just(99u8), 2 => 0u8..13],
    )
        .prop_map(|(pick, how, prefix, argument, wrapper)| {
            let (word, args, kind) = COMMANDS[pick];
            let prefix_text = PREFIXES.get(prefix).copied().unwrap_or("");
            let command = format!("{prefix_text}{}{args}{}", disguise(word, how), argument.unwrap_or(""));
            let (text, runs_output) = wrap(&command, wrapper);
            let unreadable = runs_output || how == 10;
            let plain = how == 99 && prefix == 99 && wrapper == 99;
            Written { kind, text, plain, unreadable }
        })
}

/// A command line of 1 to 4 simple commands, with what each of them is: the generator an
/// oracle that runs the lines for real can reuse.
pub fn line() -> impl Strategy<Value = (String, Vec<Written>)> {
    prop::collection::vec((written(), prop::sample::select(SEPARATORS.to_vec())), 1..5).prop_map(|parts| {
        let mut line = String::new();
        for (index, (part, separator)) in parts.iter().enumerate() {
            if index > 0 {
                line.push_str(separator);
            }
            line.push_str(&part.text);
        }
        (line, parts.into_iter().map(|(part, _)| part).collect())
    })
}

/// A host with `misbehave` (whose `remember` stands in for the shell tool) behind the
/// `permissions` plugin configured with `rules`.
pub async fn host(rules: &str) -> TestHost {
    let model = FakeModel::start().await;
    let plugins = format!(
        "{}{}",
        plugin_block("misbehave", ""),
        plugin_block("permissions", &format!("[plugin.config]\n{rules}"))
    );
    TestHost::with_plugins(&model, &plugins).await
}

/// `remember` takes any extra arguments, so it stands in for the shell tool.
fn run(
    runtime: &tokio::runtime::Runtime,
    test: &TestHost,
    session: &SessionHandle,
    command: &str,
) -> ToolResult {
    runtime.block_on(async {
        let mut locked = session.lock().await;
        let arguments = json!({"key": "k", "value": 1, "command": command});
        test.host
            .invoke_tool(&mut locked, "remember", &arguments, &*test.events)
            .await
            .expect("the call runs")
    })
}

/// One fuzzed line through the policy: its events drained, and the policy must not have trapped.
fn decided(
    runtime: &tokio::runtime::Runtime,
    test: &TestHost,
    session: &SessionHandle,
    line: &str,
) -> Result<ToolResult, TestCaseError> {
    let result = run(runtime, test, session, line);
    test.take_events();
    prop_assert!(!result.output.contains("policy plugin failed"), "the policy trapped: {}", result.output);
    Ok(result)
}

/// Whether dash (`/bin/sh`, which runs the shell tool's lines) and bash both parse `line`
/// without a syntax error (`-n` reads without running). A line either shell cannot read
/// may be refused by a deny rule: the policy cannot tell what it would run.
pub fn both_shells_read(line: &str) -> bool {
    ["dash", "bash"].iter().all(|shell| {
        std::process::Command::new(shell)
            .args(["-n", "-c", line])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    })
}

pub const DENY_RULES: &str = r#"default = "allow"
rules = [
  { tool = "remember", args = { command = "rm" }, decision = "deny", reason = "no deleting" },
  { tool = "remember", args = { command = "curl*" }, decision = "deny", reason = "no network" },
]"#;

pub const ALLOW_RULES: &str = r#"default = "deny"
rules = [
  { tool = "remember", args = { command = "git status" }, decision = "allow" },
  { tool = "remember", args = { command = "ls*" }, decision = "allow" },
]"#;

#[test]
fn deny_rules_cannot_be_dodged() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let test = runtime.block_on(host(DENY_RULES));
    let session = test.session();
    let mut runner = super::runner(150);
    runner
        .run(&line(), |(line, parts)| {
            let result = decided(&runtime, &test, &session, &line)?;
            if parts.iter().any(|part| part.kind == Kind::Denied) {
                prop_assert!(!result.ok, "a denied command ran:\n{}\n{}", line, result.output);
                prop_assert!(
                    result.output.contains("no deleting") || result.output.contains("no network"),
                    "{}",
                    result.output
                );
            } else if !parts.iter().any(|part| part.unreadable)
                && both_shells_read(&line)
                // dash reads `$'…'` as `$` and a plain quote, bash as one ANSI-C string: a
                // script handed to `sh -c` may then be unreadable to one of them (`$'it\'s'`),
                // and the policy refuses what either reading cannot read to the end.
                && !line.contains("$'")
            {
                prop_assert!(result.ok, "nothing denied, yet refused:\n{}\n{}", line, result.output);
            }
            Ok(())
        })
        .unwrap();
    super::report("permissions (deny rules)", &runner);
}

/// Lines of shell punctuation, quotes and words in any order: the policy never traps and
/// always decides, and refuses whatever holds a denied program name plainly as a word.
#[test]
fn random_lines_never_trap() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let test = runtime.block_on(host(DENY_RULES));
    let session = test.session();
    let mut runner = super::runner(100);
    let token = prop::sample::select(vec![
        "rm", "ls", "git", "status", " ", "\t", "\n", ";", "&", "&&", "|", "||", "'", "\"", "\\", "$", "$(",
        ")", "(", "`", "{", "}", "<", ">", "#", "=", "*", "$'", "é", "\u{0}", "-rf", "/",
    ]);
    let line =
        prop_oneof![prop::collection::vec(token, 0..30).prop_map(|tokens| tokens.concat()), "\\PC{0,60}"];
    runner
        .run(&line, |line| {
            let result = decided(&runtime, &test, &session, &line)?;
            prop_assert!(result.ok || result.output.contains("refused by permissions"), "{}", result.output);
            if line.split_whitespace().next() == Some("rm") {
                prop_assert!(!result.ok, "`{}` ran", line);
            }
            Ok(())
        })
        .unwrap();
    super::report("permissions (random lines)", &runner);
}

#[test]
fn prefix_allows_never_stretch_over_chained_commands() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let test = runtime.block_on(host(ALLOW_RULES));
    let session = test.session();
    let mut runner = super::runner(150);
    runner
        .run(&line(), |(line, parts)| {
            let result = decided(&runtime, &test, &session, &line)?;
            if parts.iter().any(|part| part.kind != Kind::Allowed) {
                prop_assert!(!result.ok, "an allow rule stretched over:\n{}\n{}", line, result.output);
            } else if parts.iter().all(|part| part.plain)
                && !line.contains(['<', '>', '`', '$'])
                && both_shells_read(&line)
            {
                prop_assert!(result.ok, "only allowed commands, yet refused:\n{}\n{}", line, result.output);
            }
            Ok(())
        })
        .unwrap();
    super::report("permissions (prefix allows)", &runner);
}

/// Lines the fuzzing found (or that stand for a class it found): each one dodged a deny rule
/// or stretched a prefix allow before the permissions plugin read commands as the shell does.
const FOUND_DODGES: &[&str] = &[
    "(rm -rf /)",
    "{ rm -rf /; }",
    "\\rm -rf /",
    "'rm' -rf /",
    "r''m -rf /",
    "r\\\nm -rf /",
    "$'\\x72m' -rf /",
    "/bin/rm -rf /",
    "X=1 rm -rf /",
    "env -i X=1 rm -rf /",
    "sudo -u root rm -rf /",
    "nice -n 5 rm -rf /",
    "timeout 5 rm -rf /",
    "echo \"$(rm -rf /)\"",
    "echo `rm -rf /`",
    "echo x \"`\\\"rm\\\" -rf /`\"",
    "echo `echo \\`rm -rf /\\``",
    "echo x \"`r\\\\\nm -rf /`\"",
    "cat <(rm -rf /)",
    "sh -c 'rm -rf /'",
    "bash -c \"r\\\"\\\"m -rf /\"",
    "eval 'rm -rf /'",
    "if true; then rm -rf /; fi",
    "$CMD -rf /",
    "{r,}m -rf /",
    "echo a | xargs rm",
];

#[tokio::test]
async fn found_deny_dodges_are_refused() {
    let test = host(DENY_RULES).await;
    for line in FOUND_DODGES {
        let session = test.session();
        let mut locked = session.lock().await;
        let arguments = json!({"key": "k", "value": 1, "command": line});
        let result = test.host.invoke_tool(&mut locked, "remember", &arguments, &*test.events).await.unwrap();
        assert!(
            !result.ok && result.output.contains("no deleting"),
            "`{line}` dodged the deny rule: {}",
            result.output
        );
    }
    // Reading commands as the shell does refuses nothing that runs no denied command.
    // `env ls "$HOME"` was a finding: the word after the wrapped program was read as a
    // program too, and `$HOME` as one named only at run time.
    for line in [
        "echo 'rm -rf /'",
        "git commit -m \"rm it\"",
        "ls rm",
        "echo \"$HOME\" && ls -la",
        "env ls \"$HOME\"",
    ] {
        let session = test.session();
        let mut locked = session.lock().await;
        let arguments = json!({"key": "k", "value": 1, "command": line});
        let result = test.host.invoke_tool(&mut locked, "remember", &arguments, &*test.events).await.unwrap();
        assert!(result.ok, "`{line}` was refused: {}", result.output);
    }
}

/// Found by fuzzing: the splitter ended a double-quoted string at an escaped quote (or a
/// `$'…'` string at an escaped `'`), so the rest of the line, chained commands included,
/// read as one quoted argument of the allowed command.
#[tokio::test]
async fn escaped_quotes_do_not_hide_chained_commands_from_an_allow() {
    let test = host(ALLOW_RULES).await;
    for line in ["git status \"a\\\"b\";rm -rf /", "ls $'it\\'s'; rm -rf /", "ls \"\\\\\"; cat notes.txt"] {
        let session = test.session();
        let mut locked = session.lock().await;
        let arguments = json!({"key": "k", "value": 1, "command": line});
        let result = test.host.invoke_tool(&mut locked, "remember", &arguments, &*test.events).await.unwrap();
        assert!(!result.ok, "`{line}` was allowed: {}", result.output);
    }
    let session = test.session();
    let mut locked = session.lock().await;
    let arguments = json!({"key": "k", "value": 1, "command": "git status \"a\\\"b\" && ls 'x;y'"});
    let result = test.host.invoke_tool(&mut locked, "remember", &arguments, &*test.events).await.unwrap();
    assert!(result.ok, "{}", result.output);
}
