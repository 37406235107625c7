/// <reference path="./agent-host-plugin-types.d.ts" />
declare module 'agent-host:plugin/state@0.2.11' {
  /**
   * Reads a key of this plugin's namespace.
   */
  export function get(key: string): Json | undefined;
  /**
   * Writes a key of this plugin's namespace. Fails when the value is not JSON.
   * 
   * Called from `configure` (since 0.2.10), it seeds the key instead: every session
   * created while this configuration is loaded starts with the value (written into the
   * session's state when it is made, like any write); a session made before keeps what it
   * holds, and `get` in `configure` reads nothing. A plugin that must hold the same value
   * in every session (a default other plugins read) seeds it, so that its calls need not
   * write it, and a `provide` that would otherwise write it stays reusable.
   */
  export function set(key: string, value: Json): void;
  /**
   * Removes a key of this plugin's namespace.
   */
  export function remove(key: string): void;
  /**
   * Reads a key of another plugin's namespace. Fails unless the operator granted
   * this plugin read access to that namespace (`grants.read_state` in config.toml).
   */
  export function read(namespace: string, key: string): Json | undefined;
  export type Json = import('agent-host:plugin/types@0.2.11').Json;
}
