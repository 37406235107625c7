//! Bridges the generated `Guest` trait (free functions) to a [`Plugin`] value.

use std::marker::PhantomData;

use crate::bindings::agent_host::plugin::types::{
    CallContext, Contribution, PluginManifest as Manifest, PostToolOutcome, PreToolOutcome, PromptOutcome,
    StopOutcome, ToolCall, ToolResult, ToolUse,
};
use crate::bindings::exports::agent_host::plugin::guest::Guest;
use crate::{Context, Plugin};

/// The type `export_plugin!` exports; one fresh `P` per call.
pub struct Adapter<P>(PhantomData<P>);

impl<P: Plugin> Guest for Adapter<P> {
    fn manifest() -> Manifest {
        P::default().manifest()
    }

    fn configure(config: String) -> Result<String, String> {
        let value = serde_json::from_str(&config)
            .map_err(|error| format!("the host sent configuration that is not JSON: {error}"))?;
        let configured = P::default().configure(value)?;
        serde_json::to_string(&configured).map_err(|error| error.to_string())
    }

    fn provide(ctx: CallContext) -> Contribution {
        P::default().provide(&Context::new(ctx))
    }

    fn call_tool(ctx: CallContext, call: ToolCall) -> Result<String, String> {
        P::default().call_tool(&Context::new(ctx), call)
    }

    fn session_start(ctx: CallContext) -> Option<String> {
        P::default().session_start(&Context::new(ctx))
    }

    fn user_prompt_submit(ctx: CallContext, prompt: String) -> PromptOutcome {
        P::default().user_prompt_submit(&Context::new(ctx), &prompt)
    }

    fn pre_tool_use(ctx: CallContext, call: ToolUse) -> PreToolOutcome {
        P::default().pre_tool_use(&Context::new(ctx), &call)
    }

    fn post_tool_use(ctx: CallContext, call: ToolUse, outcome: ToolResult) -> PostToolOutcome {
        P::default().post_tool_use(&Context::new(ctx), &call, &outcome)
    }

    fn stop(ctx: CallContext, reply: String) -> StopOutcome {
        P::default().stop(&Context::new(ctx), &reply)
    }

    fn command(ctx: CallContext, name: String, args: String) -> Result<String, String> {
        P::default().command(&Context::new(ctx), &name, &args)
    }
}
