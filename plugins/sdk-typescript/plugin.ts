/**
 * A plugin as a declaration: what it answers and how. The manifest's capabilities are read
 * from the declaration, so an export that is written is also announced, and every export
 * the contract has gets a default (the host never calls one the manifest leaves out).
 *
 * The exports themselves, with the contract's rules for errors, are `guest.ts`'s `Answers`.
 */

import { Contribution } from "./contribution.ts";
import { PluginError, messageOf } from "./errors.ts";
import { host } from "./imports.ts";
import type { JudgeSpec, ReviewVerdict, TurnVerdict } from "./judge.ts";
import type { PreToolOutcome, PromptOutcome, Requirement } from "./outcomes.ts";
import { ArgumentError, type Schema, noArgs } from "./schema.ts";
import type {
  CallContext,
  Capabilities,
  CommandSpec,
  Configured,
  Contributed,
  Manifest,
  ToolResult,
  ToolSpec,
  ToolUse,
} from "./types.ts";
import type { Shown } from "./view.ts";

/** What every call knows: the session, the parsed configuration, where the turn is. */
export interface Context<C> {
  sessionId: string;
  config: C;
  modelCalls: number;
  turnIteration: number;
}

/** Whether a tool changes things: fixed, or decided from state on every model call (such a
 * tool is returned from `provide` instead of being declared once). */
export type Mutates<C> = boolean | ((ctx: Context<C>) => boolean);

interface ToolEntry<C> {
  name: string;
  description: string;
  args: Schema<unknown>;
  run: (ctx: Context<C>, args: unknown) => string;
  mutates: Mutates<C>;
}

interface CommandEntry<C> {
  name: string;
  usage: string;
  description: string;
  run: (ctx: Context<C>, args: string) => string;
}

/** The hooks a plugin may answer, by the export that calls them. */
export interface Hooks<C> {
  configure?: (config: C) => Requirement[] | void;
  provide?: (ctx: Context<C>, contribution: Contribution) => Contribution;
  sessionStart?: (ctx: Context<C>) => string | undefined;
  userPromptSubmit?: (ctx: Context<C>, prompt: string) => PromptOutcome | undefined;
  preToolUse?: (ctx: Context<C>, call: ToolUse) => PreToolOutcome | undefined;
  postToolUse?: (ctx: Context<C>, call: ToolUse, result: ToolResult) => ToolResult | undefined;
  stop?: (ctx: Context<C>, reply: string) => string | undefined;
  status?: (ctx: Context<C>) => string | undefined;
  view?: (ctx: Context<C>) => Shown[];
  turnEnd?: (ctx: Context<C>, reply: string) => TurnVerdict | undefined;
  review?: (ctx: Context<C>, call: ToolUse, asked: string) => ReviewVerdict | undefined;
  queued?: (ctx: Context<C>) => string | undefined;
}

/** A plugin: its name (also its state namespace), its version, its configuration schema
 * (an object whose fields are optional with defaults; none for a plugin that takes no
 * configuration) and everything it answers. */
export class Plugin<C = undefined> {
  readonly tools: ToolEntry<C>[] = [];
  readonly commands: CommandEntry<C>[] = [];
  readonly hooks: Hooks<C> = {};

  constructor(
    readonly name: string,
    readonly version: string,
    private readonly config?: Schema<C>,
  ) {}

  /** Checks the parsed configuration beyond its schema and returns what it needs from the
   * host (`readsState(ns)`, `RUNS_PROCESSES`, `NETWORK`); throwing refuses the load. */
  configure(check: (config: C) => Requirement[] | void): this {
    this.hooks.configure = check;
    return this;
  }

  /** A tool the model may call: `args` (built with `t`) is the JSON Schema the model sees
   * and the type `run` receives; `run` returns the text the model reads, or throws. */
  tool<A>(
    name: string,
    description: string,
    args: Schema<A>,
    run: (ctx: Context<C>, args: A) => string,
    options: { mutates?: Mutates<C> } = {},
  ): this {
    this.tools.push({
      name,
      description,
      args: args as Schema<unknown>,
      run: run as (ctx: Context<C>, args: unknown) => string,
      mutates: options.mutates ?? false,
    });
    return this;
  }

  /** An operator command, `/name`; `run` gets the text after the name, trimmed. */
  command(name: string, usage: string, description: string, run: (ctx: Context<C>, args: string) => string): this {
    this.commands.push({ name, usage, description, run });
    return this;
  }

  /** Instructions and injected messages before each model call. */
  provide(provide: NonNullable<Hooks<C>["provide"]>): this {
    this.hooks.provide = provide;
    return this;
  }

  /** Once, when a session starts: context for the model. */
  onSessionStart(hook: NonNullable<Hooks<C>["sessionStart"]>): this {
    this.hooks.sessionStart = hook;
    return this;
  }

  /** Before a prompt reaches the model: `block(reason)`, `addContext(text)`, or nothing. */
  onUserPrompt(hook: NonNullable<Hooks<C>["userPromptSubmit"]>): this {
    this.hooks.userPromptSubmit = hook;
    return this;
  }

  /** Before any tool call of any plugin: `allow()`, `ask(why)`, `deny(why)`, or nothing. */
  onPreToolUse(hook: NonNullable<Hooks<C>["preToolUse"]>): this {
    this.hooks.preToolUse = hook;
    return this;
  }

  /** After any tool call: a replacement result, or nothing. */
  onPostToolUse(hook: NonNullable<Hooks<C>["postToolUse"]>): this {
    this.hooks.postToolUse = hook;
    return this;
  }

  /** When the model would end its turn: a message to go on with, or nothing to stop. */
  onStop(hook: NonNullable<Hooks<C>["stop"]>): this {
    this.hooks.stop = hook;
    return this;
  }

  /** One line for front ends (the current mode, say). */
  status(status: NonNullable<Hooks<C>["status"]>): this {
    this.hooks.status = status;
    return this;
  }

  /** What front ends show: `Choice`, `Checklist` and `Text` widgets. */
  view(view: NonNullable<Hooks<C>["view"]>): this {
    this.hooks.view = view;
    return this;
  }

  /** When the model ends a step without tool calls, after the `stop` hooks: end as the model
   * did (`TurnVerdict.end()`, or nothing), go on with a message (`TurnVerdict.continue(text)`,
   * granted within the turn's caps), or stop with a typed reason (`TurnVerdict.stop(reason,
   * message)`). A hook that throws is logged and the turn ends. */
  onTurnEnd(hook: NonNullable<Hooks<C>["turnEnd"]>): this {
    this.hooks.turnEnd = hook;
    return this;
  }

  /** Reviews a call the permission hooks would put to the operator (`asked` is why):
   * `ReviewVerdict.abstain()` (or nothing), `.allow()`, `.deny(why)` (the model reads `why`
   * as the tool's error) or `.error(why)`. A hook that throws is logged and answers
   * `error`: never a denial, never an approval; the operator is asked. */
  onReview(hook: NonNullable<Hooks<C>["review"]>): this {
    this.hooks.review = hook;
    return this;
  }

  /** After an operator command: a prompt the host runs at once as a turn of its own, or
   * nothing. A hook that throws is logged and queues nothing. */
  onQueued(hook: NonNullable<Hooks<C>["queued"]>): this {
    this.hooks.queued = hook;
    return this;
  }

  // Answering, in the SDK's types (`Answers` adds the contract's rules for errors).

  /** The `judge` export's `spec`: which of its hooks this plugin answers. */
  judgeSpec(): JudgeSpec {
    const { turnEnd, review, queued } = this.hooks;
    return { turnEnd: Boolean(turnEnd), review: Boolean(review), queued: Boolean(queued) };
  }

  manifest(): Manifest {
    const hooks = this.hooks;
    const capabilities: Capabilities = {
      provide: Boolean(hooks.provide) || this.tools.some((tool) => typeof tool.mutates === "function"),
      callTool: this.tools.length > 0,
      command: this.commands.length > 0,
      sessionStart: Boolean(hooks.sessionStart),
      userPromptSubmit: Boolean(hooks.userPromptSubmit),
      preToolUse: Boolean(hooks.preToolUse),
      postToolUse: Boolean(hooks.postToolUse),
      stop: Boolean(hooks.stop),
      status: Boolean(hooks.status),
    };
    const commands: CommandSpec[] = this.commands.map(({ name, usage, description }) => ({ name, usage, description }));
    return { name: this.name, version: this.version, capabilities, commands };
  }

  parseConfig(raw: string): C {
    const parsed: unknown = raw ? JSON.parse(raw) : null;
    const table = parsed ?? {};
    if (!this.config) {
      const key = Object.keys(table as object)[0];
      if (key !== undefined) {
        throw new PluginError(
          `this plugin takes no configuration (found \`${key}\`); remove its [plugin.config] table`,
        );
      }
      return undefined as C;
    }
    try {
      return this.config.parse(table, "");
    } catch (error) {
      throw new PluginError(messageOf(error));
    }
  }

  configureRaw(raw: string): Configured {
    const config = this.parseConfig(raw);
    const requires = this.hooks.configure?.(config) ?? [];
    for (const tool of this.tools) {
      if (typeof tool.mutates !== "function") host().declare(this.spec(tool, tool.mutates));
    }
    return { config: JSON.stringify(config ?? {}), requires };
  }

  context(raw: CallContext): Context<C> {
    return {
      sessionId: raw.sessionId,
      config: this.parseConfig(raw.config),
      modelCalls: raw.modelCalls,
      turnIteration: raw.turnIteration,
    };
  }

  provideRaw(ctx: Context<C>): Contributed {
    const provided = this.tools.flatMap((tool) =>
      typeof tool.mutates === "function" ? [this.spec(tool, tool.mutates(ctx))] : [],
    );
    const contribution = new Contribution(provided);
    if (!this.hooks.provide) return contribution.reusable().contributed();
    return this.hooks.provide(ctx, contribution).contributed();
  }

  callToolRaw(ctx: Context<C>, name: string, argumentsJson: string): string {
    const tool = this.tools.find((candidate) => candidate.name === name);
    if (!tool) throw new PluginError(`the ${this.name} plugin has no tool named \`${name}\``);
    let raw: unknown;
    try {
      raw = JSON.parse(argumentsJson);
    } catch (error) {
      throw new PluginError(`invalid arguments for \`${name}\`: not JSON: ${messageOf(error)}`);
    }
    let args: unknown;
    try {
      args = tool.args.parse(raw ?? {}, "");
    } catch (error) {
      if (error instanceof ArgumentError) throw new PluginError(`invalid arguments for \`${name}\`: ${error.message}`);
      throw error;
    }
    return tool.run(ctx, args);
  }

  commandRaw(ctx: Context<C>, name: string, args: string): string {
    const command = this.commands.find((candidate) => candidate.name === name);
    if (!command) throw new PluginError(`the ${this.name} plugin has no command named \`/${name}\``);
    return command.run(ctx, args.trim());
  }

  private spec(tool: ToolEntry<C>, mutates: boolean): ToolSpec {
    return { name: tool.name, description: tool.description, parameters: JSON.stringify(tool.args.json), mutates };
  }
}

/** A tool's arguments when it takes none. */
export { noArgs };
