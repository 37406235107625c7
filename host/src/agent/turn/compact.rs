//! Compaction as the loop runs it: when it is due, who compacts (the one plugin that
//! implements `compact`, else the host's truncation), the checks a plugin's result must pass
//! before it is used, the durable commit of the new view, and the hooks before and after.
//! Compaction changes what is sent, never what is stored.

use crate::agent::report::{forward_events, heard, report_failure};
use crate::agent::{LiveSession, Snapshot};
use crate::compacted_history::{
    self, Compaction, CompactionBudget, Done, MessageId, Reason, Replacement, TRUNCATE,
};
use crate::events::{Event, EventSink};
use crate::model::tokens::TokenBudget;
use crate::plugins::{CallContext, Exports, LoadedPlugin, ResultPositions};
use crate::state::{CompactError, SessionStore, StoreError};

/// Everything a compaction runs with, from the turn or the command that asks for one.
pub(in crate::agent) struct Compactor<'a> {
    pub snapshot: &'a Snapshot,
    pub tokens: &'a TokenBudget,
    pub ctx: &'a CallContext,
    pub store: &'a dyn SessionStore,
    pub sink: &'a dyn EventSink,
}

/// How a compaction that was asked for ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompactOutcome {
    /// A new view was committed.
    Compacted(Done),
    /// A `pre-compact` hook said not now.
    Vetoed { plugin: String, reason: String },
    /// Nothing was changed, for this reason.
    Unchanged(String),
}

/// Whether the next request, estimated at `prompt_tokens` (the output reserve aside), is past
/// the trigger: the compacting plugin's own, else `[compaction] trigger_percent`, of the room
/// a request has (the window less the reserve). Never without a known window.
pub(super) fn due(snapshot: &Snapshot, tokens: &TokenBudget, prompt_tokens: u64) -> bool {
    let settings = snapshot.config.compaction;
    let Some(room) = room(tokens) else { return false };
    let trigger =
        snapshot.plugins.compactor().and_then(|p| p.compact_trigger()).unwrap_or(settings.trigger_percent);
    settings.enabled && prompt_tokens > share(room, trigger)
}

/// The tokens a request may take besides its reply.
fn room(tokens: &TokenBudget) -> Option<u64> {
    tokens.window.map(|window| u64::from(window).saturating_sub(u64::from(tokens.output_reserve)))
}

/// What the host's truncation aims the history at: its share of the room, less what the
/// request carries besides. When the endpoint refused a request the estimate said fits, or the
/// operator asks, that share may be met already: then half of what there is.
fn target(room: u64, percent: u8, beside_history: u64, history_tokens: u64, reason: Reason) -> u64 {
    let target = share(room, percent).saturating_sub(beside_history);
    match reason {
        Reason::Threshold => target,
        Reason::Requested | Reason::ContextTooLong => target.min(history_tokens / 2),
    }
}

fn share(room: u64, percent: u8) -> u64 {
    room * u64::from(percent) / 100
}

impl Compactor<'_> {
    /// Compacts `session`'s history for `reason`; `beside_history` is what the next request
    /// carries besides it (from the last estimate). A plugin's result that fails a check, an
    /// error or a trap is replaced by the host's truncation, and the event says why.
    pub async fn run(
        &self,
        session: &mut LiveSession,
        reason: Reason,
        beside_history: u64,
    ) -> Result<CompactOutcome, StoreError> {
        let Some(room) = room(self.tokens) else {
            return Ok(CompactOutcome::Unchanged(
                "the model's context window is not known: set [model] context_window".into(),
            ));
        };
        let tokens = {
            let (stored, _, account) = session.for_model_call();
            account.message_tokens(self.tokens, stored.to_send())
        };
        let history_tokens: u64 = tokens.iter().sum();
        let mut budget = CompactionBudget {
            reason,
            context_window: self.tokens.window.unwrap_or_default(),
            max_output_tokens: self.tokens.output_reserve,
            fixed_tokens: clamp(beside_history),
            history_tokens: clamp(history_tokens),
            limit: clamp(room.saturating_sub(beside_history)),
            target: clamp(target(
                room,
                self.snapshot.config.compaction.target_percent,
                beside_history,
                history_tokens,
                reason,
            )),
            keep: Vec::new(),
        };
        // Past the room, or after the endpoint refused, a veto would only send a request that fails.
        let must = reason == Reason::ContextTooLong || beside_history + history_tokens > room;
        if let Some((plugin, veto)) = self.pre_compact(session, &mut budget).await {
            if !must {
                self.sink.emit(&Event::CompactionVetoed { plugin: plugin.clone(), reason: veto.clone() });
                return Ok(CompactOutcome::Vetoed { plugin, reason: veto });
            }
            tracing::warn!(%plugin, %veto, "compaction vetoed, but the request does not fit: compacting anyway");
        }
        // The plugin's result was weighed when it was checked; a truncation is weighed below.
        let (compaction, strategy, note, fallback, size) =
            match self.plugin_compaction(session, &tokens, &budget).await {
                PluginResult::Usable { plugin, compaction, note, size } => {
                    (compaction, plugin, note, None, Some(size))
                }
                PluginResult::NothingToDo(plugin)
                    if reason == Reason::Threshold && history_tokens <= u64::from(budget.limit) =>
                {
                    return Ok(CompactOutcome::Unchanged(format!("{plugin} found nothing to compact")));
                }
                PluginResult::NothingToDo(plugin) => {
                    let why = format!("{plugin} found nothing to compact");
                    let (compaction, note) = self.truncation(session, &tokens, &budget, Some(&why));
                    (compaction, TRUNCATE.to_owned(), note, Some(why), None)
                }
                PluginResult::Unusable(why) => {
                    let (compaction, note) = self.truncation(session, &tokens, &budget, Some(&why));
                    (compaction, TRUNCATE.to_owned(), note, Some(why), None)
                }
                PluginResult::NoCompactor => {
                    let (compaction, note) = self.truncation(session, &tokens, &budget, None);
                    (compaction, TRUNCATE.to_owned(), note, None, None)
                }
            };
        if compaction.replaces == 0 {
            let why = fallback.map_or_else(|| note.clone(), |why| format!("{why}; {note}"));
            return Ok(CompactOutcome::Unchanged(why));
        }
        let replaced = compaction.replaces;
        let (summaries, tokens_after) =
            size.unwrap_or_else(|| size_after(&session.viewed(), session, self.tokens, &tokens, &compaction));
        match session.compact_async(self.store, compaction).await {
            Ok(_) => {}
            Err(CompactError::Store(error)) => return Err(error),
            // Checked above; a failure here is the host's own bug, and the old view stands.
            Err(CompactError::Invalid(error)) => {
                return Ok(CompactOutcome::Unchanged(format!("the compaction was refused: {error}")));
            }
        }
        let done = Done {
            reason,
            strategy,
            note,
            tokens_before: clamp(history_tokens),
            tokens_after: clamp(tokens_after),
            replaced: replaced as u32,
            summaries,
        };
        self.sink.emit(&Event::Compacted {
            reason: reason.as_str().to_owned(),
            strategy: done.strategy.clone(),
            note: done.note.clone(),
            fallback,
            tokens_before: history_tokens,
            tokens_after,
            replaced: replaced as u64,
            summaries: u64::from(summaries),
        });
        self.post_compact(session, &done).await;
        session.end_step(&self.snapshot.plugins, self.ctx, self.sink, self.store).await?;
        Ok(CompactOutcome::Compacted(done))
    }

    /// The `pre-compact` hooks in config order: what they ask to keep goes into `budget`;
    /// the first veto, with its plugin.
    async fn pre_compact(
        &self,
        session: &LiveSession,
        budget: &mut CompactionBudget,
    ) -> Option<(String, String)> {
        let mut veto = None;
        // The hooks keep messages by position; where each tool result stands is what lets a
        // plugin name the result of a call it made (contract 0.2.7, `history`).
        let ctx = CallContext { results: Some(result_positions(session)), ..self.ctx.clone() };
        for plugin in self.hooks(Exports::PRE_COMPACT) {
            let Some(outcome) =
                heard(self.sink, plugin, plugin.pre_compact(&ctx, session.bag(), budget).await)
            else {
                continue;
            };
            for id in outcome.keep {
                if !budget.keep.contains(&id) {
                    budget.keep.push(id);
                }
            }
            if veto.is_none() {
                veto = outcome.veto.map(|reason| (plugin.name().to_owned(), reason));
            }
        }
        veto
    }

    async fn post_compact(&self, session: &LiveSession, done: &Done) {
        for plugin in self.hooks(Exports::POST_COMPACT) {
            heard(self.sink, plugin, plugin.post_compact(self.ctx, session.bag(), done).await);
        }
    }

    fn hooks(&self, hook: Exports) -> impl Iterator<Item = &std::sync::Arc<LoadedPlugin>> {
        self.snapshot.plugins.plugins().iter().filter(move |plugin| plugin.implements(hook))
    }

    /// Asks the compacting plugin, and checks what it returns against what is sent now.
    async fn plugin_compaction(
        &self,
        session: &LiveSession,
        tokens: &[u64],
        budget: &CompactionBudget,
    ) -> PluginResult {
        let Some(plugin) = self.snapshot.plugins.compactor() else { return PluginResult::NoCompactor };
        let label = plugin.label();
        let current = session.viewed();
        let weights: Vec<u32> = tokens.iter().map(|&tokens| clamp(tokens)).collect();
        let output = match plugin.compact(self.ctx, session.bag(), &current, &weights, budget).await {
            Ok(output) => output,
            Err(error) => {
                report_failure(self.sink, &error);
                return PluginResult::Unusable(error.to_string());
            }
        };
        forward_events(self.sink, plugin, output.events);
        let result = match output.value {
            Ok(Some(result)) => result,
            Ok(None) => return PluginResult::NothingToDo(label),
            Err(message) => return PluginResult::Unusable(format!("{label} could not compact: {message}")),
        };
        if let Err(error) = compacted_history::check(&current, &result.compaction) {
            return PluginResult::Unusable(format!("{label}'s compaction cannot be used: {error}"));
        }
        if let Some(id) = dropped_keep(&current, &result.compaction, &budget.keep) {
            return PluginResult::Unusable(format!(
                "{label}'s compaction drops {id}, which a pre-compact hook asked to keep"
            ));
        }
        let size = size_after(&current, session, self.tokens, tokens, &result.compaction);
        let after = size.1;
        if after > u64::from(budget.limit) {
            return PluginResult::Unusable(format!(
                "{label}'s compaction leaves {after} tokens of history, over the limit of {}",
                budget.limit
            ));
        }
        PluginResult::Usable {
            plugin: plugin.name().to_owned(),
            compaction: result.compaction,
            note: result.note,
            size,
        }
    }

    /// The host's own truncation down to `budget.target`, keeping what the hooks asked to.
    fn truncation(
        &self,
        session: &LiveSession,
        tokens: &[u64],
        budget: &CompactionBudget,
        instead_of: Option<&str>,
    ) -> (Compaction, String) {
        let sizes: Vec<usize> = tokens.iter().map(|&tokens| tokens as usize).collect();
        let truncation =
            compacted_history::truncate(&session.viewed(), &sizes, budget.target as usize, &budget.keep);
        let mut note = format!("dropped the {} oldest messages", truncation.dropped.len());
        if !truncation.fits {
            note.push_str(&format!(
                " (all that may go; {} tokens remain, over the target of {})",
                truncation.size, budget.target
            ));
        }
        if let Some(why) = instead_of {
            tracing::warn!(%why, "the compacting plugin's result was not used; the host truncated instead");
        }
        (truncation.compaction, note)
    }
}

/// The new messages of `compaction` of `current` (what is sent now, weighing `tokens`), and
/// the history's tokens after it.
fn size_after(
    current: &[compacted_history::Viewed<'_>],
    session: &LiveSession,
    budget: &TokenBudget,
    tokens: &[u64],
    compaction: &Compaction,
) -> (u32, u64) {
    let position = |id: MessageId| current.iter().position(|viewed| viewed.id == id);
    let mut summaries = 0;
    let mut total: u64 = tokens[compaction.replaces.min(tokens.len())..].iter().sum();
    for entry in &compaction.entries {
        total += match entry {
            Replacement::Keep(id) => position(*id).map_or(0, |at| tokens[at]),
            Replacement::Summary(message) => {
                summaries += 1;
                session.context().tokens_of(budget, message)
            }
        };
    }
    (summaries, total)
}

/// What the compacting plugin's call came to.
enum PluginResult {
    NoCompactor,
    /// It returned none: nothing to do at this size, in its judgement.
    NothingToDo(String),
    /// It failed, or its result failed a check: why, naming it.
    Unusable(String),
    /// With what it sends: its new messages and the history's tokens after it.
    Usable {
        plugin: String,
        compaction: Compaction,
        note: String,
        size: (u32, u64),
    },
}

/// A message of `keep` sent now that `compaction` would no longer send.
fn dropped_keep(
    current: &[compacted_history::Viewed<'_>],
    compaction: &Compaction,
    keep: &[MessageId],
) -> Option<MessageId> {
    let replaced = &current[..compaction.replaces.min(current.len())];
    keep.iter().copied().find(|id| {
        replaced.iter().any(|viewed| viewed.id == *id)
            && !compaction.entries.contains(&Replacement::Keep(*id))
    })
}

fn clamp(tokens: u64) -> u32 {
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

/// The position of each tool result in `session`'s stored history, by its call's id.
fn result_positions(session: &LiveSession) -> ResultPositions {
    let results = session.history().iter().enumerate().filter_map(|(position, message)| {
        let call_id = message.tool_call_id.clone()?;
        Some((call_id, u64::try_from(position).ok()?))
    });
    ResultPositions::new(results)
}
