declare module 'agent-host:plugin/reuse@0.2.8' {
  /**
   * Declares that the contribution this `provide` call returns depends only on the
   * plugin's configuration and on the state values this call reads through `state`
   * (`get`, `read`) — not on `session-id`, `model-calls`, `turn-iteration`, the clock,
   * random numbers or files. The host then reuses it for the session's later model calls,
   * without calling `provide`, until one of the values read changes or the plugin is
   * reloaded; and for any other session whose state holds the same values (a new
   * session, say).
   * 
   * Ignored outside `provide`, and when the call writes state or emits events (a call
   * with effects runs every time).
   */
  export function untilStateChanges(): void;
}
