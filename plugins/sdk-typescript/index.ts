/**
 * The TypeScript guest SDK for agent-host plugins. A plugin module default-exports a
 * `Plugin` declared with the builders here; the host's build exports it for the contract's
 * `judging-plugin` world. See docs/plugin-authoring.md for a plugin from an empty folder.
 */

export { exportPlugin } from "./export.ts";
export {
  type Completion,
  type MeterReading,
  type SessionReading,
  PluginError,
  events,
  log,
  meter,
  model,
  process,
  reusable,
  state,
} from "./host.ts";
export {
  type Context,
  Contribution,
  type Mutates,
  NETWORK,
  Plugin,
  RUNS_PROCESSES,
  ReviewVerdict,
  type StopReason,
  TurnVerdict,
  addContext,
  allow,
  ask,
  block,
  deny,
  noArgs,
  readsState,
} from "./plugin.ts";
export { ArgumentError, type Infer, type Schema, t } from "./schema.ts";
export { Checklist, Choice, type EntryState, type Shown, Text, type Widget } from "./view.ts";
