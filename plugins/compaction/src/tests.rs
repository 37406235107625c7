use agent_host_sdk::compaction::{
    Compaction, CompactionBudget, CompactionHooks, CompactionReason, HistoryMessage, MessageId, MessageRole,
    Replacement,
};
use agent_host_sdk::model::Completion;
use agent_host_sdk::testing::{self, Harness, History, budget};
use serde_json::json;

use crate::config::Config;
use crate::groups::{self, stand_in};
use crate::pipeline;
use crate::summary::SummaryRequest;

fn configured(config: serde_json::Value) -> Config {
    serde_json::from_value(Harness::new(crate::plugin(), config).expect("the config is accepted").config())
        .unwrap()
}

fn refused(config: serde_json::Value) -> String {
    Harness::new(crate::plugin(), config).err().expect("the config is refused")
}

/// A summariser that must not be asked.
fn unasked(_: &SummaryRequest) -> Result<String, String> {
    panic!("no summary was needed")
}

const A_TXT: &str = r#"{"path":"a.txt"}"#;

/// #0 the opening, #1 the user's request, two old reads (#2-#3, #4-#5), then four newest
/// groups: #6, #7-#8, #9-#10, #11. About 950 tokens, 860 of them the old reads' results.
fn working_session() -> Vec<HistoryMessage> {
    History::new()
        .system("You are in /work.")
        .tokens(10)
        .user("Fix the bug in a.txt.")
        .tokens(10)
        .calls("", &[("c1", "read_file", A_TXT)])
        .tokens(10)
        .result("c1", &"x".repeat(2345))
        .tokens(600)
        .calls("", &[("c2", "read_file", r#"{"path":"b.txt"}"#)])
        .tokens(10)
        .result("c2", &"y".repeat(1000))
        .tokens(250)
        .assistant("Found it.")
        .tokens(10)
        .calls("", &[("c3", "write_file", A_TXT)])
        .tokens(10)
        .result("c3", "written")
        .tokens(10)
        .calls("", &[("c4", "run_tests", "{}")])
        .tokens(10)
        .result("c4", "passed")
        .tokens(10)
        .assistant("Done.")
        .tokens(10)
        .build()
}

/// What is sent after `compaction`: `#3` for a message kept, `role: text` for a new one.
fn sent(history: &[HistoryMessage], compaction: &Compaction) -> Vec<String> {
    let label = |m: &HistoryMessage| match m.id {
        MessageId::Message(index) => format!("#{index}"),
        MessageId::Summary(number) => format!("summary #{number}"),
    };
    let mut sent: Vec<String> = compaction
        .entries
        .iter()
        .map(|entry| match entry {
            Replacement::Keep(id) => {
                label(history.iter().find(|m| m.id == *id).expect("a kept id is sent now"))
            }
            Replacement::Summary(new) => {
                let role = match new.role {
                    MessageRole::User => "User",
                    MessageRole::Assistant => "Assistant",
                    other => panic!("a new message as {other:?}"),
                };
                format!("{role}: {}", new.content)
            }
        })
        .collect();
    sent.extend(history[compaction.replaces as usize..].iter().map(label));
    sent
}

/// The checks the host makes: kept messages are of the prefix, once each, in order; a call
/// is kept exactly when its results are, with no new message between; the last user message
/// and everything `keep` names stay.
fn assert_valid(history: &[HistoryMessage], compaction: &Compaction, keep: &[MessageId]) {
    let replaces = compaction.replaces as usize;
    assert!(replaces <= history.len());
    let position = |id: &MessageId| history.iter().position(|m| m.id == *id).unwrap();
    let kept: Vec<usize> = compaction.kept().map(|id| position(&id)).collect();
    assert!(kept.windows(2).all(|pair| pair[0] < pair[1]), "kept in order, once each: {kept:?}");
    assert!(kept.iter().all(|&at| at < replaces), "kept from the prefix only");
    // Each message of the history: where it is sent after, if it is.
    let mut order: Vec<Option<usize>> = vec![None; history.len()];
    for (index, entry) in compaction.entries.iter().enumerate() {
        if let Replacement::Keep(id) = entry {
            order[position(id)] = Some(index);
        }
    }
    for (index, sent) in order[replaces..].iter_mut().enumerate() {
        *sent = Some(compaction.entries.len() + index);
    }
    let new_at: Vec<usize> = (0..compaction.entries.len())
        .filter(|&entry| matches!(compaction.entries[entry], Replacement::Summary(_)))
        .collect();
    for (at, message) in history.iter().enumerate() {
        for call in &message.tool_calls {
            let result =
                history.iter().position(|m| m.tool_call_id.as_deref() == Some(call.id.as_str())).unwrap();
            assert_eq!(
                order[at].is_some(),
                order[result].is_some(),
                "call {} and its result go together",
                call.id
            );
            if let (Some(from), Some(to)) = (order[at], order[result]) {
                assert!(!new_at.iter().any(|&new| from < new && new < to), "nothing new between {}", call.id);
            }
        }
    }
    let last_user = history.iter().rposition(|m| m.role == MessageRole::User).unwrap();
    assert!(order[last_user].is_some(), "the last user message stays");
    for id in keep {
        assert!(order[position(id)].is_some(), "{id} stays");
    }
}

#[test]
fn the_configuration_is_filled_in_and_the_trigger_is_the_lower_threshold() {
    let harness = Harness::new(crate::plugin(), json!({})).unwrap();
    assert_eq!(
        harness.config(),
        json!({"evict_above_percent": 50, "summarise_above_percent": 80, "keep_recent_groups": 4,
               "summary_max_tokens": 1000})
    );
    assert!(harness.requires().is_empty());
    let spec = harness.spec();
    assert_eq!((spec.hooks, spec.trigger_percent), (CompactionHooks::COMPACT, Some(50)));
    let tuned =
        Harness::new(crate::plugin(), json!({"evict_above_percent": 65, "summarise_above_percent": 90}));
    assert_eq!(tuned.unwrap().spec().trigger_percent, Some(65));
}

#[test]
fn configure_errors_name_the_field() {
    let error = refused(json!({"evict_above_percent": 80}));
    assert!(
        error.contains("`evict_above_percent` (80) must be below `summarise_above_percent` (80)"),
        "{error}"
    );
    let error = refused(json!({"summarise_above_percent": 101}));
    assert_eq!(error, "`summarise_above_percent` must be between 1 and 100, not 101");
    let error = refused(json!({"evict_above_percent": 0}));
    assert_eq!(error, "`evict_above_percent` must be between 1 and 100, not 0");
    assert!(refused(json!({"keep_recent_groups": 0})).starts_with("`keep_recent_groups` must be at least 1"));
    assert!(refused(json!({"summary_max_tokens": 0})).starts_with("`summary_max_tokens` must be at least 1"));
    let error = refused(json!({"evict_above_percent": "half"}));
    assert!(error.starts_with("`evict_above_percent`: invalid type"), "{error}");
    assert!(refused(json!({"evict_percent": 40})).contains("`evict_percent`"));
}

#[test]
fn below_the_eviction_threshold_there_is_nothing_to_do() {
    let history = working_session();
    // 950 tokens of a room of 2000 is 47.5%, below 50%.
    let budget = budget(&history, 2000, 1500);
    assert_eq!(pipeline::compact(&configured(json!({})), &history, &budget, unasked), Ok(None));
    // Fixed tokens count too: 950 + 100 of 2000 is past it.
    let budget = CompactionBudget { fixed_tokens: 100, ..budget };
    assert!(pipeline::compact(&configured(json!({})), &history, &budget, unasked).unwrap().is_some());
}

#[test]
fn a_group_runs_from_a_call_to_its_last_result_whatever_lies_between() {
    let history = History::new()
        .result("gone", "a result whose call an earlier compaction took")
        .user("go")
        .calls("", &[("c1", "a", "{}"), ("c2", "b", "{}")])
        .result("c1", "1")
        .user("meanwhile")
        .result("c2", "2")
        .assistant("done")
        .build();
    let found = groups::groups(&history);
    assert_eq!(found, [0..1, 1..2, 2..6, 6..7]);
    assert!(groups::is_tool_calls(&history, &found[0]), "an orphan result may go");
    assert!(!groups::is_tool_calls(&history, &found[2]), "a group holding a user message stays");
    assert_eq!(stand_in(&history[0..1]), "[a tool result (46 chars) was removed to save context]");
}

#[test]
fn the_stand_in_names_each_call_and_the_size_of_what_was_removed() {
    let long = format!(r#"{{"text":"{}"}}"#, "z".repeat(300));
    let group = History::new()
        .calls("Let me look at both.", &[("c1", "read_file", A_TXT), ("c2", "write_file", &long)])
        .result("c1", &"x".repeat(2345))
        .result("c2", "ok")
        .build();
    let text = stand_in(&group);
    let abbreviated = format!(r#"{{"text":"{}…"#, "z".repeat(200 - 9));
    assert_eq!(
        text,
        format!(
            "Let me look at both.\n\
             [called `read_file` {A_TXT} — its result (2,345 chars) was removed to save context]\n\
             [called `write_file` {abbreviated} — its result (2 chars) was removed to save context]"
        )
    );
}

#[test]
fn eviction_replaces_old_tool_calls_with_their_results_and_leaves_the_newest_groups() {
    let history = working_session();
    // 950 of 1500 is 63%: past 50%, and 170 or so after eviction is far below 80%.
    let budget = budget(&history, 1500, 1000);
    let compaction = pipeline::compact(&configured(json!({})), &history, &budget, unasked).unwrap().unwrap();
    assert_valid(&history, &compaction, &[]);
    assert_eq!(compaction.replaces, 6, "up to the end of the last old read");
    assert_eq!(
        sent(&history, &compaction),
        [
            "#0",
            "#1",
            &format!(
                "Assistant: [called `read_file` {A_TXT} — its result (2,345 chars) was removed to save context]"
            ),
            r#"Assistant: [called `read_file` {"path":"b.txt"} — its result (1,000 chars) was removed to save context]"#,
            "#6",
            "#7",
            "#8",
            "#9",
            "#10",
            "#11",
        ]
    );
    assert_eq!(compaction.note, "evicted 2 tool results");
}

#[test]
fn eviction_keeps_what_the_pre_compact_hooks_asked_for_with_its_call() {
    let history = working_session();
    let budget = CompactionBudget { keep: vec![MessageId::Message(3)], ..budget(&history, 1500, 1000) };
    let compaction = pipeline::compact(&configured(json!({})), &history, &budget, unasked).unwrap().unwrap();
    assert_valid(&history, &compaction, &budget.keep);
    let sent = sent(&history, &compaction);
    assert_eq!(
        sent[..5],
        [
            "#0",
            "#1",
            "#2",
            "#3",
            r#"Assistant: [called `read_file` {"path":"b.txt"} — its result (1,000 chars) was removed to save context]"#
        ]
    );
    assert_eq!(compaction.note, "evicted 1 tool result");
}

#[test]
fn with_fewer_groups_kept_newer_tool_calls_go_too_but_never_the_newest_or_what_would_not_shrink() {
    let read = |id: &str| format!(r#"{{"path":"{id}.txt"}}"#);
    let history = History::new()
        .user("Read them all.")
        .calls("", &[("c1", "read_file", &read("one"))])
        .result("c1", &"x".repeat(1000))
        .calls("", &[("c2", "read_file", &read("two"))])
        .result("c2", "tiny")
        .calls("", &[("c3", "read_file", &read("three"))])
        .result("c3", &"x".repeat(1000))
        .calls("", &[("c4", "read_file", &read("four"))])
        .result("c4", &"x".repeat(1000))
        .build();
    let config = configured(json!({"keep_recent_groups": 1}));
    let compaction =
        pipeline::compact(&config, &history, &budget(&history, 1000, 1000), unasked).unwrap().unwrap();
    assert_valid(&history, &compaction, &[]);
    let removed = |name: &str| {
        format!(
            r#"Assistant: [called `read_file` {{"path":"{name}.txt"}} — its result (1,000 chars) was removed to save context]"#
        )
    };
    assert_eq!(
        sent(&history, &compaction),
        [
            "#0".to_owned(),
            removed("one"),
            "#3".into(),
            "#4".into(),
            removed("three"),
            "#7".into(),
            "#8".into()
        ]
    );
    assert_eq!(compaction.note, "evicted 2 tool results");
}

/// #0 the opening, #1 a long request, an old read (#2-#3), a long analysis (#4), #5 the
/// last request, #6 a reply, then the two newest groups: #7-#8 and #9. 970 tokens.
fn long_session() -> Vec<HistoryMessage> {
    History::new()
        .system("You are in /work.")
        .tokens(10)
        .user("Refactor the parser.")
        .tokens(300)
        .calls("", &[("c1", "read_file", A_TXT)])
        .tokens(10)
        .result("c1", "fn parse() {}")
        .tokens(300)
        .assistant("The parser mixes lexing and parsing.")
        .tokens(300)
        .user("Now add tests.")
        .tokens(10)
        .assistant("On it.")
        .tokens(10)
        .calls("", &[("c2", "write_file", r#"{"path":"tests.rs"}"#)])
        .tokens(10)
        .result("c2", "written")
        .tokens(10)
        .assistant("Tests added.")
        .tokens(10)
        .build()
}

fn summarising() -> Config {
    configured(json!({"keep_recent_groups": 2, "summary_max_tokens": 100}))
}

#[test]
fn past_the_second_threshold_the_older_conversation_is_summarised_around_what_stays() {
    let history = long_session();
    // 970 of 800 is past both; about 690 after eviction is still past 80%.
    let budget = budget(&history, 800, 700);
    let mut asked = None;
    let compaction = pipeline::compact(&summarising(), &history, &budget, |request| {
        asked = Some(request.clone());
        Ok(" The user wants the parser refactored, then tested. ".to_owned())
    })
    .unwrap()
    .unwrap();
    assert_valid(&history, &compaction, &[]);
    assert_eq!(compaction.replaces, 7);
    assert_eq!(
        sent(&history, &compaction),
        [
            "#0",
            "User: Summary of the conversation so far:\n\nThe user wants the parser refactored, then tested.",
            "#5",
            "#7",
            "#8",
            "#9"
        ]
    );
    assert_eq!(compaction.note, "evicted 1 tool result, summarised 5 messages");
    let asked = asked.expect("the summariser was asked");
    assert_eq!(asked.max_output_tokens, 100);
    assert!(asked.system.contains("todo list") && asked.system.contains("mode"), "{}", asked.system);
    assert_eq!(
        asked.transcript,
        format!(
            "## User\nRefactor the parser.\n\n\
             ## Assistant\n[called `read_file` {A_TXT} — its result (13 chars) was removed to save context]\n\n\
             ## Assistant\nThe parser mixes lexing and parsing.\n\n\
             ## Assistant\nOn it."
        )
    );
}

#[test]
fn what_the_pre_compact_hooks_keep_stays_after_the_summary() {
    let history = long_session();
    let budget = CompactionBudget { keep: vec![MessageId::Message(4)], ..budget(&history, 800, 700) };
    let compaction =
        pipeline::compact(&summarising(), &history, &budget, |_| Ok("Summary.".to_owned())).unwrap().unwrap();
    assert_valid(&history, &compaction, &budget.keep);
    let sent = sent(&history, &compaction);
    assert_eq!(sent[..4], ["#0", "User: Summary of the conversation so far:\n\nSummary.", "#4", "#5"]);
    assert_eq!(compaction.note, "evicted 1 tool result, summarised 4 messages");
}

#[test]
fn a_summary_that_fails_or_does_not_bring_the_history_under_the_limit_is_an_error() {
    let history = long_session();
    let budget = budget(&history, 800, 700);
    let error = pipeline::compact(&summarising(), &history, &budget, |_| {
        Err("model = true is not granted".to_owned())
    });
    assert_eq!(error, Err("cannot summarise the conversation: model = true is not granted".to_owned()));
    let empty = pipeline::compact(&summarising(), &history, &budget, |_| Ok("  ".to_owned()));
    assert!(empty.unwrap_err().contains("no text"));
    let tight = CompactionBudget { limit: 40, ..budget };
    let error =
        pipeline::compact(&summarising(), &history, &tight, |_| Ok("Summary.".to_owned())).unwrap_err();
    assert!(error.starts_with("still "), "{error}");
    assert!(
        error.ends_with("tokens over the limit after evicting 1 tool result and summarising 5 messages"),
        "{error}"
    );
}

#[test]
fn over_the_limit_with_nothing_left_to_take_is_an_error() {
    let history = History::new().user("hello").tokens(900).assistant("hi").tokens(10).build();
    let budget = budget(&history, 1000, 500);
    let error = pipeline::compact(&configured(json!({})), &history, &budget, unasked).unwrap_err();
    assert_eq!(error, "still 410 tokens over the limit after finding nothing more to evict or summarise");
}

#[test]
fn the_operators_compact_runs_every_step_whatever_the_thresholds() {
    let history = long_session();
    let budget =
        CompactionBudget { reason: CompactionReason::Requested, ..budget(&history, 100_000, 50_000) };
    let compaction =
        pipeline::compact(&summarising(), &history, &budget, |_| Ok("Summary.".to_owned())).unwrap().unwrap();
    assert_valid(&history, &compaction, &[]);
    assert_eq!(compaction.note, "evicted 1 tool result, summarised 5 messages");
}

#[test]
fn a_transcript_too_long_for_the_window_is_cut_longest_messages_first() {
    let history = History::new()
        .user(&"u".repeat(40_000))
        .assistant("short")
        .assistant(&"a".repeat(40_000))
        .user("last")
        .assistant("ok")
        .build();
    let config = configured(json!({"keep_recent_groups": 1, "summary_max_tokens": 1000}));
    let budget =
        CompactionBudget { reason: CompactionReason::ContextTooLong, ..budget(&history, 8000, 8000) };
    let mut transcript = String::new();
    pipeline::compact(&config, &history, &budget, |request| {
        transcript = request.transcript.clone();
        Ok("Summary.".to_owned())
    })
    .unwrap()
    .unwrap();
    assert!(transcript.len() < (8000 - 1000) * 4, "{} bytes", transcript.len());
    assert!(transcript.contains("## Assistant\nshort\n"), "a short message stays whole");
    assert!(transcript.contains("bytes left out …]"));
}

#[test]
fn through_the_host_the_summary_is_asked_of_the_model() {
    let harness =
        Harness::new(crate::plugin(), json!({"keep_recent_groups": 2, "summary_max_tokens": 100})).unwrap();
    testing::on_model(|messages, _| {
        Ok(Completion {
            text: format!("{} messages seen.", messages.len()),
            input_tokens: 0,
            output_tokens: 0,
        })
    });
    let history = long_session();
    let compaction = harness.compact(&history, &budget(&history, 800, 700)).unwrap().unwrap();
    assert!(compaction.summaries().any(|s| s.content.ends_with("\n\n2 messages seen.")));
    let asked = testing::take_model_requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].1.max_output_tokens, Some(100));
}

/// `history` as it is sent after `compaction`: new messages are earlier summaries now,
/// sized as the plugin estimates them.
fn apply(history: &[HistoryMessage], compaction: &Compaction, summaries: &mut u64) -> Vec<HistoryMessage> {
    let mut next: Vec<HistoryMessage> = compaction
        .entries
        .iter()
        .map(|entry| match entry {
            Replacement::Keep(id) => history.iter().find(|m| m.id == *id).unwrap().clone(),
            Replacement::Summary(new) => {
                *summaries += 1;
                let message = History::new().summary(*summaries, new.role, &new.content).build().remove(0);
                HistoryMessage { tokens: pipeline::estimate(&new.content), ..message }
            }
        })
        .collect();
    next.extend(history[compaction.replaces as usize..].iter().cloned());
    next
}

#[test]
fn a_long_run_of_tool_calls_is_kept_under_the_summary_threshold_by_eviction_alone() {
    // Rounds of a prompt, a call of `echo` with 1,500 bytes of text, its result and a reply,
    // in a room of 7,500 tokens of which 1,000 are fixed; compacting before each model call.
    let config = configured(json!({}));
    let output = "a long tool result ".repeat(80);
    let (mut sent, mut stored, mut summaries) = (Vec::<HistoryMessage>::new(), 0, 0);
    let mut notes = Vec::new();
    for round in 0..30 {
        let args = json!({ "text": format!("{round} {output}") }).to_string();
        let id = format!("call{round}");
        let steps = [
            (History::new().user(&format!("prompt {round}")), true),
            (
                History::new().calls("", &[(&id, "echo", &args)]).result(&id, &format!("{round} {output}")),
                true,
            ),
            (History::new().assistant(&format!("reply {round}")), false),
        ];
        for (step, then_a_model_call) in steps {
            for message in step.build() {
                sent.push(HistoryMessage { id: MessageId::Message(stored), ..message });
                stored += 1;
            }
            if !then_a_model_call {
                continue;
            }
            let budget =
                CompactionBudget { max_output_tokens: 500, fixed_tokens: 1000, ..budget(&sent, 8000, 6500) };
            if let Some(compaction) = pipeline::compact(&config, &sent, &budget, unasked).unwrap() {
                assert_valid(&sent, &compaction, &[]);
                notes.push(compaction.note.clone());
                sent = apply(&sent, &compaction, &mut summaries);
            }
            let tokens: u32 = sent.iter().map(|m| m.tokens).sum();
            assert!((1000 + tokens) * 100 <= 80 * 7500, "round {round}: {tokens} tokens sent");
        }
    }
    assert!(notes.len() > 20, "{notes:?}");
    assert!(
        notes.iter().all(|note| note.starts_with("evicted ") && !note.contains("summarised")),
        "{notes:?}"
    );
    let results: Vec<&str> = sent
        .iter()
        .filter(|m| m.role == MessageRole::Tool)
        .filter_map(|m| m.content.split(' ').next())
        .collect();
    assert_eq!(results, ["28", "29"], "only the newest groups' results are sent");
}
