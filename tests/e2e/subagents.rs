//! Child agents (contract 0.2.8) through the stock `subagents` plugin and the fake endpoint,
//! where a child's own `model` picks its own script: its requests carry its definition's
//! system prompt and only its tools, its answer is its parent's tool result, children of one
//! reply run at once, the parent's mode, permission rules, budgets and caps hold for it, and a
//! parent killed while its child runs finishes with the child's answer when resumed.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_host::{Event, TurnEnd};
use serde_json::Value;

use crate::support::{
    FakeModel, Reply, ScriptedApprover, TestHost, json_prompt_command, plugin_block, shared_cache_dir,
};

/// The explorer: echo only, its own model.
pub(crate) const EXPLORER: &str = "---\nname: explorer\ndescription: Looks things up.\ntools: [echo]\nmodel: child-model\n---\nYou are the explorer. Answer in one line.\n";

/// An agent named `name` on model `model` with `tools`, its body naming it.
pub(crate) fn agent(name: &str, model: &str, tools: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: The {name} agent.\ntools: [{tools}]\nmodel: {model}\n---\nYou are {name}.\n"
    )
}

/// A folder of agent definitions, one file each.
pub(crate) fn definitions(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(format!("{name}.md")), text).unwrap();
    }
    dir
}

/// The `subagents` plugin reading `agents`, granted `agents = true`.
pub(crate) fn subagents(agents: &Path) -> String {
    plugin_block(
        "subagents",
        &format!(
            "[plugin.config]\ndirs = [\"/agents\"]\n[plugin.grants]\nagents = true\n[plugin.grants.dirs]\n\"/agents\" = {{ host = \"{}\" }}",
            agents.display()
        ),
    )
}

/// A deployment on `model` with `[agent]` lines `agent` and the `[[plugin]]` blocks `plugins`.
fn config(model: &FakeModel, agent: &str, plugins: &str) -> String {
    format!(
        "[agent]\nmax_iterations = 8\n{agent}\n\n[model]\nbase_url = \"{}\"\nmodel = \"fake\"\napi_key_env = \"AGENT_HOST_TEST_KEY\"\nmax_retries = 0\ntimeout_secs = 20\n\n[storage]\npath = \"sessions.db\"\n\n[runtime]\ncache_dir = \"{}\"\n\n{plugins}",
        model.url(),
        shared_cache_dir().display()
    )
}

async fn host(model: &FakeModel, agent: &str, plugins: &str) -> TestHost {
    TestHost::new(&config(model, agent, plugins)).await.expect("the host starts")
}

pub(crate) fn task(agent: &str, prompt: &str) -> String {
    serde_json::json!({"agent": agent, "prompt": prompt}).to_string()
}

/// The system prompt of a request.
pub(crate) fn system(request: &Value) -> &str {
    request["messages"][0]["content"].as_str().unwrap_or_default()
}

/// The names of the tools a request offers.
pub(crate) fn tools(request: &Value) -> Vec<String> {
    let offered = request["tools"].as_array().cloned().unwrap_or_default();
    offered.iter().map(|tool| tool["function"]["name"].as_str().unwrap().to_owned()).collect()
}

/// The tool results a request carries, in order.
fn tool_results(request: &Value) -> Vec<String> {
    let messages = request["messages"].as_array().unwrap();
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

/// The child's own events (`subagent`-wrapped) among `events`.
fn child_events(events: &[Event]) -> Vec<Event> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::Subagent { event, .. } => Some((**event).clone()),
            _ => None,
        })
        .collect()
}

/// The tool results of the child's own events: (ok, output).
fn child_tool_results(events: &[Event]) -> Vec<(bool, String)> {
    crate::support::tool_results(&child_events(events))
}

#[tokio::test]
async fn a_task_runs_a_child_with_its_definition_and_its_answer_is_the_tool_result() {
    let model = FakeModel::start().await;
    let agents = definitions(&[("explorer", EXPLORER)]);
    let test =
        host(&model, "", &format!("{}{}", plugin_block("misbehave", ""), subagents(agents.path()))).await;
    model.push(Reply::tool("task", &task("explorer", "find the answer")));
    model.push(Reply::text("done"));
    model.on_model("child-model", [Reply::text("the answer is 42")]);

    let session = test.session();
    let outcome = test.turn(&session, "ask the explorer").await.unwrap();
    assert_eq!(outcome.end, TurnEnd::Done);

    let child = model.requests_to("child-model");
    assert_eq!(child.len(), 1, "one model call for the child");
    assert!(system(&child[0]).starts_with("You are the explorer."), "{}", system(&child[0]));
    assert_eq!(tools(&child[0]), ["echo"], "only the definition's tools");
    // misbehave's injected message follows the prompt.
    let prompt = child[0]["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert!(prompt.as_str().unwrap().starts_with("find the answer"), "{prompt}");

    let parent = model.requests_to("fake");
    assert_eq!(tool_results(&parent[1]), ["the answer is 42"], "the child's answer is the task's result");

    let events = test.take_events();
    let parent_id = session.lock().await.id().to_owned();
    let started = events.iter().find_map(|event| match event {
        Event::SubagentStarted { parent_id: of, agent, prompt, session_id, .. } => {
            Some((of.clone(), agent.clone(), prompt.clone(), session_id.clone()))
        }
        _ => None,
    });
    let (of, name, prompt, child_id) = started.expect("a subagent_started event");
    assert_eq!(
        (of.as_str(), name.as_str(), prompt.as_str()),
        (parent_id.as_str(), "explorer", "find the answer")
    );
    assert!(events.iter().any(|event| matches!(event,
        Event::SubagentEnded { session_id, answer: Some(answer), .. } if *session_id == child_id && answer == "the answer is 42")));
    // The child is a session of its own in the store, its history its turn's.
    let stored =
        test.host.sessions().store().load(&child_id).unwrap().expect("the child's session is stored");
    assert_eq!(stored.history.last().unwrap().content, "the answer is 42");
}

/// Two children, `a` and `b`, started by one reply and both asking their models, whose
/// answers (`a_says`, `b_says`) wait for `gate`; then the parent's reply `then`.
struct TwoHeld {
    test: Arc<TestHost>,
    parent_id: String,
    running: tokio::task::JoinHandle<agent_host::TurnOutcome>,
    gate: Arc<tokio::sync::Notify>,
    _agents: tempfile::TempDir,
}

async fn two_held_children(model: &FakeModel, a_says: &str, b_says: &str, then: &str) -> TwoHeld {
    let agents = definitions(&[("a", &agent("a", "model-a", "echo")), ("b", &agent("b", "model-b", "echo"))]);
    let test = Arc::new(
        host(model, "", &format!("{}{}", plugin_block("misbehave", ""), subagents(agents.path()))).await,
    );
    let gate = Arc::new(tokio::sync::Notify::new());
    model.push(Reply::tool("task", &task("a", "first")).and_tool("task", &task("b", "second")));
    model.push(Reply::text(then));
    model.on_model("model-a", [Reply::text(a_says).held_until(&gate)]);
    model.on_model("model-b", [Reply::text(b_says).held_until(&gate)]);
    let session = test.session();
    let parent_id = session.lock().await.id().to_owned();
    let running = tokio::spawn({
        let test = test.clone();
        async move { test.turn(&session, "ask both").await.unwrap() }
    });
    // Neither child's reply comes before both children have asked: one run after the other
    // would never send the second request.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while model.requests_to("model-a").is_empty() || model.requests_to("model-b").is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "both children should ask before either is answered");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    TwoHeld { test, parent_id, running, gate, _agents: agents }
}

impl TwoHeld {
    /// Opens the gate until the parent's turn is over.
    async fn finish(self) -> agent_host::TurnOutcome {
        while !self.running.is_finished() {
            self.gate.notify_waiters();
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.running.await.unwrap()
    }
}

#[tokio::test]
async fn two_tasks_in_one_reply_run_at_once() {
    let model = FakeModel::start().await;
    let held = two_held_children(&model, "A says hi", "B says hi", "both done").await;
    assert_eq!(held.finish().await.end, TurnEnd::Done);
    let parent = model.requests_to("fake");
    assert_eq!(tool_results(&parent[1]), ["A says hi", "B says hi"]);
}

#[tokio::test]
async fn an_operator_cancels_one_child_and_its_sibling_and_parent_go_on() {
    let model = FakeModel::start().await;
    let held = two_held_children(&model, "A never says this", "B says hi", "went on without a").await;
    let (test, parent_id) = (held.test.clone(), held.parent_id.clone());
    let events = test.take_events();
    let started = |name: &str| {
        events.iter().find_map(|event| match event {
            Event::SubagentStarted { agent, session_id, .. } if agent == name => Some(session_id.clone()),
            _ => None,
        })
    };
    let (a, b) = (started("a").expect("a started"), started("b").expect("b started"));
    assert!(!test.host.cancel_child(&parent_id), "a parent's turn is no child's");
    assert!(test.host.cancel_child(&a), "a runs here");
    assert_eq!(held.finish().await.end, TurnEnd::Done, "the parent's turn went on");
    assert!(!test.host.cancel_child(&b), "b's turn is over");

    let parent = model.requests_to("fake");
    assert_eq!(parent.len(), 2, "the parent asked again after its children");
    let results = tool_results(&parent[1]);
    assert!(results[0].contains("agent `a` was cancelled by the operator"), "{results:?}");
    assert_eq!(results[1], "B says hi");
    let events = test.take_events();
    assert!(events.iter().any(|event| matches!(event,
        Event::SubagentEnded { session_id, state: agent_host::events::AgentState::Cancelled, .. } if *session_id == a)));
    assert!(events.iter().any(|event| matches!(event,
        Event::SubagentEnded { session_id, state: agent_host::events::AgentState::Done, .. } if *session_id == b)));
    // The cancelled child's turn ended `cancelled` on its own stream.
    assert!(events.iter().any(|event| matches!(event,
        Event::Subagent { session_id, event, .. } if *session_id == a
            && matches!(**event, Event::TurnEnded { reason: TurnEnd::Cancelled, .. }))));
}

#[tokio::test]
async fn a_child_is_refused_a_tool_outside_its_list() {
    let model = FakeModel::start().await;
    let agents = definitions(&[("explorer", EXPLORER)]);
    let test =
        host(&model, "", &format!("{}{}", plugin_block("misbehave", ""), subagents(agents.path()))).await;
    model.push(Reply::tool("task", &task("explorer", "touch it")));
    model.push(Reply::text("done"));
    model.on_model("child-model", [Reply::tool("touch", "{}"), Reply::text("could not")]);

    test.turn(&test.session(), "go").await.unwrap();
    let results = child_tool_results(&test.take_events());
    assert_eq!(results.len(), 1, "{results:?}");
    let (ok, output) = &results[0];
    assert!(!ok && !output.contains("touched") && output.contains("touch"), "{output}");
}

#[tokio::test]
async fn plan_mode_in_the_parent_keeps_the_child_read_only() {
    let model = FakeModel::start().await;
    let agents = definitions(&[("fixer", &agent("fixer", "child-model", "echo, touch"))]);
    let plugins = format!(
        "{}{}{}",
        plugin_block("agent-mode", ""),
        plugin_block("misbehave", ""),
        subagents(agents.path())
    );
    let test = host(&model, "", &plugins).await;
    model.push(Reply::tool("task", &task("fixer", "change the file")));
    model.push(Reply::text("done"));
    model.on_model("child-model", [Reply::tool("touch", "{}"), Reply::text("I was not allowed")]);

    // agent-mode starts a session in plan.
    test.turn(&test.session(), "fix it").await.unwrap();
    let results = child_tool_results(&test.take_events());
    let (ok, output) = &results[0];
    assert!(!ok && output.contains("plan"), "the child's change is refused in plan mode: {output}");
    assert_eq!(tools(&model.requests_to("child-model")[0]), ["echo", "touch"]);
}

#[tokio::test]
async fn a_childs_approval_reaches_the_operator_with_its_name_and_is_answered() {
    let model = FakeModel::start().await;
    let agents = definitions(&[("fixer", &agent("fixer", "child-model", "touch"))]);
    let rules =
        "[plugin.config]\nrules = [{ tool = \"touch\", decision = \"ask\", reason = \"it changes things\" }]";
    let plugins = format!(
        "{}{}{}",
        plugin_block("permissions", rules),
        plugin_block("misbehave", ""),
        subagents(agents.path())
    );
    let test = host(&model, "", &plugins).await;
    model.push(Reply::tool("task", &task("fixer", "touch it")));
    model.push(Reply::text("done"));
    model.on_model("child-model", [Reply::tool("touch", "{}"), Reply::text("touched it")]);

    let approver = ScriptedApprover::new([agent_host::agent::ApprovalAnswer::AllowOnce]);
    let session = test.session();
    let outcome = {
        let mut session = session.lock().await;
        test.host.run_turn(&mut session, "go", &*test.events, &approver).await.unwrap()
    };
    assert_eq!(outcome.end, TurnEnd::Done);
    let asked = approver.requests();
    assert_eq!(asked.len(), 1);
    let label = asked[0].agent.clone().expect("the request names the child");
    assert_eq!(label.name, "fixer");
    assert_ne!(label.session_id, session.lock().await.id(), "the child's own session");
    assert_eq!(child_tool_results(&test.take_events()), [(true, "touched".to_owned())]);
}

#[tokio::test]
async fn a_token_budget_spent_across_children_ends_the_parents_turn() {
    let model = FakeModel::start().await;
    let agents = definitions(&[("a", &agent("a", "model-a", "echo")), ("b", &agent("b", "model-b", "echo"))]);
    let test = host(
        &model,
        "max_turn_tokens = 1000",
        &format!("{}{}", plugin_block("misbehave", ""), subagents(agents.path())),
    )
    .await;
    model.push(Reply::tool("task", &task("a", "one")).and_tool("task", &task("b", "two")).usage(100, 0, 10));
    model.push(Reply::text("not reached"));
    model.on_model("model-a", [Reply::text("A").usage(600, 0, 10)]);
    model.on_model("model-b", [Reply::text("B").usage(600, 0, 10)]);

    let outcome = test.turn(&test.session(), "spend").await.unwrap();
    assert_eq!(outcome.end, TurnEnd::TokenBudget);
    assert_eq!(outcome.tokens, 110 + 610 + 610, "the children's tokens count in the parent's turn");
    assert_eq!(model.requests_to("fake").len(), 1, "no model call past the budget");
}

#[tokio::test]
async fn the_depth_and_parallel_caps_refuse_with_a_clear_message() {
    let model = FakeModel::start().await;
    let agents = definitions(&[("nester", &agent("nester", "child-model", "task, echo"))]);
    let plugins = format!("{}{}", plugin_block("misbehave", ""), subagents(agents.path()));
    let test = host(&model, "max_subagent_depth = 1\nmax_parallel_subagents = 1", &plugins).await;
    model.push(Reply::tool("task", &task("nester", "go deeper")).and_tool("task", &task("nester", "again")));
    model.push(Reply::text("done"));
    model.on_model(
        "child-model",
        [Reply::tool("task", &task("nester", "deeper still")), Reply::text("stopped")],
    );

    test.turn(&test.session(), "nest").await.unwrap();
    let parent = model.requests_to("fake");
    let results = tool_results(&parent[1]);
    assert_eq!(results[0], "stopped");
    assert!(results[1].contains("max_parallel_subagents"), "{}", results[1]);
    let (ok, output) = &child_tool_results(&test.take_events())[0];
    assert!(!ok && output.contains("max_subagent_depth") && output.contains("depth 1"), "{output}");
}

/// The first event of `kind` a `--json` run prints, read line by line from its stdout.
async fn session_of(stdout: tokio::process::ChildStdout) -> String {
    use tokio::io::AsyncBufReadExt as _;
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    while let Some(line) = lines.next_line().await.unwrap() {
        let event: Value = serde_json::from_str(&line).unwrap();
        if event["type"] == "session_started" {
            return event["session_id"].as_str().unwrap().to_owned();
        }
    }
    panic!("the run printed no session_started");
}

#[tokio::test]
async fn a_parent_killed_while_its_child_runs_finishes_with_the_childs_answer() {
    let model = FakeModel::start().await;
    let agents = definitions(&[("explorer", EXPLORER)]);
    let dir = tempfile::tempdir().unwrap();
    let plugins = format!("{}{}", plugin_block("misbehave", ""), subagents(agents.path()));
    std::fs::write(dir.path().join("config.toml"), config(&model, "", &plugins)).unwrap();
    model.push(Reply::tool("task", &task("explorer", "find it")));
    model.on_model("child-model", [Reply::hang(), Reply::text("found it")]);

    let mut run = json_prompt_command(dir.path(), None, "delegate")
        .env("AGENT_HOST_TEST_KEY", "k")
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let session = session_of(run.stdout.take().unwrap()).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while model.requests_to("child-model").is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "the child should have asked its model");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    run.start_kill().unwrap();
    run.wait().await.unwrap();

    model.push(Reply::text("all done"));
    let resumed = json_prompt_command(dir.path(), Some(&session), "go on")
        .env("AGENT_HOST_TEST_KEY", "k")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(resumed.status.success(), "stderr: {}", String::from_utf8_lossy(&resumed.stderr));
    assert_eq!(model.requests_to("child-model").len(), 2, "the child went on with its turn");
    let last = model.requests_to("fake").pop().unwrap();
    assert_eq!(tool_results(&last), ["found it"], "the task's result is the child's answer");
    let messages = last["messages"].as_array().unwrap();
    let prompt = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(prompt.starts_with("go on"), "the new prompt after the child's result: {prompt}");
}
