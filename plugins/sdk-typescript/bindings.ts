/**
 * The component's host: the contract's imports as jco types them, answering in the SDK's own
 * types (see `imports.ts`). `exportPlugin` installs it; the only module that imports the
 * contract's functions, which exist only in a component.
 */

import * as rawEvents from "agent-host:plugin/events@0.2.11";
import * as rawLog from "agent-host:plugin/log@0.2.11";
import * as rawMeter from "agent-host:plugin/meter@0.2.11";
import * as rawModel from "agent-host:plugin/model@0.2.11";
import * as rawProcess from "agent-host:plugin/process@0.2.11";
import * as rawReuse from "agent-host:plugin/reuse@0.2.11";
import * as rawState from "agent-host:plugin/state@0.2.11";
import * as rawTools from "agent-host:plugin/tools@0.2.11";

import { PluginError, messageOf } from "./errors.ts";
import type { Host } from "./imports.ts";

/** Runs a host call, turning its error into a PluginError with the host's message. */
function refusable<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw new PluginError(messageOf(error));
  }
}

// An absent option is `undefined` from componentize-js and `null` from QuickJS.
const optional = <T>(value: T | null | undefined): T | undefined => value ?? undefined;
const optionalNumber = (value: bigint | number | null | undefined): number | undefined =>
  value == null ? undefined : Number(value);

export const componentHost: Host = {
  stateGet: (key) => optional(rawState.get(key)),
  stateSet: (key, value) => refusable(() => rawState.set(key, value)),
  stateRemove: (key) => rawState.remove(key),
  stateRead: (namespace, key) => optional(refusable(() => rawState.read(namespace, key))),
  emit: (kind, payload, display) => rawEvents.emit(kind, payload, display),
  log: (level, message) => rawLog.write(level, message),
  untilStateChanges: () => rawReuse.untilStateChanges(),
  declare: (spec) => rawTools.declare({ ...spec }),
  meterRead: () => {
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
  meterSession: () => {
    const raw = rawMeter.session();
    return { tokens: Number(raw.tokens), modelCalls: Number(raw.modelCalls) };
  },
  complete: (messages, maxOutputTokens) => {
    const chat = messages.map(({ role, content }) => ({ role, content }));
    const done = refusable(() => rawModel.complete(chat, { maxOutputTokens }));
    return { text: done.text, inputTokens: Number(done.inputTokens), outputTokens: Number(done.outputTokens) };
  },
  run: ({ command, timeoutMs, maxOutputBytes }) => {
    const raw = refusable(() =>
      rawProcess.run({ command, timeoutMs: BigInt(timeoutMs), maxOutputBytes: BigInt(maxOutputBytes) }),
    );
    return {
      status: optionalNumber(raw.status),
      stdout: raw.stdout,
      stderr: raw.stderr,
      timedOut: raw.timedOut,
      truncated: raw.truncated,
      timeoutCutToMs: optionalNumber(raw.timeoutCutToMs),
    };
  },
};
