//! Applying what a call asked of its session's children, and running them: all of a step's
//! at once, each its own session's turn, its events on the parent's stream.

use futures_util::future::join_all;
use tracing::Instrument as _;

use super::records::{ChildLink, ChildRecord, child, children, mark_prompted, prompted, put_child};
use super::service::Request;
use super::sink::ChildSink;
use super::{Ancestor, ChildOf, ChildTurn, ParentCaps};
use crate::agent::tool_call::approval::AgentLabel;
use crate::agent::turn::meter::session_tokens;
use crate::agent::{Approver, Host, LiveSession};
use crate::events::{AgentState, ChoiceCategory, Event, EventSink, PluginView, Widget};
use crate::model::{Message, Role};
use crate::runtime::host_api::AgentContext;
use crate::state::StoreError;
use crate::tools::ToolResult;

/// What the children of a parent's step run with.
pub(in crate::agent) struct Parent<'a> {
    pub host: &'a Host,
    pub sink: &'a dyn EventSink,
    pub approver: &'a dyn Approver,
    /// The sessions above the parent, when it is a child itself.
    pub above: &'a [Ancestor],
    /// The `execute_tool` span of each of the step's calls, by call id: a child's turn is
    /// traced under the call that started it.
    pub call_spans: &'a [(String, tracing::Span)],
    pub caps: ParentCaps,
}

/// What a step's children came to.
#[derive(Default)]
pub(in crate::agent) struct Ran {
    /// The result of each tool call that waits for a child (`agents.wait`), by call id.
    pub results: Vec<(String, ToolResult)>,
    /// Tokens the children's turns spent.
    pub tokens: u64,
}

/// Applies the requests tool call `call_id` made: children's sessions made (linked, and
/// holding their parent's history when forked), records written to the parent's bag.
pub(in crate::agent) async fn apply(
    host: &Host,
    session: &mut LiveSession,
    call_id: &str,
    offered: &[String],
    requests: Vec<Request>,
) -> Result<(), StoreError> {
    for request in requests {
        match request {
            Request::Start { id, plugin, spec } => {
                let number = children(session.bag()).last().map_or(0, |(_, record)| record.number) + 1;
                let link = ChildLink {
                    parent_id: session.id().to_owned(),
                    call_id: Some(call_id.to_owned()),
                    name: spec.name.clone(),
                    depth: super::depth(session.bag()) + 1,
                    system_prompt: spec.system_prompt.clone(),
                    tools: spec.tools.clone().unwrap_or_else(|| offered.to_vec()),
                    model: spec.model.clone(),
                    max_turns: spec.max_turns,
                };
                let handle = host.sessions().create_with_id(id.clone())?;
                let mut created = handle.lock().await;
                link.put(created.bag());
                if spec.context == AgentContext::Fork {
                    for message in forked(session) {
                        created.push(message);
                    }
                }
                created.commit_async(&**host.sessions().store()).await?;
                let record = ChildRecord {
                    number,
                    name: spec.name,
                    plugin,
                    call_id: Some(call_id.to_owned()),
                    waited_by: None,
                    state: AgentState::Pending,
                    answer: None,
                    prompts: 1,
                    next_prompt: Some(spec.prompt),
                    mode: spec.mode,
                };
                put_child(session.bag(), &id, &record);
            }
            Request::Wait { id } => {
                update(session, &id, |record| record.waited_by = Some(call_id.to_owned()))
            }
            Request::Send { id, message } => update(session, &id, |record| {
                record.prompts += 1;
                record.next_prompt = Some(message);
                record.state = AgentState::Pending;
            }),
            Request::Cancel { id } => update(session, &id, |record| {
                if record.state == AgentState::Pending {
                    record.state = AgentState::Cancelled;
                    record.next_prompt = None;
                }
            }),
        }
    }
    Ok(())
}

fn update(session: &LiveSession, id: &str, change: impl FnOnce(&mut ChildRecord)) {
    if let Some(mut record) = child(session.bag(), id) {
        change(&mut record);
        put_child(session.bag(), id, &record);
    }
}

/// The parent's history as sent, without the reply that holds the starting call: a forked
/// child's history starts there.
fn forked(session: &LiveSession) -> Vec<Message> {
    let sent = session.to_send();
    let end = sent.iter().rposition(|message| message.role == Role::Assistant).unwrap_or(sent.len());
    sent[..end].to_vec()
}

/// Runs every child of `session` waiting to run, all at once, and records what each came
/// to. The parent's step must be committed first: a crash while they run leaves the parent
/// with its calls unanswered and the children recorded, which [`resume`] takes up.
pub(in crate::agent) async fn run_pending(parent: &Parent<'_>, session: &mut LiveSession) -> Ran {
    let waiting: Vec<(String, ChildRecord)> = children(session.bag())
        .into_iter()
        .filter(|(_, record)| record.state == AgentState::Pending)
        .collect();
    run(parent, session, waiting).await
}

/// The children the last reply's unanswered calls wait for, run to their end (a crash cut
/// them short, or they never started): their calls' results, for the parent's history.
pub(in crate::agent) async fn resume(parent: &Parent<'_>, session: &mut LiveSession) -> Ran {
    let dangling = dangling_calls(session);
    let waited: Vec<(String, ChildRecord)> = children(session.bag())
        .into_iter()
        .filter(|(_, record)| {
            !record.state.is_over() && record.waited_by.as_ref().is_some_and(|call| dangling.contains(call))
        })
        .collect();
    run(parent, session, waited).await
}

fn dangling_calls(session: &LiveSession) -> Vec<String> {
    let history = session.history();
    let Some(position) = history.iter().rposition(|message| message.role == Role::Assistant) else {
        return Vec::new();
    };
    let answered: Vec<&str> =
        history[position + 1..].iter().filter_map(|m| m.tool_call_id.as_deref()).collect();
    history[position]
        .tool_calls
        .iter()
        .map(|call| call.id.clone())
        .filter(|id| !answered.contains(&id.as_str()))
        .collect()
}

async fn run(parent: &Parent<'_>, session: &mut LiveSession, runs: Vec<(String, ChildRecord)>) -> Ran {
    if runs.is_empty() {
        return Ran::default();
    }
    let mut ancestors = vec![Ancestor { session_id: session.id().to_owned(), bag: session.bag().detached() }];
    ancestors.extend(parent.above.iter().cloned());
    let parent_mode = mode_of(&session.views().current());
    let parent_id = session.id().to_owned();
    let turns = runs.iter().map(|(id, record)| {
        let mode = record.mode.clone().or_else(|| parent_mode.clone());
        let started_by = parent.call_spans.iter().find(|(call, _)| record.call_id.as_ref() == Some(call));
        let span = started_by.map_or_else(tracing::Span::current, |(_, span)| span.clone());
        run_child(parent, &parent_id, id, record, ancestors.clone(), mode).instrument(span)
    });
    let outcomes = join_all(turns).await;
    let mut ran = Ran::default();
    for ((id, mut record), outcome) in runs.into_iter().zip(outcomes) {
        ran.tokens += outcome.tokens;
        record.state = outcome.state;
        record.answer = Some(outcome.answer.clone());
        record.next_prompt = None;
        parent.sink.emit(&Event::SubagentEnded {
            session_id: id.clone(),
            parent_id: parent_id.clone(),
            agent: record.name.clone(),
            state: outcome.state,
            answer: Some(outcome.answer.clone()),
            tokens: outcome.tokens,
        });
        if let Some(call) = &record.waited_by {
            let ok = outcome.state == AgentState::Done;
            ran.results.push((call.clone(), ToolResult { ok, output: outcome.answer }));
        }
        put_child(session.bag(), &id, &record);
    }
    ran
}

/// What one child's turn came to.
struct Outcome {
    state: AgentState,
    /// Its final reply, or what ended it.
    answer: String,
    tokens: u64,
}

impl Outcome {
    fn failed(answer: String) -> Self {
        Self { state: AgentState::Failed, answer, tokens: 0 }
    }
}

async fn run_child(
    parent: &Parent<'_>,
    parent_id: &str,
    id: &str,
    record: &ChildRecord,
    ancestors: Vec<Ancestor>,
    mode: Option<String>,
) -> Outcome {
    let host = parent.host;
    let handle = match host.sessions().open(id) {
        Ok(Some(handle)) => handle,
        Ok(None) => {
            return Outcome::failed(format!("the session of agent `{}` is gone from the store", record.name));
        }
        Err(error) => {
            return Outcome::failed(format!(
                "the session of agent `{}` cannot be opened: {error}",
                record.name
            ));
        }
    };
    let mut child = handle.lock().await;
    let Some(link) = ChildLink::of(child.bag()) else {
        return Outcome::failed(format!("session {id} is not a child agent's"));
    };
    // Before it is announced, so a front end that shows it can also cancel it.
    let running = host.running_children().begin(id);
    let sink = ChildSink {
        parent: parent.sink,
        session_id: id.to_owned(),
        parent_id: parent_id.to_owned(),
        agent: record.name.clone(),
    };
    let first_run = prompted(child.bag()) == 0;
    // The prompt when its history does not hold it yet; else the turn a crash cut short
    // goes on — or, when it had ended, its last reply is the answer.
    let prompt = (prompted(child.bag()) < record.prompts).then(|| record.next_prompt.clone()).flatten();
    if prompt.is_none()
        && let Some(last) =
            child.history().last().filter(|m| m.role == Role::Assistant && m.tool_calls.is_empty())
    {
        return Outcome { state: AgentState::Done, answer: last.content.clone(), tokens: 0 };
    }
    parent.sink.emit(&Event::SubagentStarted {
        session_id: id.to_owned(),
        parent_id: parent_id.to_owned(),
        call_id: record.call_id.clone(),
        agent: record.name.clone(),
        prompt: prompt.clone().unwrap_or_default(),
    });
    if first_run && let Some(mode) = mode {
        set_mode(host, &mut child, &mode, &sink).await;
    }
    if prompt.is_some() {
        // Stored with the prompt, in its turn's first step.
        mark_prompted(child.bag(), record.prompts);
    }
    let turn = ChildTurn {
        link,
        of: ChildOf { label: AgentLabel { name: record.name.clone(), session_id: id.to_owned() }, ancestors },
        caps: parent.caps,
    };
    let spent_before = session_tokens(&child);
    let ran =
        crate::agent::turn::run_child(host, &mut child, prompt.as_deref(), &sink, parent.approver, turn);
    let ran = tokio::select! {
        ran = Box::pin(ran) => ran,
        // The child's turn is dropped, which reports it cancelled on its stream; its steps so
        // far stay committed, as a cancelled turn's do, and what they spent is its parent's.
        () = running.cancelled() => {
            return Outcome {
                state: AgentState::Cancelled,
                answer: format!("agent `{}` was cancelled by the operator before it answered", record.name),
                tokens: session_tokens(&child).saturating_sub(spent_before),
            };
        }
    };
    match ran {
        Ok(outcome) => {
            let answer = if outcome.reply.trim().is_empty() {
                format!(
                    "agent `{}` ended without an answer ({})",
                    record.name,
                    crate::agent::turn::end_name(outcome.end)
                )
            } else {
                outcome.reply
            };
            Outcome { state: AgentState::Done, answer, tokens: outcome.tokens }
        }
        Err(error) => Outcome::failed(format!("agent `{}` failed: {error}", record.name)),
    }
}

/// The mode choice (a view's choice of category `mode`) of `views`, as it stands.
fn mode_of(views: &[PluginView]) -> Option<String> {
    views.iter().flat_map(|view| &view.widgets).find_map(|widget| match widget {
        Widget::Choice { category: Some(category), current, .. } if is_mode(category) => current.clone(),
        _ => None,
    })
}

fn is_mode(category: &str) -> bool {
    ChoiceCategory::of(category) == Some(ChoiceCategory::Mode)
}

/// Moves the child's mode choice to `mode` through the command its view names, when the view
/// lists that value and the choice is not there already.
async fn set_mode(host: &Host, child: &mut LiveSession, mode: &str, sink: &dyn EventSink) {
    host.refresh_views(child, sink).await;
    let command =
        child.views().current().iter().flat_map(|view| view.widgets.clone()).find_map(
            |widget| match widget {
                Widget::Choice {
                    category: Some(category), current, options, command: Some(command), ..
                } if is_mode(&category)
                    && current.as_deref() != Some(mode)
                    && options.iter().any(|option| option.value == mode) =>
                {
                    Some(format!("{command} {mode}"))
                }
                _ => None,
            },
        );
    if let Some(line) = command
        && let Err(error) = host.command(child, &line, sink).await
    {
        tracing::warn!(%error, "a child agent's mode could not be set");
    }
}
