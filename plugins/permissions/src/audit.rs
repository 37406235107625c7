//! The audit log: two JSON lines per tool call, appended to `/audit/audit.jsonl` in the
//! folder the operator granted as `/audit`. The first is written when the call is decided,
//! before it runs (tool, arguments, decision, reason), so a call that hangs or brings the
//! host down is still on record; the second when it has finished (ok, output size).

use std::io::Write;

use agent_host_sdk::prelude::*;

use crate::config::{Config, Verdict};

/// Where the log goes inside the plugin's sandbox.
const AUDIT_FILE: &str = "/audit/audit.jsonl";

/// Appends the record of a decision, before the call runs.
pub fn decided(ctx: &Context<Config>, use_: &ToolUse, verdict: Verdict, reason: &str) -> Result<(), String> {
    let mut line = common(ctx, use_, "decided");
    line["decision"] = json!(verdict);
    line["reason"] = json!(reason);
    append(&line)
}

/// Appends the record of a finished (or refused) call.
pub fn finished(ctx: &Context<Config>, use_: &ToolUse, result: &ToolResult) -> Result<(), String> {
    let mut line = common(ctx, use_, "finished");
    line["ok"] = json!(result.ok);
    line["output_bytes"] = json!(result.output.len());
    append(&line)
}

fn common(ctx: &Context<Config>, use_: &ToolUse, phase: &str) -> Value {
    let arguments: Value = serde_json::from_str(&use_.call.arguments).unwrap_or(Value::Null);
    json!({
        "phase": phase,
        "session": ctx.session_id,
        "call_id": use_.call.id,
        "tool": use_.call.name,
        "plugin": use_.plugin,
        "mutates": use_.mutates,
        "arguments": arguments,
    })
}

fn append(line: &Value) -> Result<(), String> {
    let mut file =
        std::fs::OpenOptions::new().create(true).append(true).open(AUDIT_FILE).map_err(|e| {
            format!("{AUDIT_FILE}: {e} (grant the folder with [plugin.grants.dirs] \"/audit\")")
        })?;
    // One write per line, so lines of calls decided at once never interleave.
    file.write_all(format!("{line}\n").as_bytes()).map_err(|e| format!("{AUDIT_FILE}: {e}"))
}
