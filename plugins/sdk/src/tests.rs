//! The SDK's own behaviour, through the native harness: which tools are declared at load
//! and which are returned by `provide`, and what the manifest announces for each.

use crate::testing::{Harness, declared, reset};
use crate::{Capabilities, Context, NoArgs, NoConfig, Plugin, Tool, state};

fn fixed(name: &'static str) -> Tool<NoConfig> {
    Tool::new(name, "A fixed tool.", |_: &Context<NoConfig>, _: NoArgs| Ok("ok".into()))
}

/// Mutating while the state key `armed` is set.
fn armed(_: &Context<NoConfig>) -> bool {
    state::get::<bool>("armed").ok().flatten().unwrap_or(false)
}

#[test]
fn tools_whose_spec_depends_on_nothing_but_the_configuration_are_declared_from_configure() {
    reset();
    let plugin =
        Plugin::<NoConfig>::new("tooly", "1.0.0").tool(fixed("read")).tool(fixed("write").mutating());
    plugin.configure_raw("{}").unwrap();
    let declared = declared();
    assert_eq!(
        declared.iter().map(|t| (t.name.as_str(), t.mutates)).collect::<Vec<_>>(),
        [("read", false), ("write", true)]
    );
    let schema: serde_json::Value = serde_json::from_str(&declared[0].parameters).unwrap();
    assert_eq!(schema["type"], "object", "{schema}");
    let manifest = plugin.manifest();
    assert!(manifest.capabilities.contains(Capabilities::CALL_TOOL));
    assert!(!manifest.capabilities.contains(Capabilities::PROVIDE), "nothing is left for provide to say");
}

#[test]
fn a_tool_whose_mutates_reads_state_is_returned_by_provide_on_every_call() {
    let plugin = Plugin::<NoConfig>::new("gate", "1.0.0")
        .tool(fixed("read"))
        .tool(fixed("switch").mutating_when(armed));
    assert!(plugin.manifest().capabilities.contains(Capabilities::PROVIDE));
    let harness = Harness::new(plugin, serde_json::json!({})).unwrap();
    assert_eq!(harness.declared().iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["read"]);
    let offered = |h: &Harness<NoConfig>| {
        h.provide().tools.iter().map(|t| (t.name.clone(), t.mutates)).collect::<Vec<_>>()
    };
    assert_eq!(offered(&harness), [("read".to_owned(), false), ("switch".to_owned(), false)]);
    crate::testing::store("armed", serde_json::json!(true));
    assert_eq!(offered(&harness), [("read".to_owned(), false), ("switch".to_owned(), true)]);
}

#[test]
fn a_description_written_from_the_configuration_is_declared_with_it() {
    #[derive(serde::Serialize, serde::Deserialize, Default)]
    #[serde(default)]
    struct Limit {
        most: u32,
    }
    let tool = Tool::new("take", "unused", |_: &Context<Limit>, _: NoArgs| Ok(String::new()))
        .described_by(|config: &Limit| format!("Takes at most {} items.", config.most));
    let harness =
        Harness::new(Plugin::new("limited", "1.0.0").tool(tool), serde_json::json!({"most": 7})).unwrap();
    assert_eq!(harness.declared()[0].description, "Takes at most 7 items.");
}

#[test]
fn a_tool_asks_the_model_through_the_stand_in_which_records_the_request() {
    use crate::model::{self, ChatMessage, CompleteOptions, Completion};
    reset();
    fn ask(_: &Context<NoConfig>, _: NoArgs) -> Result<String, String> {
        let messages = [ChatMessage::system("Answer in one word."), ChatMessage::user("Colour of the sky?")];
        let answer = model::complete(&messages, CompleteOptions::max_output_tokens(5))?;
        Ok(format!("{} ({} in, {} out)", answer.text, answer.input_tokens, answer.output_tokens))
    }
    let harness = Harness::new(
        Plugin::new("asker", "1.0.0").tool(Tool::new("ask", "Asks.", ask)),
        serde_json::json!({}),
    )
    .unwrap();
    let refused = harness.tool("ask", serde_json::json!({})).unwrap_err();
    assert!(refused.contains("on_model"), "{refused}");
    crate::testing::on_model(|messages, options| {
        Ok(Completion {
            text: format!("blue, said to {} messages with {:?}", messages.len(), options.max_output_tokens),
            input_tokens: 12,
            output_tokens: 1,
        })
    });
    let said = harness.tool("ask", serde_json::json!({})).unwrap();
    assert_eq!(said, "blue, said to 2 messages with Some(5) (12 in, 1 out)");
    let asked = crate::testing::take_model_requests();
    assert_eq!(asked.len(), 2, "the refused request is recorded too");
    assert_eq!(asked[1].0[1], ChatMessage::user("Colour of the sky?"));
    assert_eq!(asked[1].1, CompleteOptions::max_output_tokens(5));
}
