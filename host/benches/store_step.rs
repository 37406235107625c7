//! What one step's transaction costs on each store: `Session::commit` of the step a tool call
//! makes in the todo workflow (the model's reply with its usage, the tool's result, one write
//! to the plugin's bag), through the public API, on a SQLite file and on a real PostgreSQL on
//! loopback (the tests' server: `scripts/install-postgres.sh`, `initdb`, `pg_ctl`).
//!
//! `cargo bench -p agent-host --bench store_step` (defaults), or
//! `cargo bench -p agent-host --bench store_step -- --steps 2000 --rounds 10`.
//! The stores take turns, a round of `--steps` each (A B A B), so the machine's drift weighs
//! on both alike; each round starts a session of its own, so the history grows as a turn's
//! does, not without end.

#[path = "../src/state/postgres/test_server.rs"]
#[allow(dead_code)]
mod test_server;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_host::conversation::Message;
use agent_host::events::TokenUsage;
use agent_host::state::{PostgresStore, SessionStore, Sessions, SqliteStore};
use agent_host::tools::ToolCall;
use hdrhistogram::Histogram;

struct Options {
    steps: usize,
    rounds: usize,
}

impl Options {
    fn parse() -> Self {
        let mut options = Options { steps: 1_000, rounds: 6 };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut value = || -> usize {
                args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{arg} needs a number"))
            };
            match arg.as_str() {
                "--steps" => options.steps = value().max(1),
                "--rounds" => options.rounds = value().max(1),
                _ => {}
            }
        }
        options
    }
}

struct Measured {
    name: &'static str,
    sessions: Sessions,
    commits: Histogram<u64>,
    wall: Duration,
}

impl Measured {
    fn new(name: &'static str, store: Arc<dyn SessionStore>) -> Self {
        let commits = Histogram::new_with_bounds(1, 60_000_000, 2).expect("valid histogram bounds");
        Self { name, sessions: Sessions::new(store), commits, wall: Duration::ZERO }
    }

    /// One session of `steps` steps, each committed on its own; only the commits are timed.
    fn round(&mut self, steps: usize) -> anyhow::Result<()> {
        let handle = self.sessions.create()?;
        let mut session = handle.try_lock()?;
        session.push(Message::user("Plan four steps, then do them."));
        session.commit(&**self.sessions.store())?;
        let usage = TokenUsage { input_tokens: 1_200, output_tokens: 40, ..TokenUsage::default() };
        for step in 0..steps {
            let id = format!("call_{step}");
            let call = ToolCall {
                id: id.clone(),
                name: "todos_complete".into(),
                arguments: format!("{{\"id\":{}}}", step % 4 + 1),
            };
            session.push_reply(Message::assistant("", vec![call]), Some(usage));
            session.count_model_call();
            session.push(Message::tool(&id, format!("Completed todo {}. 3 of 4 open.", step % 4 + 1)));
            let items = format!(
                "[{{\"id\":1,\"text\":\"Read the brief\",\"isComplete\":true}},{{\"id\":2,\"text\":\"Step {step}\",\"isComplete\":false}}]"
            );
            session.bag().put("todo", "items", Some(items));
            let started = Instant::now();
            session.commit(&**self.sessions.store())?;
            let took = started.elapsed();
            self.wall += took;
            self.commits.saturating_record(took.as_micros().max(1) as u64);
        }
        Ok(())
    }

    fn report(&self) {
        let micros = |quantile: f64| self.commits.value_at_quantile(quantile);
        println!(
            "{:<34} {:>7} steps: p50 {:>5} µs, p90 {:>5} µs, p99 {:>6} µs, mean {:>6.0} µs",
            self.name,
            self.commits.len(),
            micros(0.5),
            micros(0.9),
            micros(0.99),
            self.wall.as_secs_f64() * 1e6 / self.commits.len().max(1) as f64
        );
    }
}

fn main() -> anyhow::Result<()> {
    let options = Options::parse();
    let dir = tempfile::tempdir()?;
    let sqlite = Arc::new(SqliteStore::open(&dir.path().join("sessions.db"))?);
    let url = test_server::TestServer::fresh_database();
    let postgres = Arc::new(PostgresStore::open(&url, Some(test_server::PASSWORD))?);
    let mut stores =
        [Measured::new("SQLite file (WAL)", sqlite), Measured::new("PostgreSQL on loopback", postgres)];
    println!(
        "one step's transaction (reply + tool result + one bag write, lease checked), {} rounds of {} steps a store, A B A B\n",
        options.rounds, options.steps
    );
    // A first round each to warm caches and connections, not counted.
    for store in &mut stores {
        store.round(options.steps.min(100))?;
        store.commits.reset();
        store.wall = Duration::ZERO;
    }
    for _ in 0..options.rounds {
        for store in &mut stores {
            store.round(options.steps)?;
        }
    }
    for store in &stores {
        store.report();
    }
    Ok(())
}
