//! `config.toml`: what a deployment runs — the model, the plugins in order, their limits
//! and grants, where sessions are stored.
//!
//! Every field is checked when the file loads; an error names the file, the line and the
//! field (see [`ConfigError`]). Relative paths are relative to the config file's folder.

mod error;
mod grants;
mod known_models;
mod limits;
mod load;
mod locate;
mod mcp;
mod plugin_origin;
mod plugin_source;
mod registries;
mod serve;
mod server_code;
mod storage;
mod telemetry;
mod toolchain;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use toml::Spanned;

pub use error::ConfigError;
pub use grants::host_file_at;
pub use known_models::{KnownModel, known_model};
pub use limits::{LimitOverrides, Limits, MAX_MEMORY_MB};
pub(crate) use limits::{kib, mib};
pub use load::is_variable_name;
pub use mcp::{
    BASELINE_ENV, GivenValues, McpServerConfig, McpToolFilter, McpTransport, header_problem, name_problem,
};
pub use plugin_origin::{ORIGIN_KEYS, PluginOrigin};
pub use plugin_source::{PluginSource, toolchains_home};
pub use registries::{LOCK_FILE, RegistryConfig, RegistrySettings, TrustPolicy};
pub use serve::ServeConfig;
pub use telemetry::TelemetryConfig;
pub use toolchain::{CrateLayout, on_path};

/// The whole deployment, as loaded from `config.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub agent: AgentConfig,
    #[serde(default)]
    pub model: ModelConfig,
    #[serde(default)]
    pub storage: StorageConfig,
    #[serde(default)]
    pub compaction: CompactionConfig,
    #[serde(default)]
    pub runtime: RuntimeConfig,
    /// The plugins, in the order their instructions and hooks apply.
    #[serde(default, rename = "plugin")]
    pub plugins: Vec<PluginConfig>,
    /// `[plugins]`: the trust policy and registry settings of plugins pulled from a registry.
    #[serde(default, rename = "plugins")]
    pub registry: RegistryConfig,
    /// MCP servers whose tools are offered beside the plugins', in this order.
    #[serde(default)]
    pub mcp: Vec<McpServerConfig>,
    /// `agent-host serve`: principals, limits.
    #[serde(default)]
    pub serve: ServeConfig,
    /// OpenTelemetry traces.
    #[serde(default)]
    pub telemetry: TelemetryConfig,
    /// Where the file was read from; relative paths resolve against its folder.
    #[serde(skip)]
    pub source: ConfigSource,
    /// What the file spells the old way, read the new way: one line each, naming the file,
    /// the line and the new spelling, for a front end to show.
    #[serde(skip)]
    pub notes: Vec<String>,
}

/// Where a config came from, for error messages and relative paths.
#[derive(Debug, Clone, Default)]
pub struct ConfigSource {
    pub file: PathBuf,
    pub dir: PathBuf,
    /// The text as read, so errors found after parsing can still name a line.
    pub text: std::sync::Arc<str>,
}

/// The loop's own settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentConfig {
    /// The base of every system prompt; plugin instructions follow in config order.
    pub instructions: String,
    /// Model calls allowed in one user turn (the completion loop included).
    pub max_iterations: u32,
    /// Tokens one turn may spend, input and output of its model calls and of its plugins'
    /// (`model.complete`) together; the turn ends with `token_budget` once it has. No cap
    /// unless set.
    pub max_turn_tokens: Option<u64>,
    /// Seconds one turn may run; checked before each model call, it ends with `time_budget`.
    pub max_turn_secs: Option<u64>,
    /// Times `stop` hooks may send the model on in one turn; past it, the turn ends as the
    /// model ended it. No cap unless set (`max_iterations` still bounds the turn).
    pub max_continuations: Option<u32>,
    /// What an `ask` becomes when nobody can answer (`--prompt` without a terminal, `--json`).
    pub on_ask: OnAsk,
    /// How deep child agents (contract 0.2.8) may nest: a session's children are at depth 1,
    /// theirs at 2. A start past it is refused.
    pub max_subagent_depth: u32,
    /// How many children one step of a session may run at once; a start past it is refused.
    pub max_parallel_subagents: u32,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            instructions: "You are a capable, careful assistant working for the user. Use the \
                           tools you are given when they help, and answer plainly."
                .to_owned(),
            max_iterations: 10,
            max_turn_tokens: None,
            max_turn_secs: None,
            max_continuations: None,
            on_ask: OnAsk::Deny,
            max_subagent_depth: 2,
            max_parallel_subagents: 4,
        }
    }
}

/// The answer to an `ask` when no operator can be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnAsk {
    Allow,
    Deny,
}

/// Which model to call and how.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelConfig {
    pub provider: Provider,
    /// The endpoint's base, e.g. `http://localhost:8080/v1` for Chat Completions or
    /// `https://api.anthropic.com` for Messages. For `openai`, when absent, `OPENAI_BASE_URL`
    /// is used; when that is absent too (and no key is set), the host runs its offline demo.
    pub base_url: Option<String>,
    pub model: String,
    /// The name of the environment variable that holds the API key (never the key itself);
    /// `OPENAI_API_KEY` or `ANTHROPIC_API_KEY` by default, after the provider.
    pub api_key_env: Option<String>,
    /// Seconds one attempt may take in all, from sending the request to the reply's last
    /// byte: the outer bound over the two waits below.
    pub timeout_secs: u64,
    /// Seconds to wait for the reply's first byte (the endpoint may queue the request and
    /// read the whole prompt first).
    pub first_byte_timeout_secs: u64,
    /// Seconds a streamed reply may go quiet between two chunks.
    pub idle_timeout_secs: u64,
    /// Retries after a 429, a 5xx or a dropped connection, with exponential backoff.
    pub max_retries: u32,
    /// The first backoff delay; it doubles with every retry.
    pub retry_backoff_ms: u64,
    /// For `provider = "scripted"`: the file of model turns to replay.
    pub script: Option<Spanned<PathBuf>>,
    /// Sampling temperature, when the deployment wants one.
    pub temperature: Option<f32>,
    /// The most tokens one reply may have: sent as `max_tokens` (required by Messages).
    /// Only a value set here is sent; unset, [`ModelConfig::output_reserve`] says what a reply
    /// may take.
    pub max_output_tokens: Option<u32>,
    /// The model's context window in tokens, prompt and reply together; unset, the known
    /// model's ([`known_model`]), else none.
    pub context_window: Option<u32>,
    /// Extra request headers: header name to the NAME of the variable holding its value.
    pub headers: BTreeMap<String, String>,
    /// Provider-specific options merged into every request body's top level.
    pub extra_body: toml::Table,
    /// Where plugins' injected messages go in a Chat Completions request.
    pub injected_as: InjectedAs,
    /// A response body's cap, streamed or whole, in MiB.
    pub endpoint_body_mb: u32,
    /// One server-sent event of a streamed reply (every line of it), in KiB.
    pub sse_line_kb: u32,
}

impl ModelConfig {
    /// The variable the API key is read from: `api_key_env`, or the provider's usual one.
    pub fn key_env(&self) -> &str {
        match (&self.api_key_env, self.provider) {
            (Some(name), _) => name,
            (None, Provider::Anthropic) => "ANTHROPIC_API_KEY",
            (None, Provider::Openai | Provider::Scripted) => "OPENAI_API_KEY",
        }
    }

    /// The family of `model`, when the host knows its limits.
    pub fn known(&self) -> Option<KnownModel> {
        known_model(&self.model)
    }

    /// The context window requests must fit: `context_window`, else the known model's; `None`
    /// when neither says, and then nothing is enforced.
    pub fn window(&self) -> Option<u32> {
        self.context_window.or_else(|| self.known().map(|known| known.context_window))
    }

    /// The tokens kept free for the reply: `max_output_tokens`; unset, what the client asks for
    /// by itself (Messages: [`ANTHROPIC_MAX_TOKENS`]), else what the known model may write
    /// (nothing asks a Chat Completions server for less); 0 for a model the host does not know.
    pub fn output_reserve(&self) -> u32 {
        match (self.max_output_tokens, self.provider) {
            (Some(tokens), _) => tokens,
            (None, Provider::Anthropic) => ANTHROPIC_MAX_TOKENS,
            (None, Provider::Openai | Provider::Scripted) => {
                self.known().map_or(0, |known| known.max_output_tokens)
            }
        }
    }

    /// `endpoint_body_mb` in bytes.
    pub fn max_body_bytes(&self) -> usize {
        mib(self.endpoint_body_mb)
    }

    /// `sse_line_kb` in bytes.
    pub fn max_event_bytes(&self) -> usize {
        kib(self.sse_line_kb)
    }
}

/// The `max_tokens` a Messages request carries when `[model] max_output_tokens` is unset:
/// Messages requires one.
pub const ANTHROPIC_MAX_TOKENS: u32 = 8192;

impl Default for ModelConfig {
    fn default() -> Self {
        Self {
            provider: Provider::Openai,
            base_url: None,
            model: "gpt-4.1-mini".to_owned(),
            api_key_env: None,
            timeout_secs: 600,
            first_byte_timeout_secs: 120,
            idle_timeout_secs: 60,
            max_retries: 3,
            retry_backoff_ms: 500,
            script: None,
            temperature: None,
            max_output_tokens: None,
            context_window: None,
            headers: BTreeMap::new(),
            extra_body: toml::Table::new(),
            injected_as: InjectedAs::default(),
            endpoint_body_mb: 64,
            sse_line_kb: 1 << 10,
        }
    }
}

/// The model client kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// OpenAI-compatible Chat Completions.
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
    /// A file of turns replayed, for demos and tests.
    Scripted,
}

/// Where a Chat Completions request carries plugins' injected messages. Strict chat
/// templates refuse a `system` message anywhere but first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InjectedAs {
    /// As `user` messages after the history: every template takes them.
    #[default]
    User,
    /// Appended to the first system message.
    FirstSystem,
    /// As `system` messages after the history, as the plugin gave them.
    System,
}

/// When a long session's history is compacted, and how far the host's own truncation takes
/// it. The shares are of a request's room: the context window less the output reserve.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct CompactionConfig {
    /// Off: nothing is ever compacted (a request past the window is sent, and refused).
    pub enabled: bool,
    /// The share, in percent, past which the next request's estimate starts a compaction; a
    /// compacting plugin's own trigger (from its configuration) takes its place.
    pub trigger_percent: u8,
    /// The share the host's own truncation brings a request down to.
    pub target_percent: u8,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        Self { enabled: true, trigger_percent: 80, target_percent: 50 }
    }
}

/// Where sessions are kept.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StorageConfig {
    /// The SQLite database holding every session's history and state bag (unless `url`).
    pub path: PathBuf,
    /// A PostgreSQL database to keep sessions in instead (`postgres://USER@HOST:PORT/DB`),
    /// for hosts on several machines sharing them; never with a password in it.
    pub url: Option<String>,
    /// The name of the environment variable holding `url`'s password.
    pub password_env: Option<String>,
    /// Seconds a process's claim on a session (its lease) lasts unless renewed. The holder
    /// renews it well before (every third of this) while the session is open, so this is how
    /// long a crashed holder on another machine keeps others out of its sessions.
    pub lease_secs: std::num::NonZeroU64,
}

impl Default for StorageConfig {
    fn default() -> Self {
        Self {
            path: PathBuf::from(".agent-host/sessions.db"),
            url: None,
            password_env: None,
            lease_secs: std::num::NonZeroU64::new(30).expect("30 is not zero"),
        }
    }
}

/// Where the key that seals the compile cache at `cache_dir` is kept: beside the folder, not
/// in it. Named here because the grants check must keep it out of every plugin's reach as
/// surely as the runtime finds it.
pub fn compile_cache_key_path(cache_dir: &std::path::Path) -> PathBuf {
    let mut name = cache_dir.file_name().map(|name| name.to_owned()).unwrap_or_else(|| "cache".into());
    name.push(".key");
    cache_dir.with_file_name(name)
}

/// The plugin runtime's settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "RuntimeTable")]
pub struct RuntimeConfig {
    /// Precompiled components, keyed by the component's hash and the engine's.
    pub cache_dir: PathBuf,
    /// Limits for every plugin that does not set its own.
    pub limits: Limits,
    /// How the processes of plugins granted `process = true` are confined.
    pub sandbox: SandboxMode,
    /// `[runtime.limits]` as written: the endpoint caps it may still hold, the old spelling
    /// of `[model]`'s, are moved there at load.
    pub(crate) written_limits: LimitOverrides,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeTable::default().into()
    }
}

/// `[runtime]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RuntimeTable {
    cache_dir: PathBuf,
    limits: LimitOverrides,
    sandbox: SandboxMode,
}

impl Default for RuntimeTable {
    fn default() -> Self {
        Self {
            cache_dir: PathBuf::from(".agent-host/cache"),
            limits: LimitOverrides::default(),
            sandbox: SandboxMode::Namespaces,
        }
    }
}

impl From<RuntimeTable> for RuntimeConfig {
    fn from(table: RuntimeTable) -> Self {
        Self {
            cache_dir: table.cache_dir,
            limits: table.limits.over(Limits::default()),
            sandbox: table.sandbox,
            written_limits: table.limits,
        }
    }
}

/// `[runtime] sandbox`: the OS sandbox of plugin processes, or an explicit opt-out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// Own user, mount, PID, IPC, UTS and network namespaces (see `agent_host::sandbox`).
    #[default]
    Namespaces,
    /// Unconfined, as the host (a warning at every start says so).
    None,
}

/// One `[[plugin]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginConfig {
    /// A `.wasm` component, or a plugin folder the host builds (`PluginSource`), relative to
    /// the config file. One of `path`, `builtin` and `oci` names the plugin (`origin`).
    pub path: Option<Spanned<PathBuf>>,
    /// A stock plugin carried in the binary, by name.
    pub builtin: Option<Spanned<String>>,
    /// A component in an OCI registry, `REGISTRY/REPOSITORY:TAG`, run at the digest
    /// `plugins.lock` pins.
    pub oci: Option<Spanned<String>>,
    /// Set to false to keep the entry but not load it.
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    /// The plugin's own settings, passed to its `configure` as JSON.
    #[serde(default)]
    pub config: toml::Table,
    #[serde(default)]
    pub limits: LimitOverrides,
    #[serde(default)]
    pub grants: Grants,
    /// For policy hooks: when this plugin fails (trap, timeout), allow instead of deny.
    #[serde(default)]
    pub fail_open: bool,
}

fn enabled_by_default() -> bool {
    true
}

impl PluginConfig {
    /// The plugin's call limits: its `[plugin.limits]` over `runtime` (`[runtime.limits]`),
    /// a plugin granted `process` given its longer deadline (`LimitOverrides::for_plugin`).
    pub fn call_limits(&self, runtime: Limits) -> Limits {
        self.limits.for_plugin(runtime, self.grants.process)
    }
}

/// Powers beyond pure computation, granted by name. Nothing is granted by default.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Grants {
    /// Other plugins' state namespaces this plugin may read.
    pub read_state: Vec<String>,
    /// Host folders made visible inside the sandbox, by guest path.
    pub dirs: BTreeMap<String, DirGrant>,
    /// Whether the plugin may run host processes (`sh -c`) in its first writable folder.
    pub process: bool,
    /// Environment variables passed on to those processes; all others are withheld.
    pub env: Vec<String>,
    /// Whether those processes share the host's network; without it they have none.
    pub network: bool,
    /// Whether the plugin may ask the deployment's model (`model.complete`, contract 0.2.2).
    pub model: bool,
    /// The most output tokens one such call may ask for (and is held to when it asks none).
    pub model_tokens_per_call: u32,
    /// Input and output tokens of all the plugin's model calls in one session; once spent,
    /// further calls are refused.
    pub model_tokens_per_session: u64,
    /// Whether its `review` (contract 0.2.7) may decide, in the operator's place, a call the
    /// permission hooks ask about: an approval runs the call with nobody asked, a power
    /// beyond any hook's (a hook's allow never outweighs another's ask).
    pub review: bool,
    /// Whether its `queued` (contract 0.2.7) may start a turn after any operator command:
    /// model calls and tool calls the operator did not send.
    pub start_turns: bool,
    /// Whether it may start child agents of the sessions it serves (`agents`, contract
    /// 0.2.8): sessions that make model calls and tool calls of their own, narrower than
    /// their parent and within `[agent]`'s caps on depth and parallel children.
    pub agents: bool,
}

/// `model_tokens_per_call` unless set: room for a summary of a long stretch of history.
pub const DEFAULT_MODEL_TOKENS_PER_CALL: u32 = 4_000;
/// `model_tokens_per_session` unless set: a dozen such calls with their inputs.
pub const DEFAULT_MODEL_TOKENS_PER_SESSION: u64 = 50_000;

impl Default for Grants {
    fn default() -> Self {
        Self {
            read_state: Vec::new(),
            dirs: BTreeMap::new(),
            process: false,
            env: Vec::new(),
            network: false,
            model: false,
            model_tokens_per_call: DEFAULT_MODEL_TOKENS_PER_CALL,
            model_tokens_per_session: DEFAULT_MODEL_TOKENS_PER_SESSION,
            review: false,
            start_turns: false,
            agents: false,
        }
    }
}

impl Grants {
    /// The grants set, by their keys under `[plugin.grants]`: what `/plugins` lists.
    pub fn names(&self) -> Vec<&'static str> {
        let set = [
            ("read_state", !self.read_state.is_empty()),
            ("dirs", !self.dirs.is_empty()),
            ("process", self.process),
            ("env", !self.env.is_empty()),
            ("network", self.network),
            ("model", self.model),
            ("review", self.review),
            ("start_turns", self.start_turns),
            ("agents", self.agents),
        ];
        set.into_iter().filter_map(|(name, set)| set.then_some(name)).collect()
    }
}

/// A host folder preopened for a plugin.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirGrant {
    /// The host folder: as written, relative to the config file's folder; once loaded,
    /// absolute and canonical (symbolic links resolved once, at load), the path every run
    /// and every call opens without following links.
    pub host: PathBuf,
    /// Whether the plugin may write there.
    #[serde(default)]
    pub write: bool,
}

impl Config {
    /// Reads and checks `path`.
    pub fn load(path: &std::path::Path) -> Result<Self, ConfigError> {
        load::load_file(path)
    }

    /// Parses config text; `file` is used for error messages and relative paths.
    pub fn parse(text: &str, file: &std::path::Path) -> Result<Self, ConfigError> {
        load::parse(text, file)
    }

    /// A path from the config, resolved against the config file's folder.
    pub fn resolve(&self, path: &std::path::Path) -> PathBuf {
        if path.is_absolute() { path.to_path_buf() } else { self.source.dir.join(path) }
    }

    /// The line that sets a dotted `field` (`model.context_window`), when the file sets it.
    pub fn line_of(&self, field: &str) -> Option<usize> {
        locate::line_of_field(&self.source.text, field)
    }

    /// An error about a dotted `field`, at the line that sets it (none when the file does not).
    pub fn error(&self, field: impl Into<String>, message: impl Into<String>) -> ConfigError {
        let field = field.into();
        ConfigError {
            file: self.source.file.clone(),
            line: self.line_of(&field),
            field: Some(field),
            message: message.into(),
        }
    }

    /// [`Config::error`], at the line of `near` when the file does not set `field` itself: the
    /// table it would be in, or the setting that asked for it.
    pub fn error_near(
        &self,
        field: impl Into<String>,
        near: &str,
        message: impl Into<String>,
    ) -> ConfigError {
        let error = self.error(field, message);
        ConfigError { line: error.line.or_else(|| self.line_of(near)), ..error }
    }

    /// An error about the value at `span` (from a `Spanned` field), naming file and line.
    pub fn error_at(
        &self,
        span: std::ops::Range<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> ConfigError {
        ConfigError {
            file: self.source.file.clone(),
            line: Some(locate::line_at(&self.source.text, span.start)),
            field: Some(field.into()),
            message: message.into(),
        }
    }
}
