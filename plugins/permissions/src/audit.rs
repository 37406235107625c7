//! The audit log: one JSON line per tool call, appended to `/audit/audit.jsonl` in the
//! folder the operator granted as `/audit`.

use std::io::Write;

use agent_host_sdk::prelude::*;

/// Where the log goes inside the plugin's sandbox.
const AUDIT_FILE: &str = "/audit/audit.jsonl";

/// Appends the record of one call.
pub fn append(ctx: &Context, use_: &ToolUse, result: &ToolResult) -> Result<(), String> {
    let arguments: Value = serde_json::from_str(&use_.call.arguments).unwrap_or(Value::Null);
    let line = json!({
        "session": ctx.session_id(),
        "call_id": use_.call.id,
        "tool": use_.call.name,
        "plugin": use_.plugin,
        "mutates": use_.mutates,
        "arguments": arguments,
        "ok": result.ok,
        "output_bytes": result.output.len(),
    });
    let mut file =
        std::fs::OpenOptions::new().create(true).append(true).open(AUDIT_FILE).map_err(|e| {
            format!("{AUDIT_FILE}: {e} (grant the folder with [plugin.grants.dirs] \"/audit\")")
        })?;
    writeln!(file, "{line}").map_err(|e| format!("{AUDIT_FILE}: {e}"))
}
