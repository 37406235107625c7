//! One JSON line per review in `/audit/reviews.jsonl` of the folder granted as `/audit`,
//! beside the permissions plugin's `audit.jsonl`: the exact call and what was decided.

use std::io::Write;

use agent_host_sdk::judge::ReviewVerdict;
use agent_host_sdk::prelude::*;

use crate::Config;

const AUDIT_FILE: &str = "/audit/reviews.jsonl";

pub fn append(ctx: &Context<Config>, call: &ToolUse, verdict: &ReviewVerdict) -> Result<(), String> {
    let arguments: Value = serde_json::from_str(&call.call.arguments).unwrap_or(Value::Null);
    let (decision, reason) = match verdict {
        ReviewVerdict::Abstain => ("abstain", None),
        ReviewVerdict::Allow => ("allow", None),
        ReviewVerdict::Deny(reason) => ("deny", Some(reason)),
        ReviewVerdict::Error(error) => ("error", Some(error)),
    };
    let line = json!({
        "session": ctx.session_id,
        "call_id": call.call.id,
        "tool": call.call.name,
        "plugin": call.plugin,
        "arguments": arguments,
        "decision": decision,
        "reason": reason,
    });
    let mut file =
        std::fs::OpenOptions::new().create(true).append(true).open(AUDIT_FILE).map_err(|e| {
            format!("{AUDIT_FILE}: {e} (grant the folder with [plugin.grants.dirs] \"/audit\")")
        })?;
    file.write_all(format!("{line}\n").as_bytes()).map_err(|e| format!("{AUDIT_FILE}: {e}"))
}
