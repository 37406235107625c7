//! A plugin as a declaration: what it answers and how. The manifest's capabilities are
//! read from the declaration, so an export that is written is also announced.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::bindings::agent_host::plugin::types::{
    CallContext, Capabilities, Configured, Contribution, Decision, PluginManifest, PostToolOutcome,
    PreToolOutcome, PromptOutcome, Requirement, StopOutcome, ToolCall, ToolResult, ToolUse,
};
use crate::compaction::Compactor;
use crate::{Command, Context, Tool, log, tools};

/// Checks (and may adjust) the parsed configuration; returns what it needs from the host.
pub type Configure<C> = fn(&mut C) -> Result<Vec<Requirement>, String>;
/// Adds instructions and messages to a contribution that already lists the plugin's tools.
pub type Provide<C> = fn(&Context<C>, Contribution) -> Contribution;
/// A hook that may add text: `session-start`, and `status`.
pub type MaybeText<C> = fn(&Context<C>) -> Option<String>;
/// The `post-tool-use` hook.
pub type PostToolUse<C> = fn(&Context<C>, &ToolUse, &ToolResult) -> PostToolOutcome;

/// A plugin: its name, its typed configuration `C` and everything it answers. Build it in
/// a function and export that with [`export_plugin!`](crate::export_plugin).
///
/// `C` is the `[plugin.config]` table: the SDK parses it (an absent table is `{}`, so give
/// `C` serde defaults; `#[serde(deny_unknown_fields)]` makes a misspelt key an error that
/// names it), runs [`configure`](Self::configure) on it, and hands the result to every
/// later call as [`Context::config`].
pub struct Plugin<C> {
    pub(crate) name: &'static str,
    version: &'static str,
    configure: Option<Configure<C>>,
    provide: Option<Provide<C>>,
    tools: Vec<Tool<C>>,
    commands: Vec<Command<C>>,
    session_start: Option<MaybeText<C>>,
    user_prompt_submit: Option<fn(&Context<C>, &str) -> PromptOutcome>,
    pre_tool_use: Option<fn(&Context<C>, &ToolUse) -> PreToolOutcome>,
    post_tool_use: Option<PostToolUse<C>>,
    stop: Option<Stop<C>>,
    status: Option<MaybeText<C>>,
    /// The `compactor` hooks ([`compaction`](crate::compaction)).
    pub(crate) compactor: Compactor<C>,
    /// What front ends show of it ([`view`](crate::view)).
    pub(crate) view: Option<crate::view::View<C>>,
    /// Whether that view is read only from configuration and state (contract 0.2.9).
    pub(crate) view_from_state: bool,
    /// How it judges ([`judge`](crate::judge)).
    pub(crate) judge: crate::judge::Judge<C>,
}

/// A `stop` hook: one that reads the model's reply, or one that decides from the
/// configuration and the state alone, and whose outcome the host may so keep.
enum Stop<C> {
    FromReply(fn(&Context<C>, &str) -> StopOutcome),
    FromState(fn(&Context<C>) -> StopOutcome),
}

// By hand: a derive would ask `C: Copy`, and a function pointer is copied whatever `C` is.
impl<C> Clone for Stop<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C> Copy for Stop<C> {}

impl<C: DeserializeOwned + Serialize + 'static> Plugin<C> {
    /// A plugin that answers nothing yet; `name` is also its state namespace.
    pub fn new(name: &'static str, version: &'static str) -> Self {
        Self {
            name,
            version,
            configure: None,
            provide: None,
            tools: Vec::new(),
            commands: Vec::new(),
            session_start: None,
            user_prompt_submit: None,
            pre_tool_use: None,
            post_tool_use: None,
            stop: None,
            status: None,
            compactor: Compactor::default(),
            view: None,
            view_from_state: false,
            judge: crate::judge::Judge::default(),
        }
    }

    /// Checks the parsed configuration beyond what its type says, fills in derived
    /// defaults, declares hook filters ([`hook_filter`](crate::hook_filter)) and returns
    /// what this configuration needs from the host ([`Requirement`]). An `Err` refuses the
    /// load.
    pub fn configure(mut self, configure: Configure<C>) -> Self {
        self.configure = Some(configure);
        self
    }

    /// Instructions and injected messages before each model call. The plugin's tools are
    /// declared once, at load; the contribution `provide` receives lists only those whose
    /// `mutates` depends on state ([`Tool::mutating_when`]).
    pub fn provide(mut self, provide: Provide<C>) -> Self {
        self.provide = Some(provide);
        self
    }

    /// Offers a tool on every model call and runs its calls. Declared to the host from
    /// `configure` (so its schema is derived once per load), unless it depends on state.
    pub fn tool(mut self, tool: Tool<C>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Answers an operator command.
    pub fn command(mut self, command: Command<C>) -> Self {
        self.commands.push(command);
        self
    }

    /// Once, when a session starts; the text is added as context for the model.
    pub fn on_session_start(mut self, hook: MaybeText<C>) -> Self {
        self.session_start = Some(hook);
        self
    }

    /// Before a user prompt reaches the model: block it, or add context.
    pub fn on_user_prompt(mut self, hook: fn(&Context<C>, &str) -> PromptOutcome) -> Self {
        self.user_prompt_submit = Some(hook);
        self
    }

    /// Before any tool call of any plugin: allow, ask, deny, rewrite, add context. A hook
    /// whose configuration cannot be read denies (fails closed) without being called.
    pub fn on_pre_tool_use(mut self, hook: fn(&Context<C>, &ToolUse) -> PreToolOutcome) -> Self {
        self.pre_tool_use = Some(hook);
        self
    }

    /// After any tool call: see or replace the result.
    pub fn on_post_tool_use(mut self, hook: PostToolUse<C>) -> Self {
        self.post_tool_use = Some(hook);
        self
    }

    /// When the model ends a step without tool calls: stop, or continue with a message.
    pub fn on_stop(mut self, hook: fn(&Context<C>, &str) -> StopOutcome) -> Self {
        self.stop = Some(Stop::FromReply(hook));
        self
    }

    /// [`on_stop`](Self::on_stop), for a hook that decides from the configuration and the
    /// state alone (not the reply, the session id, the clock or files): the host keeps each
    /// outcome with the values it read (`reuse.until-state-changes`, contract 0.2.11) and
    /// ends a turn without calling the plugin wherever the state holds them — every turn
    /// that ends with nothing open, for one.
    pub fn on_stop_from_state(mut self, hook: fn(&Context<C>) -> StopOutcome) -> Self {
        self.stop = Some(Stop::FromState(hook));
        self
    }

    /// When the model ends a step without tool calls, after the `stop` hooks: end as the
    /// model did, go on with a message, or stop with a typed reason ([`judge`](crate::judge)).
    pub fn on_turn_end(mut self, hook: crate::judge::TurnEnd<C>) -> Self {
        self.judge.turn_end = Some(hook);
        self
    }

    /// Reviews a call the permission hooks would put to the operator: abstain, allow, deny
    /// with a reason for the model, or fail (the operator is then asked).
    pub fn on_review(mut self, hook: crate::judge::Review<C>) -> Self {
        self.judge.review = Some(hook);
        self
    }

    /// After an operator command: a prompt the host runs at once as a turn of its own.
    pub fn on_queued(mut self, hook: crate::judge::Queued<C>) -> Self {
        self.judge.queued = Some(hook);
        self
    }

    /// A one-line status for front ends (the current mode, say). It may read state; its
    /// writes and events are discarded.
    pub fn status(mut self, status: MaybeText<C>) -> Self {
        self.status = Some(status);
        self
    }

    // The exports. The generated `Guest` impl forwards here, and so do unit tests.

    /// Who the plugin is; the capabilities are exactly what was declared.
    pub fn manifest(&self) -> PluginManifest {
        let mut capabilities = Capabilities::empty();
        let declared = [
            (self.provide.is_some() || self.tools.iter().any(Tool::is_provided), Capabilities::PROVIDE),
            (!self.tools.is_empty(), Capabilities::CALL_TOOL),
            (!self.commands.is_empty(), Capabilities::COMMAND),
            (self.session_start.is_some(), Capabilities::SESSION_START),
            (self.user_prompt_submit.is_some(), Capabilities::USER_PROMPT_SUBMIT),
            (self.pre_tool_use.is_some(), Capabilities::PRE_TOOL_USE),
            (self.post_tool_use.is_some(), Capabilities::POST_TOOL_USE),
            (self.stop.is_some(), Capabilities::STOP),
            (self.status.is_some(), Capabilities::STATUS),
        ];
        for (present, flag) in declared {
            if present {
                capabilities |= flag;
            }
        }
        PluginManifest {
            name: self.name.to_owned(),
            version: self.version.to_owned(),
            capabilities,
            commands: self.commands.iter().map(Command::spec).collect(),
        }
    }

    /// Parses the `[plugin.config]` table (JSON text) into `C`, checks it, and returns it
    /// normalized with its requirements. Errors name the key's path.
    pub fn configure_raw(&self, config: &str) -> Result<Configured, String> {
        let raw: serde_json::Value = serde_json::from_str(config)
            .map_err(|error| format!("the host sent configuration that is not JSON: {error}"))?;
        let raw = if raw.is_null() { serde_json::Value::Object(Default::default()) } else { raw };
        // The host names the plugin in front of the error; the path says where in the table.
        let mut parsed: C = serde_path_to_error::deserialize(raw).map_err(|error| {
            match error.path().to_string().as_str() {
                "." => error.inner().to_string(),
                path => format!("`{path}`: {}", error.inner()),
            }
        })?;
        let requires = match self.configure {
            Some(configure) => configure(&mut parsed)?,
            None => Vec::new(),
        };
        let config = serde_json::to_string(&parsed).map_err(|error| error.to_string())?;
        for spec in self.tools.iter().filter_map(|tool| tool.declared_spec(&parsed)) {
            tools::declare(&spec);
        }
        Ok(Configured { config, requires })
    }

    /// Before each model call: the tools whose spec depends on state, then what `provide`
    /// adds.
    pub fn provide_raw(&self, ctx: CallContext) -> Contribution {
        self.with_context(ctx, |ctx| {
            let tools = self.tools.iter().filter_map(|tool| tool.provided_spec(ctx)).collect();
            let contribution = Contribution { tools, ..Contribution::default() };
            match self.provide {
                Some(provide) => provide(ctx, contribution),
                // Tool specs depend on the configuration and state only.
                None => contribution.reusable(),
            }
        })
        .unwrap_or_default()
    }

    /// Runs a call of one of the declared tools.
    pub fn call_tool_raw(&self, ctx: CallContext, call: ToolCall) -> Result<String, String> {
        let tool = self
            .tools
            .iter()
            .find(|tool| tool.name == call.name)
            .ok_or_else(|| format!("the {} plugin has no tool named `{}`", self.name, call.name))?;
        Context::with(ctx, Some(call.id.clone()), |ctx| tool.call(ctx, &call))?
    }

    /// Answers a declared operator command.
    pub fn command_raw(&self, ctx: CallContext, name: &str, args: &str) -> Result<String, String> {
        let command = self
            .commands
            .iter()
            .find(|command| command.name == name)
            .ok_or_else(|| format!("the {} plugin has no command named `/{name}`", self.name))?;
        Context::with(ctx, None, |ctx| command.call(ctx, args))?
    }

    pub fn session_start_raw(&self, ctx: CallContext) -> Option<String> {
        let hook = self.session_start?;
        self.with_context(ctx, hook)?
    }

    pub fn user_prompt_submit_raw(&self, ctx: CallContext, prompt: &str) -> PromptOutcome {
        let nothing = || PromptOutcome { block: None, context: None };
        let Some(hook) = self.user_prompt_submit else { return nothing() };
        self.with_context(ctx, |ctx| hook(ctx, prompt)).unwrap_or_else(nothing)
    }

    pub fn pre_tool_use_raw(&self, ctx: CallContext, call: &ToolUse) -> PreToolOutcome {
        let Some(hook) = self.pre_tool_use else { return PreToolOutcome::default() };
        match Context::with(ctx, None, |ctx| hook(ctx, call)) {
            Ok(outcome) => outcome,
            // A policy that cannot read its configuration refuses rather than waves through.
            Err(error) => PreToolOutcome {
                decision: Some(Decision::Deny(format!(
                    "{} cannot read its configuration: {error}",
                    self.name
                ))),
                ..PreToolOutcome::default()
            },
        }
    }

    pub fn post_tool_use_raw(
        &self,
        ctx: CallContext,
        call: &ToolUse,
        result: &ToolResult,
    ) -> PostToolOutcome {
        let Some(hook) = self.post_tool_use else { return PostToolOutcome { replace: None } };
        self.with_context(ctx, |ctx| hook(ctx, call, result)).unwrap_or(PostToolOutcome { replace: None })
    }

    pub fn stop_raw(&self, ctx: CallContext, reply: &str) -> StopOutcome {
        let Some(hook) = self.stop else { return StopOutcome::Stop };
        let decided = self.with_context(ctx, |ctx| match hook {
            Stop::FromReply(hook) => hook(ctx, reply),
            Stop::FromState(hook) => {
                crate::host::reuse::until_state_changes();
                hook(ctx)
            }
        });
        decided.unwrap_or(StopOutcome::Stop)
    }

    pub fn status_raw(&self, ctx: CallContext) -> Option<String> {
        let status = self.status?;
        self.with_context(ctx, status)?
    }

    /// The `judge` interface's `spec`: which of its hooks this plugin implements.
    pub fn judge_spec_raw(&self, _config: &str) -> crate::judge::JudgeSpec {
        self.judge.spec()
    }

    pub fn turn_end_raw(&self, ctx: CallContext, reply: &str) -> crate::judge::TurnVerdict {
        let Some(hook) = self.judge.turn_end else { return crate::judge::TurnVerdict::End };
        self.with_context(ctx, |ctx| hook(ctx, reply)).unwrap_or(crate::judge::TurnVerdict::End)
    }

    pub fn review_raw(&self, ctx: CallContext, call: &ToolUse, asked: &str) -> crate::judge::ReviewVerdict {
        let Some(hook) = self.judge.review else { return crate::judge::ReviewVerdict::Abstain };
        match Context::with(ctx, None, |ctx| hook(ctx, call, asked)) {
            Ok(verdict) => verdict,
            // Neither a denial nor an approval: the operator decides.
            Err(error) => crate::judge::ReviewVerdict::Error(format!(
                "{} cannot read its configuration: {error}",
                self.name
            )),
        }
    }

    pub fn queued_raw(&self, ctx: CallContext) -> Option<String> {
        let hook = self.judge.queued?;
        self.with_context(ctx, hook)?
    }

    /// `f` run with the call's typed context, or None (logged) when the configuration does
    /// not fit.
    pub(crate) fn with_context<R>(&self, raw: CallContext, f: impl FnOnce(&Context<C>) -> R) -> Option<R> {
        Context::with(raw, None, f).map_err(|error| log::error(&format!("{}: {error}", self.name))).ok()
    }
}
