//! The guest SDK for agent-host plugins.
//!
//! A plugin is a type that implements [`Plugin`] (every method has a default, so write only
//! what you use) and is exported with [`export_plugin!`]:
//!
//! ```ignore
//! use agent_host_sdk::prelude::*;
//!
//! #[derive(Default)]
//! struct Hello;
//!
//! impl Plugin for Hello {
//!     fn manifest(&self) -> Manifest {
//!         Manifest::new("hello", env!("CARGO_PKG_VERSION")).with(Capabilities::PROVIDE)
//!     }
//!     fn provide(&self, _ctx: &Context) -> Contribution {
//!         Contribution::default().instructions("Greet the user warmly.")
//!     }
//! }
//!
//! export_plugin!(Hello);
//! ```
//!
//! The host runs every call on a fresh instance, so a plugin keeps nothing in memory between
//! calls: what it must remember goes into the session's state bag through [`state`].

pub mod completion_loop;
mod context;
mod contribution;
pub mod hook_filter;
mod manifest;
pub mod process;
pub mod state;
mod tool;

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "plugin",
        path: "../../wit/frozen/v0.1",
        pub_export_macro: true,
        export_macro_name: "__export_guest",
        default_bindings_module: "agent_host_sdk::bindings",
    });
}

pub use context::Context;
pub use serde_json::{self, Value, json};

pub use bindings::agent_host::plugin::types::{
    Capabilities, CommandSpec, Contribution, Decision, InjectedMessage, PluginManifest as Manifest,
    PostToolOutcome, PreToolOutcome, PromptOutcome, Role, StopOutcome, ToolCall, ToolResult, ToolSpec,
    ToolUse,
};
pub use tool::{ToolArgs, ToolSpecExt};

/// Everything a plugin usually needs, in one import.
pub mod prelude {
    pub use crate::hook_filter::{ToolFilter, ToolHook};
    pub use crate::{
        Capabilities, CommandSpec, Context, Contribution, Decision, InjectedMessage, Manifest, Plugin,
        PostToolOutcome, PreToolOutcome, PromptOutcome, Role, StopOutcome, ToolArgs, ToolCall, ToolResult,
        ToolSpec, ToolSpecExt, ToolUse, Value, events, export_plugin, hook_filter, json, log, state,
    };
}

/// A plugin. Every method has a default; [`Plugin::manifest`] must say which ones the plugin
/// really implements, because the host calls only those.
///
/// The value is created fresh (with `Default`) for every call, so fields are scratch space,
/// not memory.
pub trait Plugin: Default {
    /// Name, version, implemented capabilities and commands.
    fn manifest(&self) -> Manifest;

    /// Validates the `[plugin.config]` table and returns the configuration that later calls
    /// see in [`Context::config`], with defaults filled in. An `Err` refuses the load.
    fn configure(&self, config: Value) -> Result<Value, String> {
        Ok(config)
    }

    /// Before each model call: instructions, tools and messages for this call only.
    fn provide(&self, _ctx: &Context) -> Contribution {
        Contribution::default()
    }

    /// Runs one of the tools `provide` offered.
    fn call_tool(&self, _ctx: &Context, call: ToolCall) -> Result<String, String> {
        Err(format!("this plugin has no tool named `{}`", call.name))
    }

    /// Once, when a session starts; the returned text is added as context for the model.
    fn session_start(&self, _ctx: &Context) -> Option<String> {
        None
    }

    /// Before a user prompt reaches the model: block it, or add context.
    fn user_prompt_submit(&self, _ctx: &Context, _prompt: &str) -> PromptOutcome {
        PromptOutcome { block: None, context: None }
    }

    /// Before any tool call runs: allow, ask or deny, rewrite the arguments, add context.
    fn pre_tool_use(&self, _ctx: &Context, _call: &ToolUse) -> PreToolOutcome {
        PreToolOutcome::default()
    }

    /// After any tool call: see or replace the result.
    fn post_tool_use(&self, _ctx: &Context, _call: &ToolUse, _result: &ToolResult) -> PostToolOutcome {
        PostToolOutcome { replace: None }
    }

    /// When the model ends a step without tool calls: stop, or continue with a message.
    fn stop(&self, _ctx: &Context, _reply: &str) -> StopOutcome {
        StopOutcome::Stop
    }

    /// An operator command such as `/todos`, answered without a model call.
    fn command(&self, _ctx: &Context, name: &str, _args: &str) -> Result<String, String> {
        Err(format!("this plugin has no command named `/{name}`"))
    }
}

/// Emits typed events onto the host's event stream.
pub mod events {
    /// Emits `kind` with `payload` serialized as JSON. Delivered when the call succeeds.
    pub fn emit<T: serde::Serialize>(kind: &str, payload: &T) {
        let json = serde_json::to_string(payload).unwrap_or_else(|_| "null".to_owned());
        crate::bindings::agent_host::plugin::events::emit(kind, &json);
    }
}

/// Log lines into the host's tracing, tagged with the plugin's name.
pub mod log {
    use crate::bindings::agent_host::plugin::log::{Level, write};

    pub fn debug(message: &str) {
        write(Level::Debug, message);
    }
    pub fn info(message: &str) {
        write(Level::Info, message);
    }
    pub fn warn(message: &str) {
        write(Level::Warn, message);
    }
    pub fn error(message: &str) {
        write(Level::Error, message);
    }
}

/// Exports a [`Plugin`] type as the component's `guest` interface.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        #[doc(hidden)]
        type __AgentHostExportedPlugin = $crate::Adapter<$plugin>;
        $crate::bindings::__export_guest!(
            __AgentHostExportedPlugin with_types_in $crate::bindings
        );
    };
}

#[doc(hidden)]
pub use adapter::Adapter;
mod adapter;
