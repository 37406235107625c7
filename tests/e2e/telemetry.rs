//! Traces: a todo turn of the real binary exported over OTLP/HTTP to a receiver in the test,
//! which decodes the protobuf as a collector does, and finds the GenAI spans (`invoke_agent`,
//! `chat {model}`, `execute_tool {tool}`) and the plugin calls, with their attributes and
//! parents. Off by default: without `[telemetry]` nothing is sent.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use prost::Message as _;
use serde_json::Value;

use crate::support::{FakeModel, Reply, config_text, json_prompt_command, plugin_block};

/// A span as the receiver keeps it.
#[derive(Debug, Clone)]
struct Received {
    name: String,
    trace: Vec<u8>,
    id: Vec<u8>,
    parent: Vec<u8>,
    attributes: HashMap<String, String>,
    service: String,
}

/// An OTLP/HTTP receiver on loopback: every span posted to `/v1/traces`, decoded.
async fn receiver() -> (SocketAddr, Arc<Mutex<Vec<Received>>>) {
    let spans = Arc::new(Mutex::new(Vec::new()));
    let kept = spans.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: Bytes| {
            let kept = kept.clone();
            async move {
                let request = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                for resource in request.resource_spans {
                    let service = resource
                        .resource
                        .map(|r| attributes(&r.attributes))
                        .and_then(|a| a.get("service.name").cloned())
                        .unwrap_or_default();
                    for scope in resource.scope_spans {
                        for span in scope.spans {
                            kept.lock().unwrap().push(Received {
                                name: span.name,
                                trace: span.trace_id,
                                id: span.span_id,
                                parent: span.parent_span_id,
                                attributes: attributes(&span.attributes),
                                service: service.clone(),
                            });
                        }
                    }
                }
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (address, spans)
}

fn attributes(list: &[opentelemetry_proto::tonic::common::v1::KeyValue]) -> HashMap<String, String> {
    list.iter()
        .map(|kv| {
            let value = match kv.value.as_ref().and_then(|v| v.value.clone()) {
                Some(Any::StringValue(s)) => s,
                Some(Any::IntValue(i)) => i.to_string(),
                Some(Any::BoolValue(b)) => b.to_string(),
                Some(Any::DoubleValue(d)) => d.to_string(),
                other => format!("{other:?}"),
            };
            (kv.key.clone(), value)
        })
        .collect()
}

/// A `--prompt --json` todo turn with `telemetry` appended to the config; its JSON events.
async fn todo_turn(model: &FakeModel, telemetry: &str) -> Vec<Value> {
    model.push(Reply::tool("todos_add", r#"{"todos":[{"title":"trace it"}]}"#).usage(120, 0, 8));
    model.push(Reply::tool("todos_complete", r#"{"items":[{"id":1,"reason":"traced"}]}"#).usage(140, 100, 9));
    model.push(Reply::text("Done.").usage(150, 100, 3));
    let dir = tempfile::tempdir().unwrap();
    let config = format!("{}\n{telemetry}", config_text(&model.url(), &plugin_block("todo", "")));
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let output = json_prompt_command(dir.path(), None, "plan it")
        .env("AGENT_HOST_TEST_KEY", "k")
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_is_one_trace_of_genai_spans_with_the_plugin_calls_inside() {
    let (address, spans) = receiver().await;
    let model = FakeModel::start().await;
    let events = todo_turn(&model, &format!("[telemetry]\notlp_endpoint = \"http://{address}\"\n")).await;
    let session_id =
        events.iter().find(|e| e["type"] == "session_started").unwrap()["session_id"].as_str().unwrap();
    let call_id = events.iter().find(|e| e["type"] == "tool_call").unwrap()["id"].as_str().unwrap();
    assert_eq!(events.last().unwrap()["reason"], "done", "{events:#?}");

    // The process sent what it batched before it exited.
    let spans = spans.lock().unwrap().clone();
    let named = |name: &str| spans.iter().filter(|s| s.name == name).cloned().collect::<Vec<_>>();
    let [turn] = &named("invoke_agent agent-host")[..] else { panic!("one turn span: {spans:#?}") };
    assert_eq!(turn.attributes["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(turn.attributes["gen_ai.conversation.id"], session_id);
    assert_eq!(turn.attributes["agent_host.turn.end"], "done");
    assert_eq!(turn.service, "agent-host");
    // Everything the turn did is in its trace; what ran outside a turn (loading the plugins,
    // opening the session) is plugin calls of their own.
    for span in spans.iter().filter(|s| s.trace != turn.trace) {
        assert!(span.name.starts_with("plugin ") && span.parent.is_empty(), "outside the turn: {span:#?}");
    }

    let chats = named("chat fake");
    let replies = [("120", "8", "tool_calls"), ("140", "9", "tool_calls"), ("150", "3", "stop")];
    assert_eq!(chats.len(), replies.len(), "{spans:#?}");
    for (chat, (input, output, finish)) in chats.iter().zip(replies) {
        assert_eq!((&chat.trace, &chat.parent), (&turn.trace, &turn.id), "a model call is part of its turn");
        assert_eq!(chat.attributes["gen_ai.operation.name"], "chat");
        assert_eq!(chat.attributes["gen_ai.request.model"], "fake");
        assert_eq!(chat.attributes["gen_ai.usage.input_tokens"], input);
        assert_eq!(chat.attributes["gen_ai.usage.output_tokens"], output);
        assert_eq!(chat.attributes["gen_ai.response.finish_reasons"], finish);
    }

    let [tool] = &named("execute_tool todos_add")[..] else { panic!("one todos_add span: {spans:#?}") };
    assert_eq!(tool.parent, turn.id);
    assert_eq!(tool.attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(tool.attributes["gen_ai.tool.name"], "todos_add");
    assert_eq!(tool.attributes["gen_ai.tool.call.id"], call_id);
    assert_eq!(tool.attributes["agent_host.tool.ok"], "true");

    // The plugin's export ran inside the tool call, and so did its `provide`, asked ahead in
    // the call's instance once the call moved the list (the next model call found it kept);
    // its `stop` inside the turn.
    let exports = named("plugin todo call-tool");
    assert_eq!(exports.len(), 2, "todos_add and todos_complete: {spans:#?}");
    let export =
        exports.iter().find(|e| e.parent == tool.id).expect("todos_add's export inside its tool span");
    assert_eq!(export.attributes["agent_host.plugin.name"], "todo");
    assert_eq!(export.attributes["agent_host.plugin.export"], "call-tool");
    assert_eq!(export.attributes["agent_host.plugin.outcome"], "ok");
    let provides = named("plugin todo provide");
    assert!(provides.iter().any(|p| p.parent == tool.id), "provide asked ahead inside todos_add: {spans:#?}");
    assert!(provides.iter().all(|p| p.parent != turn.id), "no provide made for a model call: {spans:#?}");
    let stops = named("plugin todo stop");
    assert!(stops.iter().any(|p| p.parent == turn.id), "stop: {spans:#?}");
    // What was said is not in the trace unless the operator opts in.
    assert!(
        !spans.iter().any(|s| s.attributes.values().any(|v| v.contains("plan it") || v.contains("trace it")))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_telemetry_nothing_is_sent_and_a_bad_endpoint_is_refused_by_name() {
    let (_address, spans) = receiver().await;
    let model = FakeModel::start().await;
    todo_turn(&model, "").await;
    assert!(spans.lock().unwrap().is_empty());

    let dir = tempfile::tempdir().unwrap();
    let config =
        format!("{}\n[telemetry]\notlp_endpoint = \"localhost:4318\"\n", config_text(&model.url(), ""));
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let output = json_prompt_command(dir.path(), None, "hi").output().await.unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("telemetry.otlp_endpoint") && stderr.contains("not an http:// or https:// URL"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_capture_content_the_spans_carry_what_was_said() {
    let (address, spans) = receiver().await;
    let model = FakeModel::start().await;
    let telemetry = format!("[telemetry]\notlp_endpoint = \"http://{address}\"\ncapture_content = true\n");
    todo_turn(&model, &telemetry).await;
    let spans = spans.lock().unwrap().clone();
    let tool = spans.iter().find(|s| s.name == "execute_tool todos_add").expect("the tool span");
    assert!(tool.attributes["gen_ai.tool.call.arguments"].contains("trace it"), "{tool:#?}");
    assert!(tool.attributes["gen_ai.tool.call.result"].contains("trace it"), "{tool:#?}");
    let said: Vec<&str> = spans
        .iter()
        .filter(|s| s.name == "chat fake")
        .filter_map(|s| s.attributes.get("gen_ai.output.messages").map(String::as_str))
        .collect();
    assert!(said.contains(&"Done."), "{said:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_agents_turn_is_traced_under_the_tool_call_that_started_it() {
    let (address, spans) = receiver().await;
    let model = FakeModel::start().await;
    let agents = tempfile::tempdir().unwrap();
    let definition =
        "---\nname: helper\ndescription: Helps.\ntools: [echo]\nmodel: child-model\n---\nYou help.\n";
    std::fs::write(agents.path().join("helper.md"), definition).unwrap();
    let subagents = plugin_block(
        "subagents",
        &format!(
            "[plugin.config]\ndirs = [\"/agents\"]\n[plugin.grants]\nagents = true\n[plugin.grants.dirs]\n\"/agents\" = {{ host = \"{}\" }}",
            agents.path().display()
        ),
    );
    model.push(Reply::tool("task", r#"{"agent":"helper","prompt":"help"}"#));
    model.push(Reply::text("done"));
    model.on_model("child-model", [Reply::text("helped")]);
    let dir = tempfile::tempdir().unwrap();
    let plugins = format!("{}{subagents}", plugin_block("misbehave", ""));
    let config = format!(
        "{}\n[telemetry]\notlp_endpoint = \"http://{address}\"\n",
        config_text(&model.url(), &plugins)
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let output = json_prompt_command(dir.path(), None, "delegate")
        .env("AGENT_HOST_TEST_KEY", "k")
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));

    let spans = spans.lock().unwrap().clone();
    let turns: Vec<&Received> = spans.iter().filter(|s| s.name == "invoke_agent agent-host").collect();
    assert_eq!(turns.len(), 2, "the parent's turn and the child's: {spans:#?}");
    let [task] = &spans.iter().filter(|s| s.name == "execute_tool task").collect::<Vec<_>>()[..] else {
        panic!("one task span: {spans:#?}")
    };
    let (parent, child): (Vec<&&Received>, Vec<&&Received>) =
        turns.iter().partition(|turn| turn.parent.is_empty());
    let (parent, child) = (parent[0], child[0]);
    assert_eq!(task.parent, parent.id, "the task call is part of the parent's turn");
    assert_eq!(
        (&child.trace, &child.parent),
        (&parent.trace, &task.id),
        "the child's turn under its task call"
    );
    assert_ne!(child.attributes["gen_ai.conversation.id"], parent.attributes["gen_ai.conversation.id"]);
    let chat = spans.iter().find(|s| s.name == "chat child-model").expect("the child's model call");
    assert_eq!(chat.parent, child.id);
}
