//! What the host costs next to the model, piece by piece: one plugin call per export
//! (instantiate + call + teardown), context assembly for one model call with the stock set,
//! the estimate of a request's size at 10, 100 and 1,000 messages, a tool call through the
//! hooks, TodoWrite validating a 20-item list, a whole turn against
//! a model that answers at once, the state bag, hot reloads, what the host-side caps cost, and
//! one compaction: its host part for either strategy, and the stock compaction plugin's call.
//!
//! `cargo bench -p agent-host --bench host_overhead` (builds the plugins first).

// Bench code: a failed unwrap is a failed run (clippy.toml's test allowance reaches only tests).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use agent_host::agent::NoOperator;
use agent_host::agent::prepare::prepare;
use agent_host::events::NoEvents;
use agent_host::model::ModelClient;
use agent_host::plugins::{CallContext, LoadedPlugin, ProvideMemo, StopMemo, ToolUse};
use agent_host::state::StateBag;
use agent_host::tools::{ToolCall, ToolResult};
use agent_host::{Config, Host};
use serde_json::json;

/// Allocates as the binary does (`cli/src/main.rs`), so the bench measures what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

struct Fixture {
    runtime: tokio::runtime::Runtime,
    host: Arc<Host>,
    /// The config file, and its text with `todo` or `todo-write` as the todo flavour.
    config_path: PathBuf,
    flavours: [String; 2],
    _dir: tempfile::TempDir,
}

/// A host with the stock set (todo, agent-mode, permissions, fs) and a scripted model that
/// answers at once, in a temporary folder. `todo-write` is loaded too, under a second
/// config text that the reload benchmarks switch to.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let built = agent_host::plugins::build_workspace(
            &root.join("plugins"),
            &agent_host::plugins::BuildSandbox::confined().expect("this kernel builds the sandbox"),
        )
        .expect("plugins build");
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("workspace")).unwrap();
        std::fs::write(dir.path().join("script.toml"), "[[turn]]\ntext = \"done\"\n").unwrap();
        let flavours = ["todo", "todo-write"].map(|todo| stock_config(&built, todo));
        let config_path = dir.path().join("config.toml");
        std::fs::write(&config_path, &flavours[1]).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let host = runtime.block_on(async {
            // Load the todo-write flavour once so both flavours sit in the compile cache.
            let config = Config::load(&config_path).unwrap();
            let model = ModelClient::from_config(&config).unwrap().unwrap();
            Host::new(config, model).await.unwrap();
            std::fs::write(&config_path, &flavours[0]).unwrap();
            let config = Config::load(&config_path).unwrap();
            let model = ModelClient::from_config(&config).unwrap().unwrap();
            Arc::new(Host::new(config, model).await.unwrap())
        });
        Fixture { runtime, host, config_path, flavours, _dir: dir }
    })
}

fn stock_config(built: &BTreeMap<String, PathBuf>, todo: &str) -> String {
    format!(
        "[model]\nprovider = \"scripted\"\nscript = \"script.toml\"\n[storage]\npath = \"s.db\"\n\
         [runtime]\ncache_dir = \"cache\"\n\
         [[plugin]]\npath = \"{}\"\n[[plugin]]\npath = \"{}\"\n\
         [[plugin]]\npath = \"{}\"\n[plugin.config]\npreset = \"ask-to-mutate\"\n\
         rules = [{{ tool = \"todos_*\", decision = \"allow\" }}]\n\
         [[plugin]]\npath = \"{}\"\n[plugin.grants.dirs]\n\"/workspace\" = {{ host = \"workspace\", write = true }}\n",
        built[todo].display(),
        built["agent-mode"].display(),
        built["permissions"].display(),
        built["fs"].display(),
    )
}

fn plugin(name: &str) -> Arc<LoadedPlugin> {
    fixture().host.plugins().by_name(name).unwrap_or_else(|| panic!("{name} is loaded")).clone()
}

/// The plugin package `package`, loaded in a set of its own beside the fixture's host.
fn loaded_alone(package: &str) -> Arc<LoadedPlugin> {
    let fixture = fixture();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let built = agent_host::plugins::build_workspace(
        &root.join("plugins"),
        &agent_host::plugins::BuildSandbox::confined().expect("this kernel builds the sandbox"),
    )
    .expect("plugins build");
    let config_path = fixture.config_path.parent().unwrap().join(format!("{package}.toml"));
    let text = format!(
        "[model]\nprovider = \"scripted\"\nscript = \"script.toml\"\n[storage]\npath = \"s.db\"\n\
         [runtime]\ncache_dir = \"cache\"\n[[plugin]]\npath = \"{}\"\n",
        built[package].display()
    );
    std::fs::write(&config_path, text).unwrap();
    let config = Config::load(&config_path).unwrap();
    let set = fixture.runtime.block_on(agent_host::agent::PluginSet::load(
        fixture.host.engine(),
        &config,
        None,
        &NoEvents,
    ));
    set.unwrap().plugins()[0].clone()
}

fn ctx() -> CallContext {
    CallContext {
        session_id: "bench".into(),
        model_calls: 3,
        turn_iteration: 1,
        model: None,
        meter: Default::default(),
        results: None,
        agents: None,
    }
}

fn todo_use() -> ToolUse {
    ToolUse {
        call: ToolCall { id: "c1".into(), name: "todos_get_all".into(), arguments: "{}".into() },
        plugin: "todo".into(),
        mutates: false,
    }
}

/// Each export, on the stock plugin that implements it: instantiate, call, tear down.
mod export {
    use super::*;

    #[divan::bench(args = ["todo", "agent-mode", "permissions", "fs"])]
    fn provide(bencher: divan::Bencher, name: &str) {
        let (plugin, bag) = (plugin(name), StateBag::default());
        // Nothing kept, by the session or shared, so every iteration is a real call.
        bencher.bench(|| {
            plugin.forget_shared_contributions();
            fixture().runtime.block_on(plugin.provide(&ctx(), &bag, &ProvideMemo::default())).unwrap()
        });
    }

    #[divan::bench]
    fn call_tool_todo(bencher: divan::Bencher) {
        let (plugin, bag, call) = (plugin("todo"), StateBag::default(), todo_use().call);
        bencher.bench(|| {
            fixture()
                .runtime
                .block_on(plugin.call_tool(&ctx(), &bag, &call, &ProvideMemo::default()))
                .unwrap()
        });
    }

    #[divan::bench]
    fn pre_tool_use_permissions(bencher: divan::Bencher) {
        let (plugin, bag, tool_use) = (plugin("permissions"), StateBag::default(), todo_use());
        bencher.bench(|| fixture().runtime.block_on(plugin.pre_tool_use(&ctx(), &bag, &tool_use)).unwrap());
    }

    #[divan::bench]
    fn post_tool_use_permissions(bencher: divan::Bencher) {
        let (plugin, bag, tool_use) = (plugin("permissions"), StateBag::default(), todo_use());
        let result = ToolResult { ok: true, output: "[]".into() };
        bencher.bench(|| {
            fixture().runtime.block_on(plugin.post_tool_use(&ctx(), &bag, &tool_use, &result)).unwrap()
        });
    }

    /// What asking a view costs (contract 0.2.4): the host asks it after a call moved the
    /// plugin's state, so a workflow whose every tool call changes a list pays it per call.
    #[divan::bench(args = ["todo", "agent-mode"])]
    fn view(bencher: divan::Bencher, name: &str) {
        let (plugin, bag) = (plugin(name), StateBag::default());
        bencher.bench(|| fixture().runtime.block_on(plugin.view(&ctx(), &bag)).unwrap());
    }

    #[divan::bench]
    fn stop_todo(bencher: divan::Bencher) {
        let (plugin, bag) = (plugin("todo"), StateBag::default());
        // Nothing kept, by the session or shared, so every iteration is a real call.
        bencher.bench(|| {
            plugin.forget_shared_contributions();
            fixture().runtime.block_on(plugin.stop(&ctx(), &bag, "done", &StopMemo::default())).unwrap()
        });
    }

    /// A turn's end where the state todo's `stop` read still holds (contract 0.2.11): the
    /// outcome it kept, without an instance.
    #[divan::bench]
    fn stop_todo_kept(bencher: divan::Bencher) {
        let (plugin, bag, memo) = (plugin("todo"), StateBag::default(), StopMemo::default());
        fixture().runtime.block_on(plugin.stop(&ctx(), &bag, "done", &memo)).unwrap();
        bencher.bench(|| fixture().runtime.block_on(plugin.stop(&ctx(), &bag, "done", &memo)).unwrap());
    }

    /// Three exports of three plugins in turn, as a round trip mixes them (todo's `provide`,
    /// permissions' `pre-tool-use`, agent-mode's `provide`), against the same three each
    /// repeated alone above: what switching between components costs a call.
    #[divan::bench]
    fn mixed_three_plugins_in_turn(bencher: divan::Bencher) {
        let (todo, permissions, mode) = (plugin("todo"), plugin("permissions"), plugin("agent-mode"));
        let (bag, tool_use) = (StateBag::default(), todo_use());
        bencher.bench(|| {
            todo.forget_shared_contributions();
            mode.forget_shared_contributions();
            fixture().runtime.block_on(async {
                todo.provide(&ctx(), &bag, &ProvideMemo::default()).await.unwrap();
                permissions.pre_tool_use(&ctx(), &bag, &tool_use).await.unwrap();
                mode.provide(&ctx(), &bag, &ProvideMemo::default()).await.unwrap();
            })
        });
    }

    #[divan::bench]
    fn command_permissions(bencher: divan::Bencher) {
        let (plugin, bag) = (plugin("permissions"), StateBag::default());
        bencher
            .bench(|| fixture().runtime.block_on(plugin.command(&ctx(), &bag, "permissions", "")).unwrap());
    }
}

/// The system prompt, tools and injected messages for one model call: every stock plugin's
/// `provide` (none reused), schemas from the cache.
#[divan::bench]
fn context_assembly_stock_set(bencher: divan::Bencher) {
    let fixture = fixture();
    let (set, bag, instructions) = (fixture.host.plugins(), StateBag::default(), "You are helpful.");
    bencher.bench(|| {
        let memo = ProvideMemo::default();
        set.plugins().iter().for_each(|plugin| plugin.forget_shared_contributions());
        fixture.runtime.block_on(prepare(instructions, &set, &ctx(), &bag, &memo, &NoEvents)).unwrap()
    });
}

/// The same for a new session's first model call: what earlier sessions with the same
/// (empty) state kept is shared; agent-mode still runs, since its first call writes the
/// default mode down.
#[divan::bench]
fn context_assembly_stock_set_new_session(bencher: divan::Bencher) {
    let fixture = fixture();
    let (set, instructions) = (fixture.host.plugins(), "You are helpful.");
    let first_call = || {
        let (bag, memo) = (StateBag::default(), ProvideMemo::default());
        fixture.runtime.block_on(prepare(instructions, &set, &ctx(), &bag, &memo, &NoEvents)).unwrap()
    };
    first_call();
    bencher.bench(first_call);
}

/// The same on a later model call whose state is unchanged: contributions the plugins declared
/// reusable come from the session's memo.
#[divan::bench]
fn context_assembly_stock_set_reused(bencher: divan::Bencher) {
    let fixture = fixture();
    let (set, bag, instructions) = (fixture.host.plugins(), StateBag::default(), "You are helpful.");
    let memo = ProvideMemo::default();
    fixture.runtime.block_on(prepare(instructions, &set, &ctx(), &bag, &memo, &NoEvents)).unwrap();
    bencher.bench(|| {
        fixture.runtime.block_on(prepare(instructions, &set, &ctx(), &bag, &memo, &NoEvents)).unwrap()
    });
}

/// The estimate of the next request's size, made before every model call, on a session of
/// 10, 100 and 1,000 messages with the stock set's system prompt and tools: with everything
/// but the request's own parts kept from the call before (by bytes, as for a model the host
/// has no tokenizer for, and with GPT-4o's tokenizer), and on a session just resumed, whose
/// every message is counted once.
mod context_estimate {
    use agent_host::model::tokens::{ContextAccount, Counter, Encoding, TokenBudget};
    use agent_host::model::{History, Message, ModelRequest};
    use agent_host::tools::ToolCall;

    use super::*;

    const LENGTHS: [usize; 3] = [10, 100, 1000];

    /// A working session's messages: the user's asks, replies calling tools, their results.
    pub(super) fn history(messages: usize) -> History {
        let history: Vec<Message> = (0..messages)
            .map(|index| match index % 3 {
                0 => Message::user(format!(
                    "Step {index}: update the release note's section on the plugin host."
                )),
                1 => Message::assistant(
                    "Reading the file first.",
                    vec![ToolCall {
                        id: format!("call_{index}"),
                        name: "read_file".into(),
                        arguments: format!("{{\"path\":\"/workspace/notes/{index}.md\"}}"),
                    }],
                ),
                _ => Message::tool(format!("call_{}", index - 1), "# Release notes\n\n- ".repeat(24)),
            })
            .collect();
        History::from(history)
    }

    fn budget(counter: Counter) -> TokenBudget {
        TokenBudget { counter, window: Some(128_000), output_reserve: 16_384 }
    }

    fn bench_estimate(bencher: divan::Bencher, messages: usize, counter: Counter) {
        let fixture = fixture();
        let (set, bag) = (fixture.host.plugins(), StateBag::default());
        let prepared = fixture
            .runtime
            .block_on(prepare("You are helpful.", &set, &ctx(), &bag, &ProvideMemo::default(), &NoEvents))
            .unwrap();
        let history = history(messages);
        let request = ModelRequest {
            session_id: "bench",
            system: &prepared.system,
            history: &history,
            injected: &prepared.injected,
            tools: &prepared.tools,
            max_output_tokens: None,
            model: None,
        };
        let (budget, mut account) = (budget(counter), ContextAccount::default());
        account.estimate(&budget, &request, None);
        bencher.bench_local(|| account.estimate(&budget, &request, None));
    }

    #[divan::bench(args = LENGTHS)]
    fn by_bytes(bencher: divan::Bencher, messages: usize) {
        bench_estimate(bencher, messages, Counter::Bytes);
    }

    #[divan::bench(args = LENGTHS)]
    fn by_o200k(bencher: divan::Bencher, messages: usize) {
        bench_estimate(bencher, messages, Counter::Tokenizer(Encoding::O200kBase));
    }

    #[divan::bench(args = LENGTHS)]
    fn by_o200k_resumed(bencher: divan::Bencher, messages: usize) {
        let history = history(messages);
        let request = ModelRequest {
            session_id: "bench",
            system: "You are helpful.",
            history: &history,
            injected: &[],
            tools: &[],
            max_output_tokens: None,
            model: None,
        };
        let budget = budget(Counter::Tokenizer(Encoding::O200kBase));
        // The shared encoder is built once per process, before the first sample.
        ContextAccount::default().estimate(&budget, &request, None);
        bencher
            .with_inputs(ContextAccount::default)
            .bench_local_values(|mut account| account.estimate(&budget, &request, None));
    }
}

/// One tool call as the model would make it: schema validation, agent-mode's and
/// permissions' `pre-tool-use`, the tool, permissions' `post-tool-use`, the SQLite commit.
#[divan::bench]
fn tool_call_through_hooks(bencher: divan::Bencher) {
    let fixture = fixture();
    let session = fixture.host.sessions().create().unwrap();
    let arguments = json!({});
    bencher.bench(|| {
        fixture.runtime.block_on(async {
            let mut session = session.lock().await;
            fixture.host.invoke_tool(&mut session, "todos_get_all", &arguments, &NoEvents).await.unwrap()
        })
    });
}

/// TodoWrite checking and storing a 20-item snapshot (one item in progress).
#[divan::bench]
fn todo_write_validates_20_items(bencher: divan::Bencher) {
    let fixture = fixture();
    std::fs::write(&fixture.config_path, &fixture.flavours[1]).unwrap();
    let config = Config::load(&fixture.config_path).unwrap();
    let set = fixture.runtime.block_on(agent_host::agent::PluginSet::load(
        fixture.host.engine(),
        &config,
        None,
        &NoEvents,
    ));
    let plugin = set.unwrap().by_name("todo-write").unwrap().clone();
    std::fs::write(&fixture.config_path, &fixture.flavours[0]).unwrap();
    let todos: Vec<_> = (0..20)
        .map(|i| {
            let status = match i {
                0..=4 => "completed",
                5 => "in_progress",
                _ => "pending",
            };
            json!({ "content": format!("Step {i} of the release"), "status": status, "activeForm": format!("Doing step {i}") })
        })
        .collect();
    let call = ToolCall {
        id: "w".into(),
        name: "TodoWrite".into(),
        arguments: json!({ "todos": todos }).to_string(),
    };
    let bag = StateBag::default();
    bencher.bench(|| {
        let output =
            fixture.runtime.block_on(plugin.call_tool(&ctx(), &bag, &call, &ProvideMemo::default())).unwrap();
        assert!(output.value.is_ok(), "{:?}", output.value);
    });
}

/// A whole user turn in a new session against a model that answers at once: session
/// creation, context assembly, the model call, stop hooks, the SQLite commits.
#[divan::bench]
fn new_session_one_turn(bencher: divan::Bencher) {
    let fixture = fixture();
    bencher.bench(|| {
        fixture.runtime.block_on(async {
            let session = fixture.host.sessions().create().unwrap();
            let mut session = session.lock().await;
            fixture.host.run_turn(&mut session, "hi", &NoEvents, &NoOperator).await.unwrap()
        })
    });
}

/// A state write and the step's change list, without SQLite.
#[divan::bench]
fn state_bag_write_and_collect(bencher: divan::Bencher) {
    let bag = StateBag::default();
    bencher.bench(|| {
        bag.put("todo", "items", Some("[{\"id\":1,\"title\":\"x\",\"isComplete\":false}]".into()));
        bag.take_changes()
    });
}

/// Hot reloads: the config read again with nothing changed (every plugin reused), and the
/// todo flavour swapped for the other one (a changed component, taken from the cache).
mod reload {
    use super::*;

    #[divan::bench(sample_count = 20, sample_size = 1)]
    fn unchanged(bencher: divan::Bencher) {
        let fixture = fixture();
        bencher.bench(|| fixture.runtime.block_on(fixture.host.reload(&NoEvents)).unwrap());
    }

    #[divan::bench(sample_count = 20, sample_size = 1)]
    fn swap_todo_flavour_cached(bencher: divan::Bencher) {
        let fixture = fixture();
        let mut next = 1;
        bencher.bench_local(|| {
            std::fs::write(&fixture.config_path, &fixture.flavours[next]).unwrap();
            fixture.runtime.block_on(fixture.host.reload(&NoEvents)).unwrap();
            next = 1 - next;
        });
        std::fs::write(&fixture.config_path, &fixture.flavours[0]).unwrap();
        fixture.runtime.block_on(fixture.host.reload(&NoEvents)).unwrap();
    }
}

/// One step made durable: a tool result and a state change, one SQLite transaction (WAL).
#[divan::bench]
fn sqlite_commit_one_step(bencher: divan::Bencher) {
    let fixture = fixture();
    let handle = fixture.host.sessions().create().unwrap();
    let mut session = handle.try_lock().unwrap();
    let store = fixture.host.sessions().store().clone();
    bencher.bench_local(|| {
        session.push(agent_host::model::Message::tool("call_1", "[{\"id\":1,\"title\":\"step 1\"}]"));
        session.bag().put(
            "todo",
            "items",
            Some("[{\"id\":1,\"title\":\"step 1\",\"isComplete\":true}]".into()),
        );
        session.commit(&*store).unwrap()
    });
}

/// What the host-side caps cost a call: misbehave writing 8 values of 1 KiB (each write
/// counted against the per-session caps; the first reads the plugin's figures from the bag,
/// so the session's size matters), beside a call that writes nothing.
mod caps {
    use super::*;

    fn misbehave() -> &'static Arc<LoadedPlugin> {
        static PLUGIN: OnceLock<Arc<LoadedPlugin>> = OnceLock::new();
        PLUGIN.get_or_init(|| loaded_alone("misbehave"))
    }

    fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
        ToolCall { id: "c".into(), name: name.into(), arguments: arguments.to_string() }
    }

    /// A bag in which misbehave already holds `keys` other values of 100 bytes.
    fn bag_with(keys: usize) -> StateBag {
        let value = format!("\"{}\"", "v".repeat(98));
        StateBag::from_entries((0..keys).map(|i| ("misbehave".to_owned(), format!("old{i}"), value.clone())))
    }

    #[divan::bench(args = [0, 1000])]
    fn write_8_values(bencher: divan::Bencher, keys: usize) {
        let (plugin, bag) = (misbehave(), bag_with(keys));
        let call = call("hoard_state", json!({"count": 8, "kb": 1}));
        bencher.bench(|| {
            let output = fixture()
                .runtime
                .block_on(plugin.call_tool(&ctx(), &bag, &call, &ProvideMemo::default()))
                .unwrap();
            assert!(output.value.is_ok(), "{:?}", output.value);
        });
    }

    #[divan::bench(args = [0, 1000])]
    fn write_nothing(bencher: divan::Bencher, keys: usize) {
        let (plugin, bag) = (misbehave(), bag_with(keys));
        let call = call("echo", json!({"text": "x"}));
        bencher.bench(|| {
            fixture()
                .runtime
                .block_on(plugin.call_tool(&ctx(), &bag, &call, &ProvideMemo::default()))
                .unwrap()
        });
    }
}

/// One compaction's host part: weighing what is sent, the host's truncation of it (the
/// fallback and the last resort), and the checks a plugin's result must pass, on a history
/// of 100 and 1,000 messages (the model call of a summarising plugin is not in it). Then the
/// whole of it in an open session, the new view committed to SQLite, for either strategy;
/// and, for scale, the stock compaction plugin's own call where eviction is enough.
mod compaction_cost {
    use agent_host::compacted_history::{
        Compaction, CompactionBudget, Reason, Replacement, Summaries, check, truncate, viewed,
    };
    use agent_host::conversation::Role;
    use agent_host::model::Message;
    use agent_host::model::tokens::{ContextAccount, Counter, TokenBudget};
    use agent_host::state::StoredSession;

    use super::context_estimate::history;
    use super::*;

    #[divan::bench(args = [100, 1000])]
    fn truncate_and_check(bencher: divan::Bencher, messages: usize) {
        let history = history(messages);
        let summaries = Default::default();
        let budget = budget();
        let mut account = ContextAccount::default();
        bencher.bench_local(|| {
            let tokens = account.message_tokens(&budget, &history);
            let sizes: Vec<usize> = tokens.iter().map(|&tokens| tokens as usize).collect();
            let current = viewed(None, &history, &summaries).unwrap();
            let half = sizes.iter().sum::<usize>() / 2;
            let truncation = truncate(&current, &sizes, half, &[]);
            check(&current, &truncation.compaction).unwrap();
            truncation
        });
    }

    fn budget() -> TokenBudget {
        TokenBudget { counter: Counter::Bytes, window: Some(128_000), output_reserve: 16_384 }
    }

    /// A compaction made durable in an open session of `messages` messages, as
    /// `Compactor::run` makes it: weighing what is sent; the host's truncation (`summary` none)
    /// or, for a summarising plugin's result (made before, as the plugin call would return
    /// it), what the call is given and the check and weighing of what it returns; then
    /// `Session::compact`, which checks again, builds the new view and commits it with its
    /// summaries in one SQLite transaction. Each sample gets a session of its own, copied
    /// into the store beforehand and weighed as the estimate before the call weighed it.
    fn bench_commit(bencher: divan::Bencher, messages: usize, summary: bool) {
        let fixture = fixture();
        let (sessions, budget) = (fixture.host.sessions(), budget());
        let store = sessions.store().clone();
        let history = history(messages);
        bencher
            .with_inputs(|| {
                let contents = StoredSession { history: history.to_vec(), ..Default::default() };
                let handle = sessions.create_copy(contents).unwrap();
                let mut account = ContextAccount::default();
                let compaction = {
                    let session = handle.try_lock().unwrap();
                    account.message_tokens(&budget, session.to_send());
                    summary.then(|| summarised(session.to_send()))
                };
                (handle, account, compaction)
            })
            .bench_local_values(|(handle, mut account, compaction)| {
                let mut session = handle.try_lock().unwrap();
                let tokens = account.message_tokens(&budget, session.to_send());
                let current = session.viewed();
                let compaction = match compaction {
                    None => {
                        let sizes: Vec<usize> = tokens.iter().map(|&tokens| tokens as usize).collect();
                        let half = sizes.iter().sum::<usize>() / 2;
                        truncate(&current, &sizes, half, &[]).compaction
                    }
                    Some(compaction) => {
                        let weights: Vec<u32> = tokens.iter().map(|&tokens| tokens as u32).collect();
                        divan::black_box(weights);
                        check(&current, &compaction).unwrap();
                        compaction
                    }
                };
                let kept: u64 = tokens[compaction.replaces..].iter().sum();
                let added: u64 = compaction
                    .entries
                    .iter()
                    .map(|entry| match entry {
                        Replacement::Keep(_) => 0,
                        Replacement::Summary(message) => account.tokens_of(&budget, message),
                    })
                    .sum();
                divan::black_box(kept + added);
                drop(current);
                session.compact(&*store, compaction).unwrap();
                session.commit(&*store).unwrap();
                drop(session);
                // Dropped after the sample: closing a session releases its lease in the store.
                handle
            });
    }

    /// What the stock plugin's summarising step returns for such a history: one summary, of
    /// about the 1,000 tokens it asks the model for, in place of everything but the newest
    /// four groups (a prompt alone, or a call with its result).
    fn summarised(history: &[Message]) -> Compaction {
        let mut start = history.len();
        for _ in 0..4 {
            start -= 1;
            while start > 0 && history[start].role == Role::Tool {
                start -= 1;
            }
        }
        let text = format!(
            "Summary of the conversation so far:\n\n{}",
            "The user asked for the release note's sections on the plugin host to be updated; each file \
             under /workspace/notes was read before its section was rewritten. "
                .repeat(24)
        );
        Compaction { replaces: start, entries: vec![Replacement::Summary(Message::user(text))] }
    }

    #[divan::bench(args = [100, 1000])]
    fn truncate_and_commit(bencher: divan::Bencher, messages: usize) {
        bench_commit(bencher, messages, false);
    }

    #[divan::bench(args = [100, 1000])]
    fn summary_checked_and_committed(bencher: divan::Bencher, messages: usize) {
        bench_commit(bencher, messages, true);
    }

    /// The stock compaction plugin's `compact` call on the same history at two thirds of the
    /// room, where evicting old tool results is enough and no summary (no model call) is
    /// needed: instantiation, the history copied into the guest, the guest's work, the
    /// result back. The plugin's part as much as the host's, for scale beside the above.
    #[divan::bench(args = [100, 1000])]
    fn stock_plugin_evicts(bencher: divan::Bencher, messages: usize) {
        let (plugin, bag) = (compactor(), StateBag::default());
        let (history, summaries) = (history(messages), Summaries::default());
        let current = viewed(None, &history, &summaries).unwrap();
        let tokens = ContextAccount::default().message_tokens(&budget(), &history);
        let weights: Vec<u32> = tokens.iter().map(|&tokens| tokens as u32).collect();
        let total = tokens.iter().sum::<u64>() as u32;
        let room = total / 2 * 3;
        let budget = CompactionBudget {
            reason: Reason::Threshold,
            context_window: room,
            max_output_tokens: 0,
            fixed_tokens: 0,
            history_tokens: total,
            limit: room,
            target: room / 2,
            keep: Vec::new(),
        };
        bencher.bench(|| {
            let output = fixture()
                .runtime
                .block_on(plugin.compact(&ctx(), &bag, &current, &weights, &budget))
                .unwrap();
            let result = output.value.unwrap().expect("old tool results to evict");
            assert!(!result.note.contains("summarised"), "{}", result.note);
            result
        });
    }

    /// The stock compaction plugin, loaded alone.
    fn compactor() -> &'static Arc<LoadedPlugin> {
        static PLUGIN: OnceLock<Arc<LoadedPlugin>> = OnceLock::new();
        PLUGIN.get_or_init(|| loaded_alone("compaction"))
    }
}
