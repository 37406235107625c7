//! The `agents` stand-in: children kept as the host keeps them, every call recorded, what
//! `start` answers scripted.

use serde::Deserialize;

use crate::agents::{self, AgentSpec, AgentState, AgentStatus, Context as AgentContext};
use crate::testing::{AgentCall, Harness, finish_agent, on_agent_start, take_agent_calls};
use crate::{Context, JsonSchema, NoConfig, Plugin, Tool};

#[derive(Deserialize, JsonSchema)]
struct Delegate {
    prompt: String,
    #[serde(default)]
    fork: bool,
}

/// Starts an `explore` child with the prompt and hands the call's result over to it.
fn delegate(_: &Context<NoConfig>, args: Delegate) -> Result<String, String> {
    let mut spec = AgentSpec::new("explore", args.prompt);
    spec.tools = Some(vec!["read_file".to_owned()]);
    if args.fork {
        spec.context = AgentContext::Fork;
    }
    let id = agents::start(&spec)?;
    agents::wait(&id)?;
    Ok(format!("started {id}"))
}

fn harness() -> Harness<NoConfig> {
    let plugin = Plugin::new("delegator", "1.0.0").tool(Tool::new("delegate", "Delegates.", delegate));
    Harness::new(plugin, serde_json::json!({})).unwrap()
}

fn pending(id: &str) -> AgentStatus {
    AgentStatus { id: id.into(), name: "explore".into(), state: AgentState::Pending, answer: None }
}

#[test]
fn a_spec_starts_fresh_with_everything_its_parents() {
    let spec = AgentSpec::new("explore", "Find the config loader.");
    assert_eq!(
        (spec.system_prompt, spec.tools, spec.model, spec.mode, spec.max_turns),
        (None, None, None, None, None)
    );
    assert_eq!(spec.context, AgentContext::Fresh);
    assert_eq!(AgentContext::default(), AgentContext::Fresh);
    assert!(AgentState::Done.is_over() && AgentState::Failed.is_over() && AgentState::Cancelled.is_over());
    assert!(!AgentState::Pending.is_over() && !AgentState::Running.is_over());
}

#[test]
fn a_started_child_is_pending_under_a_new_id_and_every_call_is_recorded() {
    let harness = harness();
    assert_eq!(
        harness.tool("delegate", serde_json::json!({"prompt": "Map the crate."})).unwrap(),
        "started child-1"
    );
    let forked = harness.tool("delegate", serde_json::json!({"prompt": "Go on.", "fork": true})).unwrap();
    assert_eq!(forked, "started child-2");
    let calls = take_agent_calls();
    let AgentCall::Start(first) = &calls[0] else { panic!("{calls:?}") };
    assert_eq!((first.name.as_str(), first.prompt.as_str()), ("explore", "Map the crate."));
    assert_eq!(first.tools.as_deref(), Some(&["read_file".to_owned()][..]));
    assert_eq!(calls[1], AgentCall::Wait("child-1".into()));
    let AgentCall::Start(second) = &calls[2] else { panic!("{calls:?}") };
    assert_eq!(second.context, AgentContext::Fork);
    assert_eq!(calls.len(), 4);
    assert_eq!(take_agent_calls(), [], "taken once");
    assert_eq!(agents::children(), [pending("child-1"), pending("child-2")]);
    assert_eq!(take_agent_calls(), [AgentCall::Children]);
}

#[test]
fn a_scripted_start_gives_the_id_or_the_hosts_refusal() {
    let harness = harness();
    on_agent_start(|spec| Err(format!("`{}` needs the agents grant", spec.name)));
    let refused = harness.tool("delegate", serde_json::json!({"prompt": "p"})).unwrap_err();
    assert_eq!(refused, "`explore` needs the agents grant");
    assert!(
        matches!(&take_agent_calls()[..], [AgentCall::Start(_)]),
        "a refused start is recorded, nothing more"
    );
    assert_eq!(agents::children(), []);
    on_agent_start(|_| Ok("session-42".into()));
    assert_eq!(harness.tool("delegate", serde_json::json!({"prompt": "p"})).unwrap(), "started session-42");
    assert_eq!(agents::status("session-42"), Ok(pending("session-42")));
}

#[test]
fn a_child_ends_as_the_test_says_and_moves_as_the_host_would_move_it() {
    let _harness = harness();
    let id = agents::start(&AgentSpec::new("explore", "p")).unwrap();
    finish_agent(&id, AgentState::Done, Some("The loader is in config.rs."));
    let done = agents::status(&id).unwrap();
    assert_eq!((done.state, done.answer.as_deref()), (AgentState::Done, Some("The loader is in config.rs.")));
    agents::cancel(&id).unwrap();
    assert_eq!(agents::status(&id).unwrap().state, AgentState::Done, "a finished child stays as it is");
    agents::send(&id, "And the writer?").unwrap();
    assert_eq!(agents::status(&id), Ok(pending(&id)), "another turn, waiting to run");
    agents::cancel(&id).unwrap();
    assert_eq!(agents::status(&id).unwrap().state, AgentState::Cancelled);
    take_agent_calls();
    for refused in [
        agents::wait("nope").unwrap_err(),
        agents::status("nope").unwrap_err(),
        agents::send("nope", "m").unwrap_err(),
        agents::cancel("nope").unwrap_err(),
    ] {
        assert_eq!(refused, "the session has no child agent `nope`");
    }
    assert_eq!(take_agent_calls().len(), 4, "refused calls are recorded too");
}

#[test]
fn the_reset_forgets_the_children_the_calls_and_the_script() {
    let _harness = harness();
    on_agent_start(|_| Ok("scripted".into()));
    agents::start(&AgentSpec::new("explore", "p")).unwrap();
    let _fresh = harness();
    assert_eq!(agents::children(), []);
    assert_eq!(take_agent_calls(), [AgentCall::Children]);
    assert_eq!(agents::start(&AgentSpec::new("explore", "p")), Ok("child-1".into()));
}
