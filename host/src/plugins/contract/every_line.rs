//! What every contract line's module expands the same way: the conversions of the records
//! that did not change between lines, the calls of the exports whose signatures did not,
//! and the host imports they share.

/// The conversions and calls that are the same in every line: the records they use did not
/// change between lines. Expanded inside each line's module, against its own `types`.
macro_rules! unchanged_in_every_line {
    () => {
        use crate::plugins::types as host;

        impl From<types::CommandSpec> for host::CommandSpec {
            fn from(spec: types::CommandSpec) -> Self {
                Self { name: spec.name, description: spec.description, usage: spec.usage }
            }
        }

        impl From<types::ToolSpec> for host::ToolSpec {
            fn from(spec: types::ToolSpec) -> Self {
                Self {
                    name: spec.name,
                    description: spec.description,
                    parameters: spec.parameters,
                    mutates: spec.mutates,
                }
            }
        }

        impl From<types::InjectedMessage> for host::InjectedMessage {
            fn from(message: types::InjectedMessage) -> Self {
                let role = match message.role {
                    types::Role::System => host::InjectedRole::System,
                    types::Role::User => host::InjectedRole::User,
                };
                Self { role, content: message.content }
            }
        }

        impl From<types::Contribution> for host::Contribution {
            fn from(contribution: types::Contribution) -> Self {
                Self {
                    instructions: contribution.instructions,
                    tools: contribution.tools.into_iter().map(Into::into).collect(),
                    messages: contribution.messages.into_iter().map(Into::into).collect(),
                }
            }
        }

        impl From<types::ToolResult> for crate::tools::ToolResult {
            fn from(result: types::ToolResult) -> Self {
                Self { ok: result.ok, output: result.output }
            }
        }

        impl From<types::PreToolOutcome> for host::PreToolOutcome {
            fn from(outcome: types::PreToolOutcome) -> Self {
                let decision = outcome.decision.map(|decision| match decision {
                    types::Decision::Allow => host::Decision::Allow,
                    types::Decision::Ask(reason) => host::Decision::Ask(reason),
                    types::Decision::Deny(reason) => host::Decision::Deny(reason),
                });
                Self { decision, updated_arguments: outcome.updated_arguments, context: outcome.context }
            }
        }

        impl From<types::PostToolOutcome> for host::PostToolOutcome {
            fn from(outcome: types::PostToolOutcome) -> Self {
                Self { replace: outcome.replace.map(Into::into) }
            }
        }

        impl From<types::PromptOutcome> for host::PromptOutcome {
            fn from(outcome: types::PromptOutcome) -> Self {
                Self { block: outcome.block, context: outcome.context }
            }
        }

        impl From<types::StopOutcome> for host::StopOutcome {
            fn from(outcome: types::StopOutcome) -> Self {
                match outcome {
                    types::StopOutcome::Stop => Self::Stop,
                    types::StopOutcome::Continue(message) => Self::Continue(message),
                }
            }
        }

        fn call_context(ctx: &host::CallContext, config: &str) -> types::CallContext {
            types::CallContext {
                session_id: ctx.session_id.clone(),
                config: config.to_owned(),
                model_calls: ctx.model_calls,
                turn_iteration: ctx.turn_iteration,
            }
        }

        fn tool_call(call: &crate::tools::ToolCall) -> types::ToolCall {
            types::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            }
        }

        fn tool_use(tool_use: &host::ToolUse) -> types::ToolUse {
            types::ToolUse {
                call: tool_call(&tool_use.call),
                plugin: tool_use.plugin.clone(),
                mutates: tool_use.mutates,
            }
        }

        fn tool_result(result: &crate::tools::ToolResult) -> types::ToolResult {
            types::ToolResult { ok: result.ok, output: result.output.clone() }
        }

        pub(super) async fn provide(
            store: &mut Store<CallState>,
            func: Func,
            ctx: &host::CallContext,
            config: &str,
        ) -> wasmtime::Result<host::Contribution> {
            let ctx = call_context(ctx, config);
            super::call::<_, types::Contribution>(store, func, (&ctx,)).await.map(Into::into)
        }

        pub(super) async fn call_tool(
            store: &mut Store<CallState>,
            func: Func,
            ctx: &host::CallContext,
            config: &str,
            call: &crate::tools::ToolCall,
        ) -> wasmtime::Result<Result<String, String>> {
            let (ctx, call) = (call_context(ctx, config), tool_call(call));
            super::call(store, func, (&ctx, &call)).await
        }

        pub(super) async fn session_start(
            store: &mut Store<CallState>,
            func: Func,
            ctx: &host::CallContext,
            config: &str,
        ) -> wasmtime::Result<Option<String>> {
            let ctx = call_context(ctx, config);
            super::call(store, func, (&ctx,)).await
        }

        pub(super) async fn user_prompt_submit(
            store: &mut Store<CallState>,
            func: Func,
            ctx: &host::CallContext,
            config: &str,
            prompt: &str,
        ) -> wasmtime::Result<host::PromptOutcome> {
            let ctx = call_context(ctx, config);
            super::call::<_, types::PromptOutcome>(store, func, (&ctx, prompt)).await.map(Into::into)
        }

        pub(super) async fn pre_tool_use(
            store: &mut Store<CallState>,
            func: Func,
            ctx: &host::CallContext,
            config: &str,
            used: &host::ToolUse,
        ) -> wasmtime::Result<host::PreToolOutcome> {
            let (ctx, used) = (call_context(ctx, config), tool_use(used));
            super::call::<_, types::PreToolOutcome>(store, func, (&ctx, &used)).await.map(Into::into)
        }

        pub(super) async fn post_tool_use(
            store: &mut Store<CallState>,
            func: Func,
            ctx: &host::CallContext,
            config: &str,
            used: &host::ToolUse,
            result: &crate::tools::ToolResult,
        ) -> wasmtime::Result<host::PostToolOutcome> {
            let (ctx, used, result) = (call_context(ctx, config), tool_use(used), tool_result(result));
            super::call::<_, types::PostToolOutcome>(store, func, (&ctx, &used, &result))
                .await
                .map(Into::into)
        }

        pub(super) async fn stop(
            store: &mut Store<CallState>,
            func: Func,
            ctx: &host::CallContext,
            config: &str,
            reply: &str,
        ) -> wasmtime::Result<host::StopOutcome> {
            let ctx = call_context(ctx, config);
            super::call::<_, types::StopOutcome>(store, func, (&ctx, reply)).await.map(Into::into)
        }

        pub(super) async fn command(
            store: &mut Store<CallState>,
            func: Func,
            ctx: &host::CallContext,
            config: &str,
            name: &str,
            args: &str,
        ) -> wasmtime::Result<Result<String, String>> {
            let ctx = call_context(ctx, config);
            super::call(store, func, (&ctx, name, args)).await
        }

        impl types::Host for CallState {}

        impl agent_host::plugin::state::Host for CallState {
            fn get(&mut self, key: String) -> Option<String> {
                self.state_get(key)
            }

            fn set(&mut self, key: String, value: String) -> wasmtime::Result<Result<(), String>> {
                self.state_set(key, value)
            }

            fn remove(&mut self, key: String) {
                self.state_remove(key)
            }

            fn read(&mut self, namespace: String, key: String) -> Result<Option<String>, String> {
                self.state_read(namespace, key)
            }
        }

        impl agent_host::plugin::log::Host for CallState {
            fn write(
                &mut self,
                level: agent_host::plugin::log::Level,
                message: String,
            ) -> wasmtime::Result<()> {
                use self::agent_host::plugin::log::Level;
                use crate::runtime::host_api::Level as HostLevel;
                let level = match level {
                    Level::Trace => HostLevel::Trace,
                    Level::Debug => HostLevel::Debug,
                    Level::Info => HostLevel::Info,
                    Level::Warn => HostLevel::Warn,
                    Level::Error => HostLevel::Error,
                };
                self.log(level, message)
            }
        }

        impl agent_host::plugin::reuse::Host for CallState {
            fn until_state_changes(&mut self) {
                self.declare_reusable();
            }
        }

        impl agent_host::plugin::hook_filter::Host for CallState {
            fn only(
                &mut self,
                hook: agent_host::plugin::hook_filter::ToolHook,
                filter: agent_host::plugin::hook_filter::ToolFilter,
            ) {
                let filter = crate::runtime::ToolFilter {
                    mutating_only: filter.mutating_only,
                    tools: filter.tools,
                    except_tools: filter.except_tools,
                    output_longer_than: filter.output_longer_than,
                };
                self.declare_hook_filter(crate::runtime::HookDeclaration::Only(tool_hook(hook), filter));
            }

            fn never(&mut self, hook: agent_host::plugin::hook_filter::ToolHook) {
                self.declare_hook_filter(crate::runtime::HookDeclaration::Never(tool_hook(hook)));
            }
        }

        fn tool_hook(hook: agent_host::plugin::hook_filter::ToolHook) -> crate::runtime::ToolHook {
            match hook {
                agent_host::plugin::hook_filter::ToolHook::PreToolUse => crate::runtime::ToolHook::PreToolUse,
                agent_host::plugin::hook_filter::ToolHook::PostToolUse => {
                    crate::runtime::ToolHook::PostToolUse
                }
            }
        }

        /// Adds this line's imports to the linker.
        pub(super) fn link(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
            Plugin::add_to_linker::<_, wasmtime::component::HasSelf<_>>(linker, |state| state)
        }
    };
}
