use agent_host_sdk::judge::ReviewVerdict;
use agent_host_sdk::model::{ChatMessage, CompleteOptions, Completion};
use agent_host_sdk::testing::{self, Harness};
use serde_json::json;

use super::*;

fn harness(config: Value) -> Harness<Config> {
    Harness::new(plugin(), config).unwrap()
}

fn answer(text: &'static str) -> fn(&[ChatMessage], &CompleteOptions) -> Result<Completion, String> {
    match text {
        "allow" => |_, _| {
            Ok(Completion {
                text: r#"{"decision":"allow","reason":"reads only"}"#.into(),
                input_tokens: 9,
                output_tokens: 3,
            })
        },
        "deny" => |_, _| {
            Ok(Completion {
                text: "```json\n{\"decision\": \"deny\", \"reason\": \"it deletes the repo\"}\n```".into(),
                input_tokens: 9,
                output_tokens: 3,
            })
        },
        "maybe" => |_, _| {
            Ok(Completion { text: "I am not sure about this one.".into(), input_tokens: 9, output_tokens: 3 })
        },
        _ => |_, _| Err("the endpoint answered 503".into()),
    }
}

#[test]
fn the_model_sees_the_policy_and_the_exact_call_and_its_decision_stands() {
    let plugin = harness(json!({"policy": "Never delete anything."}));
    testing::on_model(answer("deny"));
    let verdict = plugin.review("shell", "run", json!({"command": "rm -rf ."}), "`run` changes things");
    assert_eq!(verdict, ReviewVerdict::Deny("it deletes the repo".into()));
    let (messages, options) = testing::take_model_requests().remove(0);
    assert!(messages[0].content.ends_with("Policy:\nNever delete anything."), "{:?}", messages[0]);
    assert!(messages[1].content.contains(r#"{"command":"rm -rf ."}"#), "{:?}", messages[1]);
    assert!(messages[1].content.contains("Why its operator would be asked: `run` changes things"));
    assert_eq!(options.max_output_tokens, Some(200));
    testing::on_model(answer("allow"));
    assert_eq!(plugin.review("shell", "run", json!({"command": "ls"}), "asked"), ReviewVerdict::Allow);
}

#[test]
fn a_failed_or_confused_review_is_an_error_never_a_decision() {
    let plugin = harness(json!({"policy": "p"}));
    testing::on_model(answer("down"));
    let ReviewVerdict::Error(error) = plugin.review("shell", "run", json!({}), "asked") else { panic!() };
    assert_eq!(error, "the model could not be asked: the endpoint answered 503");
    testing::on_model(answer("maybe"));
    let ReviewVerdict::Error(error) = plugin.review("shell", "run", json!({}), "asked") else { panic!() };
    assert!(error.starts_with("the reviewer's answer made no sense: \"I am not sure"), "{error}");
}

#[test]
fn it_abstains_on_tools_it_does_not_review_and_refuses_arguments_past_its_cap() {
    let plugin =
        harness(json!({"policy": "p", "tools": ["run", "mcp__github__*"], "max_argument_chars": 20}));
    testing::on_model(answer("allow"));
    assert_eq!(plugin.review("fs", "write_file", json!({}), "asked"), ReviewVerdict::Abstain);
    assert_eq!(plugin.review("mcp:github", "mcp__github__merge", json!({}), "asked"), ReviewVerdict::Allow);
    let long = plugin.review("shell", "run", json!({"command": "x".repeat(40)}), "asked");
    assert!(matches!(long, ReviewVerdict::Error(error) if error.contains("`max_argument_chars`")));
}

#[test]
fn a_config_without_a_policy_is_refused_naming_the_field() {
    let error = Harness::new(plugin(), json!({})).err().unwrap();
    assert!(error.contains("`policy` is missing"), "{error}");
    let error = Harness::new(plugin(), json!({"policy": "p", "polcy": 1})).err().unwrap();
    assert!(error.contains("polcy"), "{error}");
}
