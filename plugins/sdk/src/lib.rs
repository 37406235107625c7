//! The guest SDK for agent-host plugins (contract `agent-host:plugin@0.2.11`).
//!
//! A plugin is a declaration, built by a function and exported with [`export_plugin!`]:
//! its typed configuration, its tools (each declared by a typed argument struct whose JSON
//! Schema the SDK derives, and whose calls the SDK parses and dispatches), its operator
//! commands and its hooks. The manifest's capabilities are read from the declaration.
//!
//! ```ignore
//! use agent_host_sdk::prelude::*;
//!
//! #[derive(Default, Serialize, Deserialize)]
//! #[serde(default, deny_unknown_fields)]
//! struct Config { greeting: String }
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct GreetArgs {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! fn greet(ctx: &Context<Config>, args: GreetArgs) -> Result<String, String> {
//!     Ok(format!("{} {}", ctx.config.greeting, args.name))
//! }
//!
//! fn plugin() -> Plugin<Config> {
//!     Plugin::new("hello", env!("CARGO_PKG_VERSION"))
//!         .tool(Tool::new("greet", "Greets someone by name.", greet))
//! }
//!
//! export_plugin!(plugin);
//! ```
//!
//! The host runs every call on a fresh instance, so a plugin keeps nothing in memory between
//! calls: what it must remember goes into the session's state bag through [`state`].
//!
//! Every plugin also exports the `compactor` interface (the `compacting-plugin` world, since
//! 0.2.3); its hooks ([`Plugin::on_compact`], [`Plugin::on_pre_compact`],
//! [`Plugin::on_post_compact`]) are announced by `spec` exactly as they are for `manifest`, so a
//! plugin that registers none takes no part in compaction. Their types are in [`compaction`].
//! Likewise the `viewer` interface (the `viewing-plugin` world, since 0.2.4): a plugin that
//! gives [`Plugin::view`] shows typed widgets to every front end ([`view`]); one that does
//! not shows none.

mod adapter;
pub mod agents;
mod command;
pub mod compaction;
mod context;
mod contribution;
#[cfg(any(test, all(target_arch = "wasm32", feature = "instance-heap")))]
mod heap;
pub mod hook_filter;
mod host;
pub mod judge;
pub mod model;
mod no_config;
mod numbers;
mod plugin;
pub mod process;
pub mod state;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;
#[cfg(test)]
#[cfg(not(target_arch = "wasm32"))]
mod tests;
mod tool;
pub mod tools;
pub mod view;

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        // Every plugin exports `compactor` and `viewer` too; `spec` says which of its
        // compaction hooks it implements, `shows` whether it has a view.
        world: "judging-plugin",
        path: "../../wit",
        pub_export_macro: true,
        export_macro_name: "__export_world",
        default_bindings_module: "agent_host_sdk::bindings",
        // So tests can compare what a plugin returns with what they expect.
        additional_derives: [PartialEq],
    });
}

pub use command::Command;
pub use compaction::{Compact, CompactTrigger, CompactionHooksFor, PostCompact, PreCompact};
pub use context::Context;
pub use no_config::NoConfig;
pub use numbers::grouped;
pub use plugin::{Configure, MaybeText, Plugin, PostToolUse, Provide};
pub use schemars::{self, JsonSchema};
pub use serde_json::{self, Value, json};
pub use tool::{NoArgs, Tool, ToolArgs, schema_of};
pub use view::{Checklist, Choice, EntryExt, EntryState, Text, Widget};

pub use bindings::agent_host::plugin::types::{
    Capabilities, CommandSpec, Configured, Contribution, Decision, InjectedMessage,
    PluginManifest as Manifest, PostToolOutcome, PreToolOutcome, PromptOutcome, Requirement, Role,
    StopOutcome, ToolCall, ToolResult, ToolSpec, ToolUse,
};

/// Everything a plugin usually needs, in one import.
pub mod prelude {
    pub use crate::hook_filter::{ToolFilter, ToolHook};
    pub use crate::view::{self, Checklist, Choice, EntryExt, EntryState, Text, Widget};
    pub use crate::{
        Command, Context, Contribution, Decision, JsonSchema, NoArgs, NoConfig, Plugin, PostToolOutcome,
        PreToolOutcome, PromptOutcome, Requirement, Role, StopOutcome, Tool, ToolArgs, ToolCall, ToolResult,
        ToolUse, Value, agents, compaction, edits, events, export_plugin, hook_filter, json, judge, log,
        meter, model, state,
    };
}

/// Emits typed events onto the host's event stream.
pub mod events {
    /// Emits `kind` with `payload` serialized as JSON, for programs, and `display`, how a
    /// person should see it (plain text, possibly several lines; None shows nothing).
    /// Delivered when the call succeeds.
    pub fn emit<T: serde::Serialize + ?Sized>(kind: &str, payload: &T, display: Option<&str>) {
        let json = serde_json::to_string(payload).unwrap_or_else(|_| "null".to_owned());
        crate::host::events::emit(kind, &json, display);
    }

    /// [`emit`] with a payload already written as JSON text (by
    /// [`state::set_kept`](crate::state::set_kept), say), so it is not serialized twice. The
    /// host drops an event whose payload is not JSON, and logs that it did.
    pub fn emit_json(kind: &str, payload: &str, display: Option<&str>) {
        crate::host::events::emit(kind, payload, display);
    }
}

/// Tells front ends which files a tool call changed, to show as a diff (contract 0.2.5). The
/// model never sees it: it sees the tool's result.
pub mod edits {
    use crate::bindings::agent_host::plugin::edits::FileEdit;

    /// The running tool call changed the file `path` (as the tool names it to the model) from
    /// `before` to `after`: `None` before for a file it created, `None` after for one it
    /// deleted. Shown once the call returns, whether with a result or an error.
    pub fn report(path: &str, before: Option<&str>, after: Option<&str>) {
        crate::host::edits::report(&FileEdit {
            path: path.to_owned(),
            before: before.map(str::to_owned),
            after: after.map(str::to_owned),
        });
    }
}

/// What the running turn has spent, and the deployment's caps on it (contract 0.2.6): what a
/// goal loop's judge or a reviewer reads to keep within what is left.
pub mod meter {
    pub use crate::bindings::agent_host::plugin::meter::{Caps, Reading};

    pub use crate::bindings::agent_host::plugin::meter::SessionReading;

    /// The meter as of this call; outside a turn every count is zero.
    pub fn read() -> Reading {
        crate::host::meter::read()
    }

    /// What the whole session has spent as of this call, the running turn included
    /// (contract 0.2.7).
    pub fn session() -> SessionReading {
        crate::host::meter::session()
    }
}

/// Where a tool call's result stands in the session's history (contract 0.2.7), for a
/// `pre-compact` hook that keeps it: note [`Context::call_id`] in the tool's handler, and in
/// the hook name the result's message in `keep`.
pub mod history {
    /// The position of the result of the call `call_id` in the stored history, as
    /// [`MessageId::Message`](crate::compaction::MessageId) names it; none when it has no
    /// result there, and in any call but a `pre-compact` hook.
    pub fn result_of(call_id: &str) -> Option<u64> {
        crate::host::history::result_of(call_id)
    }
}

/// Log lines into the host's tracing, tagged with the plugin's name.
pub mod log {
    use crate::bindings::agent_host::plugin::log::Level;
    use crate::host::log::write;

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

/// Exports the plugin that `$plugin` (a function returning a [`Plugin`]) declares as the
/// component's `guest`, `compactor`, `viewer` and `judge` interfaces. Only in a component: the export names are not symbols a
/// native linker accepts, and native builds are for unit tests, which call the declaration.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:path) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct Export;
            impl $crate::Export for Export {
                fn plugin() -> ::std::boxed::Box<dyn $crate::Exports> {
                    ::std::boxed::Box::new($plugin())
                }
            }
            type ExportedPlugin = $crate::Adapter<Export>;
    $crate::bindings::__export_world!(ExportedPlugin with_types_in $crate::bindings);
        };
    };
}

#[doc(hidden)]
pub use adapter::{Adapter, Export, Exports};
