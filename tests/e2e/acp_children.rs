//! `agent-host acp` and child agents (the stock `subagents` plugin's `task`): a client that
//! takes child sessions (`clientCapabilities.subagents`) is told of each child with
//! `subagent_update` on its parent's session and gets the child's own updates under the
//! child's session id; any other client sees the child folded into the `task` call. A child's
//! permission request names it, under its session or its parent's; cancelling a child's
//! session stops that child alone, its parent's turn going on.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, NewSessionRequest, PermissionOptionKind,
    PromptRequest, RequestPermissionRequest, SessionNotification, SessionUpdate, StopReason,
    SubagentCapabilities, ToolCallContent, ToolCallStatus, ToolCallUpdateFields,
};
use serde_json::Value;

use crate::subagents::{agent, definitions, subagents, task};
use crate::support::acp_client::{deployment, message_text, open, open_with, prompt, with_client};
use crate::support::{FakeModel, Reply, plugin_block};

/// A client that takes child agents as sessions of their own.
fn takes_children() -> ClientCapabilities {
    ClientCapabilities::new().subagents(SubagentCapabilities::new())
}

/// `misbehave`'s tools, `permissions` with `rules`, and the `subagents` plugin reading `agents`.
fn plugins(agents: &Path, rules: &str) -> String {
    format!("{}{}{}", plugin_block("permissions", rules), plugin_block("misbehave", ""), subagents(agents))
}

/// The explorer (echo only, on `child-model`) asked to find the answer: it echoes, then answers.
fn explorer_script(model: &FakeModel) -> tempfile::TempDir {
    model.push(Reply::tool("task", &task("explorer", "find the answer\nand say it")));
    model.push(Reply::text("done"));
    model.on_model(
        "child-model",
        [Reply::tool("echo", r#"{"text":"looking"}"#), Reply::text("the answer is 42")],
    );
    definitions(&[("explorer", &agent("explorer", "child-model", "echo"))])
}

/// The `subagent_update`s sent under `session`, as JSON.
fn announcements(notes: &[SessionNotification], session: &str) -> Vec<Value> {
    notes
        .iter()
        .filter(|note| *note.session_id.0 == *session)
        .filter_map(|note| match &note.update {
            SessionUpdate::SubagentUpdate(update) => Some(serde_json::to_value(update).unwrap()),
            _ => None,
        })
        .collect()
}

/// The states `announcements` gives child `child`, in order: `running`, `requires_action`,
/// `idle:<stopReason>`.
fn states(announced: &[Value], child: &str) -> Vec<String> {
    announced
        .iter()
        .filter(|update| update["sessionId"] == child)
        .filter_map(|update| {
            let state = update.get("state")?;
            let name = state["state"].as_str().unwrap().to_owned();
            Some(match state["stopReason"].as_str() {
                Some(reason) => format!("{name}:{reason}"),
                None => name,
            })
        })
        .collect()
}

/// The updates sent under `session`.
fn under(notes: &[SessionNotification], session: &str) -> Vec<SessionUpdate> {
    notes.iter().filter(|note| *note.session_id.0 == *session).map(|note| note.update.clone()).collect()
}

/// The `tool_call_update`s of the parent's first call (the `task`), in order.
fn task_call_updates(updates: &[SessionUpdate]) -> Vec<ToolCallUpdateFields> {
    let id = updates
        .iter()
        .find_map(|update| match update {
            SessionUpdate::ToolCall(call) if call.title == "task" => Some(call.tool_call_id.clone()),
            _ => None,
        })
        .expect("the task call is announced");
    updates
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::ToolCallUpdate(update) if update.tool_call_id == id => Some(update.fields.clone()),
            _ => None,
        })
        .collect()
}

/// The text blocks of a call's content.
fn texts(fields: &ToolCallUpdateFields) -> Vec<String> {
    let content = fields.content.clone().unwrap_or_default();
    content
        .into_iter()
        .filter_map(|item| match item {
            ToolCallContent::Content(content) => match content.content {
                ContentBlock::Text(text) => Some(text.text),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_client_taking_child_sessions_is_told_of_the_child_and_gets_its_updates_under_its_id() {
    let model = FakeModel::start().await;
    let agents = explorer_script(&model);
    let dir = deployment(&model, &plugins(agents.path(), ""));
    let path = dir.path().to_owned();
    let ((parent, stop), seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open_with(&cx, &path, takes_children()).await;
        (session.session_id.0.to_string(), prompt(&cx, &session, "ask the explorer").await)
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let notes = seen.notifications();
    let announced = announcements(&notes, &parent);
    let first = announced.first().unwrap_or_else(|| panic!("a subagent_update on the parent: {notes:#?}"));
    let child = first["sessionId"].as_str().unwrap().to_owned();
    assert_ne!(child, parent, "the child is a session of its own");
    assert_eq!(first["title"], "explorer");
    assert_eq!(first["description"], "find the answer", "the prompt's first line");
    assert_eq!(states(&announced, &child), ["running", "idle:end_turn"]);

    // Announced before any of its own traffic, which comes under its id.
    let first_own = notes.iter().position(|note| *note.session_id.0 == *child).expect("the child's updates");
    let announcement = notes.iter().position(|note| matches!(note.update, SessionUpdate::SubagentUpdate(_)));
    assert!(announcement.unwrap() < first_own, "announced first");
    let own = under(&notes, &child);
    assert_eq!(message_text(&own), "the answer is 42");
    let echo = own.iter().find_map(|update| match update {
        SessionUpdate::ToolCall(call) => Some(call.clone()),
        _ => None,
    });
    let echo = echo.unwrap_or_else(|| panic!("the child's call under its session: {own:#?}"));
    assert_eq!(echo.title, "echo");
    assert!(own.iter().any(|update| matches!(update, SessionUpdate::ToolCallUpdate(update)
        if update.tool_call_id == echo.tool_call_id && update.fields.status == Some(ToolCallStatus::Completed))));

    // The parent's own stream holds none of it; its task call points at the child's session,
    // in progress while it runs, then completed with its answer.
    let mine = under(&notes, &parent);
    assert_eq!(message_text(&mine), "done");
    let task = task_call_updates(&mine);
    let last = task.last().unwrap();
    assert_eq!(last.status, Some(ToolCallStatus::Completed));
    let content = serde_json::to_value(&last.content).unwrap();
    assert_eq!(content[0], serde_json::json!({"type": "session", "sessionId": child}), "{content}");
    assert_eq!(texts(last), ["the answer is 42"]);
    assert!(task.iter().any(|fields| fields.status == Some(ToolCallStatus::InProgress)
        && serde_json::to_value(&fields.content).unwrap()[0]["sessionId"] == child.as_str()));
}

#[tokio::test]
async fn a_client_not_taking_child_sessions_sees_the_child_folded_into_the_task_call() {
    let model = FakeModel::start().await;
    let agents = explorer_script(&model);
    let dir = deployment(&model, &plugins(agents.path(), ""));
    let path = dir.path().to_owned();
    let ((parent, stop), seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open(&cx, &path).await;
        (session.session_id.0.to_string(), prompt(&cx, &session, "ask the explorer").await)
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let notes = seen.notifications();
    let elsewhere: Vec<_> = notes.iter().filter(|note| *note.session_id.0 != *parent).collect();
    assert!(elsewhere.is_empty(), "nothing under another session: {elsewhere:#?}");
    let updates = seen.updates();
    assert!(!updates.iter().any(|update| matches!(update, SessionUpdate::SubagentUpdate(_))));
    assert_eq!(message_text(&updates), "done", "the child's reply is not the parent's");

    let task = task_call_updates(&updates);
    let last = task.last().unwrap();
    assert_eq!(last.status, Some(ToolCallStatus::Completed));
    let shown = texts(last);
    assert_eq!(shown.len(), 2, "its progress, then its answer: {shown:#?}");
    let lines: Vec<&str> = shown[0].lines().collect();
    assert_eq!(lines[0], r"explorer started: find the answer\nand say it");
    assert_eq!(lines[1], r#"explorer → echo {"text":"looking"}"#);
    assert!(lines[2].starts_with("explorer is done ("), "{lines:?}");
    assert_eq!(shown[1], "the answer is 42");
    // While it ran the call was in progress again, its lines growing.
    let progress: Vec<usize> = task
        .iter()
        .filter(|fields| fields.status == Some(ToolCallStatus::InProgress))
        .filter_map(|fields| texts(fields).first().map(|text| text.lines().count()))
        .collect();
    assert_eq!(progress, [1, 2], "{task:#?}");
}

/// The `fixer` (touch only) asked to touch, `touch` asked about by a rule, the ask allowed.
async fn a_childs_ask(take_children: bool) -> (String, Asked) {
    let model = FakeModel::start().await;
    let agents = definitions(&[("fixer", &agent("fixer", "child-model", "touch"))]);
    model.push(Reply::tool("task", &task("fixer", "touch it")));
    model.push(Reply::text("done"));
    model.on_model("child-model", [Reply::tool("touch", "{}"), Reply::text("touched it")]);
    let rules =
        "[plugin.config]\nrules = [{ tool = \"touch\", decision = \"ask\", reason = \"it changes things\" }]";
    let dir = deployment(&model, &plugins(agents.path(), rules));
    let path = dir.path().to_owned();
    let ((parent, stop), seen) =
        with_client(dir.path(), vec![Some(PermissionOptionKind::AllowOnce)], async move |cx, _seen| {
            let session = if take_children {
                open_with(&cx, &path, takes_children()).await
            } else {
                open(&cx, &path).await
            };
            (session.session_id.0.to_string(), prompt(&cx, &session, "fix it").await)
        })
        .await;
    assert_eq!(stop, StopReason::EndTurn);
    let asked = seen.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    (parent, Asked { request: asked[0].clone(), notes: seen.notifications() })
}

/// What a child's ask left: the request, and every notification.
struct Asked {
    request: RequestPermissionRequest,
    notes: Vec<SessionNotification>,
}

#[tokio::test]
async fn a_childs_permission_request_names_it_under_its_own_session_when_the_client_takes_them() {
    let (parent, asked) = a_childs_ask(true).await;
    let announced = announcements(&asked.notes, &parent);
    let child = announced[0]["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(*asked.request.session_id.0, *child, "the child's own traffic, under its id");
    assert_eq!(asked.request.tool_call.fields.title.as_deref(), Some("fixer: touch {}"));
    let shown = serde_json::to_string(&asked.request.tool_call.fields.content).unwrap();
    assert!(shown.contains(&format!("asked for agent `fixer` (session {child})")), "{shown}");
    // The call asked about is the child's, announced under its session.
    let own = under(&asked.notes, &child);
    assert!(own.iter().any(|update| matches!(update, SessionUpdate::ToolCall(call)
        if call.tool_call_id == asked.request.tool_call.tool_call_id)));
    assert_eq!(states(&announced, &child), ["running", "requires_action", "running", "idle:end_turn"]);
}

#[tokio::test]
async fn a_childs_permission_request_names_it_under_the_parents_session_for_other_clients() {
    let (parent, asked) = a_childs_ask(false).await;
    assert_eq!(*asked.request.session_id.0, *parent, "the only session the client knows");
    assert_eq!(asked.request.tool_call.fields.title.as_deref(), Some("fixer: touch {}"));
    let id = asked.request.tool_call.tool_call_id.0.to_string();
    let (child, call) = id.split_once('/').unwrap_or_else(|| panic!("the call's id names the child: {id}"));
    assert_ne!(child, parent);
    assert!(!call.is_empty());
    let shown = serde_json::to_string(&asked.request.tool_call.fields.content).unwrap();
    assert!(shown.contains(&format!("asked for agent `fixer` (session {child})")), "{shown}");
    let folded = texts(
        task_call_updates(&asked.notes.iter().map(|n| n.update.clone()).collect::<Vec<_>>()).last().unwrap(),
    );
    assert!(folded[0].contains("fixer asks to run touch: it changes things"), "{folded:?}");
}

/// Starts a prompt in a new session whose `task` child holds its model call until `gate`
/// opens, cancels session `target(parent, child)` once the child waits, and returns the
/// prompt's stop reason with the parent's and the child's ids.
async fn cancel_while_a_child_runs(
    cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
    seen: &crate::support::acp_client::Seen,
    path: &Path,
    model: &FakeModel,
    target: fn(String, String) -> String,
) -> (StopReason, String, String) {
    let session = cx.send_request(NewSessionRequest::new(path)).block_task().await.expect("session/new");
    let parent = session.session_id.0.to_string();
    let asked_before = model.requests_to("child-model").len();
    let running =
        cx.send_request(PromptRequest::new(parent.clone(), vec![ContentBlock::from("explore".to_owned())]));
    let running = running.block_task();
    let cancel = async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            assert!(tokio::time::Instant::now() < deadline, "the child should ask its model");
            let announced = announcements(&seen.notifications(), &parent);
            if model.requests_to("child-model").len() > asked_before
                && let Some(child) = announced.first()
            {
                let child = child["sessionId"].as_str().unwrap().to_owned();
                cx.send_notification(CancelNotification::new(target(parent.clone(), child.clone()))).unwrap();
                return child;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    let (stop, child) = tokio::join!(running, cancel);
    (stop.expect("answered").stop_reason, parent, child)
}

#[tokio::test]
async fn cancelling_a_child_stops_it_alone_and_cancelling_its_parent_stops_the_turn() {
    let model = FakeModel::start().await;
    // Never opened: the child waits on its model until cancelled.
    let gate = Arc::new(tokio::sync::Notify::new());
    let agents = definitions(&[("explorer", &agent("explorer", "child-model", "echo"))]);
    model.push(Reply::tool("task", &task("explorer", "take your time")));
    model.push(Reply::text("went on without the explorer"));
    model.push(Reply::tool("task", &task("explorer", "take your time")));
    model.on_model(
        "child-model",
        [Reply::text("late").held_until(&gate), Reply::text("late").held_until(&gate)],
    );
    let dir = deployment(&model, &plugins(agents.path(), ""));
    let path = dir.path().to_owned();
    let (runs, seen) = with_client(dir.path(), vec![], async move |cx, seen| {
        open_with(&cx, &path, takes_children()).await;
        let by_child = cancel_while_a_child_runs(&cx, &seen, &path, &model, |_, child| child).await;
        let by_parent = cancel_while_a_child_runs(&cx, &seen, &path, &model, |parent, _| parent).await;
        [by_child, by_parent]
    })
    .await;
    let notes = seen.notifications();
    let [(by_child, parent, child), (by_parent, other_parent, other_child)] = runs;

    // The child alone: its parent's turn went on to its end, told the child was cancelled.
    assert_eq!(by_child, StopReason::EndTurn, "the parent's turn goes on");
    let announced = announcements(&notes, &parent);
    assert_eq!(announced[0]["capabilities"], serde_json::json!({"cancel": {}}), "{announced:?}");
    assert_eq!(states(&announced, &child), ["running", "idle:cancelled"]);
    let task = task_call_updates(&under(&notes, &parent));
    let last = task.last().unwrap();
    assert_eq!(last.status, Some(ToolCallStatus::Failed), "the task call ends with its child");
    assert_eq!(texts(last), ["agent `explorer` was cancelled by the operator before it answered"]);
    let said = message_text(&under(&notes, &parent));
    assert!(said.contains("went on without the explorer"), "{said}");

    // The parent: the turn stops, and the child with it.
    assert_eq!(by_parent, StopReason::Cancelled);
    let announced = announcements(&notes, &other_parent);
    assert_eq!(states(&announced, &other_child), ["running", "idle:cancelled"]);
    let task = task_call_updates(&under(&notes, &other_parent));
    let last = task.last().unwrap();
    assert_eq!(last.status, Some(ToolCallStatus::Failed));
    assert_eq!(texts(last), ["agent `explorer` was cancelled"]);
}
