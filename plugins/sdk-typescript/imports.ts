/**
 * Where the SDK's host calls go: to the contract's imports in a component (`bindings.ts`,
 * installed by `exportPlugin`), to a harness's stand-ins in a unit test (`testing/`). Natively
 * nothing is installed until a harness is, so a host call outside both says what is missing.
 * Only `bindings.ts` imports the contract's modules, which exist only in a component: the
 * SDK's package.json says its modules have no side effects, so a native bundle that never
 * exports a component leaves them out.
 */

import type { ToolSpec } from "./types.ts";
import type {
  ChatMessage,
  Completion,
  MeterReading,
  RunOutput,
  RunRequest,
  SessionReading,
} from "./readings.ts";

/** What the host lends, in the SDK's own types; what can fail throws `PluginError`. */
export interface Host {
  stateGet(key: string): string | undefined;
  stateSet(key: string, value: string): void;
  stateRemove(key: string): void;
  stateRead(namespace: string, key: string): string | undefined;
  emit(kind: string, payload: string, display: string | undefined): void;
  log(level: "trace" | "debug" | "info" | "warn" | "error", message: string): void;
  untilStateChanges(): void;
  declare(spec: ToolSpec): void;
  meterRead(): MeterReading;
  meterSession(): SessionReading;
  complete(messages: ChatMessage[], maxOutputTokens: number | undefined): Completion;
  run(request: RunRequest): RunOutput;
}

let installed: Host | undefined;

/** Sends every later host call to `next`; returns the host it replaces. */
export function install(next: Host | undefined): Host | undefined {
  const previous = installed;
  installed = next;
  return previous;
}

/** The installed host. */
export function host(): Host {
  if (!installed) {
    throw new Error(
      "no host to call: a plugin calls the host from inside a component, or in a unit test through " +
        "the Harness of agent-host-sdk/testing",
    );
  }
  return installed;
}
