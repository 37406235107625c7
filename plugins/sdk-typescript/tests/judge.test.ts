// The `judge` hooks of a declared plugin, natively through the SDK's harness under Node's
// test runner: what `spec` announces, what each hook's verdict becomes, and what a hook that
// throws answers.

import assert from "node:assert/strict";
import { test } from "node:test";

import { Plugin, ReviewVerdict, TurnVerdict } from "../index.ts";
import { Answers } from "../guest.ts";
import { t } from "../schema.ts";
import { Harness } from "../testing/index.ts";

const errors = (harness: Harness<unknown>): string[] =>
  harness.logs.filter((line) => line.level === "error").map((line) => line.message);

test("spec announces exactly the judge hooks a plugin declares", () => {
  assert.deepEqual(new Harness(new Plugin("none", "0.1.0")).judgeSpec(), {
    turnEnd: false,
    review: false,
    queued: false,
  });
  const reviewer = new Plugin("reviewer", "0.1.0").onReview(() => ReviewVerdict.allow());
  assert.deepEqual(new Harness(reviewer).judgeSpec(), { turnEnd: false, review: true, queued: false });
  const all = new Plugin("all", "0.1.0")
    .onTurnEnd(() => TurnVerdict.end())
    .onReview(() => undefined)
    .onQueued(() => undefined);
  assert.deepEqual(new Harness(all).judgeSpec(), { turnEnd: true, review: true, queued: true });
});

test("turn-end gets the typed context and the reply, and its verdict goes back as is", () => {
  const seen: unknown[] = [];
  const config = t.object({ limit: t.optional(t.integer(), 1) });
  const plugin = new Plugin("goal", "0.1.0", config).onTurnEnd((ctx, reply) => {
    seen.push([ctx.sessionId, ctx.config.limit, ctx.modelCalls, ctx.turnIteration, reply]);
    return reply === "done" ? TurnVerdict.stop("need-input", "which branch?") : TurnVerdict.continue("Keep going.");
  });
  const harness = new Harness(plugin, { limit: 4 });
  harness.modelCalls = 3;
  harness.turnIteration = 2;
  assert.deepEqual(harness.turnEnd("halfway"), { tag: "continue", val: "Keep going." });
  assert.deepEqual(harness.turnEnd("done"), { tag: "stop", val: { reason: "need-input", message: "which branch?" } });
  assert.deepEqual(seen, [
    ["test-session", 4, 3, 2, "halfway"],
    ["test-session", 4, 3, 2, "done"],
  ]);
});

test("a turn-end hook that answers nothing, or throws, ends the turn; the throw is logged", () => {
  assert.deepEqual(new Harness(new Plugin("quiet", "0.1.0").onTurnEnd(() => undefined)).turnEnd("hi"), {
    tag: "end",
  });
  const broken = new Harness(
    new Plugin("broken", "0.1.0").onTurnEnd(() => {
      throw new Error("no meter");
    }),
  );
  assert.deepEqual(broken.turnEnd("hi"), { tag: "end" });
  assert.equal(errors(broken).length, 1);
  assert.match(errors(broken)[0], /^broken: `turn-end` failed: Error: no meter/);
});

test("review gets the call and why it was asked about; each verdict goes back as is", () => {
  const plugin = new Plugin("reviewer", "0.1.0").onReview((_ctx, reviewed, asked) => {
    if (asked === "abstain") return undefined;
    if (asked === "error") return ReviewVerdict.error("model unreachable");
    return reviewed.call.name === "bash" ? ReviewVerdict.deny(`no: ${asked}`) : ReviewVerdict.allow();
  });
  const harness = new Harness(plugin);
  const command = { command: "rm -rf build" };
  assert.deepEqual(harness.review("shell", "bash", command, "it deletes"), { tag: "deny", val: "no: it deletes" });
  assert.deepEqual(harness.review("fs", "read", {}, "why"), { tag: "allow" });
  assert.deepEqual(harness.review("shell", "bash", command, "abstain"), { tag: "abstain" });
  assert.deepEqual(harness.review("shell", "bash", command, "error"), { tag: "error", val: "model unreachable" });
});

test("a review that throws answers error with its message, logged: never allow, never deny", () => {
  const broken = new Harness(
    new Plugin("strict", "0.1.0").onReview(() => {
      throw new Error("bad answer");
    }),
  );
  assert.deepEqual(broken.review("shell", "bash", {}, "asked"), { tag: "error", val: "Error: bad answer" });
  assert.equal(errors(broken).length, 1);
  assert.match(errors(broken)[0], /^strict: `review` failed: Error: bad answer/);
});

test("queued answers the hook's prompt, or none when it has none or throws (logged)", () => {
  let prompt: string | undefined = "Work on the goal.";
  const harness = new Harness(new Plugin("goal", "0.1.0").onQueued(() => prompt));
  assert.equal(harness.queued(), "Work on the goal.");
  prompt = undefined;
  assert.equal(harness.queued(), undefined);
  const broken = new Harness(
    new Plugin("goal", "0.1.0").onQueued(() => {
      throw new Error("lost");
    }),
  );
  assert.equal(broken.queued(), undefined);
  assert.match(errors(broken)[0], /^goal: `queued` failed: Error: lost/);
});

test("a plugin without judge hooks answers what changes nothing, if it is ever asked", () => {
  const harness = new Harness(new Plugin("plain", "0.1.0"));
  assert.deepEqual(harness.turnEnd("hi"), { tag: "end" });
  assert.deepEqual(harness.review("shell", "bash", {}, "asked"), { tag: "abstain" });
  assert.equal(harness.queued(), undefined);
});

test("a review whose configuration does not fit answers error, not a verdict", () => {
  const config = t.object({ strict: t.optional(t.boolean(), true) });
  const plugin = new Plugin("strict", "0.1.0", config).onReview(() => ReviewVerdict.allow());
  // What the host sends every call no longer fits (the plugin changed under a session).
  const ctx = { sessionId: "s-1", config: '{"strict":"yes"}', modelCalls: 0, turnIteration: 0 };
  const call = { call: { id: "c-1", name: "bash", arguments: "{}" }, plugin: "shell", mutates: true };
  const verdict = new Answers(plugin).review(ctx, call, "asked");
  assert.equal(verdict.tag, "error");
  assert.match((verdict as { val: string }).val, /^strict cannot read its configuration: /);
});
