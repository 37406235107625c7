/**
 * The contract's exports for a declared plugin. The host's build writes the entry module:
 * `export const { guest, compactor, viewer, judge } = exportPlugin(plugin)` (a plugin module
 * only default-exports its `Plugin`).
 *
 * Errors are always carried as messages. Where an export returns a result (a tool, a
 * command, the configuration), whatever the plugin throws becomes the error text, thrown on
 * as a string: componentize-js turns a thrown Error object into a trap that loses it.
 * Anywhere else the error and its stack go to the host's log before the call fails.
 */

import type * as compactorTypes from "agent-host:plugin/compactor@0.2.7";
import type * as guestTypes from "agent-host:plugin/guest@0.2.7";
import type * as judgeTypes from "agent-host:plugin/judge@0.2.7";
import type { CallContext, PreToolOutcome } from "agent-host:plugin/types@0.2.7";
import type * as viewerTypes from "agent-host:plugin/viewer@0.2.7";

import { PluginError, log, messageOf } from "./host.ts";
import type { Context, Plugin } from "./plugin.ts";
import { widgets } from "./view.ts";

type Guest = typeof guestTypes;
type Compactor = typeof compactorTypes;
type Viewer = typeof viewerTypes;
type Judge = typeof judgeTypes;

function stackOf(error: unknown): string {
  return error instanceof Error && error.stack ? `\n${error.stack}` : "";
}

/** Runs `run`; anything thrown becomes the contract's error: its message, as a string. */
function asResult<T>(name: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (!(error instanceof PluginError)) log.error(`${name}: ${messageOf(error)}${stackOf(error)}`);
    throw messageOf(error);
  }
}

/** Runs `run`; an error is logged with its stack, then fails the call. */
function logged<T>(name: string, exportName: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    log.error(`${name}: \`${exportName}\` failed: ${messageOf(error)}${stackOf(error)}`);
    throw messageOf(error);
  }
}

/** The typed context, or undefined (logged) when the configuration does not fit. */
function contextOf<C>(plugin: Plugin<C>, raw: CallContext): Context<C> | undefined {
  try {
    return plugin.context(raw);
  } catch (error) {
    log.error(`${plugin.name}: ${messageOf(error)}`);
    return undefined;
  }
}

/** Runs `run`; an error is logged with its stack and answers `fallback` instead. */
function loggedOr<T>(name: string, exportName: string, fallback: (message: string) => T, run: () => T): T {
  try {
    return run();
  } catch (error) {
    log.error(`${name}: \`${exportName}\` failed: ${messageOf(error)}${stackOf(error)}`);
    return fallback(messageOf(error));
  }
}

export function exportPlugin<C>(plugin: Plugin<C>): {
  guest: Guest;
  compactor: Compactor;
  viewer: Viewer;
  judge: Judge;
} {
  const { hooks, name } = plugin;
  const withContext = <T>(raw: CallContext, exportName: string, fallback: T, run: (ctx: Context<C>) => T): T => {
    const ctx = contextOf(plugin, raw);
    return ctx === undefined ? fallback : logged(name, exportName, () => run(ctx));
  };

  const guest: Guest = {
    manifest: () => logged(name, "manifest", () => plugin.manifest()),
    configure: (config) => asResult(name, () => plugin.configureRaw(config)),
    provide: (raw) =>
      withContext(raw, "provide", { tools: [], messages: [] }, (ctx) => plugin.provideRaw(ctx)),
    callTool: (raw, call) => asResult(name, () => plugin.callToolRaw(plugin.context(raw), call.name, call.arguments)),
    sessionStart: (raw) =>
      hooks.sessionStart ? withContext(raw, "session-start", undefined, hooks.sessionStart) : undefined,
    userPromptSubmit: (raw, prompt) =>
      (hooks.userPromptSubmit &&
        withContext(raw, "user-prompt-submit", undefined, (ctx) => hooks.userPromptSubmit?.(ctx, prompt))) ||
      {},
    preToolUse: (raw, call): PreToolOutcome => {
      if (!hooks.preToolUse) return {};
      let ctx: Context<C>;
      try {
        ctx = plugin.context(raw);
      } catch (error) {
        // A policy that cannot read its configuration refuses rather than waves through.
        return { decision: { tag: "deny", val: `${name} cannot read its configuration: ${messageOf(error)}` } };
      }
      return logged(name, "pre-tool-use", () => hooks.preToolUse?.(ctx, call)) ?? {};
    },
    postToolUse: (raw, call, outcome) => ({
      replace: hooks.postToolUse
        ? withContext(raw, "post-tool-use", undefined, (ctx) => hooks.postToolUse?.(ctx, call, outcome))
        : undefined,
    }),
    stop: (raw, reply) => {
      const message = hooks.stop ? withContext(raw, "stop", undefined, (ctx) => hooks.stop?.(ctx, reply)) : undefined;
      return message === undefined ? { tag: "stop" } : { tag: "continue", val: message };
    },
    command: (raw, commandName, args) =>
      asResult(name, () => plugin.commandRaw(plugin.context(raw), commandName, args)),
    status: (raw) => (hooks.status ? withContext(raw, "status", undefined, hooks.status) : undefined),
  };

  // This SDK does not compact: a plugin that compacts is written in Rust.
  const compactor: Compactor = {
    spec: () => ({ hooks: {} }),
    compact: () => {
      throw `the ${name} plugin does not compact`;
    },
    preCompact: () => ({ keep: [] }),
    postCompact: () => {},
  };

  const viewer: Viewer = {
    shows: () => Boolean(hooks.view),
    view: (raw) => (hooks.view ? withContext(raw, "view", [], (ctx) => widgets(hooks.view?.(ctx) ?? [])) : []),
  };

  // Only what `spec` announces is ever called; a hook that throws is logged, and answers what
  // changes nothing (the turn ends, no turn is queued) or, for a review, `error`: never a
  // denial and never an approval, so the operator decides.
  const judge: Judge = {
    spec: () => logged(name, "spec", () => plugin.judgeSpec()),
    turnEnd: (raw, reply) => {
      const end = () => ({ tag: "end" }) as const;
      const ctx = hooks.turnEnd && contextOf(plugin, raw);
      if (!ctx) return end();
      return loggedOr(name, "turn-end", end, () => hooks.turnEnd?.(ctx, reply)) ?? end();
    },
    review: (raw, call, asked) => {
      if (!hooks.review) return { tag: "abstain" };
      let ctx: Context<C>;
      try {
        ctx = plugin.context(raw);
      } catch (error) {
        return { tag: "error", val: `${name} cannot read its configuration: ${messageOf(error)}` };
      }
      const failed = (message: string) => ({ tag: "error", val: message }) as const;
      return loggedOr(name, "review", failed, () => hooks.review?.(ctx, call, asked)) ?? { tag: "abstain" };
    },
    queued: (raw) => {
      const ctx = hooks.queued && contextOf(plugin, raw);
      if (!ctx) return undefined;
      return loggedOr(name, "queued", () => undefined, () => hooks.queued?.(ctx));
    },
  };

  return { guest, compactor, viewer, judge };
}
