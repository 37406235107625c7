/**
 * What the host lends a plugin during a call, typed: the session's state bag, events, the
 * log, and (where granted) the deployment's model and a sandboxed process. A host refusal
 * throws a `PluginError` with the host's message, so a tool that lets it propagate answers
 * the model with that message.
 */

import { PluginError, messageOf } from "./errors.ts";
import { host } from "./imports.ts";
import type { ChatMessage, Completion, MeterReading, RunOutput, SessionReading } from "./readings.ts";

function decode<T>(key: string, raw: string): T {
  try {
    return JSON.parse(raw) as T;
  } catch (error) {
    throw new PluginError(`stored \`${key}\` is not JSON: ${messageOf(error)}`);
  }
}

/** The session's state bag: keys of this plugin's namespace, as JSON values. Writes take
 * effect when the call succeeds; a call that fails leaves the bag untouched. */
export const state = {
  get<T>(key: string): T | undefined {
    const raw = host().stateGet(key);
    return raw === undefined ? undefined : decode<T>(key, raw);
  },
  set(key: string, value: unknown): void {
    host().stateSet(key, JSON.stringify(value));
  },
  remove(key: string): void {
    host().stateRemove(key);
  },
  /** A key of another plugin's namespace; needs `read_state = ["NAMESPACE"]` among the
   * plugin's grants in config.toml. */
  read<T>(namespace: string, key: string): T | undefined {
    const raw = host().stateRead(namespace, key);
    return raw === undefined ? undefined : decode<T>(key, raw);
  },
};

export const events = {
  /** Tells front ends something happened; `display` is how a person reads it. */
  emit(kind: string, payload: unknown, display?: string): void {
    host().emit(kind, JSON.stringify(payload), display);
  },
};

/** Lines in the host's log, under the plugin's name. */
export const log = {
  trace: (message: string) => host().log("trace", message),
  debug: (message: string) => host().log("debug", message),
  info: (message: string) => host().log("info", message),
  warn: (message: string) => host().log("warn", message),
  error: (message: string) => host().log("error", message),
};

/** Tells the host what this `provide` (or, since contract 0.2.9, `view`; since 0.2.11, `stop`)
 * call returns depends only on the configuration and the state it read, so it may be reused
 * without a call, in any session, until that state changes. */
export function reusable(): void {
  host().untilStateChanges();
}

export const meter = {
  /** What the running turn has spent and the deployment's caps on it (contract 0.2.6). */
  read(): MeterReading {
    return host().meterRead();
  },
  /** What the whole session has spent, the running turn included (contract 0.2.7). */
  session(): SessionReading {
    return host().meterSession();
  },
};

export const model = {
  /** Asks the deployment's model; needs `model = true` among the plugin's grants. */
  complete(messages: ChatMessage[], maxOutputTokens?: number): Completion {
    return host().complete(messages, maxOutputTokens);
  },
};

export const process = {
  /** Runs `command` in the host's sandbox; needs the `process` grant. */
  run(command: string, timeoutMs = 30_000, maxOutputBytes = 65_536): RunOutput {
    return host().run({ command, timeoutMs, maxOutputBytes });
  },
};
