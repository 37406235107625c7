/**
 * A declared plugin's answers to every export of the contract, in the SDK's own types and
 * under the contract's rules for errors (`Answers`). The component (`export.ts`) converts the
 * contract's values to these and back; a unit test's harness (`testing/`) calls them as they
 * are, so a test runs the very code a component runs.
 *
 * Errors are always carried as messages. Where an export returns a result (a tool, a command,
 * the configuration), whatever the plugin throws becomes the error text (`Failed`), and the
 * stack of one it did not expect (not a `PluginError`) is logged. Anywhere else the error and
 * its stack go to the log before the call traps (`Trapped`). The judge's hooks never fail
 * the call: what one throws is logged and answers what changes nothing (the turn ends, no
 * turn is queued) or, for a review, `error`: never a denial and never an approval.
 */

import { PluginError, messageOf, stackOf } from "./errors.ts";
import { log } from "./host.ts";
import type { JudgeSpec, ReviewVerdict, TurnVerdict } from "./judge.ts";
import type { PreToolOutcome, PromptOutcome } from "./outcomes.ts";
import type { Context, Plugin } from "./plugin.ts";
import type { CallContext, Configured, Contributed, Manifest, ToolCall, ToolResult, ToolUse } from "./types.ts";
import { type Widget, widgets } from "./view.ts";

/** The call returned the contract's error: `message` goes to the model or the operator. */
export class Failed extends Error {}

/** The call trapped: the host keeps none of its state writes or events; `message` is what the
 * log says. */
export class Trapped extends Error {}

/** What `plugin` answers each export. */
export class Answers<C> {
  constructor(readonly plugin: Plugin<C>) {}

  private get name(): string {
    return this.plugin.name;
  }

  /** Runs `run`; anything thrown becomes `Failed` with its message, the contract's error. */
  private asResult<T>(run: () => T): T {
    try {
      return run();
    } catch (error) {
      if (!(error instanceof PluginError)) log.error(`${this.name}: ${messageOf(error)}${stackOf(error)}`);
      throw new Failed(messageOf(error));
    }
  }

  /** Runs `run`; an error is logged with its stack, then traps the call. */
  private logged<T>(exportName: string, run: () => T): T {
    try {
      return run();
    } catch (error) {
      log.error(`${this.name}: \`${exportName}\` failed: ${messageOf(error)}${stackOf(error)}`);
      throw new Trapped(messageOf(error));
    }
  }

  /** Runs `run`; an error is logged with its stack and answers `fallback` instead. */
  private loggedOr<T>(exportName: string, fallback: (message: string) => T, run: () => T): T {
    try {
      return run();
    } catch (error) {
      log.error(`${this.name}: \`${exportName}\` failed: ${messageOf(error)}${stackOf(error)}`);
      return fallback(messageOf(error));
    }
  }

  /** The typed context, or undefined (logged) when the configuration does not fit. */
  private contextOf(raw: CallContext): Context<C> | undefined {
    try {
      return this.plugin.context(raw);
    } catch (error) {
      log.error(`${this.name}: ${messageOf(error)}`);
      return undefined;
    }
  }

  /** `run` with the typed context, or `fallback` when the configuration does not fit. */
  private withContext<T>(raw: CallContext, exportName: string, fallback: T, run: (ctx: Context<C>) => T): T {
    const ctx = this.contextOf(raw);
    return ctx === undefined ? fallback : this.logged(exportName, () => run(ctx));
  }

  // The `guest` interface.

  manifest(): Manifest {
    return this.logged("manifest", () => this.plugin.manifest());
  }

  configure(config: string): Configured {
    return this.asResult(() => this.plugin.configureRaw(config));
  }

  provide(raw: CallContext): Contributed {
    return this.withContext(raw, "provide", { tools: [], messages: [] }, (ctx) => this.plugin.provideRaw(ctx));
  }

  callTool(raw: CallContext, call: ToolCall): string {
    return this.asResult(() => this.plugin.callToolRaw(this.plugin.context(raw), call.name, call.arguments));
  }

  sessionStart(raw: CallContext): string | undefined {
    const hook = this.plugin.hooks.sessionStart;
    return hook ? this.withContext(raw, "session-start", undefined, hook) : undefined;
  }

  userPromptSubmit(raw: CallContext, prompt: string): PromptOutcome {
    const hook = this.plugin.hooks.userPromptSubmit;
    return (hook && this.withContext(raw, "user-prompt-submit", undefined, (ctx) => hook(ctx, prompt))) || {};
  }

  preToolUse(raw: CallContext, call: ToolUse): PreToolOutcome {
    const hook = this.plugin.hooks.preToolUse;
    if (!hook) return {};
    let ctx: Context<C>;
    try {
      ctx = this.plugin.context(raw);
    } catch (error) {
      // A policy that cannot read its configuration refuses rather than waves through.
      return { decision: { tag: "deny", val: `${this.name} cannot read its configuration: ${messageOf(error)}` } };
    }
    return this.logged("pre-tool-use", () => hook(ctx, call)) ?? {};
  }

  /** The replacement result, or undefined to keep the tool's own. */
  postToolUse(raw: CallContext, call: ToolUse, outcome: ToolResult): ToolResult | undefined {
    const hook = this.plugin.hooks.postToolUse;
    return hook ? this.withContext(raw, "post-tool-use", undefined, (ctx) => hook(ctx, call, outcome)) : undefined;
  }

  /** A message to continue the turn with, or undefined to let it end. */
  stop(raw: CallContext, reply: string): string | undefined {
    const hook = this.plugin.hooks.stop;
    return hook ? this.withContext(raw, "stop", undefined, (ctx) => hook(ctx, reply)) : undefined;
  }

  command(raw: CallContext, name: string, args: string): string {
    return this.asResult(() => this.plugin.commandRaw(this.plugin.context(raw), name, args));
  }

  status(raw: CallContext): string | undefined {
    const hook = this.plugin.hooks.status;
    return hook ? this.withContext(raw, "status", undefined, hook) : undefined;
  }

  // The `viewer` interface.

  shows(_config: string): boolean {
    return Boolean(this.plugin.hooks.view);
  }

  view(raw: CallContext): Widget[] {
    const hook = this.plugin.hooks.view;
    return hook ? this.withContext(raw, "view", [], (ctx) => widgets(hook(ctx))) : [];
  }

  // The `judge` interface: only what `judgeSpec` announces is ever called.

  judgeSpec(_config: string): JudgeSpec {
    return this.logged("spec", () => this.plugin.judgeSpec());
  }

  turnEnd(raw: CallContext, reply: string): TurnVerdict {
    const end = (): TurnVerdict => ({ tag: "end" });
    const hook = this.plugin.hooks.turnEnd;
    const ctx = hook && this.contextOf(raw);
    if (!hook || !ctx) return end();
    return this.loggedOr("turn-end", end, () => hook(ctx, reply)) ?? end();
  }

  review(raw: CallContext, call: ToolUse, asked: string): ReviewVerdict {
    const hook = this.plugin.hooks.review;
    if (!hook) return { tag: "abstain" };
    let ctx: Context<C>;
    try {
      ctx = this.plugin.context(raw);
    } catch (error) {
      // Neither a denial nor an approval: the operator decides.
      return { tag: "error", val: `${this.name} cannot read its configuration: ${messageOf(error)}` };
    }
    const failed = (message: string): ReviewVerdict => ({ tag: "error", val: message });
    return this.loggedOr("review", failed, () => hook(ctx, call, asked)) ?? { tag: "abstain" };
  }

  queued(raw: CallContext): string | undefined {
    const hook = this.plugin.hooks.queued;
    const ctx = hook && this.contextOf(raw);
    if (!hook || !ctx) return undefined;
    return this.loggedOr("queued", () => undefined, () => hook(ctx));
  }
}
