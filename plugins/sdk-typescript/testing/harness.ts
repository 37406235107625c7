/**
 * A plugin configured as the host would configure it, with calls made as the host makes
 * them, natively, in a session of its own (`Session`): the TypeScript counterpart of the Rust
 * SDK's `testing::Harness`.
 *
 * State goes in (`store`, `storeForeign`), a call is made, and what it wrote and emitted comes
 * out (`stored`, `takeEvents`), with the host's rules for what a call keeps:
 *
 * - a tool or a command that returns an error (throws) changes no state; its events stand, as
 *   the host hands them on;
 * - `status` and `view` change nothing: their state writes and events are dropped;
 * - a call that traps (a hook that throws where the contract has no error to carry it) keeps
 *   nothing, and the harness throws `Trapped`.
 */

import { PluginError } from "../errors.ts";
import { install } from "../imports.ts";
import { Answers, Failed, Trapped } from "../guest.ts";
import type { JudgeSpec, ReviewVerdict, TurnVerdict } from "../judge.ts";
import type { PreToolOutcome, PromptOutcome, Requirement } from "../outcomes.ts";
import type { Plugin } from "../plugin.ts";
import type { ChatMessage, MeterReading, SessionReading } from "../readings.ts";
import type { CallContext, Contributed, Manifest, ToolResult, ToolSpec, ToolUse } from "../types.ts";
import type { Widget } from "../view.ts";
import { type Emitted, type ModelStandIn, type ProcessStandIn, Session } from "./session.ts";

const CALL_ID = "call-1";

type Snapshot = { own: Map<string, string>; events: number };

export class Harness<C> {
  readonly session = new Session();
  /** The session's model-call count the next call sees. */
  modelCalls = 0;
  /** The turn's model-call count the next call sees: 0, as for an operator's command or a
   * direct call, or the round trip's number, as for the calls of a model's reply. */
  turnIteration = 0;
  /** What `configure` said this configuration needs. */
  readonly requires: Requirement[];
  /** The tools `configure` declared. */
  readonly declared: ToolSpec[];
  private readonly answers: Answers<C>;
  private readonly configured: string;

  /** Configures `plugin` with `config` (the `[plugin.config]` table), throwing `PluginError`
   * with the load error the host would show. */
  constructor(plugin: Plugin<C>, config: Record<string, unknown> = {}) {
    this.answers = new Answers(plugin);
    const configured = this.result(() => this.answers.configure(JSON.stringify(config)));
    this.configured = configured.config;
    this.requires = configured.requires;
    this.declared = [...this.session.declared];
  }

  /** The configuration every call sees, as JSON values. */
  get config(): unknown {
    return JSON.parse(this.configured);
  }

  // State in, and what calls wrote, emitted and logged out.

  /** Stores `value` under `key` in the plugin's namespace, as an earlier call would have. */
  store(key: string, value: unknown): void {
    this.session.own.set(key, JSON.stringify(value));
  }

  /** Stores `value` under `key` in another plugin's namespace, for `state.read`. */
  storeForeign(namespace: string, key: string, value: unknown): void {
    this.session.foreign.set(Session.foreignKey(namespace, key), JSON.stringify(value));
  }

  /** The value under `key` in the plugin's namespace. */
  stored<T>(key: string): T | undefined {
    const raw = this.session.own.get(key);
    return raw === undefined ? undefined : (JSON.parse(raw) as T);
  }

  /** The events emitted since the last take. */
  takeEvents(): Emitted[] {
    const events = this.session.events;
    this.session.events = [];
    return events;
  }

  /** The log lines written so far. */
  get logs(): { level: string; message: string }[] {
    return [...this.session.logs];
  }

  /** Whether a call since the last look declared its contribution reusable. */
  takeReusable(): boolean {
    const reusable = this.session.reusable;
    this.session.reusable = false;
    return reusable;
  }

  /** Answers `model.complete` with `answer` from now on (without it, calls fail). */
  onModel(answer: ModelStandIn): void {
    this.session.model = answer;
  }

  /** What `model.complete` was asked since the last take. */
  takeModelRequests(): { messages: ChatMessage[]; maxOutputTokens?: number }[] {
    const asked = this.session.asked;
    this.session.asked = [];
    return asked;
  }

  /** Answers `process.run` with `run` from now on (without it, runs fail). */
  onProcess(run: ProcessStandIn): void {
    this.session.process = run;
  }

  /** What `meter.read` answers; unset, a reading outside a turn with default caps. */
  setMeter(reading: MeterReading): void {
    this.session.meter = reading;
  }

  /** What `meter.session` answers; unset, every count is zero. */
  setSessionMeter(reading: SessionReading): void {
    this.session.sessionMeter = reading;
  }

  // Calls, as the host makes them.

  manifest(): Manifest {
    return this.call(() => this.answers.manifest());
  }

  /** What the host offers before a model call: the declared tools, then what `provide`
   * contributes, its own tools after them. */
  provide(): Contributed {
    const contributed = this.call(() => this.answers.provide(this.ctx()));
    return { ...contributed, tools: [...this.declared, ...contributed.tools] };
  }

  /** A call of the tool `name`: its text, or `PluginError` with the error text. */
  tool(name: string, args: Record<string, unknown> = {}): string {
    const call = { id: CALL_ID, name, arguments: JSON.stringify(args) };
    return this.result(() => this.answers.callTool(this.ctx(), call));
  }

  /** The operator command `/name args`: its answer, or `PluginError` with the error text. */
  command(name: string, args = ""): string {
    return this.result(() => this.answers.command(this.ctx(), name, args));
  }

  sessionStart(): string | undefined {
    return this.call(() => this.answers.sessionStart(this.ctx()));
  }

  userPrompt(prompt: string): PromptOutcome {
    return this.call(() => this.answers.userPromptSubmit(this.ctx(), prompt));
  }

  /** `onPreToolUse` of a call of `tool` (offered by `plugin`). */
  preToolUse(plugin: string, tool: string, args: Record<string, unknown> = {}, mutates = false): PreToolOutcome {
    return this.call(() => this.answers.preToolUse(this.ctx(), use(plugin, tool, args, mutates)));
  }

  /** `onPostToolUse` of a call of `tool` that answered `output`: the replacement, if any. */
  postToolUse(plugin: string, tool: string, output: string, { ok = true, mutates = false } = {}): ToolResult | undefined {
    return this.call(() => this.answers.postToolUse(this.ctx(), use(plugin, tool, {}, mutates), { ok, output }));
  }

  /** `onStop`: the message the turn goes on with, if any. */
  stop(reply = "done"): string | undefined {
    return this.call(() => this.answers.stop(this.ctx(), reply));
  }

  /** `status`; as in the host, its state writes and events are dropped. */
  status(): string | undefined {
    return this.withoutEffects(() => this.answers.status(this.ctx()));
  }

  /** Whether the plugin has a view, as the host asks once per load. */
  shows(): boolean {
    return this.answers.shows(this.configured);
  }

  /** What front ends would show now; as in the host, its state writes and events are dropped. */
  view(): Widget[] {
    return this.withoutEffects(() => this.answers.view(this.ctx()));
  }

  judgeSpec(): JudgeSpec {
    return this.call(() => this.answers.judgeSpec(this.configured));
  }

  /** `onTurnEnd` with the model's final text `reply`. */
  turnEnd(reply: string): TurnVerdict {
    return this.call(() => this.answers.turnEnd(this.ctx(), reply));
  }

  /** `onReview` of a call of `tool` (offered by `plugin`), asked about for `asked`. */
  review(plugin: string, tool: string, args: Record<string, unknown>, asked: string): ReviewVerdict {
    return this.call(() => this.answers.review(this.ctx(), use(plugin, tool, args, true), asked));
  }

  /** `onQueued`, as after an operator command. */
  queued(): string | undefined {
    return this.call(() => this.answers.queued(this.ctx()));
  }

  // The host's rules for what a call keeps.

  private ctx(): CallContext {
    return {
      sessionId: "test-session",
      config: this.configured,
      modelCalls: this.modelCalls,
      turnIteration: this.turnIteration,
    };
  }

  private snapshot(): Snapshot {
    return { own: new Map(this.session.own), events: this.session.events.length };
  }

  private restore(before: Snapshot): void {
    this.session.own = before.own;
    this.session.events.length = before.events;
  }

  /** Runs `run` against this harness's session; a trap keeps nothing. */
  private call<T>(run: () => T): T {
    const before = this.snapshot();
    const previous = install(this.session);
    try {
      return run();
    } catch (error) {
      if (error instanceof Trapped) this.restore(before);
      throw error;
    } finally {
      install(previous);
    }
  }

  /** `call` for an export that returns a result: an error changes no state, and is thrown as
   * `PluginError` with its text. */
  private result<T>(run: () => T): T {
    const before = new Map(this.session.own);
    try {
      return this.call(run);
    } catch (error) {
      if (!(error instanceof Failed)) throw error;
      this.session.own = before;
      throw new PluginError(error.message);
    }
  }

  /** `call`, dropping the call's state writes and events. */
  private withoutEffects<T>(run: () => T): T {
    const before = this.snapshot();
    try {
      return this.call(run);
    } finally {
      this.restore(before);
    }
  }
}

function use(plugin: string, tool: string, args: Record<string, unknown>, mutates: boolean): ToolUse {
  return { call: { id: CALL_ID, name: tool, arguments: JSON.stringify(args) }, plugin, mutates };
}
