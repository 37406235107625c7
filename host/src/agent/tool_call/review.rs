//! Reviews (a plugin's `review`, contract 0.2.7): asked about a call the permission hooks
//! would put to the operator, before the operator is. The first that does not abstain
//! decides; every review is audited (`tool_reviewed`) with the call it reviewed. A failed
//! review is never a denial and never an approval: the operator is asked, as without it.

use serde_json::Value;

use super::ToolCallEnv;
use crate::agent::report::{forward_events, report_failure};
use crate::events::{CallDecision, Event, ReviewOutcome};
use crate::plugins::{Exports, ReviewVerdict, ToolUse};

/// What the reviews made of a call.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Reviewed {
    /// No plugin reviews, or every one abstained.
    NotDecided,
    Allowed,
    /// The reason goes to the model; `by` is the reviewing plugin's label.
    Denied {
        reason: String,
        by: String,
    },
    /// The first review with an opinion failed to give one.
    Failed {
        error: String,
        by: String,
    },
}

/// Asks the plugins that review about `call` (its arguments parsed as `arguments`), which the
/// permission hooks ask about for `asked`.
pub(super) async fn review(
    env: &ToolCallEnv<'_>,
    call: &ToolUse,
    arguments: &Value,
    asked: &str,
) -> Reviewed {
    for plugin in env.plugins().plugins().iter().filter(|p| p.implements(Exports::REVIEW)) {
        let verdict = match plugin.review(env.ctx, env.bag, call, asked).await {
            Ok(output) => {
                forward_events(env.sink, plugin, output.events);
                output.value
            }
            Err(error) => {
                report_failure(env.sink, &error);
                ReviewVerdict::Error(error.to_string())
            }
        };
        let (outcome, reason) = match &verdict {
            ReviewVerdict::Abstain => (ReviewOutcome::Abstain, None),
            ReviewVerdict::Allow => (ReviewOutcome::Allow, None),
            ReviewVerdict::Deny(reason) => (ReviewOutcome::Deny, Some(reason.clone())),
            ReviewVerdict::Error(error) => (ReviewOutcome::Error, Some(error.clone())),
        };
        env.sink.emit(&Event::ToolReviewed {
            id: call.call.id.clone(),
            name: call.call.name.clone(),
            plugin: call.plugin.clone(),
            arguments: arguments.clone(),
            reviewed_by: plugin.label(),
            verdict: outcome,
            reason,
        });
        let by = plugin.label();
        match verdict {
            ReviewVerdict::Abstain => continue,
            ReviewVerdict::Allow => {
                env.sink.emit(&Event::ToolDecision {
                    id: call.call.id.clone(),
                    name: call.call.name.clone(),
                    decision: CallDecision::AllowByReview,
                    reason: asked.to_owned(),
                    decided_by: by,
                });
                return Reviewed::Allowed;
            }
            ReviewVerdict::Deny(reason) => return Reviewed::Denied { reason, by },
            ReviewVerdict::Error(error) => return Reviewed::Failed { error, by },
        }
    }
    Reviewed::NotDecided
}
