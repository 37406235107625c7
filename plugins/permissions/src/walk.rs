//! Path rules on what the fs tools really reach. A walking call (`grep`, `glob`, `list_dir`)
//! with no `path`, or a folder, reaches every file below it, so a rule on one file cannot
//! match the call itself; and a path may be a symlink to a guarded file. So the call's
//! `exclude` argument gets the patterns of the deny and ask path rules that apply, and the
//! fs plugin leaves those paths out of a walk and refuses a path whose links lead to one.
//! Refusing walking calls instead would make grep and glob useless as soon as one path is
//! guarded; an ask cannot be put per file in the middle of a walk, so ask paths are left
//! out too.

use serde_json::Value;

use crate::config::{Rule, Verdict};
use crate::rules::{Call, tool_matches};

/// The fs tools that walk folders and honour `exclude`.
pub const WALKING_TOOLS: &[&str] = &["grep", "glob", "list_dir"];

/// The fs tools that open one path and refuse it when its links lead to an excluded one.
const PATH_TOOLS: &[&str] = &["read_file", "write_file", "edit_file"];

/// Every fs tool whose calls may get an `exclude` list.
pub fn fs_tools() -> impl Iterator<Item = &'static str> {
    WALKING_TOOLS.iter().chain(PATH_TOOLS).copied()
}

/// The tool whose path rules guard reading a file.
const READING_TOOL: &str = "read_file";

/// The path patterns `call` must not reach: those of deny and ask rules for its tool, and
/// for a walk also those for reading files.
pub fn guarded_paths(call: &Call, rules: &[Rule]) -> Vec<String> {
    // A tool of another plugin may share a name; the fs tools' arguments tell them apart
    // (an `exclude` it does not know would fail its schema).
    let has = |field: &str| call.arguments.get(field).is_some();
    let reading = match call.tool {
        "grep" if has("text") => Call { tool: READING_TOOL, ..*call },
        "glob" if has("pattern") => Call { tool: READING_TOOL, ..*call },
        "list_dir"
            if call
                .arguments
                .as_object()
                .is_some_and(|a| a.keys().all(|k| k == "path" || k == "exclude")) =>
        {
            Call { tool: READING_TOOL, ..*call }
        }
        tool if PATH_TOOLS.contains(&tool) && has("path") => *call,
        _ => return Vec::new(),
    };
    rules
        .iter()
        .filter(|rule| rule.decision != Verdict::Allow)
        .filter(|rule| tool_matches(rule, call) || tool_matches(rule, &reading))
        .filter_map(|rule| rule.args.as_ref().and_then(|a| a.path.clone()))
        .fold(Vec::new(), |mut all, path| {
            if !all.contains(&path) {
                all.push(path);
            }
            all
        })
}

/// `arguments` with `guarded` added to its `exclude` list (kept as the model gave it
/// otherwise), as JSON text; `None` when there is nothing to add or no object to add it to.
pub fn with_exclusions(arguments: &Value, guarded: &[String]) -> Option<String> {
    if guarded.is_empty() {
        return None;
    }
    let mut arguments = arguments.as_object()?.clone();
    let mut exclude: Vec<Value> =
        arguments.get("exclude").and_then(Value::as_array).cloned().unwrap_or_default();
    for path in guarded {
        let path = Value::String(path.clone());
        if !exclude.contains(&path) {
            exclude.push(path);
        }
    }
    arguments.insert("exclude".into(), Value::Array(exclude));
    serde_json::to_string(&Value::Object(arguments)).ok()
}
