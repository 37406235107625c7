/**
 * The TypeScript guest SDK for agent-host plugins. A plugin module default-exports a
 * `Plugin` declared with the builders here; the host's build exports it for the contract's
 * `judging-plugin` world. Everything a plugin is handed or returns is one of the SDK's own
 * types, so its unit tests run natively through the `Harness` of `agent-host-sdk/testing`.
 * See docs/plugin-authoring.md for a plugin from an empty folder.
 */

export { Contribution } from "./contribution.ts";
export { PluginError } from "./errors.ts";
export { exportPlugin } from "./export.ts";
export { events, log, meter, model, process, reusable, state } from "./host.ts";
export { type JudgeSpec, ReviewVerdict, type StopReason, TurnVerdict } from "./judge.ts";
export {
  type Decision,
  NETWORK,
  type PreToolOutcome,
  type PromptOutcome,
  RUNS_PROCESSES,
  type Requirement,
  addContext,
  allow,
  ask,
  block,
  deny,
  readsState,
} from "./outcomes.ts";
export { type Context, type Mutates, Plugin, noArgs } from "./plugin.ts";
export type {
  Caps,
  ChatMessage,
  Completion,
  MeterReading,
  RunOutput,
  RunRequest,
  SessionReading,
} from "./readings.ts";
export { ArgumentError, type Infer, type Schema, t } from "./schema.ts";
export type {
  CallContext,
  Capabilities,
  CommandSpec,
  Contributed,
  InjectedMessage,
  Manifest,
  ToolCall,
  ToolResult,
  ToolSpec,
  ToolUse,
} from "./types.ts";
export {
  type ChecklistEntry,
  type ChecklistWidget,
  Checklist,
  Choice,
  type ChoiceOption,
  type ChoiceWidget,
  type EntryState,
  type Shown,
  Text,
  type TextWidget,
  type Widget,
} from "./view.ts";
