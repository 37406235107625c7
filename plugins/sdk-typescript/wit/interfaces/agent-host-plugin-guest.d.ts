/// <reference path="./agent-host-plugin-types.d.ts" />
declare module 'agent-host:plugin/guest@0.2.11' {
  /**
   * Who the plugin is and which exports it implements. Called once per load.
   */
  export function manifest(): PluginManifest;
  /**
   * Validates the plugin's `[plugin.config]` table (as JSON) once at load and returns
   * the configuration every later call receives in `call-context.config`, with
   * defaults filled in, and what it requires of the host. An error is a load error
   * shown to the operator.
   */
  export function configure(config: Json): Configured;
  /**
   * Before each model call: instructions, tools and injected messages.
   */
  export function provide(ctx: CallContext): Contribution;
  /**
   * Runs one of this plugin's tools. Ok text or error text goes back to the model.
   */
  export function callTool(ctx: CallContext, call: ToolCall): string;
  /**
   * Once, when a new session starts. Returns context for the model, if any.
   */
  export function sessionStart(ctx: CallContext): string | undefined;
  /**
   * Before a user prompt reaches the model.
   */
  export function userPromptSubmit(ctx: CallContext, prompt: string): PromptOutcome;
  /**
   * Before any tool call of any plugin runs.
   */
  export function preToolUse(ctx: CallContext, call: ToolUse): PreToolOutcome;
  /**
   * After any tool call of any plugin has run (or was refused).
   */
  export function postToolUse(ctx: CallContext, call: ToolUse, outcome: ToolResult): PostToolOutcome;
  /**
   * When the model ends a step without tool calls; `reply` is its final text. Since
   * 0.2.11 a `stop` that decides from configuration and state alone says so
   * (`reuse.until-state-changes`), and is not called again while that state holds.
   */
  export function stop(ctx: CallContext, reply: string): StopOutcome;
  /**
   * Answers an operator command such as `/mode execute`, without a model call.
   */
  export function command(ctx: CallContext, name: string, args: string): string;
  /**
   * Since 0.2.0. A short, one-line status for front ends to show beside the prompt (the
   * current mode, say), or none. Called when a front end draws its prompt, not before
   * model calls; it may read state but its writes and events are discarded.
   */
  export function status(ctx: CallContext): string | undefined;
  export type Json = import('agent-host:plugin/types@0.2.11').Json;
  export type PluginManifest = import('agent-host:plugin/types@0.2.11').PluginManifest;
  export type Configured = import('agent-host:plugin/types@0.2.11').Configured;
  export type CallContext = import('agent-host:plugin/types@0.2.11').CallContext;
  export type Contribution = import('agent-host:plugin/types@0.2.11').Contribution;
  export type ToolCall = import('agent-host:plugin/types@0.2.11').ToolCall;
  export type ToolUse = import('agent-host:plugin/types@0.2.11').ToolUse;
  export type PreToolOutcome = import('agent-host:plugin/types@0.2.11').PreToolOutcome;
  export type ToolResult = import('agent-host:plugin/types@0.2.11').ToolResult;
  export type PostToolOutcome = import('agent-host:plugin/types@0.2.11').PostToolOutcome;
  export type PromptOutcome = import('agent-host:plugin/types@0.2.11').PromptOutcome;
  export type StopOutcome = import('agent-host:plugin/types@0.2.11').StopOutcome;
}
