//! The pipeline, step by step. Usage is what a request takes of its room: (the fixed part +
//! the history's tokens) / (the context window − the output reserve).
//!
//! 1. Below `evict_above_percent`: nothing to do.
//! 2. Evict: every group of tool calls older than the newest `keep_recent_groups` groups, and
//!    holding no message the `pre-compact` hooks asked to keep, is replaced by one assistant
//!    message naming the calls and the size of each result removed (unless that would not
//!    be shorter).
//! 3. Past `summarise_above_percent` after that, or still over the limit: everything older
//!    than the newest groups is summarised by the model into one user message, but for the
//!    opening context (what comes before the first user message), the last user message and
//!    the messages asked to be kept, which stay (the last two after the summary).
//! 4. Still over the limit: an error, so the host truncates, the last resort.
//!
//! The operator's `/compact`, and a request the endpoint refused as too long, run every step
//! whatever the thresholds: the one asks for it, and the other proved the estimate short.

use std::collections::HashMap;
use std::ops::Range;

use agent_host_sdk::compaction::{
    Compaction, CompactionBudget, CompactionReason, HistoryMessage, MessageRole, Replacement, SummaryMessage,
};

use crate::config::Config;
use crate::groups;
use crate::summary::{self, Line, SummaryRequest};
use agent_host_sdk::grouped;

/// The tokens a new message of `text` is taken to come to.
pub fn estimate(text: &str) -> u32 {
    u32::try_from(text.len() / 4 + 4).unwrap_or(u32::MAX)
}

/// Compacts `history` within `budget` as configured; `summarise` answers a request for a
/// summary with its text (the model, in a component; a stand-in, in tests).
pub fn compact(
    config: &Config,
    history: &[HistoryMessage],
    budget: &CompactionBudget,
    summarise: impl FnOnce(&SummaryRequest) -> Result<String, String>,
) -> Result<Option<Compaction>, String> {
    let room = u64::from(budget.context_window.saturating_sub(budget.max_output_tokens));
    let fixed = u64::from(budget.fixed_tokens);
    let above = |tokens: u64, percent: u32| (fixed + tokens) * 100 > u64::from(percent) * room;
    let forced = budget.reason != CompactionReason::Threshold;
    let mut plan = Plan::new(history);
    if !forced && !above(plan.tokens(), config.evict_above_percent) {
        return Ok(None);
    }
    let limit = u64::from(budget.limit);
    let untouched = plan.untouched(config.keep_recent_groups as usize, budget);
    let mut done = Done { evicted: plan.evict(&untouched), summarised: 0 };
    let tokens = plan.tokens();
    if forced || above(tokens, config.summarise_above_percent) || tokens > limit {
        done.summarised = plan.summarise(&untouched, config, budget.context_window, summarise)?;
    }
    let tokens = plan.tokens();
    if tokens > limit {
        return Err(format!(
            "still {} tokens over the limit after {}",
            grouped((tokens - limit) as usize),
            done.gerund()
        ));
    }
    Ok(plan.compaction(done.note()))
}

/// What becomes of a group.
enum Fate {
    Keep,
    /// Evicted: replaced by this text.
    StandIn(String),
    /// In the summary.
    Summarised,
}

/// The history's groups and what becomes of each.
struct Plan<'h> {
    history: &'h [HistoryMessage],
    groups: Vec<Range<usize>>,
    fates: Vec<Fate>,
    /// The summary's text, once written.
    summary: Option<String>,
}

impl<'h> Plan<'h> {
    fn new(history: &'h [HistoryMessage]) -> Self {
        let groups = groups::groups(history);
        let fates = groups.iter().map(|_| Fate::Keep).collect();
        Self { history, groups, fates, summary: None }
    }

    /// The history's tokens as the plan stands.
    fn tokens(&self) -> u64 {
        let groups = self.groups.iter().zip(&self.fates).map(|(group, fate)| match fate {
            Fate::Keep => self.history[group.clone()].iter().map(|m| u64::from(m.tokens)).sum(),
            Fate::StandIn(text) => u64::from(estimate(text)),
            Fate::Summarised => 0,
        });
        groups.sum::<u64>() + self.summary.as_deref().map_or(0, |text| u64::from(estimate(text)))
    }

    /// For each group, whether it is left alone whatever happens: one of the newest `recent`,
    /// or holding a message the budget says to keep.
    fn untouched(&self, recent: usize, budget: &CompactionBudget) -> Vec<bool> {
        let newest = self.groups.len().saturating_sub(recent);
        (0..self.groups.len())
            .map(|index| {
                index >= newest
                    || self.history[self.groups[index].clone()].iter().any(|m| budget.keep.contains(&m.id))
            })
            .collect()
    }

    /// Replaces every group of tool calls that may go by its stand-in, where that is shorter;
    /// returns how many tool results went.
    fn evict(&mut self, untouched: &[bool]) -> usize {
        let mut results = 0;
        for (index, group) in self.groups.iter().enumerate() {
            if untouched[index] || !groups::is_tool_calls(self.history, group) {
                continue;
            }
            let messages = &self.history[group.clone()];
            let text = groups::stand_in(messages);
            if u64::from(estimate(&text)) >= messages.iter().map(|m| u64::from(m.tokens)).sum() {
                continue;
            }
            self.fates[index] = Fate::StandIn(text);
            results += groups::results(self.history, group);
        }
        results
    }

    /// Summarises every group that may go and is not opening context or the last user
    /// message's; returns how many messages of the history the summary stands for.
    fn summarise(
        &mut self,
        untouched: &[bool],
        config: &Config,
        context_window: u32,
        summarise: impl FnOnce(&SummaryRequest) -> Result<String, String>,
    ) -> Result<usize, String> {
        let (Some(first_user), Some(last_user)) = (
            self.history.iter().position(|m| m.role == MessageRole::User),
            self.history.iter().rposition(|m| m.role == MessageRole::User),
        ) else {
            return Ok(0);
        };
        let span: Vec<usize> = (0..self.groups.len())
            .filter(|&index| {
                let group = &self.groups[index];
                !untouched[index] && group.start >= first_user && !group.contains(&last_user)
            })
            .collect();
        if span.is_empty() {
            return Ok(0);
        }
        let request = summary::request(&self.lines(&span), context_window, config.summary_max_tokens);
        let text =
            summarise(&request).map_err(|error| format!("cannot summarise the conversation: {error}"))?;
        if text.trim().is_empty() {
            return Err("cannot summarise the conversation: the model answered with no text".to_owned());
        }
        self.summary = Some(summary::summary_text(&text));
        let mut messages = 0;
        for index in span {
            self.fates[index] = Fate::Summarised;
            messages += self.groups[index].len();
        }
        Ok(messages)
    }

    /// The transcript's lines for the groups `span`, evicted ones by their stand-ins.
    fn lines(&self, span: &[usize]) -> Vec<Line> {
        let names: HashMap<&str, &str> = self
            .history
            .iter()
            .flat_map(|m| m.tool_calls.iter().map(|call| (call.id.as_str(), call.name.as_str())))
            .collect();
        let name_of = |id: &str| names.get(id).map(|name| (*name).to_owned());
        let mut lines = Vec::new();
        for &index in span {
            match &self.fates[index] {
                Fate::StandIn(text) => lines.push(Line::stand_in(text.clone())),
                _ => lines
                    .extend(self.history[self.groups[index].clone()].iter().map(|m| Line::of(m, &name_of))),
            }
        }
        lines
    }

    /// The compaction the plan comes to; none when it changes nothing.
    fn compaction(&self, note: String) -> Option<Compaction> {
        let last = self.fates.iter().rposition(|fate| !matches!(fate, Fate::Keep))?;
        let mut entries = Vec::new();
        let mut summary = self.summary.iter();
        for (group, fate) in self.groups[..=last].iter().zip(&self.fates) {
            match fate {
                Fate::Keep => {
                    entries.extend(self.history[group.clone()].iter().map(|m| Replacement::Keep(m.id)))
                }
                Fate::StandIn(text) => {
                    entries.push(Replacement::Summary(SummaryMessage::assistant(text.clone())))
                }
                // The summary stands where the first group it covers stood.
                Fate::Summarised => entries.extend(
                    summary.next().map(|text| Replacement::Summary(SummaryMessage::user(text.clone()))),
                ),
            }
        }
        let replaces = u32::try_from(self.groups[last].end).unwrap_or(u32::MAX);
        Some(Compaction { replaces, entries, note })
    }
}

/// What the pipeline did, for the note and the error.
struct Done {
    evicted: usize,
    summarised: usize,
}

impl Done {
    /// "evicted 3 tool results, summarised 40 messages".
    fn note(&self) -> String {
        let mut parts = Vec::new();
        if self.evicted > 0 {
            parts.push(format!("evicted {}", counted(self.evicted, "tool result")));
        }
        if self.summarised > 0 {
            parts.push(format!("summarised {}", counted(self.summarised, "message")));
        }
        if parts.is_empty() { "shortened old tool calls".to_owned() } else { parts.join(", ") }
    }

    /// "evicting 3 tool results and summarising 40 messages", for "still … after …".
    fn gerund(&self) -> String {
        match (self.evicted, self.summarised) {
            (0, 0) => "finding nothing more to evict or summarise".to_owned(),
            (evicted, 0) => format!("evicting {}", counted(evicted, "tool result")),
            (0, summarised) => format!("summarising {}", counted(summarised, "message")),
            (evicted, summarised) => format!(
                "evicting {} and summarising {}",
                counted(evicted, "tool result"),
                counted(summarised, "message")
            ),
        }
    }
}

/// `1 message`, `40 messages`.
fn counted(count: usize, what: &str) -> String {
    if count == 1 { format!("1 {what}") } else { format!("{} {what}s", grouped(count)) }
}
