//! The command line: `agent-host --config config.toml` opens a console; `--prompt` runs one
//! turn; `--json` writes the event stream as JSON lines.
//!
//! Exit status: 0 the turn finished; 1 the turn failed (model, store); 2 bad config or
//! arguments (or, with `--check`, a deployment that is not ready); 3 the turn hit
//! `agent.max_iterations`; 4 a hook blocked the prompt; 5 the turn's last reply was cut at
//! the output limit.

mod above_prompt;
#[cfg(feature = "mimalloc")]
pub mod allocator;
mod child_cards;
mod children_command;
mod choice_options;
mod command_sink;
mod console;
mod diff_lines;
mod editor;
mod init;
mod json;
mod markdown;
mod plugin_add;
mod plugin_artifact;
mod plugin_command;
mod plugin_list;
mod plugin_new;
mod plugin_registry;
mod plugin_update;
mod plugin_verify;
mod render;
mod resume_hint;
mod spinner;
mod startup;
mod status_line;
mod subscriber;
mod tool_cards;
mod tool_results;
mod view_lines;
mod width;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Run an LLM agent whose tools, modes and policies are sandboxed WebAssembly plugins.
///
/// Without a subcommand, `run`: opens a console session (type a message, or /help for
/// commands), or runs one turn with --prompt. With no model endpoint configured, runs the
/// offline demo script instead.
#[derive(Debug, Parser)]
#[command(name = "agent-host", version, about, long_about = None)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The deployment's config file.
    #[arg(long, short, value_name = "FILE", default_value = "config.toml", global = true)]
    pub config: PathBuf,

    /// `run`'s options, given without the subcommand.
    #[command(flatten)]
    pub run: RunArgs,

    /// The old spelling of `agent-host check`, kept for one release.
    #[arg(long, hide = true)]
    pub check: bool,

    /// The old spelling of `agent-host check --offline`.
    #[arg(long, hide = true, requires = "check")]
    pub offline: bool,

    /// The old spelling of `agent-host sessions`, kept for one release.
    #[arg(long, hide = true)]
    pub list_sessions: bool,

    /// More log output on stderr (repeat for more); `RUST_LOG` overrides.
    #[arg(long, short, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
}

/// What `run` (and `agent-host` alone) takes.
#[derive(Debug, Default, clap::Args)]
pub struct RunArgs {
    /// Run one turn with this prompt and exit.
    #[arg(long, short, value_name = "TEXT")]
    pub prompt: Option<String>,

    /// Write the event stream as JSON lines on stdout (one object per event, see
    /// `docs/events.md`). Approval requests follow `agent.on_ask`.
    #[arg(long)]
    pub json: bool,

    /// Resume the session with this id instead of starting a new one.
    #[arg(long, short, value_name = "ID")]
    pub session: Option<String>,

    /// Start a new session from a copy of the session with this id: its history, state and
    /// compaction view. The session copied is left as it was.
    #[arg(long, value_name = "ID", conflicts_with_all = ["session", "import"])]
    pub fork: Option<String>,

    /// Start a new session from a session document written by `/export FILE`.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["session", "fork"])]
    pub import: Option<PathBuf>,

    /// With --import: keep the host's own state the document holds (standing approvals, a
    /// served session's owner, plugins' model usage), left out unless this is given.
    #[arg(long, requires = "import")]
    pub import_host_state: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Open a console session, or run one turn with --prompt: what `agent-host` alone does.
    Run(RunArgs),
    /// Load the config and every plugin, list what loaded, reach the model endpoint (unless
    /// --offline), and exit: 0 when the deployment is ready, 2 when it is not (with the
    /// reason).
    Check {
        /// Do not contact the model endpoint.
        #[arg(long)]
        offline: bool,
    },
    /// List recent sessions, most recently used first, and exit: one a line with its id, when
    /// it was last used, its messages and its first prompt.
    Sessions {
        /// One JSON object a line instead: `id`, `updated_at` (unix seconds), `messages`,
        /// `title` (`null` before the first prompt).
        #[arg(long)]
        json: bool,
        #[command(subcommand)]
        action: Option<SessionsAction>,
    },
    /// Serve the deployment over HTTP: a JSON API under /v1/ (OpenAPI at /openapi.json),
    /// live events as Server-Sent Events, and a web page at /. Callers are the principals of
    /// `[serve] tokens`; on loopback without them, one admin signs in by the link it prints.
    /// SIGTERM stops it gracefully.
    Serve {
        /// The address to listen on; `[serve] listen` (127.0.0.1:8787) when absent.
        #[arg(long, value_name = "ADDRESS")]
        listen: Option<String>,
        /// Allow an address that is not loopback, over plain HTTP (tokens cross the network
        /// in the clear: put a TLS proxy in front instead where you can).
        #[arg(long)]
        insecure: bool,
    },
    /// Serve the deployment to an editor over the Agent Client Protocol (v1) on stdin and
    /// stdout: the editor starts this as its agent. stdout carries the protocol only.
    Acp,
    /// Write a commented `config.toml` for the stock deployment, whose plugins this binary
    /// carries, into DIR (the current folder by default), and say what to do next. An
    /// existing config is never overwritten.
    Init {
        /// The deployment's folder; made when it is missing.
        #[arg(value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// Work on plugins: `plugin new` writes a new plugin's folder; `build`, `publish`,
    /// `add`, `update`, `list` and `verify` bring plugins to and from an OCI registry, pinned
    /// in plugins.lock beside the config.
    Plugin {
        #[command(subcommand)]
        action: plugin_command::PluginAction,
    },
}

impl Args {
    /// What the command line asks for, its old spellings read as the subcommands that replace
    /// them, with the note to print when one was used; `Err` names a `run` option or an old
    /// flag given with a subcommand it does not belong to.
    pub fn into_command(self) -> Result<(Command, Option<&'static str>), String> {
        match self.command {
            Some(command) => {
                if let Some(option) = self.run.given() {
                    return Err(format!(
                        "`{option}` does not go with `agent-host {}`: it is an option of `agent-host run` (or of \
                         `agent-host` alone)",
                        command.name()
                    ));
                }
                if self.check || self.list_sessions {
                    let (flag, instead) =
                        if self.check { ("--check", "check") } else { ("--list-sessions", "sessions") };
                    return Err(format!(
                        "`{flag}` (the old spelling of `agent-host {instead}`) does not go with `agent-host {}`",
                        command.name()
                    ));
                }
                Ok((command, None))
            }
            None if self.check => Ok((
                Command::Check { offline: self.offline },
                Some(
                    "`--check` is now `agent-host check` (and `--offline` its option); the flag goes in a later release",
                ),
            )),
            None if self.list_sessions => Ok((
                Command::Sessions { json: false, action: None },
                Some("`--list-sessions` is now `agent-host sessions`; the flag goes in a later release"),
            )),
            None => Ok((Command::Run(self.run), None)),
        }
    }
}

impl RunArgs {
    /// The first option given, if any.
    fn given(&self) -> Option<&'static str> {
        [
            (self.prompt.is_some(), "--prompt"),
            (self.json, "--json"),
            (self.session.is_some(), "--session"),
            (self.fork.is_some(), "--fork"),
            (self.import.is_some(), "--import"),
        ]
        .into_iter()
        .find_map(|(given, option)| given.then_some(option))
    }
}

impl Command {
    /// Its name on the command line.
    fn name(&self) -> &'static str {
        match self {
            Self::Run(_) => "run",
            Self::Check { .. } => "check",
            Self::Sessions { .. } => "sessions",
            Self::Serve { .. } => "serve",
            Self::Acp => "acp",
            Self::Init { .. } => "init",
            Self::Plugin { .. } => "plugin",
        }
    }
}

/// What `agent-host sessions` does besides listing.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum SessionsAction {
    /// Copy every session of one store into another (SQLite to PostgreSQL, or back), each
    /// whole; a session the target has already is left as it is there. Says how many.
    Copy {
        /// The store to copy from: `sqlite:PATH` or `postgres://USER@HOST:PORT/DATABASE`.
        #[arg(long)]
        from: String,
        /// The store to copy into, named the same way.
        #[arg(long)]
        to: String,
        /// The variable holding the password of `--from`, when it is PostgreSQL.
        #[arg(long)]
        from_password_env: Option<String>,
        /// The variable holding the password of `--to`, when it is PostgreSQL.
        #[arg(long)]
        to_password_env: Option<String>,
    },
}

/// How a run ended, as the process exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Done = 0,
    Failed = 1,
    BadInput = 2,
    MaxIterations = 3,
    Blocked = 4,
    /// The turn's last reply hit the output limit: its text is incomplete.
    ReplyCut = 5,
    /// The turn reached `agent.max_turn_tokens` or `agent.max_turn_secs`, or a plugin's
    /// own budget.
    Budget = 6,
    /// A plugin judged that the work needs the operator's input.
    NeedInput = 7,
}

pub fn main(args: Args) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::from(Status::Failed as u8);
        }
    };
    let status = runtime.block_on(startup::run(args));
    // A plugin call abandoned at its deadline may leave a blocking thread stuck in a WASI
    // read (a FIFO with no writer); the process must still exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    ExitCode::from(status as u8)
}
