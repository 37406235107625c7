declare module 'agent-host:plugin/edits@0.2.11' {
  /**
   * Tells front ends that the running call changed a file. Shown once the call returns,
   * whether it returned a result or an error: the change is on disk either way. An edit
   * past the host's cap on one call's edits is shown without its texts (the change
   * stands); a call that does not run a tool shows none.
   */
  export function report(edit: FileEdit): void;
  /**
   * One file a tool call changed.
   */
  export interface FileEdit {
    /**
     * The file as the tool names it to the model (relative to its workspace, say).
     */
    path: string,
    /**
     * Its text before the call; `none` when the call created it.
     */
    before?: string,
    /**
     * Its text after the call; `none` when the call deleted it.
     */
    after?: string,
  }
}
