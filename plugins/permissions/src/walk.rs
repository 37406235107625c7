//! Path rules on the tools that walk the workspace (`grep`, `glob`, `list_dir`): a call with
//! no `path`, or a folder, reaches every file below it, so a rule on one file cannot match
//! the call itself. Instead the call's `exclude` argument gets the patterns of the deny and
//! ask path rules that apply to reading, and the fs plugin leaves those paths out of the walk.
//! Refusing such calls would make grep and glob useless as soon as one path is guarded; an
//! ask cannot be put per file in the middle of a walk, so ask paths are left out too.

use serde_json::Value;

use crate::config::{Rule, Verdict};
use crate::rules::{Call, tool_matches};

/// The fs tools that walk folders and honour `exclude`.
pub const WALKING_TOOLS: &[&str] = &["grep", "glob", "list_dir"];

/// The tool whose path rules guard reading a file.
const READING_TOOL: &str = "read_file";

/// The path patterns a walk by `call` must leave out: those of deny and ask rules for the
/// walking tool itself or for reading files.
pub fn guarded_paths(call: &Call, rules: &[Rule]) -> Vec<String> {
    if !WALKING_TOOLS.contains(&call.tool) {
        return Vec::new();
    }
    let reading = Call { tool: READING_TOOL, ..*call };
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
