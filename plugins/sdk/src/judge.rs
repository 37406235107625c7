//! The `judge` export (contract 0.2.7): a plugin that decides how a turn ends, reviews a call
//! the permission hooks would ask the operator about, or queues a turn after an operator
//! command. The host owns the loop and the meter: a continuation is a request it grants only
//! within `[agent]`'s caps, and the operator's input comes first.
//!
//! ```ignore
//! Plugin::new("goal", "0.1.0").on_turn_end(|ctx, reply| TurnVerdict::Continue("Keep going.".into()))
//! ```

use crate::Context;
pub use crate::bindings::agent_host::plugin::types::ToolUse;
pub use crate::bindings::exports::agent_host::plugin::judge::{
    JudgeSpec, ReviewVerdict, StopReason, StopVerdict, TurnVerdict,
};

/// `turn-end`: when the model ends a step without tool calls; the reply is its final text.
pub type TurnEnd<C> = fn(&Context<C>, &str) -> TurnVerdict;
/// `review`: the call, and why the permission hooks would ask about it.
pub type Review<C> = fn(&Context<C>, &ToolUse, &str) -> ReviewVerdict;
/// `queued`: a prompt to run as a turn after an operator command.
pub type Queued<C> = fn(&Context<C>) -> Option<String>;

/// The judge hooks a plugin implements.
pub(crate) struct Judge<C> {
    pub(crate) turn_end: Option<TurnEnd<C>>,
    pub(crate) review: Option<Review<C>>,
    pub(crate) queued: Option<Queued<C>>,
}

impl<C> Default for Judge<C> {
    fn default() -> Self {
        Self { turn_end: None, review: None, queued: None }
    }
}

impl<C> Judge<C> {
    pub(crate) fn spec(&self) -> JudgeSpec {
        JudgeSpec {
            turn_end: self.turn_end.is_some(),
            review: self.review.is_some(),
            queued: self.queued.is_some(),
        }
    }
}

/// A stop with `reason` and a line for the operator.
pub fn stop(reason: StopReason, message: impl Into<String>) -> TurnVerdict {
    TurnVerdict::Stop(StopVerdict { reason, message: message.into() })
}
