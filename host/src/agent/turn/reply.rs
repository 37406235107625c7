//! What the loop reports of a model reply: the `assistant_message` event with why the reply
//! ended and what it cost, and the answer a call gets when its reply was cut off.

use crate::events::{Event, ReplyStop, TokenUsage, ToolCallEvent};
use crate::model::StopReason;
use crate::tools::ToolCall;

/// A reply as the stream reports it.
pub(super) struct ReplyReport<'a> {
    pub text: &'a str,
    pub tool_calls: &'a [ToolCall],
    pub stop: ReplyStop,
    pub usage: Option<TokenUsage>,
    pub reasoning: &'a str,
}

impl ReplyReport<'_> {
    pub(super) fn event(&self) -> Event {
        let tool_calls = self
            .tool_calls
            .iter()
            .map(|c| ToolCallEvent { id: c.id.clone(), name: c.name.clone(), arguments: c.arguments.clone() })
            .collect();
        Event::AssistantMessage {
            text: self.text.to_owned(),
            tool_calls,
            stop: self.stop,
            usage: self.usage,
            reasoning: (!self.reasoning.is_empty()).then(|| self.reasoning.to_owned()),
        }
    }
}

/// The stream's word for why a reply ended.
pub(super) fn reply_stop(stop: &StopReason) -> ReplyStop {
    match stop {
        StopReason::Done => ReplyStop::Done,
        StopReason::ToolCalls => ReplyStop::ToolCalls,
        StopReason::Length => ReplyStop::Length,
        StopReason::Filtered => ReplyStop::Filtered,
        StopReason::Other(reason) => {
            tracing::debug!(reason, "the model's reply ended for a reason the host does not know");
            ReplyStop::Other
        }
    }
}

/// The result a tool call gets, unrun, when its reply hit the output limit: its arguments may
/// be cut short, and the model should try again in pieces that fit.
pub(super) fn cut_call_answer(max_output_tokens: Option<u32>) -> String {
    let limit = match max_output_tokens {
        Some(tokens) => format!("the output limit of {tokens} tokens"),
        None => "the endpoint's output limit".to_owned(),
    };
    format!(
        "This call was not run: your reply was cut off at {limit} before it was complete, so its \
         arguments may be incomplete. Retry with smaller steps: fewer tool calls per reply, and \
         long content split over several calls."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_leaves_out_reasoning_and_usage_it_does_not_have() {
        let report =
            ReplyReport { text: "hi", tool_calls: &[], stop: ReplyStop::Done, usage: None, reasoning: "" };
        let line = serde_json::to_value(report.event()).unwrap();
        assert_eq!(
            line,
            serde_json::json!({"type": "assistant_message", "text": "hi", "tool_calls": [], "stop": "done"})
        );
    }

    #[test]
    fn the_event_carries_stop_usage_and_reasoning_as_fields_of_their_own() {
        let usage =
            TokenUsage { input_tokens: 3, output_tokens: 1, cache_read_tokens: 2, cache_write_tokens: 0 };
        let report = ReplyReport {
            text: "",
            tool_calls: &[],
            stop: ReplyStop::Length,
            usage: Some(usage),
            reasoning: "hmm",
        };
        let line = serde_json::to_value(report.event()).unwrap();
        assert_eq!(line["stop"], "length");
        assert_eq!(
            line["usage"],
            serde_json::json!({"input_tokens": 3, "output_tokens": 1, "cache_read_tokens": 2, "cache_write_tokens": 0})
        );
        assert_eq!(line["reasoning"], "hmm");
        assert_eq!(line["text"], "");
    }

    #[test]
    fn a_cut_call_is_told_the_limit_when_the_deployment_set_one() {
        assert!(cut_call_answer(Some(512)).contains("the output limit of 512 tokens"));
        assert!(cut_call_answer(None).contains("the endpoint's output limit"));
        assert!(cut_call_answer(None).contains("smaller steps"));
    }
}
