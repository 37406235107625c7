//! `provider = "anthropic"` through the real host and the real plugins against a Messages
//! fake that checks requests as the API does: the todo workflow with `todo` and with
//! `todo-write`, agent-mode's plan then execute, the prompt-cache breakpoints and the
//! prefix that stays the same bytes, and the usage the endpoint reports. Failures
//! (retries, errors mid-stream, cut replies, refused options) are in `faults`.

mod faults;

use agent_host::TurnEnd;
use agent_host::agent::SessionHandle;
use agent_host::model::{History, HistoryEncodings, Message, ModelRequest, ToolDefinition};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::support::anthropic_fake::{AnthropicFake, AnthropicReply as Reply, KEY};
use crate::support::{TestHost, plugin_block};

async fn host(fake: &AnthropicFake, plugins: &str) -> TestHost {
    TestHost::new(&fake.config(plugins)).await.expect("the test host starts")
}

/// The system prompt of one request: its text blocks, joined.
fn system_text(request: &Value) -> String {
    request["system"].as_array().unwrap().iter().map(|block| block["text"].as_str().unwrap()).collect()
}

/// Every content block of one request's messages, with the role of its message.
fn blocks(request: &Value) -> Vec<(&str, &Value)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| {
            let role = message["role"].as_str().unwrap();
            message["content"].as_array().unwrap().iter().map(move |block| (role, block))
        })
        .collect()
}

/// The text blocks of the request's last message (the user's: the API wants one last).
fn last_user_texts(request: &Value) -> Vec<String> {
    let last = request["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user");
    last["content"].as_array().unwrap().iter().filter_map(|b| b["text"].as_str().map(str::to_owned)).collect()
}

/// The tool results of one request, in order: (the call answered, the content).
fn tool_results(request: &Value) -> Vec<(String, String)> {
    blocks(request)
        .into_iter()
        .filter(|(_, block)| block["type"] == "tool_result")
        .map(|(_, block)| {
            (
                block["tool_use_id"].as_str().unwrap().to_owned(),
                block["content"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// The cached prefix of a request body as sent: its `tools` and `system` values' bytes.
fn prefix(body: &str) -> (String, String) {
    #[derive(serde::Deserialize)]
    struct Prefix<'a> {
        #[serde(borrow)]
        tools: &'a RawValue,
        #[serde(borrow)]
        system: &'a RawValue,
    }
    let prefix: Prefix<'_> = serde_json::from_str(body).expect("the body has tools and a system prompt");
    (prefix.tools.get().to_owned(), prefix.system.get().to_owned())
}

/// Checks the three breakpoints of one request: the last tool, the last system block, and
/// the last block of the history's last user message, which is before the injected ones.
fn assert_breakpoints(request: &Value, injected: usize) {
    let marked = |value: &Value| value.get("cache_control") == Some(&json!({"type": "ephemeral"}));
    let tools = request["tools"].as_array().unwrap();
    assert!(
        marked(tools.last().unwrap()) && tools[..tools.len() - 1].iter().all(|t| !marked(t)),
        "tools: {tools:?}"
    );
    let system = request["system"].as_array().unwrap();
    assert!(marked(system.last().unwrap()), "system: {system:?}");
    let last = request["messages"].as_array().unwrap().last().unwrap()["content"].as_array().unwrap().clone();
    let history_end = last.len() - 1 - injected;
    let in_messages: Vec<usize> = blocks(request)
        .iter()
        .enumerate()
        .filter(|(_, (_, block))| marked(block))
        .map(|(at, _)| at)
        .collect();
    assert_eq!(in_messages.len(), 1, "one breakpoint in the messages");
    assert!(marked(&last[history_end]), "on the history's last block: {last:?}");
}

async fn stored_todos(session: &SessionHandle) -> Value {
    session.lock().await.bag().get_json("todo", "items").unwrap_or(Value::Null)
}

#[tokio::test]
async fn the_todo_workflow_runs_on_messages_with_a_stable_cached_prefix() {
    let fake = AnthropicFake::start().await;
    fake.push(Reply::tool("todos_add", r#"{"todos":[{"title":"write the notes"},{"title":"send them"}]}"#));
    fake.push(Reply::text("I have planned it; starting now."));
    fake.push(
        Reply::tool("todos_complete", r#"{"items":[{"id":1,"reason":"written"}]}"#)
            .and_tool("todos_complete", r#"{"items":[{"id":2,"reason":"sent"}]}"#),
    );
    fake.push(Reply::text("Both are done."));
    let test = host(&fake, &plugin_block("todo", "")).await;
    let session = test.session();
    let outcome = test.turn(&session, "Write the release notes and send them.").await.unwrap();

    assert_eq!(outcome.end, TurnEnd::Done);
    assert_eq!(outcome.reply, "Both are done.");
    assert_eq!(outcome.iterations, 4, "the loop sent the model back once while todos were open");
    let todos = stored_todos(&session).await;
    assert!(todos.as_array().unwrap().iter().all(|item| item["isComplete"] == true), "{todos}");

    let requests = fake.requests();
    assert_eq!(requests.len(), 4);
    assert!(system_text(&requests[0]).contains("break it into todos"));
    assert_eq!(
        last_user_texts(&requests[0]),
        ["Write the release notes and send them.", "### Current todo list\n- none yet"]
    );
    let reminder = last_user_texts(&requests[2]);
    assert!(
        reminder[0].contains("- 1 [open] write the notes"),
        "the loop's message, then the list: {reminder:?}"
    );
    let calls: Vec<&str> = blocks(&requests[3])
        .into_iter()
        .filter(|(_, block)| block["type"] == "tool_use")
        .map(|(_, block)| block["id"].as_str().unwrap())
        .collect();
    let answered: Vec<String> = tool_results(&requests[3]).into_iter().map(|(id, _)| id).collect();
    assert_eq!(calls.len(), 3);
    assert_eq!(answered, calls, "every call answered, in order");
    assert_eq!(
        tool_results(&requests[3])[1..].iter().map(|(_, out)| out.as_str()).collect::<Vec<_>>(),
        ["1", "1"]
    );

    for request in &requests {
        assert_breakpoints(request, 1);
    }
    let received = fake.received();
    for request in &received {
        assert_eq!(
            (request.header("x-api-key").as_deref(), request.header("anthropic-version").as_deref()),
            (Some(KEY), Some("2023-06-01"))
        );
    }
    let first = prefix(&received[0].body);
    for later in &received[1..] {
        assert_eq!(
            prefix(&later.body),
            first,
            "the tools and the system prompt are the same bytes on every call"
        );
    }
    let usage = fake.cache_reported();
    assert_eq!(usage.len(), received.len(), "every request was answered with a reply");
    assert_eq!(usage[0].read, 0);
    for (before, after) in usage.iter().zip(&usage[1..]) {
        assert_eq!(after.read, before.read + before.written, "each call reads all the call before it cached");
    }
}

#[tokio::test]
async fn the_todo_write_workflow_runs_on_messages() {
    let fake = AnthropicFake::start().await;
    let snapshot = |first: &str, second: &str| {
        format!(
            r#"{{"todos":[{{"content":"Read the code","status":"{first}","activeForm":"Reading the code"}},{{"content":"Fix the bug","status":"{second}","activeForm":"Fixing the bug"}}]}}"#
        )
    };
    fake.push(Reply::tool("TodoWrite", &snapshot("in_progress", "pending")));
    fake.push(Reply::text("Reading it now."));
    fake.push(Reply::tool("TodoWrite", &snapshot("completed", "completed")));
    fake.push(Reply::text("Fixed."));
    let test = host(&fake, &plugin_block("todo-write", "")).await;
    let session = test.session();
    let outcome = test.turn(&session, "Fix the bug in the parser.").await.unwrap();

    assert_eq!((outcome.end, outcome.reply.as_str(), outcome.iterations), (TurnEnd::Done, "Fixed.", 4));
    let requests = fake.requests();
    assert!(
        last_user_texts(&requests[0]).iter().any(|text| text.contains("plan it with TodoWrite")),
        "the first call's reminder, as a user text block: {:?}",
        last_user_texts(&requests[0])
    );
    let (_, rendered) = tool_results(&requests[1]).pop().unwrap();
    assert_eq!(rendered, "[>] Read the code <- Reading the code\n[ ] Fix the bug\n(0/2 completed)");
    assert!(
        last_user_texts(&requests[2]).iter().any(|text| text.contains("[>] Read the code")),
        "the loop names what is open: {:?}",
        last_user_texts(&requests[2])
    );
    let todos = session.lock().await.bag().get_json("todo-write", "todos").unwrap();
    assert!(todos.as_array().unwrap().iter().all(|item| item["status"] == "completed"), "{todos}");
    for request in &requests {
        assert!(request["messages"].as_array().unwrap().iter().all(|m| m["role"] != "system"));
    }
}

#[tokio::test]
async fn agent_mode_plans_then_executes_once_the_operator_switches() {
    let fake = AnthropicFake::start().await;
    let todo = "[plugin.config.loop]\nmodes = [\"execute\"]\nmode_plugin = \"agent-mode\"\n\
                [plugin.grants]\nread_state = [\"agent-mode\"]\n";
    let plugins = format!(
        "{}{}{}",
        plugin_block("agent-mode", ""),
        plugin_block("todo", todo),
        plugin_block("misbehave", "")
    );
    let test = host(&fake, &plugins).await;
    let session = test.session();

    // Plan: the todos are bookkeeping and pass; `touch` changes things and is refused.
    fake.push(Reply::tool("todos_add", r#"{"todos":[{"title":"touch the file"}]}"#).and_tool("touch", "{}"));
    fake.push(Reply::text("The plan: touch the file. Shall I?"));
    let planned = test.turn(&session, "Plan how to touch the file.").await.unwrap();
    assert_eq!((planned.end, planned.iterations), (TurnEnd::Done, 2), "no loop in plan mode");

    let mut locked = session.lock().await;
    test.host.command(&mut locked, "/mode execute", &*test.events).await.unwrap();
    drop(locked);
    fake.push(
        Reply::tool("touch", "{}").and_tool("todos_complete", r#"{"items":[{"id":1,"reason":"touched"}]}"#),
    );
    fake.push(Reply::text("Done."));
    let executed = test.turn(&session, "Go ahead.").await.unwrap();
    assert_eq!((executed.end, executed.reply.as_str()), (TurnEnd::Done, "Done."));

    let requests = fake.requests();
    assert_eq!(requests.len(), 4);
    let results = tool_results(&requests[1]);
    assert!(results[0].1.contains("touch the file"), "the todo was added: {results:?}");
    assert!(results[1].1.contains("`touch`") && results[1].1.contains("`plan`"), "{results:?}");
    assert!(system_text(&requests[1]).contains("The current mode is `plan`"));
    assert!(system_text(&requests[2]).contains("The current mode is `execute`"));
    assert!(
        last_user_texts(&requests[2]).iter().any(|text| text.starts_with("[Mode changed:")),
        "the switch is announced in the user turn: {:?}",
        last_user_texts(&requests[2])
    );
    let results = tool_results(&requests[3]);
    assert_eq!(results.last().unwrap().1, "1");
    assert_eq!(results[results.len() - 2].1, "touched", "allowed in execute");
    assert_eq!(stored_todos(&session).await[0]["isComplete"], true);

    let received = fake.received();
    assert_eq!(prefix(&received[0].body), prefix(&received[1].body), "the same mode, the same prefix");
    assert_eq!(prefix(&received[2].body), prefix(&received[3].body));
    assert_ne!(prefix(&received[1].body).1, prefix(&received[2].body).1, "the mode is in the system prompt");
    assert_eq!(prefix(&received[1].body).0, prefix(&received[2].body).0, "the tools did not change");
}

#[tokio::test]
async fn the_usage_the_endpoint_reports_is_read_with_its_cache_tokens() {
    let fake = AnthropicFake::start().await;
    let test = host(&fake, &plugin_block("todo", "")).await;
    let system = "You help. ".repeat(200);
    let parameters = RawValue::from_string(r#"{"type":"object","properties":{}}"#.to_owned()).unwrap();
    let tools =
        [ToolDefinition { name: "look".into(), description: "Looks.".into(), parameters: parameters.into() }];
    let mut history = History::from(vec![Message::user("one")]);
    let mut encodings = HistoryEncodings::default();
    let mut replies = Vec::new();
    for text in ["first", "second"] {
        fake.push(Reply::text(text).thinking_first("Let me think."));
        let request = ModelRequest {
            session_id: "s",
            system: &system,
            history: &history,
            injected: &[],
            tools: &tools,
            max_output_tokens: None,
            model: None,
        };
        let mut shown = String::new();
        let reply = test
            .host
            .model()
            .complete(&request, &mut encodings, &mut |text| shown.push_str(text))
            .await
            .unwrap();
        assert_eq!(shown, text);
        assert_eq!(reply.reasoning, "Let me think.", "thinking is kept apart from the text");
        history.push(Message::assistant(reply.text.clone(), Vec::new()));
        history.push(Message::user("and then?"));
        replies.push(reply);
    }
    let reported = fake.cache_reported();
    assert_eq!(reported.len(), replies.len());
    for (reply, cache) in replies.iter().zip(&reported) {
        let usage = reply.usage.expect("the endpoint reported usage");
        assert_eq!(
            usage.input_tokens,
            cache.input + cache.read + cache.written,
            "input counts the cached tokens too"
        );
        assert_eq!((usage.cache_read_tokens, usage.cache_write_tokens), (cache.read, cache.written));
        assert!(usage.output_tokens > 0);
    }
    assert_eq!(replies[0].usage.unwrap().cache_read_tokens, 0);
    assert!(replies[1].usage.unwrap().cache_read_tokens > 0, "the second call read the first one's prefix");
}
