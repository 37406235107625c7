declare module 'agent-host:plugin/types@0.2.11' {
  /**
   * A JSON document, as UTF-8 text.
   */
  export type Json = string;
  /**
   * Which exports a plugin really implements. The host never calls the others.
   */
  export interface Capabilities {
    /**
     * `provide` contributes instructions, tools or injected messages.
     */
    provide?: boolean,
    /**
     * `call-tool` runs the tools the plugin declares (`tools`) or `provide` offers.
     */
    callTool?: boolean,
    /**
     * `session-start` runs once when a session is created.
     */
    sessionStart?: boolean,
    /**
     * `user-prompt-submit` sees every user prompt before the model does.
     */
    userPromptSubmit?: boolean,
    /**
     * `pre-tool-use` decides on every tool call, of any plugin.
     */
    preToolUse?: boolean,
    /**
     * `post-tool-use` sees, and may rewrite, every tool result.
     */
    postToolUse?: boolean,
    /**
     * `stop` decides whether the agent may end its turn.
     */
    stop?: boolean,
    /**
     * `command` answers the operator's slash commands.
     */
    command?: boolean,
    /**
     * Since 0.2.0. `status` gives a short text for front ends to show.
     */
    status?: boolean,
  }
  /**
   * An operator command the plugin answers, such as `/todos` or `/mode`.
   */
  export interface CommandSpec {
    /**
     * The command's name without the slash, e.g. `mode`.
     */
    name: string,
    /**
     * One line for `/help`.
     */
    description: string,
    /**
     * How to call it, e.g. `/mode [NAME]`.
     */
    usage: string,
  }
  /**
   * Who a plugin is and what it implements; returned by `manifest`.
   */
  export interface PluginManifest {
    /**
     * A short stable name, e.g. `todo`. Also the plugin's state namespace.
     */
    name: string,
    /**
     * The plugin's own version, shown in errors and `/plugins`.
     */
    version: string,
    /**
     * The exports this plugin implements.
     */
    capabilities: Capabilities,
    /**
     * The operator commands it answers.
     */
    commands: Array<CommandSpec>,
  }
  /**
   * Since 0.2.0. Something a plugin needs from the host under its configuration. The
   * host checks each against the plugin's `[plugin.grants]` at load, and refuses to load
   * a plugin whose requirement is not granted, naming the grant to add: a feature that
   * needs it would otherwise do nothing, silently.
   */
  export type Requirement = RequirementReadsState | RequirementRunsProcesses | RequirementNetwork;
  /**
   * Reads this other plugin's state namespace (`state.read`); needs
   * `read_state = ["NAME"]`, and a loaded plugin of that name.
   */
  export interface RequirementReadsState {
    tag: 'reads-state',
    val: string,
  }
  /**
   * Runs processes (`process.run`); needs `process = true`.
   */
  export interface RequirementRunsProcesses {
    tag: 'runs-processes',
  }
  /**
   * Its processes need the network; needs `network = true`.
   */
  export interface RequirementNetwork {
    tag: 'network',
  }
  /**
   * Since 0.2.0. What `configure` returns.
   */
  export interface Configured {
    /**
     * The configuration every later call receives in `call-context.config`, with
     * defaults filled in.
     */
    config: Json,
    /**
     * What this configuration needs from the host.
     */
    requires: Array<Requirement>,
  }
  /**
   * What every call knows about where it runs.
   */
  export interface CallContext {
    /**
     * The session this call belongs to. For display and logging only: state calls
     * always go to this session, and a plugin cannot name another one.
     */
    sessionId: string,
    /**
     * The plugin's configuration as `configure` returned it.
     */
    config: Json,
    /**
     * How many model calls this session has made so far.
     */
    modelCalls: bigint,
    /**
     * How many model calls the current user turn has made so far.
     */
    turnIteration: number,
  }
  /**
   * A tool a plugin offers to the model.
   */
  export interface ToolSpec {
    /**
     * The name the model calls it by; unique across all loaded plugins.
     */
    name: string,
    /**
     * What the tool does and when to use it, for the model.
     */
    description: string,
    /**
     * A JSON Schema for the arguments object. The host validates every call
     * against it before the plugin sees the call.
     */
    parameters: Json,
    /**
     * True when the tool changes something outside the agent's own bookkeeping
     * (files, processes, the network). Plan modes and approvals rely on it, and so
     * does durability: the reply that calls a mutating tool is committed before the
     * tool runs; other tools' results are committed together with the reply.
     */
    mutates: boolean,
  }
  /**
   * Who speaks an injected message.
   * # Variants
   * 
   * ## `"system"`
   * 
   * Guidance from the host or a plugin.
   * ## `"user"`
   * 
   * As if the user had said it.
   */
  export type Role = 'system' | 'user';
  /**
   * A message added to one model call only; it is not stored in the history.
   */
  export interface InjectedMessage {
    role: Role,
    content: string,
  }
  /**
   * What a plugin adds before a model call.
   */
  export interface Contribution {
    /**
     * Text for the system prompt, placed after the base instructions in config order.
     */
    instructions?: string,
    /**
     * Tools to offer on this call only, beside those declared from `configure` through
     * the `tools` import (since 0.2.1): the ones whose description or `mutates` depends
     * on state.
     */
    tools: Array<ToolSpec>,
    /**
     * Messages appended to this call's messages, after the history.
     */
    messages: Array<InjectedMessage>,
  }
  /**
   * A tool call the model made.
   */
  export interface ToolCall {
    /**
     * The model's id for the call.
     */
    id: string,
    /**
     * The tool's name.
     */
    name: string,
    /**
     * The arguments object, already validated against the tool's schema.
     */
    arguments: Json,
  }
  /**
   * A tool call as hooks see it: the call plus what the host knows about the tool.
   */
  export interface ToolUse {
    call: ToolCall,
    /**
     * The plugin that offers the tool.
     */
    plugin: string,
    /**
     * The tool's `mutates` flag.
     */
    mutates: boolean,
  }
  /**
   * A permission decision.
   */
  export type Decision = DecisionAllow | DecisionAsk | DecisionDeny;
  /**
   * Run the call.
   */
  export interface DecisionAllow {
    tag: 'allow',
  }
  /**
   * Ask the operator first; the text says why.
   */
  export interface DecisionAsk {
    tag: 'ask',
    val: string,
  }
  /**
   * Refuse; the text goes back to the model as the tool's error.
   */
  export interface DecisionDeny {
    tag: 'deny',
    val: string,
  }
  /**
   * What a `pre-tool-use` hook says about one call.
   */
  export interface PreToolOutcome {
    /**
     * None means no opinion. Across hooks, deny wins over ask, ask over allow.
     */
    decision?: Decision,
    /**
     * Replacement arguments (a JSON object); validated again against the schema.
     */
    updatedArguments?: Json,
    /**
     * Text appended to the tool's result for the model.
     */
    context?: string,
  }
  /**
   * The outcome of a tool call.
   */
  export interface ToolResult {
    /**
     * False when the tool failed or was refused.
     */
    ok: boolean,
    /**
     * The text that goes back to the model.
     */
    output: string,
  }
  /**
   * What a `post-tool-use` hook says about one result.
   */
  export interface PostToolOutcome {
    /**
     * A replacement for the result (truncation, redaction).
     */
    replace?: ToolResult,
  }
  /**
   * What a `user-prompt-submit` hook says about one prompt.
   */
  export interface PromptOutcome {
    /**
     * Refuse the prompt; the text is shown to the operator.
     */
    block?: string,
    /**
     * Extra context stored with the prompt for the model.
     */
    context?: string,
  }
  /**
   * What a `stop` hook says when the model ends a step without tool calls.
   */
  export type StopOutcome = StopOutcomeStop | StopOutcomeContinue;
  /**
   * Let the turn end.
   */
  export interface StopOutcomeStop {
    tag: 'stop',
  }
  /**
   * Keep going: the text is given to the model as a user message.
   */
  export interface StopOutcomeContinue {
    tag: 'continue',
    val: string,
  }
}
