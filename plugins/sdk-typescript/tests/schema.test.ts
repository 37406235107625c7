// The SDK's schema builder, natively under Node's test runner (schema.ts imports nothing of
// the contract): scripts/test.sh bundles this file with esbuild and runs it with `node --test`.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ArgumentError, type Infer, t } from "../schema.ts";

const Step = t.object({ title: t.string(), done: t.optional(t.boolean(), false) });
const Plan = t.object({
  goal: t.string("What the plan is for."),
  steps: t.array(Step),
  priority: t.optional(t.enum(["low", "high"] as const), "low"),
  owner: t.optional(t.string()),
  weight: t.optional(t.number()),
  count: t.optional(t.integer()),
});

// A value of the type a handler of `Plan` receives.
const typed: Infer<typeof Plan> = { goal: "ship", steps: [{ title: "test" }], priority: "high" };

test("an object schema is closed and lists its required fields", () => {
  assert.deepEqual(Plan.json, {
    type: "object",
    properties: {
      goal: { type: "string", description: "What the plan is for." },
      steps: {
        type: "array",
        items: {
          type: "object",
          properties: { title: { type: "string" }, done: { type: "boolean" } },
          additionalProperties: false,
          required: ["title"],
        },
      },
      priority: { enum: ["low", "high"] },
      owner: { type: "string" },
      weight: { type: "number" },
      count: { type: "integer" },
    },
    additionalProperties: false,
    required: ["goal", "steps"],
  });
});

test("parsing fills fallbacks and leaves absent optional fields out", () => {
  assert.deepEqual(Plan.parse(typed, ""), {
    goal: "ship",
    steps: [{ title: "test", done: false }],
    priority: "high",
  });
  assert.deepEqual(Plan.parse({ goal: "a", steps: [] }, ""), { goal: "a", steps: [], priority: "low" });
});

test("errors name the field by its path", () => {
  const cases: [unknown, string][] = [
    [{ steps: [] }, "missing field `goal`"],
    [{ goal: "a", steps: [], extra: 1 }, "unknown field `extra`, expected `goal`, `steps`"],
    [{ goal: "a", steps: [{ title: 3 }] }, "`steps[0].title`: expected a string, found an integer"],
    [{ goal: "a", steps: [], priority: "urgent" }, "`priority`: expected one of `low`, `high`, found `urgent`"],
    [{ goal: "a", steps: [], count: 1.5 }, "`count`: expected an integer, found a number"],
    [{ goal: true, steps: [] }, "`goal`: expected a string, found a boolean"],
    ["text", "expected an object, found a string"],
  ];
  for (const [value, message] of cases) {
    assert.throws(
      () => Plan.parse(value, ""),
      (error: unknown) => error instanceof ArgumentError && error.message.includes(message),
      message,
    );
  }
});
