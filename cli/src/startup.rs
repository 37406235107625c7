//! From arguments to a running host and a session.

use std::io::IsTerminal;
use std::sync::Arc;

use super::choice_options;
use super::command_sink::CommandSink;
use super::console::{self, ConsoleApprover};
use super::json::JsonLines;
use super::render::ConsoleRenderer;
use super::{Args, Command, RunArgs, SessionsAction, Status};
use agent_host::agent::{Approver, Host, NoOperator, SessionHandle, TurnEnd};
use agent_host::config::Config;
use agent_host::events::{Event, EventSink};
use agent_host::model::{ModelClient, ScriptedModel};
use agent_host::sanitize::{multi_line, one_line};
use agent_host::state::lease::HolderRole;
use agent_host::state::{SessionEntry, copy_sessions, open_named_store};

/// The script the offline demo replays, relative to the config file's folder.
const DEMO_SCRIPT: &str = "demo/script.toml";
/// The demo's script as the binary carries it, played when the config's folder has none
/// (a deployment `agent-host init` made): the binary alone reaches the demo.
const CARRIED_DEMO: &str = include_str!("../../demo/script.toml");
/// The prompt the offline demo answers.
const DEMO_PROMPT: &str = "Plan and write a short release note for agent-host, step by step.";

pub async fn run(args: Args) -> Status {
    let (config_file, verbose) = (args.config.clone(), args.verbose);
    let (command, old_spelling) = match args.into_command() {
        Ok(command) => command,
        Err(error) => {
            eprintln!("error: {error}");
            return Status::BadInput;
        }
    };
    if let Some(note) = old_spelling {
        eprintln!("note: {note}");
    }
    // These make files for a deployment or a plugin, or read the config themselves (adding a
    // plugin writes it).
    let command = match command {
        Command::Init { dir } => return super::init::run(&dir),
        Command::Plugin { action } => return super::plugin_command::run(action, &config_file).await,
        command => command,
    };
    let config = match Config::load(&config_file) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("error: {}", multi_line(&error.to_string()));
            return Status::BadInput;
        }
    };
    for note in &config.notes {
        eprintln!("note: {}", one_line(note));
    }
    let telemetry = super::subscriber::init(verbose, &config.telemetry);
    let status = run_configured(config, command).await;
    telemetry.finish().await;
    status
}

/// [`run`] once the config is read and the subscriber installed.
async fn run_configured(config: Config, command: Command) -> Status {
    if let Command::Sessions {
        action: Some(SessionsAction::Copy { from, to, from_password_env, to_password_env }),
        ..
    } = &command
    {
        let stores = open_named_store(from, from_password_env.as_deref(), "--from")
            .and_then(|from| Ok((from, open_named_store(to, to_password_env.as_deref(), "--to")?)));
        // The stores' clients block: off the async threads.
        let copied = match stores {
            Ok((from, to)) => tokio::task::spawn_blocking(move || copy_sessions(&*from, &*to))
                .await
                .map_err(|error| error.to_string())
                .and_then(|copied| copied.map_err(|error| error.to_string())),
            Err(error) => Err(format!("{error:#}")),
        };
        return match copied {
            Ok(done) => {
                println!(
                    "copied {} sessions ({} messages); {} the target had already were left as they are",
                    done.copied, done.messages, done.already_there
                );
                Status::Done
            }
            Err(error) => {
                eprintln!("error: {}", one_line(&error));
                Status::Failed
            }
        };
    }
    let (model, demo) = match choose_model(&config, plays_the_demo(&command)) {
        Ok(choice) => choice,
        Err(error) => {
            eprintln!("error: {}", multi_line(&format!("{error:#}")));
            return Status::BadInput;
        }
    };
    agent_host::state::lease::this_process_is(role(&command));
    let host = match Host::new(config, model).await {
        Ok(host) => Arc::new(host),
        Err(error) => {
            // A plugin that refused its configuration wrote part of this.
            eprintln!("error: {}", multi_line(&format!("{error:#}")));
            return Status::BadInput;
        }
    };
    if let Command::Sessions { json, .. } = command {
        return list_sessions(&host, json);
    }
    if let Err(error) = host.check_context_window().await {
        eprintln!("error: {}", multi_line(&error.to_string()));
        return Status::BadInput;
    }
    if !matches!(command, Command::Check { .. }) {
        // At every start, whatever the front end: the operator learns who may act in their
        // place before anything does (`check` lists the grants in its table).
        for power in host.powers_granted() {
            eprintln!("note: {}", one_line(&power));
        }
    }
    match command {
        Command::Run(run) => run_turns(host, run, demo).await,
        Command::Serve { listen, insecure } => {
            serve(host, agent_host_serve::ServeOptions { listen, insecure }).await
        }
        Command::Acp => match agent_host_acp::run(host).await {
            Ok(()) => Status::Done,
            Err(error) => {
                eprintln!("error: {}", one_line(&format!("{error:#}")));
                Status::Failed
            }
        },
        Command::Check { offline } => check(&host, offline, demo).await,
        Command::Sessions { json, .. } => list_sessions(&host, json),
        // Run by `run` before any config is read; never here.
        Command::Init { .. } | Command::Plugin { .. } => Status::BadInput,
    }
}

/// What this process is, in every lease it takes: another process it keeps out of a session
/// is told what will free it (a console keeps its session until it is left).
fn role(command: &Command) -> HolderRole {
    match command {
        Command::Run(run) if run.prompt.is_some() => HolderRole::OneTurn,
        Command::Run(_) => HolderRole::Console,
        Command::Serve { .. } => HolderRole::Serve,
        Command::Acp => HolderRole::Acp,
        Command::Check { .. } | Command::Sessions { .. } | Command::Init { .. } | Command::Plugin { .. } => {
            HolderRole::Unknown
        }
    }
}

/// `check`: what loaded, the MCP servers, and the endpoint reached (unless `offline`); with
/// `demo`, that no endpoint is configured.
async fn check(host: &Host, offline: bool, demo: bool) -> Status {
    println!("{}", multi_line(&host.plugin_table()));
    for choice in super::choice_options::summaries(&host.new_session_views().await) {
        println!("{choice}");
    }
    let servers = host.mcp_table();
    if !servers.is_empty() {
        println!("{}", multi_line(&servers));
    }
    let failures = host.mcp_failures();
    if !failures.is_empty() {
        for failure in failures {
            eprintln!("error: {failure}");
        }
        return Status::BadInput;
    }
    if demo {
        // Nothing to reach, and nothing played: `check` runs no turn.
        println!("model: none configured (`agent-host` alone would play the offline demo)");
        return Status::Done;
    }
    check_endpoint(host, offline).await
}

/// `run`: a session opened, new or not, then a console or one turn.
async fn run_turns(host: Arc<Host>, args: RunArgs, demo: bool) -> Status {
    let start = match (args.session, args.fork, args.import) {
        (Some(id), _, _) => Start::Resume(id),
        (_, Some(id), _) => Start::Fork(id),
        (_, _, Some(path)) => Start::Import { path, host_state: args.import_host_state },
        _ => Start::New,
    };
    let session = match open_session(&host, start) {
        Ok(session) => session,
        Err((status, message)) => {
            eprintln!("error: {}", one_line(&message));
            return status;
        }
    };
    let sink: Arc<dyn EventSink> =
        if args.json { Arc::new(JsonLines) } else { Arc::new(ConsoleRenderer::new()) };
    {
        let session = session.lock().await;
        sink.emit(&Event::SessionStarted {
            session_id: session.id().to_owned(),
            resumed: session.was_resumed(),
        });
    }
    if args.json {
        // Programs reading the stream learn which plugin versions serve this run.
        for plugin in host.plugins().plugins() {
            sink.emit(&plugin.loaded_event());
        }
    }
    // A server that did not start is skipped, and said so: its tools are missing.
    for server in host.mcp().statuses() {
        sink.emit(&agent_host::mcp::event(&server));
    }
    // What the plugins show of the session, new or resumed, before anything else happens in it.
    host.refresh_views(&mut *session.lock().await, &*sink).await;
    let interactive = !args.json && std::io::stdin().is_terminal();
    // At a terminal, the demo's scripted turn opens a console that stays for the operator to
    // look around in; a prompt given, or input piped in, ends after one turn as ever.
    let opening = match (args.prompt, demo) {
        (Some(prompt), _) => Opening::OneTurn(prompt),
        (None, true) if interactive => Opening::DemoThenConsole,
        (None, true) => Opening::OneTurn(DEMO_PROMPT.to_owned()),
        (None, false) => Opening::Console,
    };
    match opening {
        Opening::OneTurn(prompt) => {
            let approver: Box<dyn Approver> =
                if interactive { Box::new(ConsoleApprover::new()) } else { Box::new(NoOperator) };
            let prompt = match one_command(&host, &session, &prompt, &*sink, args.json).await {
                Ok(Some(prompt)) => prompt,
                Ok(None) => return Status::Done,
                Err(status) => return status,
            };
            one_turn(&host, &session, &prompt, &*sink, &*approver).await
        }
        Opening::Console if args.json => {
            eprintln!(
                "error: --json needs --prompt (the console is for people; the JSON stream for programs)"
            );
            Status::BadInput
        }
        Opening::Console => open_console(host, session, sink, None).await,
        Opening::DemoThenConsole => open_console(host, session, sink, Some(DEMO_PROMPT)).await,
    }
}

/// `serve` until SIGTERM, with hot reload; the address it listens on is the first line of
/// stdout, for whoever started it, and a sign-in link the second when it made a one-time
/// token (stdout only: never the log).
async fn serve(host: Arc<Host>, options: agent_host_serve::ServeOptions) -> Status {
    for failure in host.mcp_failures() {
        eprintln!("warning: {failure}; its tools are left out");
    }
    let _watcher = agent_host::reload::watch(host.clone(), Arc::new(agent_host::reload::LogReloads)).ok();
    let listening = |listening: agent_host_serve::Listening| {
        use std::io::Write as _;
        println!("agent-host serve: listening on http://{}", listening.address);
        if let Some(link) = listening.sign_in {
            println!(
                "sign in (as `{}`, an admin; the token lasts until this server stops, and `[serve] tokens` \
                 gives lasting ones): {link}",
                agent_host_serve::ONE_TIME_PRINCIPAL
            );
        }
        let _ = std::io::stdout().flush();
    };
    match agent_host_serve::run(host, options, listening).await {
        Ok(()) => Status::Done,
        Err(error) => {
            eprintln!("error: {}", multi_line(&error.to_string()));
            Status::BadInput
        }
    }
}

/// The console, with hot reload: editing config.toml or a plugin takes effect without a
/// restart.
async fn open_console(
    host: Arc<Host>,
    session: SessionHandle,
    sink: Arc<dyn EventSink>,
    demo: Option<&str>,
) -> Status {
    let _watcher = match agent_host::reload::watch(host.clone(), sink.clone()) {
        Ok(watcher) => Some(watcher),
        Err(error) => {
            eprintln!(
                "warning: hot reload is off: cannot watch the plugin files: {}",
                multi_line(&error.to_string())
            );
            None
        }
    };
    console::run(host, session, &*sink, demo).await
}

/// `--prompt` with a command line (`/name args`): the command runs, its answer to
/// stdout (stderr with `--json`, whose stdout is events only), then the turn a plugin queued
/// after it, if any. `Ok(None)` when there is no turn to run; any other prompt is its own turn.
async fn one_command(
    host: &Host,
    session: &SessionHandle,
    prompt: &str,
    sink: &dyn EventSink,
    json: bool,
) -> Result<Option<String>, Status> {
    if !agent_host::agent::is_command(prompt) {
        return Ok(Some(prompt.to_owned()));
    }
    let mut session = session.lock().await;
    if json {
        // Programs get every event whole, display forms included.
        match host.command(&mut session, prompt, sink).await {
            Ok(text) => eprintln!("{text}"),
            Err(text) => {
                eprintln!("{text}");
                return Err(Status::Failed);
            }
        }
        return Ok(host.queued_turn(&mut session, sink).await);
    }
    let command_sink = CommandSink::new(sink);
    let answer = host.command(&mut session, prompt, &command_sink).await;
    command_sink.answered(&answer);
    match answer {
        Ok(text) => println!("{}", multi_line(&text)),
        Err(text) => {
            eprintln!("{}", multi_line(&text));
            return Err(Status::Failed);
        }
    }
    if let Some(options) = choice_options::listing(prompt, &session.views().current()) {
        println!("{options}");
    }
    Ok(host.queued_turn(&mut session, sink).await)
}

/// What a run does once its session is open.
enum Opening {
    /// One turn with this prompt, then exit.
    OneTurn(String),
    /// The console.
    Console,
    /// The offline demo's turn, then the console.
    DemoThenConsole,
}

/// `--check`'s last part: the model endpoint reached (unless `offline`), and what it said.
async fn check_endpoint(host: &Host, offline: bool) -> Status {
    let config = host.config();
    let model = host.model().describe();
    if offline {
        println!("model: {} (not contacted: --offline)", one_line(&model));
        return Status::Done;
    }
    match agent_host::model::probe(&config).await {
        Ok(Some(found)) => {
            println!("model: {}", one_line(&found));
            Status::Done
        }
        Ok(None) => {
            println!("model: {} (nothing to contact)", one_line(&model));
            Status::Done
        }
        Err(error) => {
            eprintln!("error: {}", multi_line(&error.to_string()));
            Status::BadInput
        }
    }
}

/// Whether `command` calls the model, and so plays the offline demo when no endpoint is
/// configured: `check` and `sessions` call none, and must not say they play it.
fn plays_the_demo(command: &Command) -> bool {
    matches!(command, Command::Run(_) | Command::Serve { .. } | Command::Acp)
}

/// The configured model, or the offline demo when no endpoint is configured, announced
/// when `announce` (the run plays it).
fn choose_model(config: &Config, announce: bool) -> anyhow::Result<(ModelClient, bool)> {
    if let Some(model) = ModelClient::from_config(config)? {
        return Ok((model, false));
    }
    let script = config.resolve(std::path::Path::new(DEMO_SCRIPT));
    if !announce {
        // A run that calls no model reads no script either (a folder without `demo/`).
        return Ok((ModelClient::Scripted(Arc::new(ScriptedModel::empty(&script))), true));
    }
    // The config's own `demo/` first, so an edited script is the one played.
    let (model, from) = if script.is_file() {
        (ScriptedModel::from_file(&script)?, script.display().to_string())
    } else {
        (ScriptedModel::from_text(&script, CARRIED_DEMO)?, "the copy this binary carries".to_owned())
    };
    eprintln!(
        "No model endpoint configured ([model].base_url, OPENAI_BASE_URL or ${}); running the offline demo from {from}.",
        config.model.key_env(),
    );
    Ok((ModelClient::Scripted(Arc::new(model)), true))
}

/// Which session a run is in.
enum Start {
    New,
    /// `--session ID`
    Resume(String),
    /// `--fork ID`
    Fork(String),
    /// `--import FILE`, with `--import-host-state` or without.
    Import {
        path: std::path::PathBuf,
        host_state: bool,
    },
}

/// The session to run; an unknown id or an unreadable document is bad input, a store that
/// refuses (another process has the session open, say) a failure.
fn open_session(host: &Host, start: Start) -> Result<SessionHandle, (Status, String)> {
    let failed = |error: agent_host::state::StoreError| (Status::Failed, error.to_string());
    let unknown = |id: &str| {
        let message =
            format!("no session with id `{id}` in the session store (list them with `agent-host sessions`)");
        (Status::BadInput, message)
    };
    let sessions = host.sessions();
    match start {
        Start::New => sessions.create().map_err(failed),
        Start::Resume(id) => sessions.open(&id).map_err(failed)?.ok_or_else(|| unknown(&id)),
        Start::Fork(id) => sessions.fork(&id).map_err(failed)?.ok_or_else(|| unknown(&id)),
        Start::Import { path, host_state } => {
            let bad = |detail: String| (Status::BadInput, format!("--import {}: {detail}", path.display()));
            let text = std::fs::read_to_string(&path).map_err(|error| bad(error.to_string()))?;
            let mut contents =
                agent_host::state::document::import(&text).map_err(|error| bad(error.to_string()))?;
            if !host_state {
                let dropped = agent_host::state::document::drop_host_state(&mut contents);
                if !dropped.is_empty() {
                    let note = format!(
                        "--import {}: left out the host's own state the document holds ({}): \
                         standing approvals, owners and model usage are not a document's to give; \
                         --import-host-state keeps them",
                        path.display(),
                        dropped.join(", ")
                    );
                    eprintln!("note: {}", one_line(&note));
                }
            }
            sessions.create_copy(contents).map_err(failed)
        }
    }
}

/// How many sessions `agent-host sessions` lists.
const SESSIONS_LISTED: usize = 50;

/// `sessions`: a line a session for a person, or a JSON object a line with `json`.
fn list_sessions(host: &Host, json: bool) -> Status {
    match host.sessions().store().entries(SESSIONS_LISTED) {
        Ok(entries) => {
            for entry in entries {
                if json {
                    let object = serde_json::json!({
                        "id": entry.id,
                        "updated_at": entry.updated_at,
                        "messages": entry.messages,
                        "title": entry.title,
                    });
                    println!("{object}");
                } else {
                    println!("{}", session_line(&entry, std::time::SystemTime::now()));
                }
            }
            Status::Done
        }
        Err(error) => {
            eprintln!("error: {}", multi_line(&error.to_string()));
            Status::Failed
        }
    }
}

/// `ID  2 min ago  12 messages  the first prompt`: the id first, for scripts.
fn session_line(entry: &SessionEntry, now: std::time::SystemTime) -> String {
    let used = std::time::UNIX_EPOCH + std::time::Duration::from_secs(entry.updated_at.max(0) as u64);
    let ago = agent_host::human_time::ago(now.duration_since(used).unwrap_or_default());
    let messages = match entry.messages {
        1 => "1 message".to_owned(),
        n => format!("{n} messages"),
    };
    let title = entry.title.as_deref().map_or_else(|| "(no prompt yet)".into(), one_line);
    format!("{}  {ago:>10}  {messages:>12}  {title}", one_line(&entry.id))
}

/// One turn, Ctrl-C cancelling it (the session keeps every step completed before).
pub async fn one_turn(
    host: &Host,
    session: &SessionHandle,
    prompt: &str,
    sink: &dyn EventSink,
    approver: &dyn Approver,
) -> Status {
    let mut session = session.lock().await;
    let turn = host.run_turn(&mut session, prompt, sink, approver);
    // The turn reports its own end, a cancelled one's too (as it is dropped).
    let outcome = tokio::select! {
        outcome = turn => outcome,
        _ = tokio::signal::ctrl_c() => return Status::Failed,
    };
    match outcome {
        Ok(outcome) => match outcome.end {
            TurnEnd::Done => Status::Done,
            TurnEnd::ReplyCut => Status::ReplyCut,
            TurnEnd::MaxIterations => Status::MaxIterations,
            TurnEnd::TokenBudget | TurnEnd::TimeBudget => Status::Budget,
            TurnEnd::Blocked => Status::Blocked,
            TurnEnd::NeedInput => Status::NeedInput,
            TurnEnd::Error | TurnEnd::Cancelled => Status::Failed,
        },
        Err(_) => Status::Failed,
    }
}
