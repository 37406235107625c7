/**
 * A harness's stand-in for the host: one session's state bag, the other plugins' namespaces it
 * may read, and a record of what calls emitted, logged and declared. It answers the SDK's host
 * calls (`imports.ts`) as the host would, from memory.
 */

import { PluginError, messageOf } from "../errors.ts";
import type { Host } from "../imports.ts";
import type {
  ChatMessage,
  Completion,
  MeterReading,
  RunOutput,
  RunRequest,
  SessionReading,
} from "../readings.ts";
import type { ToolSpec } from "../types.ts";

/** An event a call emitted; `payload` as parsed JSON. */
export interface Emitted {
  kind: string;
  payload: unknown;
  display?: string;
}

/** What answers `model.complete`. */
export type ModelStandIn = (messages: ChatMessage[], maxOutputTokens: number | undefined) => Completion;
/** What answers `process.run`. */
export type ProcessStandIn = (request: RunRequest) => RunOutput;

/** What `meter.read` answers until a test sets it: outside a turn, with the host's default caps. */
const IDLE: MeterReading = { turnTokens: 0, turnModelCalls: 0, turnMs: 0, turnContinuations: 0, caps: { maxIterations: 10 } };

export class Session implements Host {
  own = new Map<string, string>();
  readonly foreign = new Map<string, string>();
  events: Emitted[] = [];
  readonly logs: { level: string; message: string }[] = [];
  reusable = false;
  readonly declared: ToolSpec[] = [];
  model?: ModelStandIn;
  asked: { messages: ChatMessage[]; maxOutputTokens?: number }[] = [];
  process?: ProcessStandIn;
  meter: MeterReading = IDLE;
  sessionMeter: SessionReading = { tokens: 0, modelCalls: 0 };

  /** The key of a namespace's key in `foreign`. */
  static foreignKey(namespace: string, key: string): string {
    return JSON.stringify([namespace, key]);
  }

  stateGet(key: string): string | undefined {
    return this.own.get(key);
  }

  stateSet(key: string, value: string): void {
    try {
      JSON.parse(value);
    } catch (error) {
      throw new PluginError(messageOf(error));
    }
    this.own.set(key, value);
  }

  stateRemove(key: string): void {
    this.own.delete(key);
  }

  stateRead(namespace: string, key: string): string | undefined {
    return this.foreign.get(Session.foreignKey(namespace, key));
  }

  emit(kind: string, payload: string, display: string | undefined): void {
    this.events.push({ kind, payload: JSON.parse(payload), ...(display === undefined ? {} : { display }) });
  }

  log(level: string, message: string): void {
    this.logs.push({ level, message });
  }

  untilStateChanges(): void {
    this.reusable = true;
  }

  declare(spec: ToolSpec): void {
    this.declared.push(spec);
  }

  meterRead(): MeterReading {
    return this.meter;
  }

  meterSession(): SessionReading {
    return this.sessionMeter;
  }

  complete(messages: ChatMessage[], maxOutputTokens: number | undefined): Completion {
    this.asked.push({ messages: [...messages], maxOutputTokens });
    if (!this.model) throw new PluginError("no model stand-in: call Harness.onModel first");
    return this.model(messages, maxOutputTokens);
  }

  run(request: RunRequest): RunOutput {
    if (!this.process) throw new PluginError("no process stand-in: call Harness.onProcess first");
    return this.process(request);
  }
}
