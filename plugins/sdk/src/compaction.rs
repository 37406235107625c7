//! Taking part in compaction (contract 0.2.3): what a long session sends in place of the
//! oldest part of its history. A plugin registers any of three hooks on its [`Plugin`]:
//! [`on_compact`](Plugin::on_compact) replaces a prefix of the history (at most one loaded
//! plugin may), [`on_pre_compact`](Plugin::on_pre_compact) may veto a compaction or name
//! messages that must survive it, and [`on_post_compact`](Plugin::on_post_compact) hears what
//! one did. `spec` announces exactly the hooks registered (narrowed by the configuration with
//! [`compaction_hooks_for`](Plugin::compaction_hooks_for)), and the trigger
//! [`compact_trigger`](Plugin::compact_trigger) reads from the configuration.
//!
//! The host checks what `compact` returns before it uses it: a tool call parted from its
//! result, the last user message dropped or a result over `budget.limit` is not used, and
//! the host truncates instead.

use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::bindings::agent_host::plugin::types::CallContext;
pub use crate::bindings::exports::agent_host::plugin::compactor::{
    Compacted, Compaction, CompactionBudget, CompactionHooks, CompactionReason, CompactorSpec,
    HistoryMessage, MessageId, MessageRole, PreCompactOutcome, Replacement, RequestedCall, SummaryMessage,
};
use crate::{Context, Plugin, log};

/// The `compact` hook: a compaction of `history` within the budget, none when there is
/// nothing to do at this size, or an error saying why (the host then truncates).
pub type Compact<C> =
    fn(&Context<C>, &[HistoryMessage], &CompactionBudget) -> Result<Option<Compaction>, String>;
/// The `pre-compact` hook: a veto, or messages to keep.
pub type PreCompact<C> = fn(&Context<C>, &CompactionBudget) -> PreCompactOutcome;
/// The `post-compact` hook: what a committed compaction did.
pub type PostCompact<C> = fn(&Context<C>, &Compacted);
/// The share of the room, in percent, past which the host asks `compact`; None leaves the
/// host's own `[compaction] trigger_percent`.
pub type CompactTrigger<C> = fn(&C) -> Option<u8>;
/// Of the compaction hooks registered, the ones a configuration uses.
pub type CompactionHooksFor<C> = fn(&C) -> CompactionHooks;

/// The compaction hooks a [`Plugin`] declares.
pub(crate) struct Compactor<C> {
    compact: Option<Compact<C>>,
    pre_compact: Option<PreCompact<C>>,
    post_compact: Option<PostCompact<C>>,
    trigger: Option<CompactTrigger<C>>,
    hooks_for: Option<CompactionHooksFor<C>>,
}

impl<C> Default for Compactor<C> {
    fn default() -> Self {
        Self { compact: None, pre_compact: None, post_compact: None, trigger: None, hooks_for: None }
    }
}

impl<C> Compactor<C> {
    /// The hooks registered, whatever the configuration.
    fn registered(&self) -> CompactionHooks {
        let mut hooks = CompactionHooks::empty();
        let declared = [
            (self.compact.is_some(), CompactionHooks::COMPACT),
            (self.pre_compact.is_some(), CompactionHooks::PRE_COMPACT),
            (self.post_compact.is_some(), CompactionHooks::POST_COMPACT),
        ];
        for (present, flag) in declared {
            if present {
                hooks |= flag;
            }
        }
        hooks
    }
}

impl<C: DeserializeOwned + Serialize + 'static> Plugin<C> {
    /// Compacts the history: replaces a prefix of what is sent by kept messages and new
    /// summaries ([`Compaction`]), within `budget`. It may ask the model
    /// ([`model::complete`](crate::model::complete)) for a summary, within its deadline.
    pub fn on_compact(mut self, hook: Compact<C>) -> Self {
        self.compactor.compact = Some(hook);
        self
    }

    /// Before any compaction: veto it (honoured while the request still fits the window), or
    /// name messages that must survive it.
    pub fn on_pre_compact(mut self, hook: PreCompact<C>) -> Self {
        self.compactor.pre_compact = Some(hook);
        self
    }

    /// After a compaction was committed, by any plugin or the host's truncation: refresh what
    /// is derived from the history.
    pub fn on_post_compact(mut self, hook: PostCompact<C>) -> Self {
        self.compactor.post_compact = Some(hook);
        self
    }

    /// The trigger of [`on_compact`](Self::on_compact) under a configuration: the share of
    /// the room a request has (`context-window` less `max-output-tokens`), in percent.
    pub fn compact_trigger(mut self, trigger: CompactTrigger<C>) -> Self {
        self.compactor.trigger = Some(trigger);
        self
    }

    /// Narrows the registered compaction hooks by configuration: `spec` announces those
    /// registered that `hooks` returns, so the host never calls the others. Without it every
    /// registered hook is announced.
    pub fn compaction_hooks_for(mut self, hooks: CompactionHooksFor<C>) -> Self {
        self.compactor.hooks_for = Some(hooks);
        self
    }

    // The `compactor` exports, as the generated `Guest` impl and unit tests call them.

    /// The hooks registered (those the configuration uses) and the trigger, for the
    /// configuration `configure` returned. One that does not fit `C` announces no hook it
    /// would narrow, and no trigger; the error is logged.
    pub fn spec_raw(&self, config: &str) -> CompactorSpec {
        let registered = self.compactor.registered();
        let parsed = serde_json::from_str::<C>(config).map_err(|error| {
            log::error(&format!("{}: the configuration does not fit: {error}", self.name));
        });
        let Ok(config) = parsed else {
            let narrowed = self.compactor.hooks_for.map_or(registered, |_| CompactionHooks::empty());
            return CompactorSpec { hooks: narrowed, trigger_percent: None };
        };
        let used = self.compactor.hooks_for.map_or(CompactionHooks::all(), |hooks_for| hooks_for(&config));
        CompactorSpec {
            hooks: registered & used,
            trigger_percent: self.compactor.trigger.and_then(|trigger| trigger(&config)),
        }
    }

    /// Runs the `compact` hook; none when there is none.
    pub fn compact_raw(
        &self,
        ctx: CallContext,
        history: &[HistoryMessage],
        budget: &CompactionBudget,
    ) -> Result<Option<Compaction>, String> {
        let Some(hook) = self.compactor.compact else { return Ok(None) };
        Context::with(ctx, None, |ctx| hook(ctx, history, budget))?
    }

    /// Runs the `pre-compact` hook; no veto and nothing to keep when there is none, or when
    /// the configuration cannot be read (logged).
    pub fn pre_compact_raw(&self, ctx: CallContext, budget: &CompactionBudget) -> PreCompactOutcome {
        let Some(hook) = self.compactor.pre_compact else { return PreCompactOutcome::default() };
        self.with_context(ctx, |ctx| hook(ctx, budget)).unwrap_or_default()
    }

    /// Runs the `post-compact` hook, if any.
    pub fn post_compact_raw(&self, ctx: CallContext, done: &Compacted) {
        if let Some(hook) = self.compactor.post_compact {
            self.with_context(ctx, |ctx| hook(ctx, done));
        }
    }
}

// The types are generated by wit-bindgen, so the impl cannot be a derive.
#[allow(clippy::derivable_impls)]
impl Default for PreCompactOutcome {
    /// No veto, nothing to keep.
    fn default() -> Self {
        Self { veto: None, keep: Vec::new() }
    }
}

impl PreCompactOutcome {
    /// Not now; `reason` says why.
    pub fn veto(reason: impl Into<String>) -> Self {
        Self { veto: Some(reason.into()), keep: Vec::new() }
    }

    /// These messages must survive the compaction.
    pub fn keep(ids: impl IntoIterator<Item = MessageId>) -> Self {
        Self { veto: None, keep: ids.into_iter().collect() }
    }
}

impl SummaryMessage {
    /// A new message as if the user had said it (a summary of the conversation).
    pub fn user(content: impl Into<String>) -> Self {
        Self { role: MessageRole::User, content: content.into() }
    }

    /// A new message as the assistant's (a stand-in for its old tool calls).
    pub fn assistant(content: impl Into<String>) -> Self {
        Self { role: MessageRole::Assistant, content: content.into() }
    }
}

impl Compaction {
    /// The new messages this compaction writes.
    pub fn summaries(&self) -> impl Iterator<Item = &SummaryMessage> {
        self.entries.iter().filter_map(|entry| match entry {
            Replacement::Summary(message) => Some(message),
            Replacement::Keep(_) => None,
        })
    }

    /// The messages it keeps, in order.
    pub fn kept(&self) -> impl Iterator<Item = MessageId> + '_ {
        self.entries.iter().filter_map(|entry| match entry {
            Replacement::Keep(id) => Some(*id),
            Replacement::Summary(_) => None,
        })
    }
}

impl CompactionReason {
    /// The name the host's event stream uses: `threshold`, `requested`, `context_too_long`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Threshold => "threshold",
            Self::Requested => "requested",
            Self::ContextTooLong => "context_too_long",
        }
    }
}

impl fmt::Display for MessageId {
    /// `message #3` or `summary #1`, as the host names them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Message(index) => write!(f, "message #{index}"),
            Self::Summary(number) => write!(f, "summary #{number}"),
        }
    }
}
