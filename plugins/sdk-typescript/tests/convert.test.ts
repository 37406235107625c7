// The component's edge: what the host sends becomes the SDK's types (counts as numbers), and
// the SDK's answers the contract's, under Node's test runner. convert.ts imports only the
// contract's types, so it runs natively as it is.

import assert from "node:assert/strict";
import { test } from "node:test";

import * as convert from "../convert.ts";
import { TurnVerdict } from "../judge.ts";
import { Choice } from "../view.ts";

test("a call's context reads its u64 count as a number", () => {
  const ctx = convert.callContext({ sessionId: "s-1", config: "{}", modelCalls: 3n, turnIteration: 2 });
  assert.deepEqual(ctx, { sessionId: "s-1", config: "{}", modelCalls: 3, turnIteration: 2 });
});

test("stop's answer: a message continues the turn, none lets it end", () => {
  assert.deepEqual(convert.stopOutcome("go on"), { tag: "continue", val: "go on" });
  assert.deepEqual(convert.stopOutcome(undefined), { tag: "stop" });
});

test("verdicts, outcomes and widgets reach the contract's shapes", () => {
  assert.deepEqual(convert.turnVerdict(TurnVerdict.stop("blocked", "stuck")), {
    tag: "stop",
    val: { reason: "blocked", message: "stuck" },
  });
  assert.deepEqual(convert.postToolOutcome({ ok: false, output: "no" }), { replace: { ok: false, output: "no" } });
  assert.deepEqual(convert.postToolOutcome(undefined), { replace: undefined });
  assert.deepEqual(convert.widget(new Choice("mode", "Mode", "plan").option("plan", "Plan").widget()), {
    tag: "choice",
    val: { id: "mode", label: "Mode", current: "plan", options: [{ value: "plan", label: "Plan" }] },
  });
});
