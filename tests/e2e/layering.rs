//! The architecture as a test (docs/architecture.md): every module of `host/src` imports only
//! from the layers below its own, and no host code names a stock plugin or one of its private
//! settings. Both are easy to break by accident and invisible in review of a single file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::repo_root;

/// The host's top-level modules, bottom layer first. A module may use its own items and
/// those of any lower layer, never a module of its own layer or above.
const LAYERS: &[&[&str]] = &[
    &["conversation", "sanitize", "recent"],
    &["config", "events", "compaction"],
    &["state", "sandbox"],
    &["runtime"],
    &["plugins", "model"],
    &["mcp"],
    &["agent"],
    &["reload"],
    &["serve"],
    &["cli"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// The top-level module a file of `host/src` belongs to: `agent` for `agent/turn.rs`,
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

/// The stock plugins' crate names (every plugin crate under `plugins/`, not the SDK or the
/// test plugins) and the private settings a host once read.
fn stock_names() -> Vec<String> {
    let plugins = repo_root().join("plugins");
    let mut names: Vec<String> = std::fs::read_dir(&plugins)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("Cargo.toml").is_file())
        .map(|path| path.file_name().unwrap().to_str().unwrap().to_owned())
        .filter(|name| name != "sdk")
        .collect();
    names.sort();
    names
}

#[test]
fn host_code_names_no_stock_plugin() {
    let names = stock_names();
    assert!(names.iter().any(|name| name == "agent-mode"), "the stock set was found: {names:?}");
    let src = repo_root().join("host/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            for name in &names {
                let quoted = [format!("\"{name}\""), format!("\"{name}@"), format!("\"{name}/")];
                // Names that are also ordinary words of this code (`std::fs`, "the shell",
                // the `compaction` module) count only quoted; the others anywhere as a word.
                let as_word = !matches!(name.as_str(), "fs" | "shell" | "compaction");
                let line = &line.replace(".permissions()", "");
                let hit = quoted.iter().any(|q| line.contains(q.as_str()))
                    || (as_word
                        && line
                            .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
                            .any(|word| word == name));
                if hit {
                    found.push(format!(
                        "{}:{}: {name}: {}",
                        file.strip_prefix(&src).unwrap().display(),
                        number + 1,
                        line.trim()
                    ));
                }
            }
            for key in ["mode_plugin", "loop_modes", "loop_enabled"] {
                if line.contains(key) {
                    found.push(format!(
                        "{}:{}: {key}: {}",
                        file.strip_prefix(&src).unwrap().display(),
                        number + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(found.is_empty(), "host code that names a stock plugin or its settings:\n{}", found.join("\n"));
}
