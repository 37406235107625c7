/**
 * What the contract's calls carry, as the SDK's own types: what every call is sent, what a
 * hook is shown of a tool call, what a plugin declares. Plain data, with no import of the
 * types jco generates, so a plugin and its unit tests see the same values in a component and
 * natively (`convert.ts` converts them at the component's edge). Counts are numbers.
 */

import type { Requirement } from "./outcomes.ts";

/** What the host sends with every call, before the SDK parses the configuration. */
export interface CallContext {
  sessionId: string;
  /** The configuration `configure` returned, as JSON. */
  config: string;
  modelCalls: number;
  turnIteration: number;
}

/** A call of a tool, as the model made it; `arguments` is JSON text. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** What a tool hook or a review is shown: the call, the plugin whose tool it is, and whether
 * that tool changes things. */
export interface ToolUse {
  call: ToolCall;
  plugin: string;
  mutates: boolean;
}

/** What a tool answered: its text, and whether it succeeded. */
export interface ToolResult {
  ok: boolean;
  output: string;
}

/** A tool as the model is offered it; `parameters` is its JSON Schema as JSON text. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: string;
  mutates: boolean;
}

/** An operator command, `/name`. */
export interface CommandSpec {
  name: string;
  description: string;
  usage: string;
}

/** The guest exports a plugin implements; the host never calls one left out. */
export interface Capabilities {
  provide: boolean;
  callTool: boolean;
  command: boolean;
  sessionStart: boolean;
  userPromptSubmit: boolean;
  preToolUse: boolean;
  postToolUse: boolean;
  stop: boolean;
  status: boolean;
}

/** Who the plugin is and which exports it implements. */
export interface Manifest {
  name: string;
  version: string;
  capabilities: Capabilities;
  commands: CommandSpec[];
}

/** What `configure` returns: the configuration every later call is sent (JSON, with its
 * defaults filled in) and what it requires of the host. */
export interface Configured {
  config: string;
  requires: Requirement[];
}

/** A message `provide` adds to one model call only. */
export interface InjectedMessage {
  role: "system" | "user";
  content: string;
}

/** What `provide` contributed: instructions for the system prompt, tools whose spec depends
 * on state, messages for this model call only. */
export interface Contributed {
  instructions?: string;
  tools: ToolSpec[];
  messages: InjectedMessage[];
}
