/**
 * What the host lends a plugin during a call, typed: the session's state bag, events, the
 * log, and (where granted) the deployment's model and a sandboxed process. A host refusal
 * throws a `PluginError` with the host's message, so a tool that lets it propagate answers
 * the model with that message.
 */

import * as rawEvents from "agent-host:plugin/events@0.2.7";
import * as rawLog from "agent-host:plugin/log@0.2.7";
import * as rawMeter from "agent-host:plugin/meter@0.2.7";
import * as rawModel from "agent-host:plugin/model@0.2.7";
import * as rawProcess from "agent-host:plugin/process@0.2.7";
import * as rawReuse from "agent-host:plugin/reuse@0.2.7";
import * as rawState from "agent-host:plugin/state@0.2.7";

/** An error whose message goes back as it is: to the model from a tool, to the operator
 * from a command or a configuration. */
export class PluginError extends Error {}

/** The text of anything thrown: a host error's payload, an Error's message, or the value. */
export function messageOf(error: unknown): string {
  if (error instanceof PluginError) return error.message;
  if (typeof error === "object" && error !== null && "payload" in error) {
    return String((error as { payload: unknown }).payload);
  }
  if (error instanceof Error) return error.message ? `${error.name}: ${error.message}` : error.name;
  return String(error);
}

/** Runs a host call, turning its error into a PluginError with the host's message. */
function host<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw new PluginError(messageOf(error));
  }
}

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
    const raw = rawState.get(key);
    // An absent option is `undefined` from componentize-js and `null` from QuickJS.
    return raw == null ? undefined : decode<T>(key, raw);
  },
  set(key: string, value: unknown): void {
    host(() => rawState.set(key, JSON.stringify(value)));
  },
  remove(key: string): void {
    rawState.remove(key);
  },
  /** A key of another plugin's namespace; needs `read_state = ["NAMESPACE"]` among the
   * plugin's grants in config.toml. */
  read<T>(namespace: string, key: string): T | undefined {
    const raw = host(() => rawState.read(namespace, key));
    return raw == null ? undefined : decode<T>(key, raw);
  },
};

export const events = {
  /** Tells front ends something happened; `display` is how a person reads it. */
  emit(kind: string, payload: unknown, display?: string): void {
    rawEvents.emit(kind, JSON.stringify(payload), display);
  },
};

/** Lines in the host's log, under the plugin's name. */
export const log = {
  trace: (message: string) => rawLog.write("trace", message),
  debug: (message: string) => rawLog.write("debug", message),
  info: (message: string) => rawLog.write("info", message),
  warn: (message: string) => rawLog.write("warn", message),
  error: (message: string) => rawLog.write("error", message),
};

/** Tells the host this call's contribution depends only on the configuration and the state
 * it read, so it may be reused until that state changes. */
export function reusable(): void {
  rawReuse.untilStateChanges();
}

/** What the running turn has spent and the deployment's caps on it (contract 0.2.6); outside
 * a turn every count is zero. Counts are numbers here (the contract's u64 fit them). */
export interface MeterReading {
  turnTokens: number;
  turnModelCalls: number;
  turnMs: number;
  turnContinuations: number;
  caps: { maxIterations: number; maxTurnTokens?: number; maxTurnSecs?: number; maxContinuations?: number };
}

const optionalNumber = (value: bigint | number | null | undefined): number | undefined =>
  value == null ? undefined : Number(value);

/** What the whole session has spent, the running turn included (contract 0.2.7). */
export interface SessionReading {
  tokens: number;
  modelCalls: number;
}

export const meter = {
  session(): SessionReading {
    const raw = rawMeter.session();
    return { tokens: Number(raw.tokens), modelCalls: Number(raw.modelCalls) };
  },
  read(): MeterReading {
    const raw = rawMeter.read();
    return {
      turnTokens: Number(raw.turnTokens),
      turnModelCalls: raw.turnModelCalls,
      turnMs: Number(raw.turnMs),
      turnContinuations: raw.turnContinuations,
      caps: {
        maxIterations: raw.caps.maxIterations,
        maxTurnTokens: optionalNumber(raw.caps.maxTurnTokens),
        maxTurnSecs: optionalNumber(raw.caps.maxTurnSecs),
        maxContinuations: optionalNumber(raw.caps.maxContinuations),
      },
    };
  },
};

export interface Completion {
  text: string;
  inputTokens: number;
  outputTokens: number;
}

export const model = {
  /** Asks the deployment's model; needs `model = true` among the plugin's grants. */
  complete(messages: rawModel.ChatMessage[], maxOutputTokens?: number): Completion {
    const done = host(() => rawModel.complete(messages, { maxOutputTokens }));
    return { text: done.text, inputTokens: Number(done.inputTokens), outputTokens: Number(done.outputTokens) };
  },
};

export const process = {
  /** Runs `command` in the host's sandbox; needs the `process` grant. */
  run(command: string, timeoutMs = 30_000, maxOutputBytes = 65_536): rawProcess.RunOutput {
    return host(() =>
      rawProcess.run({ command, timeoutMs: BigInt(timeoutMs), maxOutputBytes: BigInt(maxOutputBytes) }),
    );
  },
};
