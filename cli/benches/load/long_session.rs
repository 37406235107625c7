//! `--long-session N`: one session driven through user turns until its history holds N
//! messages, for the host's overhead per model call as the history grows. Each round is a
//! user prompt, a call of todo's read-only `todos_get_all`, its result and a final answer:
//! two model calls, four messages. The endpoint tells which reply is due from the body
//! alone, by byte search as the workflow's endpoint does: a round whose prompt is not yet
//! followed by a tool result gets the call, else the answer. A few such sessions run one
//! after the other and their calls are pooled by position: a point of one session holds ten
//! calls, too few for a steady figure.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agent_host::agent::NoOperator;
use agent_host::{Event, EventSink, Host, TurnEnd};
use anyhow::Context;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use memchr::memmem;
use serde_json::{Value, json};

use crate::endpoint::{self, Wire};
use crate::micros;
use crate::timing::{Breakdown, TimingSink, quantile};

/// Opens every round's prompt and nothing else a request carries: the endpoint counts it.
const PROMPT: &str = "Long-session round ";
const TOOL: &str = "todos_get_all";
const ANSWER: &str = "The list is as it was: nothing is open.";
const MESSAGES_PER_ROUND: usize = 4;
const CALLS_PER_ROUND: usize = 2;
/// A throwaway session of this many rounds first, so that the measured session's first
/// rounds do not pay what any process pays on its first calls.
const WARM_UP_ROUNDS: usize = 25;
/// The rounds of one reported point: twenty messages, ten model calls.
const POINT_ROUNDS: usize = 5;
/// Long sessions run, each from empty.
const SESSIONS: usize = 20;

pub fn run(
    dir: &Path,
    cache: &Path,
    built: &BTreeMap<String, PathBuf>,
    wire: Wire,
    messages: usize,
) -> anyhow::Result<()> {
    let base_url = endpoint::serve(router());
    let (runtime, host, _) = crate::start_host(dir, cache, &base_url, wire, built, &crate::Storage::Sqlite)?;
    let rounds = messages.div_ceil(MESSAGES_PER_ROUND);
    println!(
        "agent-host load benchmark, long session: stock plugins (todo, agent-mode, permissions, fs), SQLite \
         store, the {} client\n",
        wire.provider()
    );
    println!(
        "{SESSIONS} sessions one after the other, each of {rounds} rounds, to {} messages; each round a prompt, \
         a `{TOOL}` call, its result and an answer ({CALLS_PER_ROUND} model calls, {MESSAGES_PER_ROUND} \
         messages); fake endpoint on loopback answers at once\n",
        rounds * MESSAGES_PER_ROUND
    );
    runtime.block_on(drive(&host, WARM_UP_ROUNDS, &BTreeSet::new()))?;
    let points = points(rounds);
    let marks = points.iter().flat_map(|point| [point.start, point.end]).collect();
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        let started = Instant::now();
        sessions.push(runtime.block_on(drive(&host, rounds, &marks))?);
        println!("  a session: {:.2} s", started.elapsed().as_secs_f64());
    }
    let compactions: u64 = sessions.iter().map(|driven| driven.compactions).sum();
    let largest = sessions.iter().map(|driven| driven.largest_prompt).max().unwrap_or(0);
    match host.budget().window {
        Some(window) => println!(
            "compaction: none ({compactions} compactions); the context window is known ({window} tokens) and \
             the largest request was estimated at {largest} tokens, far under the trigger"
        ),
        None => println!("compaction: none ({compactions} compactions); no context window is known"),
    }
    anyhow::ensure!(compactions == 0, "a session was compacted: its figures would include that");
    report(&sessions, &points);
    Ok(())
}

/// What the session's rounds measured.
#[derive(Default)]
struct Driven {
    rounds: Vec<Round>,
    /// Host CPU so far, at the start of the rounds asked for (the round count: at the end).
    cpu: BTreeMap<usize, Duration>,
    compactions: u64,
    largest_prompt: u64,
}

struct Round {
    /// The history's length when each model call of the round went out.
    at: [usize; CALLS_PER_ROUND],
    overheads: Vec<Duration>,
    breakdown: Breakdown,
}

/// Runs `rounds` rounds in a new session, reading the host's CPU time before each round of
/// `marks` (and after the last, if it is marked). Any turn that fails or goes otherwise than
/// scripted ends the run with an error.
async fn drive(host: &Host, rounds: usize, marks: &BTreeSet<usize>) -> anyhow::Result<Driven> {
    let seen = Seen::default();
    let handle = host.sessions().create()?;
    let mut session = handle.lock().await;
    let mut driven = Driven::default();
    for round in 0..=rounds {
        if marks.contains(&round) {
            driven.cpu.insert(round, host_cpu());
        }
        if round == rounds {
            break;
        }
        let before = session.history().len();
        let sink = Sink { timing: TimingSink::default(), seen: &seen };
        let prompt = format!("{PROMPT}{round}: look at the todo list, then say what is open.");
        let start = Instant::now();
        let outcome = host
            .run_turn(&mut session, &prompt, &sink, &NoOperator)
            .await
            .with_context(|| format!("round {round} of session {} failed", session.id()))?;
        let end = Instant::now();
        let added = session.history().len() - before;
        let overheads = sink.timing.overhead_per_model_call(start, end);
        anyhow::ensure!(
            outcome.end == TurnEnd::Done
                && outcome.iterations as usize == CALLS_PER_ROUND
                && overheads.len() == CALLS_PER_ROUND
                && added == MESSAGES_PER_ROUND,
            "round {round} of session {} ended {:?} after {} model calls, adding {added} messages",
            session.id(),
            outcome.end,
            outcome.iterations
        );
        // The prompt went in before the first call; the call and its result before the second.
        let at = [before + 1, before + 3];
        driven.rounds.push(Round { at, overheads, breakdown: sink.timing.breakdown() });
    }
    driven.compactions = seen.compactions.load(Ordering::Relaxed);
    driven.largest_prompt = seen.largest_prompt.load(Ordering::Relaxed);
    Ok(driven)
}

/// Rounds `start..end` of the session, reported together.
struct Point {
    start: usize,
    end: usize,
}

/// The five rounds around message 10, 100, 1,000 and so on, as far as the session goes, and
/// its last five.
fn points(rounds: usize) -> Vec<Point> {
    let mut starts = BTreeSet::new();
    let last = rounds.saturating_sub(POINT_ROUNDS);
    let mut message = 10;
    while message <= rounds * MESSAGES_PER_ROUND {
        let round = (message - 1) / MESSAGES_PER_ROUND;
        starts.insert(round.saturating_sub(POINT_ROUNDS / 2).min(last));
        message *= 10;
    }
    starts.insert(last);
    starts.into_iter().map(|start| Point { start, end: (start + POINT_ROUNDS).min(rounds) }).collect()
}

fn report(sessions: &[Driven], points: &[Point]) {
    println!("\nhost overhead per model call, by the history's length when the call went out:");
    let mut first_and_last = Vec::new();
    for point in points {
        let rounds: Vec<&Round> =
            sessions.iter().flat_map(|driven| &driven.rounds[point.start..point.end]).collect();
        let calls = (rounds.len() * CALLS_PER_ROUND) as f64;
        let (p50, mean) = p50_and_mean(rounds.iter().flat_map(|round| round.overheads.iter().copied()));
        // The two calls of a round differ (the second also carries the turn's end), so the
        // p50 of both together jumps between them; each apart is steadier.
        let (after_prompt, _) = p50_and_mean(rounds.iter().map(|round| round.overheads[0]));
        let (after_result, _) = p50_and_mean(rounds.iter().map(|round| round.overheads[1]));
        let cpu: Duration = sessions
            .iter()
            .map(|driven| driven.cpu[&point.end].saturating_sub(driven.cpu[&point.start]))
            .sum();
        let mut breakdown = Breakdown::default();
        rounds.iter().for_each(|round| breakdown += round.breakdown);
        let (from, to) = (rounds[0].at[0], rounds[rounds.len() - 1].at[CALLS_PER_ROUND - 1]);
        println!(
            "  calls at messages {from:>5}–{to:<5} ({calls} calls): mean {:.0} µs, p50 {:.0} µs (the first call \
             of a round {:.0}, the second {:.0}); host CPU {:.0} µs per call",
            micros(mean),
            micros(p50),
            micros(after_prompt),
            micros(after_result),
            micros(cpu) / calls
        );
        println!(
            "    where it goes, per call: {:.0} µs storing the reply and pre-tool hooks, {:.0} µs in tools and \
             post-tool hooks, {:.0} µs storing results and assembling the next call",
            micros(breakdown.reply_to_tool) / calls,
            micros(breakdown.in_tools) / calls,
            micros(breakdown.tool_to_request) / calls
        );
        first_and_last.push((format!("{from}–{to}"), mean, cpu.as_secs_f64() / calls));
    }
    if let (Some(first), Some(last)) = (first_and_last.first(), first_and_last.last())
        && first_and_last.len() > 1
    {
        println!(
            "  calls at messages {} against {}: mean overhead {:.2}×, host CPU {:.2}×",
            last.0,
            first.0,
            last.1.as_secs_f64() / first.1.as_secs_f64(),
            last.2 / first.2
        );
    }
    println!("  (host CPU: every thread but the endpoint's, from the rounds' start to their end)");
    let (_, first_round) =
        p50_and_mean(sessions.iter().flat_map(|driven| driven.rounds[0].overheads.clone()));
    println!("  a session's first round alone: mean {:.0} µs per call", micros(first_round));
    let rounds = sessions[0].rounds.len();
    let tenth = rounds.div_ceil(10).max(1);
    let tenths: Vec<String> = (0..rounds)
        .step_by(tenth)
        .map(|start| {
            let overheads = sessions.iter().flat_map(|driven| {
                driven.rounds[start..(start + tenth).min(rounds)]
                    .iter()
                    .flat_map(|round| round.overheads.clone())
            });
            format!("{:.0}", micros(p50_and_mean(overheads).1))
        })
        .collect();
    println!("  mean by tenth of the session, in µs: {}", tenths.join(", "));
    let all =
        sessions.iter().flat_map(|driven| driven.rounds.iter().flat_map(|round| round.overheads.clone()));
    let (p50, mean) = p50_and_mean(all);
    println!("  the whole sessions: mean {:.0} µs, p50 {:.0} µs", micros(mean), micros(p50));
}

fn p50_and_mean(overheads: impl Iterator<Item = Duration>) -> (Duration, Duration) {
    let mut sorted: Vec<Duration> = overheads.collect();
    sorted.sort_unstable();
    let mean = sorted.iter().sum::<Duration>() / sorted.len().max(1) as u32;
    (quantile(&sorted, 0.5), mean)
}

/// CPU time of every thread of this process but the endpoint's, to the nanosecond
/// (`/proc/self/task/*/schedstat`, Linux; zero elsewhere): a point's ten model calls take
/// too little for the clock ticks `timing::cpu_time` counts in.
fn host_cpu() -> Duration {
    let tasks = std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten();
    tasks
        .filter(|task| {
            !std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|comm| comm.trim() == endpoint::THREAD)
        })
        .filter_map(|task| {
            let schedstat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            schedstat.split_whitespace().next()?.parse().ok()
        })
        .map(Duration::from_nanos)
        .sum()
}

/// What the session's events showed besides the timings.
#[derive(Default)]
struct Seen {
    compactions: AtomicU64,
    largest_prompt: AtomicU64,
}

/// One turn's [`TimingSink`], noting compactions and request estimates on the way.
struct Sink<'a> {
    timing: TimingSink,
    seen: &'a Seen,
}

impl EventSink for Sink<'_> {
    fn emit(&self, event: &Event) {
        self.timing.emit(event);
        match event {
            Event::ModelRequest { context, .. } => {
                self.seen.largest_prompt.fetch_max(context.prompt_tokens, Ordering::Relaxed);
            }
            Event::Compacted { .. } => {
                self.seen.compactions.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
    }
}

fn router() -> axum::Router {
    axum::Router::new()
        .route("/v1/chat/completions", post(reply))
        .route("/v1/messages", post(reply_messages))
        // A long session's requests outgrow axum's default cap on a body.
        .layer(DefaultBodyLimit::disable())
}

/// The reply due to a request.
enum Due {
    /// The tool call of the round with this number of prompts so far.
    Call(usize),
    Answer,
}

/// What `body` asks for, `result` being how a tool result starts on its wire; `None` for a
/// body that is not a JSON object. The host writes compact JSON, so `result` can only be
/// that (inside a string its quotes would be escaped).
fn due(body: &[u8], result: &[u8]) -> Option<Due> {
    if body.first() != Some(&b'{') || body.last() != Some(&b'}') {
        return None;
    }
    let prompts = memmem::find_iter(body, PROMPT.as_bytes()).count();
    let results = memmem::find_iter(body, result).count();
    Some(if results < prompts { Due::Call(prompts) } else { Due::Answer })
}

async fn reply(body: Bytes) -> Response {
    let Some(due) = due(&body, b"\"role\":\"tool\"") else {
        return (StatusCode::BAD_REQUEST, "not a chat completions request").into_response();
    };
    let (message, finish) = match due {
        // Numbered by round: a call id is unique in its session.
        Due::Call(round) => (
            json!({ "role": "assistant", "content": null, "tool_calls": [{
                "id": format!("call_{round}"), "type": "function",
                "function": { "name": TOOL, "arguments": "{}" },
            }] }),
            "tool_calls",
        ),
        Due::Answer => (json!({ "role": "assistant", "content": ANSWER }), "stop"),
    };
    let body = json!({
        "id": "bench-long",
        "object": "chat.completion",
        "choices": [{ "index": 0, "message": message, "finish_reason": finish }],
    });
    ([(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

async fn reply_messages(body: Bytes) -> Response {
    let Some(due) = due(&body, b"\"type\":\"tool_result\"") else {
        return (StatusCode::BAD_REQUEST, "not a Messages request").into_response();
    };
    let (block, delta, stop) = match due {
        Due::Call(round) => (
            json!({ "type": "tool_use", "id": format!("toolu_{round}"), "name": TOOL, "input": {} }),
            json!({ "type": "input_json_delta", "partial_json": "{}" }),
            "tool_use",
        ),
        Due::Answer => (
            json!({ "type": "text", "text": "" }),
            json!({ "type": "text_delta", "text": ANSWER }),
            "end_turn",
        ),
    };
    // What it used grows with the request, as an endpoint's count would: a calibrated
    // estimate stays near the truth.
    let usage = json!({ "input_tokens": body.len() / 4, "output_tokens": 1 });
    let events: [Value; 6] = [
        json!({ "type": "message_start", "message": { "id": "msg_bench", "type": "message", "role": "assistant",
            "content": [], "model": "fake", "stop_reason": null, "usage": usage } }),
        json!({ "type": "content_block_start", "index": 0, "content_block": block }),
        json!({ "type": "content_block_delta", "index": 0, "delta": delta }),
        json!({ "type": "content_block_stop", "index": 0 }),
        json!({ "type": "message_delta", "delta": { "stop_reason": stop }, "usage": { "output_tokens": 40 } }),
        json!({ "type": "message_stop" }),
    ];
    let body: String = events
        .iter()
        .map(|event| format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap()))
        .collect();
    ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
}
