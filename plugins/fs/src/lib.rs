//! File tools confined to the preopened `/workspace`: `read_file` (line ranges),
//! `write_file`, `edit_file` (exact text, optionally every occurrence), `list_dir`, `glob`
//! and `grep`. Paths are relative to the workspace; `..`, other absolute paths and
//! symlinks leading out are refused with a clear error before WASI would refuse them, and
//! FIFOs, devices and sockets are refused rather than opened. The walking tools leave out
//! what their `exclude` patterns name (the permissions plugin fills it from path rules).

mod glob;
mod ops;
mod paths;

use agent_host_sdk::prelude::*;

#[derive(Default)]
struct Fs;

fn tools() -> Vec<ToolSpec> {
    let path = json!({ "type": "string", "description": "Path relative to the workspace" });
    // Filled in by policy plugins (permissions) with the path rules a call must not reach:
    // walks leave those paths out, and a path whose symlinks lead to one is refused.
    let exclude = json!({
        "type": "array", "items": { "type": "string" },
        "description": "Path patterns to leave out"
    });
    vec![
        ToolSpec::new(
            "read_file",
            "Reads a text file, with line numbers; optionally only lines start_line..=end_line.",
        )
        .parameters(json!({
            "type": "object",
            "properties": {
                "path": path,
                "start_line": { "type": "integer", "minimum": 1 },
                "end_line": { "type": "integer", "minimum": 1 },
                "exclude": exclude
            },
            "required": ["path"], "additionalProperties": false
        })),
        ToolSpec::new("write_file", "Writes a whole file (creating folders), replacing what was there.")
            .parameters(json!({
                "type": "object",
                "properties": { "path": path, "content": { "type": "string" }, "exclude": exclude },
                "required": ["path", "content"], "additionalProperties": false
            }))
            .mutating(),
        ToolSpec::new(
            "edit_file",
            "Replaces exact text in a file. old_string must occur once, unless replace_all is true.",
        )
        .parameters(json!({
            "type": "object",
            "properties": {
                "path": path,
                "old_string": { "type": "string" },
                "new_string": { "type": "string" },
                "replace_all": { "type": "boolean" },
                "exclude": exclude
            },
            "required": ["path", "old_string", "new_string"], "additionalProperties": false
        }))
        .mutating(),
        ToolSpec::new("list_dir", "Lists a folder (default: the workspace root); folders end with `/`.")
            .parameters(json!({
                "type": "object", "properties": { "path": path, "exclude": exclude }, "additionalProperties": false
            })),
        ToolSpec::new("glob", "Finds files by path pattern: `*` within a folder name, `**` across folders.")
            .parameters(json!({
                "type": "object",
                "properties": { "pattern": { "type": "string" }, "exclude": exclude },
                "required": ["pattern"], "additionalProperties": false
            })),
        ToolSpec::new(
            "grep",
            "Finds lines containing the exact text, optionally only in files matching glob.",
        )
        .parameters(json!({
            "type": "object",
            "properties": { "text": { "type": "string" }, "glob": { "type": "string" }, "exclude": exclude },
            "required": ["text"], "additionalProperties": false
        })),
    ]
}

impl Plugin for Fs {
    fn manifest(&self) -> Manifest {
        Manifest::new("fs", env!("CARGO_PKG_VERSION")).with(Capabilities::PROVIDE | Capabilities::CALL_TOOL)
    }

    fn provide(&self, _ctx: &Context) -> Contribution {
        let mut contribution = Contribution::default()
            .instructions("File tools work inside the workspace folder; give paths relative to it.");
        contribution.tools = tools();
        contribution.reusable()
    }

    fn call_tool(&self, _ctx: &Context, call: ToolCall) -> Result<String, String> {
        match call.name.as_str() {
            "read_file" => ops::read_file(call.args()?),
            "write_file" => ops::write_file(call.args()?),
            "edit_file" => ops::edit_file(call.args()?),
            "list_dir" => ops::list_dir(call.args()?),
            "glob" => ops::glob(call.args()?),
            "grep" => ops::grep(call.args()?),
            other => Err(format!("the fs plugin has no tool named `{other}`")),
        }
    }
}

export_plugin!(Fs);
