//! `GET /metrics` of a real `serve`: a todo turn and a denied call, then the figures read as
//! Prometheus reads them (its text format, parsed), each matching what the turn did.

use std::collections::HashMap;

use reqwest::StatusCode;

use crate::support::serve::{Server, serve, token};
use crate::support::{FakeModel, Reply, plugin_block};

/// The samples of `/metrics` read by a Prometheus text-format parser: `name{labels}` → value.
pub(crate) async fn scrape(server: &Server, principal: &str) -> (StatusCode, HashMap<String, f64>) {
    let url = format!("{}/metrics", server.base);
    let response = server.http.get(url).bearer_auth(token(principal)).send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    if status != StatusCode::OK {
        return (status, HashMap::new());
    }
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|line| Ok(line.to_owned()))).expect(&text);
    let samples = scrape
        .samples
        .into_iter()
        .map(|sample| {
            let mut labels: Vec<String> = sample.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            labels.sort();
            let value = match sample.value {
                prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Gauge(v) => v,
                prometheus_parse::Value::Untyped(v) => v,
                prometheus_parse::Value::Histogram(buckets) => buckets.last().map_or(0.0, |b| b.count),
                prometheus_parse::Value::Summary(_) => f64::NAN,
            };
            (format!("{}{{{}}}", sample.metric, labels.join(",")), value)
        })
        .collect();
    (status, samples)
}

#[tokio::test]
async fn metrics_count_what_the_turns_did_and_only_an_admin_reads_them() {
    let model = FakeModel::start().await;
    model.push(Reply::tool("todos_add", r#"{"todos":[{"title":"count it"}]}"#).usage(100, 0, 10));
    model.push(Reply::tool("todos_complete", r#"{"items":[{"id":1,"reason":"counted"}]}"#).usage(120, 0, 7));
    model.push(Reply::tool("todos_remove", r#"{"ids":[1]}"#).usage(130, 0, 5));
    model.push(Reply::text("Counted.").usage(140, 0, 3));
    let rules = "[plugin.config]\ndefault = \"allow\"\nrules = [{ tool = \"todos_remove\", decision = \"deny\", reason = \"keep the list\" }]";
    let plugins = format!("{}{}", plugin_block("todo", ""), plugin_block("permissions", rules));
    let mut server = serve(&model, &plugins, "").await;
    let session = server.new_session("alice").await;
    let events = server.turn_events("alice", &session, "count").await;
    assert_eq!(events.last().unwrap().1["reason"], "done", "{events:?}");

    let (status, _) = scrape(&server, "alice").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "not an admin");
    let (status, samples) = scrape(&server, "root").await;
    assert_eq!(status, StatusCode::OK);
    let sample = |name: &str| *samples.get(name).unwrap_or_else(|| panic!("{name} in {samples:#?}"));
    assert_eq!(sample("agent_host_turns_total{end=done}"), 1.0);
    assert_eq!(sample("agent_host_model_calls_total{}"), 4.0);
    assert_eq!(sample("agent_host_tokens_total{direction=input}"), 490.0);
    assert_eq!(sample("agent_host_tokens_total{direction=output}"), 25.0);
    assert_eq!(sample("agent_host_tool_calls_total{decision=allowed}"), 2.0);
    assert_eq!(sample("agent_host_tool_calls_total{decision=denied}"), 1.0);
    assert_eq!(sample("agent_host_model_call_seconds_count{}"), 4.0);
    assert_eq!(sample("agent_host_host_overhead_seconds_count{}"), 1.0);
    server.child.kill().await.unwrap();
}
