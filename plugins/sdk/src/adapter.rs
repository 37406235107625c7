//! Bridges the generated `Guest` traits (free functions) of the `guest`, `compactor`,
//! `viewer` and `judge` exports to a [`Plugin`] declaration.

use std::cell::OnceCell;
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Plugin;
use crate::bindings::agent_host::plugin::types::{
    CallContext, Configured, Contribution, PluginManifest, PostToolOutcome, PreToolOutcome, PromptOutcome,
    StopOutcome, ToolCall, ToolResult, ToolUse,
};
use crate::bindings::exports::agent_host::plugin::compactor::Guest as CompactorGuest;
use crate::bindings::exports::agent_host::plugin::guest::Guest;
use crate::bindings::exports::agent_host::plugin::judge::Guest as JudgeGuest;
use crate::bindings::exports::agent_host::plugin::viewer::Guest as ViewerGuest;
use crate::compaction::{
    Compacted, Compaction, CompactionBudget, CompactorSpec, HistoryMessage, PreCompactOutcome,
};
use crate::judge::{JudgeSpec, ReviewVerdict, TurnVerdict};
use crate::view::Widget;

/// The exports of a [`Plugin`] whatever its config type, so `export_plugin!` need not name it.
pub trait Exports {
    fn manifest(&self) -> PluginManifest;
    fn configure(&self, config: &str) -> Result<Configured, String>;
    fn provide(&self, ctx: CallContext) -> Contribution;
    fn call_tool(&self, ctx: CallContext, call: ToolCall) -> Result<String, String>;
    fn session_start(&self, ctx: CallContext) -> Option<String>;
    fn user_prompt_submit(&self, ctx: CallContext, prompt: &str) -> PromptOutcome;
    fn pre_tool_use(&self, ctx: CallContext, call: &ToolUse) -> PreToolOutcome;
    fn post_tool_use(&self, ctx: CallContext, call: &ToolUse, outcome: &ToolResult) -> PostToolOutcome;
    fn stop(&self, ctx: CallContext, reply: &str) -> StopOutcome;
    fn command(&self, ctx: CallContext, name: &str, args: &str) -> Result<String, String>;
    fn status(&self, ctx: CallContext) -> Option<String>;
    fn spec(&self, config: &str) -> CompactorSpec;
    fn compact(
        &self,
        ctx: CallContext,
        history: &[HistoryMessage],
        budget: &CompactionBudget,
    ) -> Result<Option<Compaction>, String>;
    fn pre_compact(&self, ctx: CallContext, budget: &CompactionBudget) -> PreCompactOutcome;
    fn post_compact(&self, ctx: CallContext, done: &Compacted);
    fn shows(&self, config: &str) -> bool;
    fn view(&self, ctx: CallContext) -> Vec<Widget>;
    fn judge_spec(&self, config: &str) -> JudgeSpec;
    fn turn_end(&self, ctx: CallContext, reply: &str) -> TurnVerdict;
    fn review(&self, ctx: CallContext, call: &ToolUse, asked: &str) -> ReviewVerdict;
    fn queued(&self, ctx: CallContext) -> Option<String>;
}

impl<C: DeserializeOwned + Serialize + 'static> Exports for Plugin<C> {
    fn manifest(&self) -> PluginManifest {
        Plugin::manifest(self)
    }
    fn configure(&self, config: &str) -> Result<Configured, String> {
        self.configure_raw(config)
    }
    fn provide(&self, ctx: CallContext) -> Contribution {
        self.provide_raw(ctx)
    }
    fn call_tool(&self, ctx: CallContext, call: ToolCall) -> Result<String, String> {
        self.call_tool_raw(ctx, call)
    }
    fn session_start(&self, ctx: CallContext) -> Option<String> {
        self.session_start_raw(ctx)
    }
    fn user_prompt_submit(&self, ctx: CallContext, prompt: &str) -> PromptOutcome {
        self.user_prompt_submit_raw(ctx, prompt)
    }
    fn pre_tool_use(&self, ctx: CallContext, call: &ToolUse) -> PreToolOutcome {
        self.pre_tool_use_raw(ctx, call)
    }
    fn post_tool_use(&self, ctx: CallContext, call: &ToolUse, outcome: &ToolResult) -> PostToolOutcome {
        self.post_tool_use_raw(ctx, call, outcome)
    }
    fn stop(&self, ctx: CallContext, reply: &str) -> StopOutcome {
        self.stop_raw(ctx, reply)
    }
    fn command(&self, ctx: CallContext, name: &str, args: &str) -> Result<String, String> {
        self.command_raw(ctx, name, args)
    }
    fn status(&self, ctx: CallContext) -> Option<String> {
        self.status_raw(ctx)
    }
    fn spec(&self, config: &str) -> CompactorSpec {
        self.spec_raw(config)
    }
    fn compact(
        &self,
        ctx: CallContext,
        history: &[HistoryMessage],
        budget: &CompactionBudget,
    ) -> Result<Option<Compaction>, String> {
        self.compact_raw(ctx, history, budget)
    }
    fn pre_compact(&self, ctx: CallContext, budget: &CompactionBudget) -> PreCompactOutcome {
        self.pre_compact_raw(ctx, budget)
    }
    fn post_compact(&self, ctx: CallContext, done: &Compacted) {
        self.post_compact_raw(ctx, done)
    }
    fn shows(&self, config: &str) -> bool {
        self.shows_raw(config)
    }
    fn view(&self, ctx: CallContext) -> Vec<Widget> {
        self.view_raw(ctx)
    }
    fn judge_spec(&self, config: &str) -> JudgeSpec {
        self.judge_spec_raw(config)
    }
    fn turn_end(&self, ctx: CallContext, reply: &str) -> TurnVerdict {
        self.turn_end_raw(ctx, reply)
    }
    fn review(&self, ctx: CallContext, call: &ToolUse, asked: &str) -> ReviewVerdict {
        self.review_raw(ctx, call, asked)
    }
    fn queued(&self, ctx: CallContext) -> Option<String> {
        self.queued_raw(ctx)
    }
}

/// What `export_plugin!` implements: builds the plugin's declaration.
pub trait Export {
    fn plugin() -> Box<dyn Exports>;
}

/// The type `export_plugin!` exports.
pub struct Adapter<E>(PhantomData<E>);

thread_local! {
    /// The plugin's declaration, built at the instance's first call and kept for the others
    /// the host makes in it (a tool call, then the contribution and view it asks ahead).
    static DECLARED: OnceCell<Box<dyn Exports>> = const { OnceCell::new() };
}

/// `call` on the instance's declaration.
fn declared<E: Export, R>(call: impl FnOnce(&dyn Exports) -> R) -> R {
    DECLARED.with(|declared| call(declared.get_or_init(E::plugin).as_ref()))
}

impl<E: Export> Guest for Adapter<E> {
    fn manifest() -> PluginManifest {
        declared::<E, _>(|plugin| plugin.manifest())
    }

    fn configure(config: String) -> Result<Configured, String> {
        declared::<E, _>(|plugin| plugin.configure(&config))
    }

    fn provide(ctx: CallContext) -> Contribution {
        declared::<E, _>(|plugin| plugin.provide(ctx))
    }

    fn call_tool(ctx: CallContext, call: ToolCall) -> Result<String, String> {
        declared::<E, _>(|plugin| plugin.call_tool(ctx, call))
    }

    fn session_start(ctx: CallContext) -> Option<String> {
        declared::<E, _>(|plugin| plugin.session_start(ctx))
    }

    fn user_prompt_submit(ctx: CallContext, prompt: String) -> PromptOutcome {
        declared::<E, _>(|plugin| plugin.user_prompt_submit(ctx, &prompt))
    }

    fn pre_tool_use(ctx: CallContext, call: ToolUse) -> PreToolOutcome {
        declared::<E, _>(|plugin| plugin.pre_tool_use(ctx, &call))
    }

    fn post_tool_use(ctx: CallContext, call: ToolUse, outcome: ToolResult) -> PostToolOutcome {
        declared::<E, _>(|plugin| plugin.post_tool_use(ctx, &call, &outcome))
    }

    fn stop(ctx: CallContext, reply: String) -> StopOutcome {
        declared::<E, _>(|plugin| plugin.stop(ctx, &reply))
    }

    fn command(ctx: CallContext, name: String, args: String) -> Result<String, String> {
        declared::<E, _>(|plugin| plugin.command(ctx, &name, &args))
    }

    fn status(ctx: CallContext) -> Option<String> {
        declared::<E, _>(|plugin| plugin.status(ctx))
    }
}

impl<E: Export> CompactorGuest for Adapter<E> {
    fn spec(config: String) -> CompactorSpec {
        declared::<E, _>(|plugin| plugin.spec(&config))
    }

    fn compact(
        ctx: CallContext,
        history: Vec<HistoryMessage>,
        budget: CompactionBudget,
    ) -> Result<Option<Compaction>, String> {
        declared::<E, _>(|plugin| plugin.compact(ctx, &history, &budget))
    }

    fn pre_compact(ctx: CallContext, budget: CompactionBudget) -> PreCompactOutcome {
        declared::<E, _>(|plugin| plugin.pre_compact(ctx, &budget))
    }

    fn post_compact(ctx: CallContext, done: Compacted) {
        declared::<E, _>(|plugin| plugin.post_compact(ctx, &done))
    }
}

impl<E: Export> ViewerGuest for Adapter<E> {
    fn shows(config: String) -> bool {
        declared::<E, _>(|plugin| plugin.shows(&config))
    }

    fn view(ctx: CallContext) -> Vec<Widget> {
        declared::<E, _>(|plugin| plugin.view(ctx))
    }
}

impl<E: Export> JudgeGuest for Adapter<E> {
    fn spec(config: String) -> JudgeSpec {
        declared::<E, _>(|plugin| plugin.judge_spec(&config))
    }

    fn turn_end(ctx: CallContext, reply: String) -> TurnVerdict {
        declared::<E, _>(|plugin| plugin.turn_end(ctx, &reply))
    }

    fn review(ctx: CallContext, call: ToolUse, asked: String) -> ReviewVerdict {
        declared::<E, _>(|plugin| plugin.review(ctx, &call, &asked))
    }

    fn queued(ctx: CallContext) -> Option<String> {
        declared::<E, _>(|plugin| plugin.queued(ctx))
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::NoConfig;

    thread_local! {
        static BUILT: Cell<usize> = const { Cell::new(0) };
    }

    struct Counting;

    impl Export for Counting {
        fn plugin() -> Box<dyn Exports> {
            BUILT.set(BUILT.get() + 1);
            Box::new(Plugin::<NoConfig>::new("counting", "1.0.0"))
        }
    }

    #[test]
    fn the_declaration_is_built_once_for_the_calls_of_one_instance() {
        let first = declared::<Counting, _>(|plugin| plugin.manifest().name);
        let again = declared::<Counting, _>(|plugin| plugin.manifest().name);
        assert_eq!((first.as_str(), again.as_str()), ("counting", "counting"));
        assert_eq!(BUILT.get(), 1);
    }
}
