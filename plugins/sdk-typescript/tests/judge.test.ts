// The `judge` export of a declared plugin, run natively under Node's test runner with the
// host's imports faked (host.fake.ts): what `spec` announces, what each hook's verdict
// becomes, and what a hook that throws answers.

import assert from "node:assert/strict";
import { test } from "node:test";

import type { CallContext, ToolUse } from "agent-host:plugin/types@0.2.7";

import { exportPlugin } from "../export.ts";
import { Plugin, ReviewVerdict, TurnVerdict } from "../plugin.ts";
import { t } from "../schema.ts";
import { logged } from "./host.fake.ts";

const raw = (config = "{}"): CallContext => ({
  sessionId: "s-1",
  config,
  modelCalls: 3n,
  turnIteration: 2,
});
const call: ToolUse = {
  call: { id: "c-1", name: "bash", arguments: '{"command":"rm -rf build"}' },
  plugin: "shell",
  mutates: true,
};

function errorsLogged(run: () => void): string[] {
  const before = logged.length;
  run();
  return logged.slice(before).filter((line) => line.level === "error").map((line) => line.message);
}

test("spec announces exactly the judge hooks a plugin declares", () => {
  const none = exportPlugin(new Plugin("none", "0.1.0")).judge;
  assert.deepEqual(none.spec("{}"), { turnEnd: false, review: false, queued: false });
  const reviewer = exportPlugin(new Plugin("reviewer", "0.1.0").onReview(() => ReviewVerdict.allow())).judge;
  assert.deepEqual(reviewer.spec("{}"), { turnEnd: false, review: true, queued: false });
  const all = exportPlugin(
    new Plugin("all", "0.1.0")
      .onTurnEnd(() => TurnVerdict.end())
      .onReview(() => undefined)
      .onQueued(() => undefined),
  ).judge;
  assert.deepEqual(all.spec("{}"), { turnEnd: true, review: true, queued: true });
});

test("turn-end gets the typed context and the reply, and its verdict goes back as is", () => {
  const seen: unknown[] = [];
  const config = t.object({ limit: t.optional(t.integer(), 1) });
  const plugin = new Plugin("goal", "0.1.0", config).onTurnEnd((ctx, reply) => {
    seen.push([ctx.sessionId, ctx.config.limit, ctx.modelCalls, ctx.turnIteration, reply]);
    return reply === "done" ? TurnVerdict.stop("need-input", "which branch?") : TurnVerdict.continue("Keep going.");
  });
  const { judge } = exportPlugin(plugin);
  assert.deepEqual(judge.turnEnd(raw('{"limit":4}'), "halfway"), { tag: "continue", val: "Keep going." });
  assert.deepEqual(judge.turnEnd(raw(), "done"), {
    tag: "stop",
    val: { reason: "need-input", message: "which branch?" },
  });
  assert.deepEqual(seen, [
    ["s-1", 4, 3, 2, "halfway"],
    ["s-1", 1, 3, 2, "done"],
  ]);
});

test("a turn-end hook that answers nothing, or throws, ends the turn; the throw is logged", () => {
  const quiet = exportPlugin(new Plugin("quiet", "0.1.0").onTurnEnd(() => undefined)).judge;
  assert.deepEqual(quiet.turnEnd(raw(), "hi"), { tag: "end" });
  const broken = exportPlugin(
    new Plugin("broken", "0.1.0").onTurnEnd(() => {
      throw new Error("no meter");
    }),
  ).judge;
  let verdict: unknown;
  const errors = errorsLogged(() => {
    verdict = broken.turnEnd(raw(), "hi");
  });
  assert.deepEqual(verdict, { tag: "end" });
  assert.equal(errors.length, 1);
  assert.match(errors[0], /^broken: `turn-end` failed: Error: no meter/);
});

test("review gets the call and why it was asked about; each verdict goes back as is", () => {
  const plugin = new Plugin("reviewer", "0.1.0").onReview((_ctx, reviewed, asked) => {
    if (asked === "abstain") return undefined;
    if (asked === "error") return ReviewVerdict.error("model unreachable");
    return reviewed.call.name === "bash" ? ReviewVerdict.deny(`no: ${asked}`) : ReviewVerdict.allow();
  });
  const { judge } = exportPlugin(plugin);
  assert.deepEqual(judge.review(raw(), call, "it deletes"), { tag: "deny", val: "no: it deletes" });
  assert.deepEqual(judge.review(raw(), { ...call, call: { ...call.call, name: "read" } }, "why"), { tag: "allow" });
  assert.deepEqual(judge.review(raw(), call, "abstain"), { tag: "abstain" });
  assert.deepEqual(judge.review(raw(), call, "error"), { tag: "error", val: "model unreachable" });
});

test("a review that throws answers error with its message, logged: never allow, never deny", () => {
  const broken = exportPlugin(
    new Plugin("strict", "0.1.0").onReview(() => {
      throw new Error("bad answer");
    }),
  ).judge;
  let verdict: unknown;
  const errors = errorsLogged(() => {
    verdict = broken.review(raw(), call, "asked");
  });
  assert.deepEqual(verdict, { tag: "error", val: "Error: bad answer" });
  assert.equal(errors.length, 1);
  assert.match(errors[0], /^strict: `review` failed: Error: bad answer/);
});

test("a review whose configuration does not fit answers error, not a verdict", () => {
  const config = t.object({ strict: t.optional(t.boolean(), true) });
  const { judge } = exportPlugin(new Plugin("strict", "0.1.0", config).onReview(() => ReviewVerdict.allow()));
  const verdict = judge.review(raw('{"strict":"yes"}'), call, "asked");
  assert.equal(verdict.tag, "error");
  assert.match((verdict as { val: string }).val, /^strict cannot read its configuration: /);
});

test("queued answers the hook's prompt, or none when it has none or throws (logged)", () => {
  let prompt: string | undefined = "Work on the goal.";
  const { judge } = exportPlugin(new Plugin("goal", "0.1.0").onQueued(() => prompt));
  assert.equal(judge.queued(raw()), "Work on the goal.");
  prompt = undefined;
  assert.equal(judge.queued(raw()), undefined);
  const broken = exportPlugin(
    new Plugin("goal", "0.1.0").onQueued(() => {
      throw new Error("lost");
    }),
  ).judge;
  let queued: unknown = "unset";
  const errors = errorsLogged(() => {
    queued = broken.queued(raw());
  });
  assert.equal(queued, undefined);
  assert.match(errors[0], /^goal: `queued` failed: Error: lost/);
});

test("a plugin without judge hooks answers what changes nothing, if it is ever asked", () => {
  const { judge } = exportPlugin(new Plugin("plain", "0.1.0"));
  assert.deepEqual(judge.turnEnd(raw(), "hi"), { tag: "end" });
  assert.deepEqual(judge.review(raw(), call, "asked"), { tag: "abstain" });
  assert.equal(judge.queued(raw()), undefined);
});
