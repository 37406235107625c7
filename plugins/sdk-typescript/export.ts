/**
 * The contract's exports for a declared plugin. The host's build writes the entry module:
 * `export const { guest, compactor, viewer, judge } = exportPlugin(plugin)` (a plugin module
 * only default-exports its `Plugin`). `exportPlugin` sends the SDK's host calls to the
 * component's imports; each export converts what the host sends to the SDK's types, asks
 * `Answers` and converts its answer back.
 *
 * A `Failed` or `Trapped` call is thrown on as its message, a string: componentize-js makes a
 * thrown value the error of an export that returns a result, and traps any other, while a
 * thrown Error object would trap and lose its message.
 */

import type * as compactorTypes from "agent-host:plugin/compactor@0.2.11";
import type * as guestTypes from "agent-host:plugin/guest@0.2.11";
import type * as judgeTypes from "agent-host:plugin/judge@0.2.11";
import type * as viewerTypes from "agent-host:plugin/viewer@0.2.11";

import { componentHost } from "./bindings.ts";
import * as convert from "./convert.ts";
import { Answers, Failed, Trapped } from "./guest.ts";
import { install } from "./imports.ts";
import type { Plugin } from "./plugin.ts";

type Guest = typeof guestTypes;
type Compactor = typeof compactorTypes;
type Viewer = typeof viewerTypes;
type Judge = typeof judgeTypes;

function answer<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof Failed || error instanceof Trapped) throw error.message;
    throw error;
  }
}

export function exportPlugin<C>(plugin: Plugin<C>): {
  guest: Guest;
  compactor: Compactor;
  viewer: Viewer;
  judge: Judge;
} {
  install(componentHost);
  const answers = new Answers(plugin);
  const ctx = convert.callContext;

  const guest: Guest = {
    manifest: () => answer(() => convert.manifest(answers.manifest())),
    configure: (config) => answer(() => convert.configured(answers.configure(config))),
    provide: (raw) => answer(() => convert.contribution(answers.provide(ctx(raw)))),
    callTool: (raw, call) => answer(() => answers.callTool(ctx(raw), convert.toolCall(call))),
    sessionStart: (raw) => answer(() => answers.sessionStart(ctx(raw))),
    userPromptSubmit: (raw, prompt) =>
      answer(() => convert.promptOutcome(answers.userPromptSubmit(ctx(raw), prompt))),
    preToolUse: (raw, call) => answer(() => convert.preToolOutcome(answers.preToolUse(ctx(raw), convert.toolUse(call)))),
    postToolUse: (raw, call, outcome) =>
      answer(() =>
        convert.postToolOutcome(answers.postToolUse(ctx(raw), convert.toolUse(call), convert.toolResult(outcome))),
      ),
    stop: (raw, reply) => answer(() => convert.stopOutcome(answers.stop(ctx(raw), reply))),
    command: (raw, name, args) => answer(() => answers.command(ctx(raw), name, args)),
    status: (raw) => answer(() => answers.status(ctx(raw))),
  };

  // This SDK does not compact: a plugin that compacts is written in Rust.
  const compactor: Compactor = {
    spec: () => ({ hooks: {} }),
    compact: () => {
      throw `the ${plugin.name} plugin does not compact`;
    },
    preCompact: () => ({ keep: [] }),
    postCompact: () => {},
  };

  const viewer: Viewer = {
    shows: (config) => answers.shows(config),
    view: (raw) => answer(() => answers.view(ctx(raw)).map(convert.widget)),
  };

  const judge: Judge = {
    spec: (config) => answer(() => convert.judgeSpec(answers.judgeSpec(config))),
    turnEnd: (raw, reply) => convert.turnVerdict(answers.turnEnd(ctx(raw), reply)),
    review: (raw, call, asked) => convert.reviewVerdict(answers.review(ctx(raw), convert.toolUse(call), asked)),
    queued: (raw) => answers.queued(ctx(raw)),
  };

  return { guest, compactor, viewer, judge };
}
