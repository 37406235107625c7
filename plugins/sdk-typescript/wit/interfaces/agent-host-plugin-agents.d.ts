declare module 'agent-host:plugin/agents@0.2.11' {
  /**
   * Starts a child of the calling session; its session id. Refused, saying why, past
   * `[agent] max_subagent_depth` or `max_parallel_subagents`, for a tool its parent is
   * not offered, or outside a session's call.
   */
  export function start(spec: AgentSpec): string;
  /**
   * From a tool call: the call's result becomes child `id`'s final answer once its turn
   * ends (or what ended it), in place of what the tool returns.
   */
  export function wait(id: string): void;
  /**
   * Child `id`'s status now.
   */
  export function status(id: string): AgentStatus;
  /**
   * Another turn of child `id`, with `message` as its prompt, run like a start.
   */
  export function send(id: string, message: string): void;
  /**
   * Cancels child `id`: one waiting to run never runs; a finished one stays as it is.
   */
  export function cancel(id: string): void;
  /**
   * The calling session's children, in the order they were started.
   */
  export function children(): Array<AgentStatus>;
  /**
   * What a child's history starts with.
   * # Variants
   * 
   * ## `"fresh"`
   * 
   * Its prompt alone.
   * ## `"fork"`
   * 
   * A copy of its parent's history, then its prompt.
   */
  export type Context = 'fresh' | 'fork';
  /**
   * What a child is started with. Every optional field narrows; none widens its parent.
   */
  export interface AgentSpec {
    /**
     * The child's agent name, as people see it (`explore`).
     */
    name: string,
    /**
     * Its first prompt.
     */
    prompt: string,
    /**
     * Its system prompt, in place of the deployment's instructions (what plugins add
     * still follows). None: the deployment's.
     */
    systemPrompt?: string,
    /**
     * The only tools it is offered; none: every tool its parent has. A name its parent
     * is not offered is an error.
     */
    tools?: Array<string>,
    /**
     * A model of the same endpoint, by name; none: its parent's.
     */
    model?: string,
    /**
     * The value its mode starts at (the option of a view's choice of category `mode`);
     * none: its parent's.
     */
    mode?: string,
    /**
     * The most model calls its turn may make; none: the deployment's `max_iterations`.
     */
    maxTurns?: number,
    context: Context,
  }
  /**
   * Where a child is.
   * # Variants
   * 
   * ## `"pending"`
   * 
   * Started, or sent a message, and waiting for its step's end to run.
   * ## `"running"`
   * 
   * Its turn is running.
   * ## `"done"`
   * 
   * Its last turn ended; `answer` is its final reply.
   * ## `"failed"`
   * 
   * Its last turn failed; `answer` says why.
   * ## `"cancelled"`
   * 
   * Cancelled before its turn ended.
   */
  export type AgentState = 'pending' | 'running' | 'done' | 'failed' | 'cancelled';
  /**
   * A child as its parent sees it.
   */
  export interface AgentStatus {
    /**
     * The child's session id.
     */
    id: string,
    /**
     * Its agent name.
     */
    name: string,
    state: AgentState,
    /**
     * Its last turn's final reply once done; the error once failed.
     */
    answer?: string,
  }
}
