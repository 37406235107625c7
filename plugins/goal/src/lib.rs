//! The `goal` plugin: a goal that belongs to the session, not to one prompt. `/goal
//! OBJECTIVE` (with an optional `--tokens` and `--time` budget) sets it and queues a turn
//! that starts working on it; whenever the model would end a turn, a cheap judge call through
//! the `model` import decides done / not yet / blocked, and "not yet" sends the model on —
//! within the host's caps, which the host enforces, not this plugin. A goal is blocked after
//! `max_stalls` judgements in a row that saw no progress, and stops at its own budget, the
//! judge's tokens counted. `/goal pause | resume | clear`.
//!
//! State (namespace `goal`): `goal`, the `goal::Goal` record. It lives in the session's bag, so it
//! survives a resume, a fork and a killed host. Needs `[plugin.grants] model = true`; without
//! it every judgement fails, which ends the turn as the model ended it (never a loop). And
//! `start_turns = true`, since it starts a turn after `/goal` (`queued`): the host refuses
//! to load it without.

mod args;
mod goal;
mod judgement;

#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests;

use agent_host_sdk::judge::{StopReason, TurnVerdict};
use agent_host_sdk::model::CompleteOptions;
use agent_host_sdk::prelude::*;
use serde::{Deserialize, Serialize};

use args::GoalCommand;
use goal::{Goal, Status};
use judgement::Judgement;

const KEY: &str = "goal";

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Judgements in a row that see no progress before the goal is blocked.
    pub max_stalls: u32,
    /// Tokens the judge's answer may take.
    pub judge_output_tokens: u32,
    /// Characters of the agent's last reply the judge reads.
    pub judge_reply_chars: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self { max_stalls: 3, judge_output_tokens: 200, judge_reply_chars: 4_000 }
    }
}

/// The plugin's declaration.
pub fn plugin() -> Plugin<Config> {
    Plugin::new("goal", env!("CARGO_PKG_VERSION"))
        .configure(|config: &mut Config| {
            if config.max_stalls == 0 {
                return Err("`max_stalls` must be at least 1".into());
            }
            if config.judge_output_tokens < 16 {
                return Err("`judge_output_tokens` must be at least 16: the judge answers in JSON".into());
            }
            Ok(Vec::new())
        })
        .provide(|_, contribution| {
            let contribution = match load() {
                Ok(Some(goal)) if goal.status == Status::Active => contribution.instructions(format!(
                    "## Goal\n\nThe operator set a goal for this session: {}\n\nKeep working toward it \
                     across turns. When it is met, say so plainly; when you cannot go on, say what you need.",
                    goal.objective
                )),
                _ => contribution,
            };
            // Depends on the stored goal only.
            contribution.reusable()
        })
        .command(Command::new(
            "goal",
            args::USAGE,
            "Sets, shows, pauses, resumes or clears the session's goal",
            command,
        ))
        .on_turn_end(turn_end)
        .on_queued(queued)
        .status(|_| load().ok().flatten().map(|goal| format!("goal: {}", goal.summary())))
        .view_from_state(|_| match load() {
            Ok(Some(goal)) => {
                let note = goal.note.as_deref().map(|note| format!("\n\nNext: {note}")).unwrap_or_default();
                vec![
                    Text::new("goal", "Goal", &format!("{}\n\n{}{note}", goal.objective, goal.summary()))
                        .into(),
                ]
            }
            _ => Vec::new(),
        })
}

export_plugin!(plugin);

fn load() -> Result<Option<Goal>, String> {
    state::get(KEY)
}

fn save(goal: &Goal) -> Result<(), String> {
    state::set(KEY, goal)
}

fn now_ms() -> u64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

fn command(_: &Context<Config>, args: &str) -> Result<String, String> {
    let session_tokens = meter::session().tokens;
    match args::parse(args)? {
        GoalCommand::Show => Ok(match load()? {
            Some(goal) => format!("goal: {}\n{}", goal.objective, goal.summary()),
            None => format!("no goal; set one with {}", args::USAGE),
        }),
        GoalCommand::Set { objective, tokens, secs } => {
            let goal = Goal::new(objective, tokens, secs, session_tokens, now_ms());
            save(&goal)?;
            changed(&goal, "set");
            Ok(format!("goal set: {}", goal.objective))
        }
        GoalCommand::Pause => {
            let mut goal =
                load()?.filter(|goal| goal.status == Status::Active).ok_or("no active goal to pause")?;
            goal.pause(now_ms());
            save(&goal)?;
            changed(&goal, "paused");
            Ok(format!("goal paused: {}", goal.objective))
        }
        // An active goal resumes too: after a host was killed mid-turn, this starts it again.
        GoalCommand::Resume => {
            let mut goal = load()?.ok_or("no goal to resume; set one with /goal OBJECTIVE")?;
            match goal.status {
                Status::Complete => {
                    return Err("the goal is complete; set a new one with /goal OBJECTIVE".into());
                }
                _ => goal.resume(session_tokens, now_ms()),
            }
            save(&goal)?;
            changed(&goal, "resumed");
            Ok(format!("goal resumed: {}", goal.objective))
        }
        GoalCommand::Clear => {
            let goal = load()?.ok_or("no goal to clear")?;
            state::remove(KEY);
            events::emit("goal_cleared", &json!({ "objective": goal.objective }), Some("goal cleared"));
            Ok("goal cleared".into())
        }
    }
}

/// After a command: a goal just set or resumed starts a turn, once.
fn queued(_: &Context<Config>) -> Option<String> {
    let mut goal = load().ok().flatten().filter(|goal| goal.status == Status::Active && goal.kick)?;
    goal.kick = false;
    save(&goal).ok()?;
    Some(format!("Work toward this goal: {}", goal.objective))
}

/// When the model would end the turn: judge the reply against the goal.
fn turn_end(ctx: &Context<Config>, reply: &str) -> TurnVerdict {
    let Ok(Some(mut goal)) = load() else { return TurnVerdict::End };
    if goal.status != Status::Active {
        return TurnVerdict::End;
    }
    let session_tokens = meter::session().tokens;
    goal.tokens_used = goal.spent(session_tokens, 0);
    if let Some(stop) = over_budget(&mut goal) {
        return stop;
    }
    let messages = judgement::messages(&goal, reply, ctx.config.judge_reply_chars);
    let answer = match model::complete(
        &messages,
        CompleteOptions::max_output_tokens(ctx.config.judge_output_tokens),
    ) {
        Ok(answer) => answer,
        Err(error) => {
            // The turn ends as the model ended it; the goal stays active for the next one.
            events::emit(
                "goal_judge_failed",
                &json!({ "error": error }),
                Some(&format!("goal: the judge could not be asked: {error}")),
            );
            return TurnVerdict::End;
        }
    };
    goal.tokens_used = goal.spent(session_tokens, answer.input_tokens + answer.output_tokens);
    goal.judgements += 1;
    let verdict = match judgement::read(&answer.text) {
        Judgement::Done => {
            goal.status = Status::Complete;
            goal.note = None;
            changed(&goal, "complete");
            TurnVerdict::End
        }
        Judgement::Blocked { why } => block(&mut goal, why),
        Judgement::NotYet { progress, next } => {
            goal.stalls = if progress { 0 } else { goal.stalls + 1 };
            goal.note = next;
            if goal.stalls >= ctx.config.max_stalls {
                let stalls = goal.stalls;
                block(&mut goal, format!("no progress in {stalls} judgements in a row"))
            } else if let Some(stop) = over_budget(&mut goal) {
                return stop;
            } else {
                let next = goal.note.as_deref().map(|note| format!(" Next: {note}")).unwrap_or_default();
                TurnVerdict::Continue(format!("Keep working toward the goal: {}.{next}", goal.objective))
            }
        }
    };
    if let Err(error) = save(&goal) {
        log::error(&format!("the goal could not be saved: {error}"));
    }
    verdict
}

/// A stop when the goal has spent its tokens or its time, saved as `budget reached`.
fn over_budget(goal: &mut Goal) -> Option<TurnVerdict> {
    let reason = if goal.over_tokens() {
        StopReason::TokenBudget
    } else if goal.over_time(now_ms()) {
        StopReason::TimeBudget
    } else {
        return None;
    };
    goal.status = Status::BudgetReached;
    changed(goal, "budget reached");
    if let Err(error) = save(goal) {
        log::error(&format!("the goal could not be saved: {error}"));
    }
    let what = match reason {
        StopReason::TokenBudget => {
            format!("its {} tokens", agent_host_sdk::grouped(goal.token_budget.unwrap_or_default()))
        }
        _ => format!("its {} s", goal.time_budget_secs.unwrap_or_default()),
    };
    Some(judge::stop(reason, format!("the goal spent {what}: {}", goal.objective)))
}

fn block(goal: &mut Goal, why: String) -> TurnVerdict {
    goal.status = Status::Blocked;
    goal.note = Some(why.clone());
    changed(goal, "blocked");
    judge::stop(StopReason::Blocked, format!("the goal is blocked: {why}"))
}

/// Tells front ends (and the audit) where the goal went.
fn changed(goal: &Goal, what: &str) {
    events::emit(
        "goal_changed",
        &json!({ "status": goal.status, "objective": goal.objective, "tokens_used": goal.tokens_used,
                 "token_budget": goal.token_budget, "judgements": goal.judgements }),
        Some(&format!("goal {what}: {} ({})", goal.objective, goal.summary())),
    );
}
