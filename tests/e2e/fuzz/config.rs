//! Config parsing: the repository's own `config.toml`, mutated line by line (deleted,
//! duplicated, replaced, values swapped for random ones, random bytes spliced in), and
//! random text. Loading never panics; every error names the file, and a line that exists
//! in the text; mutations that keep the file valid still load, with the new value.

use std::path::{Path, PathBuf};

use agent_host::Config;
use agent_host::config::ConfigError;
use proptest::prelude::*;

use crate::support::repo_root;

fn base_path() -> PathBuf {
    repo_root().join("config.toml")
}

fn base_text() -> String {
    std::fs::read_to_string(base_path()).expect("the repository's config.toml")
}

/// A random TOML-ish value: the right types, the wrong types, out-of-range numbers, odd
/// strings and plain garbage.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        (0u64..3000).prop_map(|n| n.to_string()),
        any::<bool>().prop_map(|b| b.to_string()),
        any::<f64>().prop_map(|f| format!("{f:?}")),
        "\\PC{0,20}".prop_map(|s| format!("{s:?}")),
        "[a-z_]{1,10}".prop_map(|s| format!("\"{s}\"")),
        Just("[1, \"two\", { three = 3 }]".to_owned()),
        Just("{ memory_mb = 0 }".to_owned()),
        prop::sample::select(vec!["\"scripted\"", "\"openai\"", "\"allow\"", "\"deny\"", "0", "1025"])
            .prop_map(str::to_owned),
        Just("\"\u{0}\u{202e}\u{fffd}\"".to_owned()),
        "\\PC{0,12}",
    ]
}

/// A line to put somewhere: a header, a key with a random value, or random text.
fn line() -> impl Strategy<Value = String> {
    let keys = prop::sample::select(vec![
        "max_iterations",
        "on_ask",
        "provider",
        "model",
        "timeout_secs",
        "max_retries",
        "retry_backoff_ms",
        "script",
        "temperature",
        "path",
        "builtin",
        "cache_dir",
        "limits",
        "memory_mb",
        "timeout_ms",
        "max_output_kb",
        "state_value_kb",
        "state_keys",
        "state_total_kb",
        "events_per_call",
        "endpoint_body_mb",
        "sse_line_kb",
        "enabled",
        "fail_open",
        "read_state",
        "process",
        "env",
        "instructions",
        "preset",
        "rules",
        "unknown_key",
    ]);
    let headers = prop::sample::select(vec![
        "[agent]",
        "[model]",
        "[storage]",
        "[runtime]",
        "[runtime.limits]",
        "[[plugin]]",
        "[plugin.config]",
        "[plugin.limits]",
        "[plugin.grants]",
        "[plugin.grants.dirs]",
        "[nope]",
        "[[agent]]",
        "[plugin",
    ]);
    prop_oneof![
        3 => (keys, value()).prop_map(|(key, value)| format!("{key} = {value}")),
        1 => headers.prop_map(str::to_owned),
        1 => "\\PC{0,30}",
        1 => prop::collection::vec(any::<u8>(), 0..12).prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Replace(usize, String),
    /// Keeps the key of a `key = value` line and puts a random value after it.
    NewValue(usize, String),
    Insert(usize, String),
    /// Cuts the text at a byte (on a character boundary).
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<prop::sample::Index>();
    prop_oneof![
        at.clone().prop_map(|i| Mutation::Delete(i.index(1 << 16))),
        at.clone().prop_map(|i| Mutation::Duplicate(i.index(1 << 16))),
        (at.clone(), line()).prop_map(|(i, l)| Mutation::Replace(i.index(1 << 16), l)),
        (at.clone(), value()).prop_map(|(i, v)| Mutation::NewValue(i.index(1 << 16), v)),
        (at.clone(), line()).prop_map(|(i, l)| Mutation::Insert(i.index(1 << 16), l)),
        at.prop_map(|i| Mutation::Truncate(i.index(1 << 16))),
    ]
}

fn apply(text: &str, mutations: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for mutation in mutations {
        let n = lines.len().max(1);
        match mutation {
            Mutation::Delete(i) if !lines.is_empty() => {
                lines.remove(i % n);
            }
            Mutation::Duplicate(i) if !lines.is_empty() => {
                let copy = lines[i % n].clone();
                lines.insert(i % n, copy);
            }
            Mutation::Replace(i, line) if !lines.is_empty() => lines[i % n] = line.clone(),
            Mutation::NewValue(i, value) if !lines.is_empty() => {
                let line = &mut lines[i % n];
                if let Some((key, _)) = line.split_once('=') {
                    *line = format!("{key}= {value}");
                }
            }
            Mutation::Insert(i, line) => lines.insert(i % (lines.len() + 1), line.clone()),
            Mutation::Truncate(i) => {
                let mut joined = lines.join("\n");
                let mut end = i % (joined.len() + 1);
                while !joined.is_char_boundary(end) {
                    end -= 1;
                }
                joined.truncate(end);
                lines = joined.lines().map(str::to_owned).collect();
            }
            _ => {}
        }
    }
    lines.join("\n")
}

/// What every error must say: the file, and a line of the text when it names one.
fn check_error(error: &ConfigError, file: &Path, text: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(&error.file, file);
    let shown = error.to_string();
    prop_assert!(shown.starts_with(&file.display().to_string()), "{}", shown);
    prop_assert!(!error.message.trim().is_empty(), "an error with no message: {}", shown);
    let line = error.line.ok_or_else(|| TestCaseError::fail(format!("no line in `{shown}` for:\n{text}")))?;
    let lines = text.split('\n').count();
    prop_assert!((1..=lines).contains(&line), "line {} of {}: {}", line, lines, shown);
    // A field named by a validation error must be on the line named.
    if let Some(key) = error.field.as_deref().and_then(|f| f.rsplit('.').next())
        && error.message.starts_with("must be")
    {
        let named = text.split('\n').nth(line - 1).unwrap_or_default();
        prop_assert!(named.contains(key), "`{}` is not on line {} (`{}`): {}", key, line, named, shown);
    }
    Ok(())
}

fn check_text(text: &str) -> Result<(), TestCaseError> {
    let file = base_path();
    match Config::parse(text, &file) {
        Ok(_) => Ok(()),
        Err(error) => check_error(&error, &file, text),
    }
}

#[test]
fn mutated_configs_load_or_name_file_and_line() {
    let base = base_text();
    let mut runner = super::runner(300);
    runner
        .run(&prop::collection::vec(mutation(), 1..5), |mutations| check_text(&apply(&base, &mutations)))
        .unwrap();
    super::report("config (mutated)", &runner);
}

#[test]
fn random_text_never_panics_and_names_the_file() {
    let mut runner = super::runner(300);
    let text =
        prop_oneof!["\\PC{0,200}", prop::collection::vec(line(), 0..12).prop_map(|lines| lines.join("\n")),];
    runner.run(&text, |text| check_text(&text)).unwrap();
    super::report("config (random text)", &runner);
}

/// Random bytes, through the file loader: text that is not UTF-8 is an error that names
/// the file and the line of the first bad byte.
#[test]
fn random_bytes_from_a_file_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.toml");
    let mut runner = super::runner(200);
    runner
        .run(&prop::collection::vec(any::<u8>(), 0..300), |bytes| {
            std::fs::write(&file, &bytes).unwrap();
            let canonical = std::fs::canonicalize(&file).unwrap();
            match Config::load(&file) {
                Ok(_) => Ok(()),
                Err(error) => {
                    let text = String::from_utf8_lossy(&bytes);
                    let expected = if std::str::from_utf8(&bytes).is_ok() { &canonical } else { &file };
                    check_error(&error, expected, &text)
                }
            }
        })
        .unwrap();
    super::report("config (random bytes)", &runner);
}

/// Mutations that keep the file valid: a numeric setting set to any in-range value, the
/// `on_ask` answer flipped, comments and blank lines added. The file loads and the value
/// reads back.
#[test]
fn valid_mutations_still_load() {
    let base = base_text();
    let mut runner = super::runner(200);
    let strategy = (
        1u32..10_000,
        prop::bool::ANY,
        1u32..=1024,
        1u64..1_000_000,
        prop::collection::vec((any::<prop::sample::Index>(), "# \\PC{0,20}|"), 0..6),
    );
    runner
        .run(&strategy, |(iterations, allow, memory, timeout, comments)| {
            let mut lines: Vec<String> = base
                .lines()
                .map(|line| match line.split_once(" = ").map(|(key, _)| key) {
                    Some("max_iterations") => format!("max_iterations = {iterations}"),
                    Some("on_ask") => format!("on_ask = \"{}\"", if allow { "allow" } else { "deny" }),
                    Some("limits") => format!(
                        "limits = {{ memory_mb = {memory}, timeout_ms = {timeout}, max_output_kb = 256 }}"
                    ),
                    _ => line.to_owned(),
                })
                .collect();
            for (at, comment) in comments {
                lines.insert(at.index(lines.len() + 1), comment);
            }
            let text = lines.join("\n");
            let config = Config::parse(&text, &base_path())
                .map_err(|error| TestCaseError::fail(format!("{error}\n{text}")))?;
            prop_assert_eq!(config.agent.max_iterations, iterations);
            prop_assert_eq!(config.agent.on_ask == agent_host::config::OnAsk::Allow, allow);
            prop_assert_eq!(config.runtime.limits.memory_mb, memory);
            prop_assert_eq!(config.runtime.limits.timeout_ms, timeout);
            prop_assert_eq!(config.plugins.len(), 3);
            Ok(())
        })
        .unwrap();
    super::report("config (valid mutations)", &runner);
}
