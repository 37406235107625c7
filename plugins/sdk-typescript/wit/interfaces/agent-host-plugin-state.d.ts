/// <reference path="./agent-host-plugin-types.d.ts" />
declare module 'agent-host:plugin/state@0.2.9' {
  /**
   * Reads a key of this plugin's namespace.
   */
  export function get(key: string): Json | undefined;
  /**
   * Writes a key of this plugin's namespace. Fails when the value is not JSON.
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
  export type Json = import('agent-host:plugin/types@0.2.9').Json;
}
