declare module 'agent-host:plugin/hook-filter@0.2.11' {
  /**
   * Declares, from `configure`, that under this configuration the host need call `hook`
   * only for the tool calls `filter` lets through. For every other call the host acts
   * as if the hook had answered "no opinion" (`pre-tool-use`) or "no replacement"
   * (`post-tool-use`). A hook with no declaration sees every call; a later declaration
   * for the same hook replaces an earlier one. Ignored outside `configure`.
   */
  export function only(hook: ToolHook, filter: ToolFilter): void;
  /**
   * Declares, from `configure`, that under this configuration `hook` has nothing to do:
   * the host never calls it. Ignored outside `configure`.
   */
  export function never(hook: ToolHook): void;
  /**
   * The tool hooks a filter applies to.
   * # Variants
   * 
   * ## `"pre-tool-use"`
   * 
   * ## `"post-tool-use"`
   */
  export type ToolHook = 'pre-tool-use' | 'post-tool-use';
  /**
   * Which tool calls a hook sees: a call must pass every part.
   */
  export interface ToolFilter {
    /**
     * Only calls of tools that change things (`tool-spec.mutates`).
     */
    mutatingOnly: boolean,
    /**
     * Only calls of these tools; empty means any tool. A name may hold `*` (any run
     * of characters) and `?` (one character): `todos_*`.
     */
    tools: Array<string>,
    /**
     * Never calls of these tools, even when `tools` names them; patterns as in `tools`.
     */
    exceptTools: Array<string>,
    /**
     * For `post-tool-use` only: only results whose output is longer than this many
     * bytes (UTF-8). Ignored for `pre-tool-use`.
     */
    outputLongerThan?: number,
  }
}
