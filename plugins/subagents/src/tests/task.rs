//! `task`: the child is started with the definition's spec and the prompt, and waited for;
//! what refuses it is the call's error, naming the file.

use agent_host_sdk::agents::{AgentSpec, Context as AgentContext};
use agent_host_sdk::testing::{self, AgentCall, take_agent_calls};
use serde_json::json;

use super::{AgentFiles, Folder, fixtures, harness, trusting_fixtures};

fn explore_spec(prompt: &str, context: AgentContext) -> AgentSpec {
    let path = format!("{}/.agents/agents/explore.md", fixtures());
    let body = std::fs::read_to_string(path).unwrap();
    let body = body.split("---\n").nth(2).unwrap().trim().to_owned();
    AgentSpec {
        name: "explore".into(),
        prompt: prompt.into(),
        system_prompt: Some(body),
        tools: Some(["read_file", "list_dir", "glob", "grep"].map(str::to_owned).to_vec()),
        model: Some("small-fast".into()),
        mode: Some("plan".into()),
        max_turns: Some(12),
        context,
    }
}

#[test]
fn task_starts_the_child_with_the_definitions_spec_and_waits_for_it() {
    let plugin = trusting_fixtures(json!({}));
    let said =
        plugin.tool("task", json!({"agent": "explore", "prompt": "Where is the config read?"})).unwrap();
    assert_eq!(
        said,
        "agent `explore` started as session child-1; its final answer replaces this text when it is done"
    );
    assert_eq!(
        take_agent_calls(),
        [
            AgentCall::Start(explore_spec("Where is the config read?", AgentContext::Fresh)),
            AgentCall::Wait("child-1".into()),
        ]
    );
}

#[test]
fn context_fork_is_passed_through() {
    let plugin = trusting_fixtures(json!({}));
    let args = json!({"agent": "explore", "prompt": "Check what we just discussed.", "context": "fork"});
    plugin.tool("task", args).unwrap();
    let calls = take_agent_calls();
    assert_eq!(calls[0], AgentCall::Start(explore_spec("Check what we just discussed.", AgentContext::Fork)));
    let refused =
        plugin.tool("task", json!({"agent": "explore", "prompt": "p", "context": "copy"})).unwrap_err();
    assert!(refused.contains("unknown variant `copy`"), "{refused}");
}

#[test]
fn a_vendors_definition_starts_its_child_in_our_words() {
    let plugin = trusting_fixtures(json!({"models": {"claude-sonnet-4-5": "sonnet-on-our-endpoint"}}));
    plugin.tool("task", json!({"agent": "review", "prompt": "Review the diff."})).unwrap();
    let AgentCall::Start(spec) = &take_agent_calls()[0] else { panic!("no start") };
    assert_eq!(spec.name, "review");
    assert_eq!(
        spec.tools.as_deref(),
        Some(&["read_file", "list_dir", "glob", "grep"].map(str::to_owned)[..])
    );
    assert_eq!(spec.model.as_deref(), Some("sonnet-on-our-endpoint"), "`models` maps the name OpenCode's is");
    assert_eq!((spec.mode.as_deref(), spec.max_turns), (None, None));
}

#[test]
fn an_unknown_agent_is_refused_listing_the_known_ones_and_nothing_starts() {
    let plugin = trusting_fixtures(json!({}));
    let refused = plugin.tool("task", json!({"agent": "build", "prompt": "Build it."})).unwrap_err();
    assert_eq!(
        refused,
        "there is no agent named `build`; the agents are: `explore`, `code-reviewer`, `review`, `security-auditor`"
    );
    let blank = plugin.tool("task", json!({"agent": "explore", "prompt": "  "})).unwrap_err();
    assert_eq!(blank, "`prompt` is blank; say what the agent is to do");
    assert_eq!(take_agent_calls(), []);
    let empty = harness(&Folder::new(), json!({}));
    let none = empty.tool("task", json!({"agent": "explore", "prompt": "p"})).unwrap_err();
    assert_eq!(none, "there is no agent named `explore`: no agents are defined");
}

#[test]
fn a_refused_start_is_the_calls_error_naming_the_definitions_file() {
    let plugin = trusting_fixtures(json!({}));
    testing::on_agent_start(|_| Err("tool `shell` is not offered to the parent session".into()));
    let refused = plugin.tool("task", json!({"agent": "code-reviewer", "prompt": "Review."})).unwrap_err();
    let path = format!("{}/.claude/agents/code-reviewer.md", fixtures());
    let expected = format!(
        "agent `code-reviewer` ({path}) could not be started: tool `shell` is not offered to the parent session"
    );
    assert_eq!(refused, expected);
    assert!(testing::logs().contains(&format!("Level::Warn {expected}")), "{:?}", testing::logs());
    assert!(matches!(&take_agent_calls()[..], [AgentCall::Start(_)]), "no wait for a child never started");
}

#[test]
fn the_definition_is_read_again_so_the_child_runs_what_the_file_says_now() {
    let folder = Folder::new();
    folder.agent("helper", "Helps.", "tools: [read_file]\n", "Help.");
    let plugin = harness(&folder, json!({}));
    plugin.provide();
    folder.agent("helper", "Helps.", "tools: [grep]\n", "Help more.");
    plugin.tool("task", json!({"agent": "helper", "prompt": "p"})).unwrap();
    let AgentCall::Start(spec) = &take_agent_calls()[0] else { panic!("no start") };
    assert_eq!(
        (spec.tools.as_deref(), spec.system_prompt.as_deref()),
        (Some(&["grep".to_owned()][..]), Some("Help more."))
    );
    folder.agent("helper", "Helps.", "max_turns: many\n", "");
    let broken = plugin.tool("task", json!({"agent": "helper", "prompt": "p"})).unwrap_err();
    assert_eq!(
        broken,
        format!(
            "agent `helper` cannot be started now: {}: `max_turns` must be a whole number, not a string",
            folder.at("helper.md")
        )
    );
    assert_eq!(take_agent_calls(), []);
}
