//! A goal as the session keeps it, and the accounting of what it has spent: the session's
//! tokens since it was set (the judge's own included) against its budget, its time against
//! its time limit, and the judgements in a row that saw no progress.

use agent_host_sdk::grouped;
use serde::{Deserialize, Serialize};

/// Where a goal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Active,
    Paused,
    Blocked,
    BudgetReached,
    Complete,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Paused => "paused",
            Status::Blocked => "blocked",
            Status::BudgetReached => "budget reached",
            Status::Complete => "complete",
        }
    }
}

/// The session's goal (state key `goal`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Goal {
    pub objective: String,
    pub status: Status,
    /// Tokens the goal may spend, its judge's included; none for no budget.
    pub token_budget: Option<u64>,
    /// Seconds of work the goal may take, counted while it is active.
    pub time_budget_secs: Option<u64>,
    /// The session's tokens when the goal was set (or last resumed, less what it had spent).
    pub tokens_at_start: u64,
    /// What the goal has spent, as of the last judgement.
    pub tokens_used: u64,
    /// When the goal was set, in Unix milliseconds, less the time it spent paused.
    pub started_ms: u64,
    /// Judgements made, and how many in a row saw no progress.
    pub judgements: u32,
    pub stalls: u32,
    /// The judge's last word on what is left.
    pub note: Option<String>,
    /// Set by `/goal` and `/goal resume`: the next `queued` starts a turn, once.
    #[serde(default)]
    pub kick: bool,
}

impl Goal {
    pub fn new(
        objective: String,
        token_budget: Option<u64>,
        time_budget_secs: Option<u64>,
        session_tokens: u64,
        now_ms: u64,
    ) -> Self {
        Self {
            objective,
            status: Status::Active,
            token_budget,
            time_budget_secs,
            tokens_at_start: session_tokens,
            tokens_used: 0,
            started_ms: now_ms,
            judgements: 0,
            stalls: 0,
            note: None,
            kick: true,
        }
    }

    /// What the goal has spent when the session has spent `session_tokens` and the judge, in
    /// this call, `judge_tokens` more the session does not count yet.
    pub fn spent(&self, session_tokens: u64, judge_tokens: u64) -> u64 {
        session_tokens.saturating_sub(self.tokens_at_start).saturating_add(judge_tokens)
    }

    pub fn over_tokens(&self) -> bool {
        self.token_budget.is_some_and(|budget| self.tokens_used >= budget)
    }

    pub fn over_time(&self, now_ms: u64) -> bool {
        self.time_budget_secs.is_some_and(|secs| now_ms.saturating_sub(self.started_ms) >= secs * 1000)
    }

    /// Pauses it; what it spent stays spent.
    pub fn pause(&mut self, now_ms: u64) {
        self.status = Status::Paused;
        // Kept as time spent so far, so a resume goes on from it.
        self.started_ms = now_ms.saturating_sub(self.started_ms);
    }

    /// Makes a paused, blocked or budget-stopped goal active again; the stalls start afresh.
    /// Its tokens go on counting from what it had spent.
    pub fn resume(&mut self, session_tokens: u64, now_ms: u64) {
        if self.status == Status::Paused {
            self.started_ms = now_ms.saturating_sub(self.started_ms);
        }
        self.tokens_at_start = session_tokens.saturating_sub(self.tokens_used);
        self.status = Status::Active;
        self.stalls = 0;
        self.kick = true;
    }

    /// One line on where it stands: `active · 1,234 of 50,000 tokens`.
    pub fn summary(&self) -> String {
        let tokens = match self.token_budget {
            Some(budget) => format!("{} of {} tokens", grouped(self.tokens_used), grouped(budget)),
            None => format!("{} tokens", grouped(self.tokens_used)),
        };
        format!("{} · {tokens}", self.status.label())
    }
}
