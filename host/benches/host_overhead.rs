//! What the host costs next to the model: one plugin call, one tool call through the
//! hooks, one whole turn against a model that answers instantly, and the state bag.
//!
//! `cargo bench -p agent-host --bench host_overhead` (builds the plugins first).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use agent_host::agent::NoOperator;
use agent_host::events::NoEvents;
use agent_host::model::ModelClient;
use agent_host::runtime::CallContext;
use agent_host::state::StateBag;
use agent_host::{Config, Host};
use serde_json::json;

fn main() {
    divan::main();
}

struct Fixture {
    runtime: tokio::runtime::Runtime,
    host: Arc<Host>,
    _dir: tempfile::TempDir,
}

/// A host with the stock todo and agent-mode plugins and a scripted model that answers
/// at once, in a temporary folder.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let built = agent_host::runtime::build_workspace(&root.join("plugins")).expect("plugins build");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("script.toml"), "[[turn]]\ntext = \"done\"\n").unwrap();
        let config = format!(
            "[model]\nprovider = \"scripted\"\nscript = \"script.toml\"\n[storage]\npath = \"s.db\"\n\
             [[plugin]]\npath = \"{}\"\n[[plugin]]\npath = \"{}\"\n",
            built["todo"].display(),
            built["agent-mode"].display()
        );
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let host = runtime.block_on(async {
            let config = Config::load(&dir.path().join("config.toml")).unwrap();
            let model = ModelClient::from_config(&config).unwrap().unwrap();
            Arc::new(Host::new(config, model).await.unwrap())
        });
        Fixture { runtime, host, _dir: dir }
    })
}

/// One `provide` call on the todo plugin: instantiate, call, tear down.
#[divan::bench]
fn plugin_call_provide(bencher: divan::Bencher) {
    let fixture = fixture();
    let plugin = fixture.host.plugins().by_name("todo").unwrap().clone();
    let bag = StateBag::default();
    let ctx = CallContext { session_id: "bench".into(), ..CallContext::default() };
    bencher.bench(|| fixture.runtime.block_on(plugin.provide(&ctx, &bag)).unwrap());
}

/// One tool call as the model would make it: every plugin's `provide`, schema validation,
/// agent-mode's `pre-tool-use`, the tool, the step commit to SQLite.
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

/// A whole user turn in a new session against a model that answers at once: session
/// creation, hooks, context assembly, the model call, stop hooks, three SQLite commits.
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
