/// <reference path="./agent-host-plugin-types.d.ts" />
declare module 'agent-host:plugin/tools@0.2.11' {
  /**
   * Declares, from `configure`, a tool this plugin offers under this configuration. The
   * host checks its schema at load (one that is not a usable JSON Schema object is a load
   * error naming the plugin and the tool) and offers the tool on every model call, before
   * whatever `provide` returns, whether or not the plugin implements `provide`; its calls
   * go to `call-tool`. A tool whose description or `mutates` depends on state is returned
   * by `provide` instead. Declaring one name twice is a load error; so is `provide`
   * returning a declared name, as for any tool offered twice (or, when `provide` returns it
   * only in some state, an error of that model call). A plugin may declare at most 256
   * tools, and 1 MiB of name, description and schema text in all; a declaration past
   * either traps `configure`. Ignored outside `configure`.
   */
  export function declare(tool: ToolSpec): void;
  export type ToolSpec = import('agent-host:plugin/types@0.2.11').ToolSpec;
}
