//! The SDK's own behaviour, through the native harness: which tools are declared at load
//! and which are returned by `provide`, what the manifest announces for each, and what
//! `spec` announces of the compaction hooks.

mod agents;
mod context;
mod counted;
mod kept_state;

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

#[test]
fn a_tools_edits_are_recorded_for_front_ends_apart_from_its_result() {
    use crate::testing::{FileEdit, take_edits};
    reset();
    fn rewrite(_: &Context<NoConfig>, _: NoArgs) -> Result<String, String> {
        crate::edits::report("a.txt", Some("old\n"), Some("new\n"));
        crate::edits::report("b.txt", None, Some("created\n"));
        Ok("rewrote two files".into())
    }
    let harness = Harness::new(
        Plugin::new("editor", "1.0.0").tool(Tool::new("rewrite", "Rewrites.", rewrite)),
        serde_json::json!({}),
    )
    .unwrap();
    assert_eq!(harness.tool("rewrite", serde_json::json!({})).unwrap(), "rewrote two files");
    let edit = |path: &str, before: Option<&str>, after: &str| FileEdit {
        path: path.into(),
        before: before.map(Into::into),
        after: Some(after.into()),
    };
    assert_eq!(take_edits(), [edit("a.txt", Some("old\n"), "new\n"), edit("b.txt", None, "created\n")]);
    assert_eq!(take_edits(), [], "taken once");
}

mod compaction {
    use serde::{Deserialize, Serialize};

    use crate::compaction::{
        Compacted, Compaction, CompactionBudget, CompactionHooks, CompactionReason, HistoryMessage,
        MessageId, MessageRole, PreCompactOutcome, Replacement, SummaryMessage,
    };
    use crate::testing::{Harness, History, budget, stored};
    use crate::{Context, NoConfig, Plugin, state};

    #[derive(Serialize, Deserialize, Default)]
    #[serde(default, deny_unknown_fields)]
    struct Trigger {
        percent: Option<u8>,
        compacts: bool,
    }

    /// Replaces everything before the last message with one summary naming what it saw.
    fn summarise<C>(
        _: &Context<C>,
        history: &[HistoryMessage],
        budget: &CompactionBudget,
    ) -> Result<Option<Compaction>, String> {
        let seen: Vec<String> = history.iter().map(|message| message.content.clone()).collect();
        let text = format!("{} within {}: {}", seen.len(), budget.limit, seen.join(", "));
        Ok(Some(Compaction {
            replaces: history.len() as u32 - 1,
            entries: vec![Replacement::Summary(SummaryMessage::user(text))],
            note: "summarised".into(),
        }))
    }

    fn veto<C>(_: &Context<C>, _: &CompactionBudget) -> PreCompactOutcome {
        PreCompactOutcome::veto("not now")
    }

    fn count<C>(_: &Context<C>, done: &Compacted) {
        let calls: u32 = state::get_or_default("calls").unwrap();
        state::set("calls", &(calls + 1)).unwrap();
        state::set("last", &format!("{} by {}", done.reason.as_str(), done.strategy)).unwrap();
    }

    #[test]
    fn spec_announces_exactly_the_hooks_registered() {
        let none = Harness::new(Plugin::<NoConfig>::new("plain", "1.0.0"), serde_json::json!({})).unwrap();
        let spec = none.spec();
        assert_eq!(spec.hooks, CompactionHooks::empty());
        assert_eq!(spec.trigger_percent, None);
        let plugin =
            Plugin::<NoConfig>::new("compacts", "1.0.0").on_compact(summarise).on_post_compact(count);
        let some = Harness::new(plugin, serde_json::json!({})).unwrap();
        assert_eq!(some.spec().hooks, CompactionHooks::COMPACT | CompactionHooks::POST_COMPACT);
        let all = Plugin::<NoConfig>::new("all", "1.0.0")
            .on_compact(summarise)
            .on_pre_compact(veto)
            .on_post_compact(count);
        assert_eq!(Harness::new(all, serde_json::json!({})).unwrap().spec().hooks, CompactionHooks::all());
    }

    #[test]
    fn the_trigger_and_the_hooks_used_are_read_from_the_configuration() {
        let plugin = || {
            Plugin::<Trigger>::new("triggered", "1.0.0")
                .on_compact(summarise)
                .on_pre_compact(veto)
                .compact_trigger(|config| config.percent)
                .compaction_hooks_for(|config| {
                    if config.compacts { CompactionHooks::all() } else { CompactionHooks::PRE_COMPACT }
                })
        };
        let set = Harness::new(plugin(), serde_json::json!({"percent": 70, "compacts": true})).unwrap();
        assert_eq!(set.spec().trigger_percent, Some(70));
        assert_eq!(set.spec().hooks, CompactionHooks::COMPACT | CompactionHooks::PRE_COMPACT);
        let unset = Harness::new(plugin(), serde_json::json!({})).unwrap();
        assert_eq!(unset.spec().trigger_percent, None);
        assert_eq!(unset.spec().hooks, CompactionHooks::PRE_COMPACT, "what is not registered stays off");
        let misfit = plugin().spec_raw(r#"{"percent": "high"}"#);
        assert_eq!((misfit.hooks, misfit.trigger_percent), (CompactionHooks::empty(), None));
        assert!(crate::testing::logs().iter().any(|line| line.contains("does not fit")));
    }

    #[test]
    fn a_registered_compact_hook_is_called_with_the_history_and_the_budget() {
        let history = History::new()
            .system("opening")
            .user("first")
            .calls("", &[("c1", "read_file", r#"{"path":"a.txt"}"#)])
            .result("c1", "contents")
            .summary(1, MessageRole::User, "earlier")
            .user("last")
            .build();
        assert_eq!(history[3].tool_call_id.as_deref(), Some("c1"));
        assert_eq!(history[4].id, MessageId::Summary(1));
        assert_eq!(history[5].id, MessageId::Message(4));
        let harness =
            Harness::new(Plugin::<NoConfig>::new("c", "1.0.0").on_compact(summarise), serde_json::json!({}))
                .unwrap();
        let done = harness.compact(&history, &budget(&history, 1000, 300)).unwrap().unwrap();
        assert_eq!(done.replaces, 5);
        let texts: Vec<&str> = done.summaries().map(|summary| summary.content.as_str()).collect();
        assert_eq!(texts, ["6 within 300: opening, first, , contents, earlier, last"]);
        let unregistered =
            Harness::new(Plugin::<NoConfig>::new("p", "1.0.0"), serde_json::json!({})).unwrap();
        assert_eq!(unregistered.compact(&history, &budget(&history, 1000, 300)), Ok(None));
    }

    #[test]
    fn pre_and_post_compact_hooks_answer_through_the_harness() {
        let plugin = Plugin::<NoConfig>::new("hears", "1.0.0").on_pre_compact(veto).on_post_compact(count);
        let harness = Harness::new(plugin, serde_json::json!({})).unwrap();
        let history = History::new().user("hi").build();
        assert_eq!(harness.pre_compact(&budget(&history, 100, 50)).veto.as_deref(), Some("not now"));
        let done = Compacted {
            reason: CompactionReason::ContextTooLong,
            strategy: "truncate".into(),
            note: "dropped 3 messages".into(),
            tokens_before: 90,
            tokens_after: 40,
            replaced: 3,
            summaries: 0,
        };
        harness.post_compact(&done);
        harness.post_compact(&done);
        assert_eq!(stored("calls"), Some(serde_json::json!(2)));
        assert_eq!(stored("last"), Some(serde_json::json!("context_too_long by truncate")));
        let silent = Harness::new(Plugin::<NoConfig>::new("s", "1.0.0"), serde_json::json!({})).unwrap();
        assert_eq!(silent.pre_compact(&budget(&history, 100, 50)), PreCompactOutcome::default());
    }
}

/// Reads the state key `stage`, and writes and emits, which a view must not keep.
fn stage_view(_: &Context<NoConfig>) -> Vec<crate::Widget> {
    use crate::view::{Checklist, Choice, EntryExt, EntryState, entry};
    let stage = state::get::<String>("stage").ok().flatten();
    let _ = state::set("viewed", &true);
    crate::events::emit("viewed", &true, None);
    vec![
        Choice::new("stage", "Stage")
            .current(stage.as_deref())
            .option("triage", "Triage", "")
            .option("fix", "Fix", "Change the code")
            .into(),
        Checklist::new("plan", "Plan")
            .entry("Reproduce", EntryState::Completed)
            .with(entry("Fix it", EntryState::InProgress).active_form("Fixing it").detail(" "))
            .into(),
    ]
}

#[test]
fn a_view_is_shown_only_when_declared_reads_state_and_keeps_no_writes_or_events() {
    use crate::view::{ChoiceWidget, Widget};
    let plain = Harness::new(Plugin::<NoConfig>::new("plain", "1.0.0"), serde_json::json!({})).unwrap();
    assert!(!plain.shows());
    assert!(plain.view().is_empty());

    let harness =
        Harness::new(Plugin::<NoConfig>::new("stages", "1.0.0").view(stage_view), serde_json::json!({}))
            .unwrap();
    assert!(harness.shows());
    crate::testing::store("stage", serde_json::json!("fix"));
    let widgets = harness.view();
    let Widget::Choice(ChoiceWidget { current, options, command, .. }) = &widgets[0] else {
        panic!("{widgets:?}")
    };
    assert_eq!(current.as_deref(), Some("fix"));
    assert_eq!(options[0].description, None, "a blank description is none");
    assert_eq!(options[1].description.as_deref(), Some("Change the code"));
    assert_eq!(*command, None, "without `.command` only the model moves it");
    let Widget::Checklist(list) = &widgets[1] else { panic!("{widgets:?}") };
    assert_eq!(list.entries[1].active_form.as_deref(), Some("Fixing it"));
    assert_eq!(list.entries[1].detail, None);
    assert_eq!(crate::testing::stored("viewed"), None, "a view's writes are dropped, as the host drops them");
    assert!(crate::testing::take_events().is_empty(), "and its events");
}

#[test]
fn the_harness_keeps_state_as_the_host_does_a_failed_tool_or_command_and_status_change_nothing() {
    fn write_then(_: &Context<NoConfig>, args: Fail) -> Result<String, String> {
        state::set("n", &1)?;
        if args.fail { Err("refused".into()) } else { Ok("kept".into()) }
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Fail {
        fail: bool,
    }
    let plugin = Plugin::<NoConfig>::new("writer", "1.0.0")
        .tool(Tool::new("write", "Writes n.", write_then))
        .command(crate::Command::new("bump", "/bump", "Writes m, then fails.", |_, _| {
            state::set("m", &1)?;
            Err("no".into())
        }))
        .status(|_| {
            state::set("s", &1).ok()?;
            Some("status".into())
        });
    let harness = Harness::new(plugin, serde_json::json!({})).unwrap();
    assert_eq!(harness.tool("write", serde_json::json!({"fail": true})), Err("refused".into()));
    assert_eq!(crate::testing::stored("n"), None, "a tool that failed changed nothing");
    assert_eq!(harness.command("bump", ""), Err("no".into()));
    assert_eq!(crate::testing::stored("m"), None, "a command that failed changed nothing");
    assert_eq!(harness.status().as_deref(), Some("status"));
    assert_eq!(crate::testing::stored("s"), None, "status changes nothing");
    assert_eq!(harness.tool("write", serde_json::json!({"fail": false})), Ok("kept".into()));
    assert_eq!(
        crate::testing::stored("n"),
        Some(serde_json::json!(1)),
        "a tool that succeeded keeps its writes"
    );
}

#[test]
fn hook_filters_declared_in_configure_are_recorded_as_values() {
    use crate::hook_filter::{self, ToolFilter, ToolHook};
    use crate::testing::{Filter, filters};

    fn configure(_: &mut NoConfig) -> Result<Vec<crate::Requirement>, String> {
        hook_filter::only(ToolHook::PreToolUse, &ToolFilter::mutating_only().except_tools(["ls"]));
        hook_filter::never(ToolHook::PostToolUse);
        Ok(Vec::new())
    }
    let plugin = Plugin::<NoConfig>::new("filtered", "1.0.0").configure(configure);
    Harness::new(plugin, serde_json::json!({})).unwrap();
    let declared = filters();
    assert_eq!(
        declared,
        [
            Filter::Only(ToolHook::PreToolUse, ToolFilter::mutating_only().except_tools(["ls"])),
            Filter::Never(ToolHook::PostToolUse),
        ]
    );
    // A filter that differs in any field is another filter.
    assert_ne!(declared[0], Filter::Only(ToolHook::PreToolUse, ToolFilter::mutating_only()));
    assert_ne!(
        declared[0],
        Filter::Only(ToolHook::PostToolUse, ToolFilter::mutating_only().except_tools(["ls"]))
    );
    assert_ne!(declared[1], Filter::Never(ToolHook::PreToolUse));
}

#[test]
fn only_a_stop_decided_from_state_says_it_may_be_reused() {
    let from_state =
        Plugin::<NoConfig>::new("settled", "1.0.0").on_stop_from_state(|_| crate::StopOutcome::Stop);
    let from_reply = Plugin::<NoConfig>::new("reader", "1.0.0")
        .on_stop(|_, reply| crate::StopOutcome::Continue(format!("you said {reply}")));
    assert!(from_state.manifest().capabilities.contains(Capabilities::STOP));
    let settled = Harness::new(from_state, serde_json::json!({})).unwrap();
    let reader = Harness::new(from_reply, serde_json::json!({})).unwrap();
    crate::testing::take_reusable();

    assert_eq!(settled.stop(), crate::StopOutcome::Stop);
    assert!(crate::testing::take_reusable(), "decided from state alone");
    assert_eq!(reader.stop(), crate::StopOutcome::Continue("you said done".into()));
    assert!(!crate::testing::take_reusable(), "it read the reply");
}
