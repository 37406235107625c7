//! `agent-host acp`: the real binary as an ACP agent on stdio, driven by the protocol crate's
//! own client side against the fake model: streaming, tool calls, plan and modes from the
//! views, permissions, cancel, bad input.

use std::path::Path;
use std::sync::Arc;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, PermissionOptionKind, PlanEntryStatus, PromptRequest, SessionUpdate,
    SetSessionModeRequest, StopReason, ToolCallStatus, ToolKind,
};

use crate::support::acp_client::{
    deployment, finished_calls, message_text, open, prompt, spawn_agent, with_client,
};
use crate::support::{FakeModel, Reply, plugin_block, refusing_plugins};

#[tokio::test]
async fn a_prompt_streams_the_reply_and_each_tool_call_then_ends_the_turn() {
    let model = FakeModel::start().await;
    model
        .push(Reply::tool("todos_add", r#"{"todos":[{"title":"write the tests"}]}"#).reasoning("plan first"));
    model.push(Reply::text("All planned."));
    // The todo list's completion loop asks again while an entry is open.
    model.fallback(Reply::text(""));
    let dir = deployment(&model, &plugin_block("todo", ""));
    let path = dir.path().to_owned();
    let (stop, seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open(&cx, &path).await;
        prompt(&cx, &session, "plan it").await
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let updates = seen.updates();
    assert_eq!(message_text(&updates), "All planned.");
    assert!(
        updates.iter().any(|update| matches!(update, SessionUpdate::AgentThoughtChunk(chunk)
            if matches!(&chunk.content, ContentBlock::Text(text) if text.text == "plan first"))),
        "{updates:#?}"
    );
    let call = updates
        .iter()
        .find_map(|update| match update {
            SessionUpdate::ToolCall(call) => Some(call.clone()),
            _ => None,
        })
        .expect("a tool_call");
    assert_eq!(call.title, "todos_add");
    assert_eq!(call.status, ToolCallStatus::Pending);
    // The todo list is the agent's own bookkeeping (the tool does not mutate): planning,
    // never an edit of the editor's files.
    assert_eq!(call.kind, ToolKind::Think, "adding todos changes the plan, not a file");
    let statuses: Vec<_> = updates
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::ToolCallUpdate(update) if update.tool_call_id == call.tool_call_id => {
                Some((update.fields.status, update.fields.content.clone().map(|content| content.len())))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        [(Some(ToolCallStatus::InProgress), None), (Some(ToolCallStatus::Completed), Some(1))],
        "{updates:#?}"
    );
}

/// The plans sent, each as (title, status) pairs.
fn plans(updates: &[SessionUpdate]) -> Vec<Vec<(String, PlanEntryStatus)>> {
    updates
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::Plan(plan) => {
                Some(plan.entries.iter().map(|entry| (entry.content.clone(), entry.status.clone())).collect())
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_todo_list_arrives_as_the_whole_plan_after_each_change() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("todos_add", r#"{"todos":[{"title":"a"},{"title":"b"}]}"#));
    model.push(Reply::tool("todos_complete", r#"{"items":[{"id":1,"reason":"done"}]}"#));
    model.push(Reply::text("one done"));
    model.fallback(Reply::text(""));
    let dir = deployment(&model, &plugin_block("todo", ""));
    let path = dir.path().to_owned();
    let (stop, seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open(&cx, &path).await;
        prompt(&cx, &session, "do a and b").await
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let plans = plans(&seen.updates());
    let pending = PlanEntryStatus::Pending;
    assert_eq!(
        plans,
        [
            vec![("a".to_owned(), pending.clone()), ("b".to_owned(), pending.clone())],
            vec![("a".to_owned(), PlanEntryStatus::Completed), ("b".to_owned(), pending)],
        ]
    );
}

#[tokio::test]
async fn agent_modes_are_the_sessions_modes_and_set_mode_switches() {
    let model = FakeModel::start().await;
    let dir = deployment(&model, &plugin_block("agent-mode", ""));
    let path = dir.path().to_owned();
    let ((before, ids), seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open(&cx, &path).await;
        let modes = session.modes.clone().expect("modes");
        let ids: Vec<String> = modes.available_modes.iter().map(|mode| mode.id.0.to_string()).collect();
        let other = ids.iter().find(|id| **id != *modes.current_mode_id.0).unwrap().clone();
        cx.send_request(SetSessionModeRequest::new(session.session_id.clone(), other.clone()))
            .block_task()
            .await
            .expect("session/set_mode");
        let options = session.config_options.clone().expect("config options");
        assert!(
            options.iter().any(|option| option.category
                == Some(agent_client_protocol::v1::schema::SessionConfigOptionCategory::Mode)),
            "{options:#?}"
        );
        // The config option of category "mode" moves the same choice back.
        let option = options.iter().find(|option| option.category.is_some()).unwrap();
        let back = cx
            .send_request(agent_client_protocol::v1::schema::SetSessionConfigOptionRequest::new(
                session.session_id.clone(),
                option.id.clone(),
                &*modes.current_mode_id.0,
            ))
            .block_task()
            .await
            .expect("session/set_config_option");
        assert_eq!(back.config_options.len(), 1, "{back:?}");
        ((modes.current_mode_id.0.to_string(), other), ids)
    })
    .await;
    assert_eq!(ids, ["plan", "execute"], "agent-mode's default modes");
    assert_eq!(before.0, "plan");
    let switched: Vec<String> = seen
        .updates()
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::CurrentModeUpdate(update) => Some(update.current_mode_id.0.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(switched, [before.1, before.0]);
}

/// `misbehave`'s `remember` tool, asked about by a `permissions` rule.
fn asking_plugins() -> String {
    format!(
        "{}{}",
        plugin_block("misbehave", ""),
        plugin_block(
            "permissions",
            r#"[plugin.config]
rules = [{ tool = "remember", decision = "ask", reason = "remembering needs a look" }]"#
        )
    )
}

/// The final status of each tool call, in order of the calls.
fn final_statuses(updates: &[SessionUpdate]) -> Vec<ToolCallStatus> {
    finished_calls(updates).into_iter().filter_map(|fields| fields.status).collect()
}

#[tokio::test]
async fn an_ask_is_a_permission_request_showing_the_exact_call_answered_each_way() {
    let model = FakeModel::start().await;
    let calls = [r#"{"key":"a","value":1}"#, r#"{"key":"b","value":2}"#, r#"{"key":"c","value":3}"#];
    // allow once; allow always (so the next ask of the same reason is answered without asking);
    // then, in a second turn, the standing approval answers.
    model.push(Reply::tool("remember", calls[0]));
    model.push(Reply::tool("remember", calls[1]));
    model.push(Reply::tool("remember", calls[2]));
    model.push(Reply::text("remembered"));
    let dir = deployment(&model, &asking_plugins());
    let path = dir.path().to_owned();
    let (stop, seen) = with_client(
        dir.path(),
        vec![Some(PermissionOptionKind::AllowOnce), Some(PermissionOptionKind::AllowAlways)],
        async move |cx, _seen| {
            let session = open(&cx, &path).await;
            prompt(&cx, &session, "remember three things").await
        },
    )
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let asked = seen.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "the third call is covered by 'always'");
    let kinds: Vec<_> = asked[0].options.iter().map(|option| option.kind).collect();
    assert_eq!(
        kinds,
        [
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
            PermissionOptionKind::RejectOnce
        ]
    );
    let title = asked[0].tool_call.fields.title.clone().unwrap();
    assert_eq!(title, format!("remember {}", calls[0]), "the exact arguments");
    assert_eq!(final_statuses(&seen.updates()), [ToolCallStatus::Completed; 3]);

    // Rejected, and a cancelled request: both deny.
    let model = FakeModel::start().await;
    model.push(Reply::tool("remember", calls[0]));
    model.push(Reply::tool("remember", calls[1]));
    model.push(Reply::text("not remembered"));
    let dir = deployment(&model, &asking_plugins());
    let path = dir.path().to_owned();
    let (stop, seen) = with_client(
        dir.path(),
        vec![Some(PermissionOptionKind::RejectOnce), None],
        async move |cx, _seen| {
            let session = open(&cx, &path).await;
            prompt(&cx, &session, "remember two things").await
        },
    )
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    assert_eq!(seen.asked.lock().unwrap().len(), 2);
    assert_eq!(final_statuses(&seen.updates()), [ToolCallStatus::Failed; 2]);
}

#[tokio::test]
async fn a_refused_call_is_announced_with_its_tool_and_input_then_fails() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("remember", r#"{"key":"launch codes","value":1}"#));
    model.push(Reply::text("I may not."));
    let dir = deployment(&model, &refusing_plugins());
    let path = dir.path().to_owned();
    let (stop, seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open(&cx, &path).await;
        prompt(&cx, &session, "remember them").await
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let updates = seen.updates();
    let call = updates
        .iter()
        .find_map(|update| match update {
            SessionUpdate::ToolCall(call) => Some(call.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("the refused call is announced: {updates:#?}"));
    assert_eq!(call.title, "remember");
    assert_eq!(call.raw_input, Some(serde_json::json!({"key": "launch codes", "value": 1})));
    assert_eq!(call.kind, ToolKind::Other, "remember is neither a read nor an edit of files");
    assert_eq!(call.status, ToolCallStatus::Pending);
    let statuses: Vec<_> = updates
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::ToolCallUpdate(update) if update.tool_call_id == call.tool_call_id => {
                update.fields.status
            }
            _ => None,
        })
        .collect();
    assert_eq!(statuses, [ToolCallStatus::Failed], "never in progress: it did not run");
}

#[tokio::test]
async fn a_permission_requests_title_shows_bidi_and_invisible_characters_escaped_and_raw_input_keeps_them() {
    let model = FakeModel::start().await;
    // A name that reads `notes.exe.txt` reversed, isolates, a zero-width space.
    let arguments = "{\"key\":\"notes\u{202e}txt.exe\",\"value\":\"\u{2066}x\u{2069}\u{200b}\"}";
    model.push(Reply::tool("remember", arguments));
    model.push(Reply::text("not remembered"));
    let dir = deployment(&model, &asking_plugins());
    let path = dir.path().to_owned();
    let (stop, seen) =
        with_client(dir.path(), vec![Some(PermissionOptionKind::RejectOnce)], async move |cx, _seen| {
            let session = open(&cx, &path).await;
            prompt(&cx, &session, "remember it").await
        })
        .await;
    assert_eq!(stop, StopReason::EndTurn);
    let asked = seen.asked.lock().unwrap()[0].tool_call.fields.clone();
    assert_eq!(
        asked.title.as_deref(),
        Some(r#"remember {"key":"notes\u{202e}txt.exe","value":"\u{2066}x\u{2069}\u{200b}"}"#)
    );
    let shown = serde_json::to_string(&asked.content).unwrap();
    assert!(shown.contains(r#"notes\\u{202e}txt.exe"#), "the text shown is escaped too: {shown}");
    assert!(!shown.contains(['\u{202e}', '\u{2066}', '\u{2069}', '\u{200b}']), "{shown}");
    assert_eq!(
        asked.raw_input,
        Some(serde_json::json!({"key": "notes\u{202e}txt.exe", "value": "\u{2066}x\u{2069}\u{200b}"})),
        "rawInput is the arguments as the tool would get them"
    );
}

#[tokio::test]
async fn cancel_ends_a_running_prompt_as_cancelled_and_the_agent_serves_on() {
    let model = FakeModel::start().await;
    let gate = Arc::new(tokio::sync::Notify::new());
    model.push(Reply::text("never finished").held_until(&gate));
    model.push(Reply::text("after the cancel"));
    let dir = deployment(&model, "");
    let path = dir.path().to_owned();
    let ((first, second), seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open(&cx, &path).await;
        let request =
            PromptRequest::new(session.session_id.clone(), vec![ContentBlock::from("wait".to_owned())]);
        let running = cx.send_request(request).block_task();
        let cancel = async {
            // The turn holds the model call until the gate opens; cancel while it waits.
            while model.requests().is_empty() {
                tokio::task::yield_now().await;
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            cx.send_notification(agent_client_protocol::v1::schema::CancelNotification::new(
                session.session_id.clone(),
            ))
            .unwrap();
        };
        let second_meanwhile = async {
            while model.requests().is_empty() {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            let request =
                PromptRequest::new(session.session_id.clone(), vec![ContentBlock::from("too".to_owned())]);
            let refused = cx.send_request(request).block_task().await;
            assert!(refused.is_err(), "a second prompt while one runs is refused: {refused:?}");
        };
        let cancel = async {
            second_meanwhile.await;
            cancel.await
        };
        let (first, ()) = tokio::join!(running, cancel);
        gate.notify_waiters();
        let second = prompt(&cx, &session, "again").await;
        (first.expect("answered").stop_reason, second)
    })
    .await;
    assert_eq!(first, StopReason::Cancelled);
    assert_eq!(second, StopReason::EndTurn);
    assert_eq!(message_text(&seen.updates()), "after the cancel");
}

#[tokio::test]
async fn a_session_loads_after_a_restart_and_the_console_resumes_it_by_id() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("remember", r#"{"key":"k","value":1}"#));
    model.push(Reply::text("first answer"));
    let dir = deployment(&model, &plugin_block("misbehave", ""));
    let path = dir.path().to_owned();
    let (id, _) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open(&cx, &path).await;
        assert_eq!(prompt(&cx, &session, "first question").await, StopReason::EndTurn);
        session.session_id.0.to_string()
    })
    .await;

    // A new process loads it: the history comes back as updates.
    let path = dir.path().to_owned();
    let loaded_id = id.clone();
    let (listed, seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await.unwrap();
        let listed = cx
            .send_request(agent_client_protocol::v1::schema::ListSessionsRequest::new())
            .block_task()
            .await
            .expect("session/list");
        cx.send_request(agent_client_protocol::v1::schema::LoadSessionRequest::new(loaded_id.clone(), path))
            .block_task()
            .await
            .expect("session/load");
        cx.send_request(agent_client_protocol::v1::schema::CloseSessionRequest::new(loaded_id))
            .block_task()
            .await
            .expect("session/close");
        listed
            .sessions
            .iter()
            .map(|session| {
                (session.session_id.0.to_string(), session.title.clone(), session.updated_at.clone())
            })
            .collect::<Vec<_>>()
    })
    .await;
    let [(listed_id, title, updated_at)] = &listed[..] else { panic!("one session listed: {listed:?}") };
    assert_eq!(listed_id, &id);
    assert_eq!(title.as_deref(), Some("first question"), "its first prompt is its title");
    // Its last use, as RFC 3339 text in UTC, within the time the test has run.
    let updated_at = updated_at.as_deref().expect("its last use");
    let unix = std::process::Command::new("date").args(["-u", "-d", updated_at, "+%s"]).output().unwrap();
    let unix: u64 = String::from_utf8_lossy(&unix.stdout).trim().parse().expect(updated_at);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert!(updated_at.ends_with('Z') && unix <= now && now - unix < 600, "{updated_at}");
    let updates = seen.updates();
    let user: Vec<_> = updates
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::UserMessageChunk(chunk) => match &chunk.content {
                ContentBlock::Text(text) => Some(text.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(user, ["first question"]);
    assert_eq!(message_text(&updates), "first answer");
    assert_eq!(final_statuses(&updates), [ToolCallStatus::Completed]);

    // The console's --session resumes the same session from the same store.
    model.push(Reply::text("second answer"));
    let output = crate::support::json_prompt_command(dir.path(), Some(&id), "second question")
        .env("AGENT_HOST_TEST_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains(&format!(r#""session_id":"{id}","resumed":true"#)), "{stdout}");
    let last = model.requests().pop().unwrap();
    assert!(last.to_string().contains("first question"), "the history went with the resumed turn");
}

/// Writes `lines` to a fresh agent's stdin one at a time, reading one answer line after each.
async fn raw_exchange(dir: &Path, lines: &[&str]) -> Vec<serde_json::Value> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut child = spawn_agent(dir);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answers = Vec::new();
    for line in lines {
        stdin.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        stdin.flush().await.unwrap();
        let answer = stdout.next_line().await.unwrap().expect("an answer line");
        answers.push(serde_json::from_str(&answer).expect("stdout carries JSON-RPC only"));
    }
    answers
}

#[tokio::test]
async fn bad_input_gets_the_protocols_error_and_the_agent_serves_on() {
    let model = FakeModel::start().await;
    let dir = deployment(&model, "");
    let answers = raw_exchange(
        dir.path(),
        &[
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
            "{not json",
            r#"{"jsonrpc":"2.0","id":1,"method":"no/such_method","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"hi"}]}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#,
        ],
    )
    .await;
    assert_eq!(answers[0]["result"]["protocolVersion"], 1, "{answers:#?}");
    assert_eq!(answers[1]["error"]["code"], -32700, "{answers:#?}");
    assert_eq!(answers[2]["error"]["code"], -32601, "{answers:#?}");
    assert_eq!(answers[3]["id"], 2);
    assert_eq!(answers[3]["error"]["code"], -32602, "{answers:#?}");
    assert!(answers[3]["error"]["data"].as_str().unwrap().contains("nope"), "{answers:#?}");
    assert!(answers[4]["result"]["sessionId"].is_string(), "{answers:#?}");
}

#[tokio::test]
async fn with_triage_modes_in_place_of_agent_mode_the_modes_are_its_stages() {
    let model = FakeModel::start().await;
    let plugins = format!(
        "{}{}",
        plugin_block("todo", ""),
        plugin_block("triage-modes", "[plugin.grants]\nread_state = [\"todo\"]\n")
    );
    let dir = deployment(&model, &plugins);
    let path = dir.path().to_owned();
    let (modes, _) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open(&cx, &path).await;
        let modes = session.modes.clone().expect("modes");
        // Only the model moves the stages: a switch from the editor is refused.
        let refused = cx
            .send_request(SetSessionModeRequest::new(session.session_id.clone(), "review"))
            .block_task()
            .await;
        assert!(refused.is_err(), "{refused:?}");
        modes
    })
    .await;
    let ids: Vec<String> = modes.available_modes.iter().map(|mode| mode.id.0.to_string()).collect();
    assert_eq!(ids, ["triage", "research", "review"]);
    assert_eq!(&*modes.current_mode_id.0, "triage");
}

#[tokio::test]
async fn slash_commands_are_announced_and_run_as_prompts_and_usage_is_reported() {
    let model = FakeModel::start().await;
    model.push(Reply::text("hello"));
    let dir = deployment(&model, &plugin_block("todo", ""));
    // A window to count against: the fake model is not a known one.
    let config = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    let config = config.replacen("model = \"fake\"\n", "model = \"fake\"\ncontext_window = 32000\n", 1);
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let path = dir.path().to_owned();
    let ((id, stops), seen) = with_client(dir.path(), vec![], async move |cx, _seen| {
        let session = open(&cx, &path).await;
        let command = prompt(&cx, &session, "/session").await;
        let turn = prompt(&cx, &session, "hi").await;
        (session.session_id.0.to_string(), [command, turn])
    })
    .await;
    assert_eq!(stops, [StopReason::EndTurn; 2]);
    let updates = seen.updates();
    let names: Vec<String> = updates
        .iter()
        .find_map(|update| match update {
            SessionUpdate::AvailableCommandsUpdate(update) => {
                Some(update.available_commands.iter().map(|command| command.name.clone()).collect())
            }
            _ => None,
        })
        .expect("available_commands_update");
    assert!(names.contains(&"help".to_owned()) && names.contains(&"todos".to_owned()), "{names:?}");
    let text = message_text(&updates);
    assert!(text.starts_with(&format!("session {id}")), "the command's answer: {text}");
    assert!(text.ends_with("hello"), "{text}");
    assert_eq!(model.requests().len(), 1, "the command made no model call");
    let usage: Vec<_> = updates
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::UsageUpdate(usage) => Some((usage.used, usage.size)),
            _ => None,
        })
        .collect();
    assert_eq!(usage.len(), 1, "one model call, one usage update: {usage:?}");
    assert!(usage[0].0 > 0 && usage[0].1 == 32000, "{usage:?}");
}
