//! The architecture as a test (docs/architecture.md): every module of the core (`host/src`)
//! imports only from the layers below its own (the front-end crates above it are kept apart by
//! Cargo); the map — `host/src/lib.rs`'s list and docs/architecture.md's table — names every
//! layer as it is; and nothing the host ships — the core and the front ends, Rust, and the web
//! page's JavaScript, HTML and CSS alike — names a stock plugin, an event kind one emits, one of
//! its state keys or a private setting a host once read. All are easy to break by accident and
//! invisible in review of a single file. The names are read from `plugins/`, so a new stock
//! plugin, event or key is covered the day it is written.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::repo_root;

/// The host's top-level modules, bottom layer first. A module may use its own items and
/// those of any lower layer, never a module of its own layer or above.
const LAYERS: &[&[&str]] = &[
    &["unpoisoned"],
    &["tools"],
    &["conversation", "sanitize", "recent", "human_time", "telemetry", "tls"],
    &["config", "events", "compacted_history"],
    &["state", "sandbox"],
    &["runtime"],
    &["oci"],
    &["plugins", "model"],
    &["mcp"],
    &["agent"],
    &["reload"],
];

/// The front ends, crates over the core, bottom first: what Cargo keeps apart (none depends on
/// one of its own row or above), and what the map's table lists above the core's layers.
const FRONT_ENDS: &[&[&str]] = &[&["serve", "acp"], &["cli"]];

/// The folders whose files the host ships: the core's and each front end's sources.
fn shipped_folders() -> Vec<PathBuf> {
    let root = repo_root();
    let mut folders = vec![root.join("host/src")];
    folders.extend(FRONT_ENDS.iter().flat_map(|row| row.iter()).map(|name| root.join(name).join("src")));
    folders
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// Every file under `dir`, whatever its extension.
fn all_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all_files(&path, found);
        } else {
            found.push(path);
        }
    }
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let mut all = Vec::new();
    all_files(dir, &mut all);
    found.extend(all.into_iter().filter(|path| path.extension().is_some_and(|ext| ext == "rs")));
}

/// The top-level module a file of `host/src` belongs to: `agent` for `agent/turn/mod.rs`,
/// `sanitize` for `sanitize.rs`; none for the crate root and the binary.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?.to_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_owned();
    (!matches!(name.as_str(), "lib" | "main")).then_some(name)
}

/// Every top-level module a file names through `crate::` in code (comments may point
/// anywhere), including grouped uses (`use crate::{a::X, b::Y}`).
fn modules_used(text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| format!("{line}\n"))
        .collect();
    let text = code.as_str();
    let mut used = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                let name: String =
                    item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    used.insert(name);
                }
            }
        } else {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            used.insert(name);
        }
    }
    used
}

#[test]
fn no_module_imports_from_its_own_layer_or_above() {
    let src = repo_root().join("host/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else { continue };
        let own = layer_of(&module).unwrap_or_else(|| {
            panic!("host/src/{module} is in no layer of this test: add it where docs/architecture.md puts it")
        });
        let text = std::fs::read_to_string(file).unwrap();
        for used in modules_used(&text) {
            if used == module {
                continue;
            }
            match layer_of(&used) {
                Some(layer) if layer < own => {}
                Some(_) => {
                    wrong.push(format!("{} uses crate::{used}", file.strip_prefix(&src).unwrap().display()))
                }
                None => {}
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layering:\n{}", wrong.join("\n"));
}

/// The stock plugins' folders (every plugin crate under `plugins/`, not the SDK or the test
/// plugins), each with its name as the crate calls itself.
fn stock_plugins() -> Vec<PathBuf> {
    let plugins = repo_root().join("plugins");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&plugins)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("Cargo.toml").is_file() && !path.ends_with("sdk"))
        .collect();
    found.sort();
    found
}

fn stock_names() -> Vec<String> {
    stock_plugins().iter().map(|path| path.file_name().unwrap().to_str().unwrap().to_owned()).collect()
}

/// Every string literal in the stock plugins' sources that follows one of `calls` (a call's
/// first argument, on its line or the next), and the value of every `const` whose name ends
/// in `const_suffix`, such as `PRESET_KEY`.
fn literals_after(calls: &[&str], const_suffix: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for plugin in stock_plugins() {
        let mut files = Vec::new();
        rust_files(&plugin.join("src"), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for call in calls {
                for (at, _) in text.match_indices(call) {
                    let rest = text[at + call.len()..].trim_start();
                    if let Some(quoted) = rest.strip_prefix('"') {
                        found.insert(quoted[..quoted.find('"').unwrap()].to_owned());
                    }
                }
            }
            for line in text.lines() {
                let Some((name, value)) = line.trim().strip_prefix("const ").and_then(|l| l.split_once('='))
                else {
                    continue;
                };
                if name.split(':').next().unwrap().trim().ends_with(const_suffix)
                    && let Some(quoted) = value.trim().strip_prefix('"')
                {
                    found.insert(quoted[..quoted.find('"').unwrap()].to_owned());
                }
            }
        }
    }
    found
}

/// The kinds of the events the stock plugins emit (`todos-changed`, `mode-changed`, ...).
fn stock_event_kinds() -> BTreeSet<String> {
    literals_after(&["events::emit(", "events::emit_json("], "_EVENT")
}

/// The keys the stock plugins keep state under (`items`, `mode`, `preset`, ...), their own
/// and those they read of another's.
fn stock_state_keys() -> BTreeSet<String> {
    let mut keys = literals_after(
        &[
            "state::set(",
            "state::set_kept(",
            "state::get(",
            "state::get_kept(",
            "state::get_or_default(",
            "state::get_kept_or_default(",
            "state::remove(",
        ],
        "_KEY",
    );
    // `state::get::<T>("key")` and `state::read::<T>(plugin, "key")`: the literal after the turbofish.
    for plugin in stock_plugins() {
        let mut files = Vec::new();
        rust_files(&plugin.join("src"), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for call in ["state::get::<", "state::get_or_default::<", "state::read::<"] {
                for (at, _) in text.match_indices(call) {
                    let rest = &text[at..];
                    let args = &rest[rest.find(">(").map_or(0, |i| i + 2)..];
                    let args = &args[..args.find(')').unwrap_or(args.len())];
                    if let Some(start) = args.find('"') {
                        let quoted = &args[start + 1..];
                        keys.insert(quoted[..quoted.find('"').unwrap()].to_owned());
                    }
                }
            }
        }
    }
    keys
}

/// The quotes a string is written in: Rust's, or in the page JavaScript's too. (Rust's
/// comments mark code with backquotes, which name a variable as often as a plugin.)
fn string_quotes(page: bool) -> &'static [char] {
    if page { &['"', '\'', '`'] } else { &['"'] }
}

/// Whether `line` quotes `word` whole as a string.
fn quotes(line: &str, word: &str, page: bool) -> bool {
    string_quotes(page).iter().any(|q| line.contains(&format!("{q}{word}{q}")))
}

/// The words of `line`: runs of letters, digits, `-` and `_`.
fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
}

/// Whether `line` names the state key `key`. A key that is also an ordinary word of code
/// (`mode`, `items`, `preset`) counts when quoted, or in the page (JavaScript, HTML, CSS) also
/// as a property or class (`.items`); a key of several words (`pending_notice`) anywhere.
/// Rust's test modules are left out: there, host tests keep state of their own under such
/// words (`notes`/`items`), which the host never ships.
fn names_state_key(line: &str, key: &str, page: bool) -> bool {
    if key.contains(['_', '-']) {
        return words(line).any(|word| word == key);
    }
    quotes(line, key, page)
        || (page
            && line.match_indices(&format!(".{key}")).any(|(at, _)| {
                !line[at + 1 + key.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '-')
            }))
}

/// `text` without its `#[cfg(test)]` modules: what a Rust file ships.
fn shipped(text: &str) -> String {
    match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => text[..at].to_owned(),
        None => text.to_owned(),
    }
}

/// The names the contract gives, `wit/plugin.wit` without its comments (which name stock
/// plugins as examples): the vocabulary the host shares with every plugin, stock or not.
fn contract_words() -> BTreeSet<String> {
    let wit = std::fs::read_to_string(repo_root().join("wit/plugin.wit")).unwrap();
    wit.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .flat_map(words)
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_names_are_read_from_the_stock_plugins() {
    let names = stock_names();
    assert!(names.iter().any(|name| name == "agent-mode"), "the stock set was found: {names:?}");
    let contract = contract_words();
    assert!(contract.contains("compaction"), "a stock plugin named after a name of the contract");
    for name in ["agent-mode", "todo", "goal", "skills", "fs", "shell", "permissions"] {
        assert!(!contract.contains(name), "{name} is no name of the contract");
    }
    let kinds = stock_event_kinds();
    for kind in ["todos-changed", "mode-changed", "permissions-changed"] {
        assert!(kinds.contains(kind), "{kind} among the stock event kinds {kinds:?}");
    }
    let keys = stock_state_keys();
    for key in ["items", "todos", "mode", "default_mode", "pending_notice", "preset", "next_id"] {
        assert!(keys.contains(key), "{key} among the stock state keys {keys:?}");
    }
    assert!(names_state_key("state['x'].items", "items", true));
    assert!(!names_state_key("state['x'].items", "items", false), "a Rust field may be called so");
    assert!(!names_state_key("el.itemsCount", "items", true));
    assert!(names_state_key("bag.get(\"todo\", \"items\")", "items", false));
    assert!(names_state_key("let next_id = 1;", "next_id", false));
}

/// Words a stock plugin is named after that are the host's own besides the contract's:
/// Rust's and Unix's (`std::fs`, a shell that runs a line) and the Agent Client Protocol's
/// (`subagents`, the client capability `clientCapabilities.subagents` by which an editor opts
/// in to child agents as sessions of their own, which acp/ reads by that name).
const HOST_WORDS: &[&str] = &["fs", "shell", "subagents"];

/// Whether `line` names the stock plugin `name`. Quoted as a plugin is named (`"todo"`,
/// `"fs@0.1.0"`, `"skills/..."`) it always does; as a word anywhere too, except where the word
/// is the host's own: the contract's names (a plugin named after the part of the contract it
/// implements: `compaction`, which the host speaks in its `[compaction]` settings, its
/// `compaction_*` events and its own truncation), [`HOST_WORDS`], and std's
/// `Metadata::permissions()`.
fn names_plugin(line: &str, name: &str, page: bool, contract_words: &BTreeSet<String>) -> bool {
    let quoted = quotes(line, name, page)
        || string_quotes(page)
            .iter()
            .any(|q| line.contains(&format!("{q}{name}@")) || line.contains(&format!("{q}{name}/")));
    let as_word = !contract_words.contains(name) && !HOST_WORDS.contains(&name);
    let line = line.replace(".permissions()", "");
    quoted || (as_word && words(&line).any(|word| word == name))
}

#[test]
fn a_host_word_counts_only_quoted_as_a_plugin_is_named() {
    let contract = contract_words();
    assert!(stock_names().iter().any(|name| name == "subagents"), "the stock plugin is called so");
    let names = |line: &str, name: &str, page: bool| names_plugin(line, name, page, &contract);
    // The protocol's capability, read by name in acp/: not the plugin.
    assert!(!names("    child_sessions: capabilities.subagents.is_some(),", "subagents", false));
    assert!(!names("// `subagents` is the protocol's own word", "subagents", false));
    // The plugin, named as a plugin is: found all the same.
    assert!(names(r#"    plugin_block("subagents", ""),"#, "subagents", false));
    assert!(names(r#"let label = "subagents@0.1.0";"#, "subagents", false));
    assert!(names(r#"let dir = "subagents/agents";"#, "subagents", false));
    assert!(names("const plugin = 'subagents';", "subagents", true));
    assert!(names(r#"let tool = "fs@0.1.0";"#, "fs", false));
    // A plugin's name that is no host word counts as a bare word too.
    assert!(names("if todo.is_empty() {", "todo", false));
    assert!(!names("let meta = std::fs::metadata(path)?;", "fs", false));
}

#[test]
fn host_code_names_no_stock_plugin_event_kind_or_state_key() {
    let names = stock_names();
    let kinds = stock_event_kinds();
    let keys = stock_state_keys();
    let contract_words = contract_words();
    let root = repo_root();
    let mut files = Vec::new();
    for folder in shipped_folders() {
        all_files(&folder, &mut files);
    }
    assert!(
        files.iter().any(|file| file.extension().is_some_and(|ext| ext == "js")),
        "the page's script is among the files read"
    );
    let mut found = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        let rust = file.extension().is_some_and(|ext| ext == "rs");
        let shipped_text = if rust { shipped(&text) } else { text.clone() };
        let mut report = |number: usize, what: &str, line: &str| {
            found.push(format!(
                "{}:{}: {what}: {}",
                file.strip_prefix(&root).unwrap().display(),
                number + 1,
                line.trim()
            ))
        };
        for (number, line) in text.lines().enumerate() {
            for name in &names {
                if names_plugin(line, name, !rust, &contract_words) {
                    report(number, name, line);
                }
            }
            for kind in &kinds {
                if line.contains(kind.as_str()) {
                    report(number, kind, line);
                }
            }
            for key in ["mode_plugin", "loop_modes", "loop_enabled"] {
                if line.contains(key) {
                    report(number, key, line);
                }
            }
        }
        for (number, line) in shipped_text.lines().enumerate() {
            for key in &keys {
                if names_state_key(line, key, !rust) {
                    report(number, &format!("state key {key}"), line);
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "host code that names a stock plugin, its events, its state or its settings:\n{}",
        found.join("\n")
    );
}

/// The modules `host/src` holds at its top: folders and files, the crate root left out.
fn core_modules() -> BTreeSet<String> {
    std::fs::read_dir(repo_root().join("host/src"))
        .unwrap()
        .filter_map(|entry| {
            let name = entry.unwrap().file_name().into_string().unwrap();
            let name = name.strip_suffix(".rs").map(str::to_owned).unwrap_or(name);
            (name != "lib").then_some(name)
        })
        .collect()
}

#[test]
fn every_module_of_the_core_is_in_one_layer_and_every_layer_exists() {
    let listed: BTreeSet<String> =
        LAYERS.iter().flat_map(|row| row.iter()).map(|name| (*name).to_owned()).collect();
    assert_eq!(core_modules(), listed, "host/src's modules, and this test's LAYERS");
    for name in FRONT_ENDS.iter().flat_map(|row| row.iter()) {
        let manifest = repo_root().join(name).join("Cargo.toml");
        assert!(manifest.is_file(), "the front end {name} is a crate: {} exists", manifest.display());
    }
}

#[test]
fn the_crate_roots_map_lists_every_module_of_the_core() {
    let lib = std::fs::read_to_string(repo_root().join("host/src/lib.rs")).unwrap();
    let map: String = lib.lines().filter_map(|line| line.strip_prefix("//!")).collect::<Vec<_>>().join("\n");
    let missing: Vec<&str> = LAYERS
        .iter()
        .flat_map(|row| row.iter().copied())
        .filter(|name| !map.contains(&format!("[`{name}`]")))
        .collect();
    assert!(missing.is_empty(), "host/src/lib.rs's map names no [`{missing:?}`]");
}

/// docs/architecture.md's table of layers, top to bottom: each row's modules, read from the
/// backquoted names of its "Where" column (`agent/`, `reload.rs`, `serve/`).
fn documented_layers() -> Vec<BTreeSet<String>> {
    let doc = std::fs::read_to_string(repo_root().join("docs/architecture.md")).unwrap();
    let table = &doc[doc.find("## Layers").expect("docs/architecture.md has a Layers section")..];
    table
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .map(|row| {
            let place = row.split('|').nth(2).unwrap_or_default();
            place
                .split('`')
                .skip(1)
                .step_by(2)
                .map(|name| name.trim_end_matches('/').trim_end_matches(".rs").to_owned())
                .collect()
        })
        .collect()
}

#[test]
fn the_architecture_documents_table_has_one_line_per_layer_as_they_are() {
    let expected: Vec<BTreeSet<String>> = FRONT_ENDS
        .iter()
        .rev()
        .chain(LAYERS.iter().rev())
        .map(|row| row.iter().map(|name| (*name).to_owned()).collect())
        .collect();
    assert_eq!(
        documented_layers(),
        expected,
        "docs/architecture.md's table, top to bottom, against FRONT_ENDS and LAYERS"
    );
}
