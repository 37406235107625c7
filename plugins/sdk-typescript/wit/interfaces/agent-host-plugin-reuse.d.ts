declare module 'agent-host:plugin/reuse@0.2.11' {
  /**
   * Declares that what this `provide` (or, since 0.2.9, `view`; since 0.2.11, `stop`) call
   * returns depends only on the plugin's configuration and on the state values this call
   * reads through `state` (`get`, `read`) — not on `session-id`, `model-calls`,
   * `turn-iteration`, the clock, random numbers or files, nor on `stop`'s `reply`. The
   * host then reuses it, without calling the plugin, until one of the values read changes
   * or the plugin is reloaded: a contribution for the session's later model calls, and
   * any of them for any other session whose state holds the same values (a new session,
   * say).
   * 
   * Ignored in every other export, and when the call writes state or emits events (a
   * call with effects runs every time).
   */
  export function untilStateChanges(): void;
}
