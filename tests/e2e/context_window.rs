//! Context accounting through the real binary: every model call is announced with its
//! estimated size against the window, the estimate is calibrated by the usage the endpoint
//! reports (in a later process too, from the store), the console shows the tokens in use and
//! the window, and a window too small for what every request carries is refused at start.

use std::process::Output;

use serde_json::{Value, json};

use crate::support::{FakeModel, Reply, config_text, console_on, plugin_block};

/// The test deployment (the misbehave plugin's `echo`) with `[model]` lines added.
fn config(model: &FakeModel, model_lines: &str) -> String {
    config_text(&model.url(), &plugin_block("misbehave", ""))
        .replace("model = \"fake\"\n", &format!("model = \"fake\"\n{model_lines}\n"))
}

async fn run(dir: &tempfile::TempDir, args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-host"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("NO_COLOR", "1")
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .args(args)
        .output()
        .await
        .unwrap()
}

fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout).lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

fn estimates(events: &[Value]) -> Vec<Value> {
    events.iter().filter(|e| e["type"] == "model_request").map(|e| e["context"].clone()).collect()
}

fn tokens(context: &Value, field: &str) -> u64 {
    context[field].as_u64().unwrap_or_else(|| panic!("no {field} in {context}"))
}

#[tokio::test]
async fn each_call_is_estimated_before_it_is_sent_and_calibrated_by_the_last_reported_usage() {
    let model = FakeModel::start().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.toml"),
        config(&model, "context_window = 200000\nmax_output_tokens = 64"),
    )
    .unwrap();
    // Counts far from what the request's bytes suggest, so a calibrated estimate shows.
    model.push(Reply::tool("echo", r#"{"text":"hi"}"#).usage(50_000, 0, 10));
    model.push(Reply::text("Done.").usage(50_200, 0, 3));
    let output = run(&dir, &["--prompt", "go", "--json"]).await;
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let events = json_lines(&output);
    let contexts = estimates(&events);
    assert_eq!(contexts.len(), 2, "{contexts:?}");

    let first = &contexts[0];
    assert_eq!((first["counted_by"].as_str(), first["window"].as_u64()), (Some("bytes"), Some(200_000)));
    assert_eq!(first.get("last_usage"), None, "no call has reported yet");
    assert_eq!(tokens(first, "output_reserve"), 64);
    assert_eq!(tokens(first, "estimated_tokens"), tokens(first, "prompt_tokens") + 64);
    assert!(tokens(first, "prompt_tokens") < 5_000, "four bytes a token of a short request: {first}");

    // The second request is the first and a little more; the endpoint counted 50,000 for
    // the first, so the estimate of the second is a little over that, growing as the bytes.
    let second = &contexts[1];
    assert_eq!(second["counted_by"], "calibrated_bytes");
    assert_eq!(
        second["last_usage"],
        json!({"input_tokens": 50_000, "output_tokens": 10, "cache_read_tokens": 0, "cache_write_tokens": 0})
    );
    let requests = model.requests();
    let grew = requests[1].to_string().len() as f64 / requests[0].to_string().len() as f64;
    let estimated = tokens(second, "prompt_tokens") as f64 / 50_000.0;
    assert!(estimated > 1.0 && estimated < grew * 1.5, "{second} for a request {grew:.2}× the first");

    // A later process resumes the session: its first estimate is calibrated by the stored
    // usage of the last reply.
    let id = events[0]["session_id"].as_str().unwrap().to_owned();
    model.push(Reply::text("Again.").usage(50_400, 0, 2));
    let resumed = run(&dir, &["--session", &id, "--prompt", "again", "--json"]).await;
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    let resumed = estimates(&json_lines(&resumed));
    assert_eq!(resumed[0]["counted_by"], "calibrated_bytes");
    assert_eq!(resumed[0]["last_usage"]["input_tokens"], 50_200);
    assert!(tokens(&resumed[0], "prompt_tokens") > 50_200, "{}", resumed[0]);
}

#[tokio::test]
async fn the_console_shows_the_tokens_in_use_and_the_window() {
    let model = FakeModel::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config_path = dir.path().join("config.toml");
    std::fs::write(&config_path, config(&model, "context_window = 128000")).unwrap();
    model.push(Reply::text("Hello.").usage(12_000, 0, 345));
    let stdout = console_on(&config_path, None, "hi\n/session\n").await;
    assert!(stdout.contains("[12,345/128,000 tokens] > "), "the prompt after the reply: {stdout}");
    assert!(
        stdout.contains(
            "context 12,345 tokens in use of a window of 128,000 tokens; the last request was estimated at ~"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("(counted by bytes)"), "{stdout}");
}

#[tokio::test]
async fn a_window_too_small_for_what_every_request_carries_is_refused_at_start() {
    let model = FakeModel::start().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.toml"),
        config(&model, "context_window = 300\nmax_output_tokens = 200"),
    )
    .unwrap();
    for args in [&["check", "--offline"][..], &["--prompt", "go"]] {
        let output = run(&dir, args).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        // The config's [model] table starts on line 4; context_window follows `model`.
        let expected =
            "config.toml:7: `model.context_window`: 300 tokens cannot hold what every request carries, ";
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(stderr.contains("and the output reserve, 200."), "{stderr}");
    }
    assert!(model.requests().is_empty(), "no model call was made");

    // A known model's default window, named with the line that chose the model.
    let long = "word ".repeat(10_000);
    let text = config(&model, "")
        .replace("model = \"fake\"", "model = \"llama3:8b\"")
        .replace("[agent]\n", &format!("[agent]\ninstructions = \"{long}\"\n"));
    std::fs::write(dir.path().join("config.toml"), text).unwrap();
    let output = run(&dir, &["check", "--offline"]).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("config.toml:7: `model.context_window`: the default window of `llama3` models, 8192 tokens, cannot hold"),
        "{stderr}"
    );

    // A window that holds it: --check passes.
    std::fs::write(dir.path().join("config.toml"), config(&model, "context_window = 32000")).unwrap();
    let output = run(&dir, &["check", "--offline"]).await;
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

#[tokio::test]
async fn an_openai_model_is_counted_with_its_tokenizer_against_its_default_window() {
    let model = FakeModel::start().await;
    let dir = tempfile::tempdir().unwrap();
    let text = config(&model, "").replace("model = \"fake\"", "model = \"gpt-4o-mini\"");
    std::fs::write(dir.path().join("config.toml"), text).unwrap();
    model.push(Reply::text("Hi.").usage(900, 0, 2));
    let output = run(&dir, &["--prompt", "go", "--json"]).await;
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let context = &estimates(&json_lines(&output))[0];
    assert_eq!(context["counted_by"], "o200k_base");
    assert_eq!((context["window"].as_u64(), tokens(context, "output_reserve")), (Some(128_000), 16_384));
    assert_eq!(model.requests()[0].get("max_tokens"), None, "the default reserve is not sent");
}

#[tokio::test]
async fn a_reload_whose_prompt_outgrows_the_window_is_rejected_and_the_old_set_serves() {
    let model = FakeModel::start().await;
    let text = config(&model, "context_window = 32000");
    let test = crate::support::TestHost::new(&text).await.unwrap();
    let before = test.host.config().agent.instructions.clone();
    // Some 50,000 tokens at four bytes a token: the base instructions alone outgrow it.
    let long = "word ".repeat(40_000);
    let grown = text.replace("[agent]\n", &format!("[agent]\ninstructions = \"{long}\"\n"));
    std::fs::write(test.dir.path().join("config.toml"), grown).unwrap();
    let error = test.host.reload(&agent_host::events::NoEvents).await.unwrap_err().to_string();
    assert!(
        error.contains("`model.context_window`: 32000 tokens cannot hold what every request carries"),
        "{error}"
    );
    assert_eq!(test.host.config().agent.instructions, before, "the old config serves");
    assert!(test.host.reload_status().error.is_some_and(|e| e.contains("cannot hold")));
}
