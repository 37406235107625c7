// The plugin's unit tests, natively through the SDK's harness (the checks of
// plugins/triage-modes/src/tests.rs), as scripts/test.sh runs them: bundled with esbuild
// (`agent-host-sdk` aliased to the SDK's folder, the contract's imports left external) and run
// with `node --test`.

import assert from "node:assert/strict";
import { test } from "node:test";

import { PluginError, type Widget } from "agent-host-sdk";
import { Harness } from "agent-host-sdk/testing";

import manifest from "./package.json";
import plugin from "./plugin.ts";

const triage = () => new Harness(plugin);

function stages(current?: string): Widget[] {
  return [
    {
      tag: "choice",
      val: {
        id: "stage",
        label: "Stage",
        ...(current === undefined ? {} : { current }),
        options: [
          {
            value: "triage",
            label: "Triage",
            description: "Work out what the report is about and write the open questions down",
          },
          {
            value: "research",
            label: "Research",
            description: "Answer the open questions; review opens when every todo is done",
          },
          { value: "review", label: "Review", description: "Summarise the findings and recommend what comes next" },
        ],
        category: "mode",
      },
    },
  ];
}

test("stages move forward, and review waits for the todos", () => {
  const harness = triage();
  assert.equal(harness.status(), "triage");
  assert.throws(
    () => harness.tool("advance_stage", { to: "triage" }),
    new PluginError("stages only move forward: you are in `triage`, so `triage` is behind you"),
  );
  assert.equal(harness.tool("advance_stage", { to: "research" }), "Stage is now research.");
  assert.deepEqual(harness.takeEvents(), [
    { kind: "mode-changed", payload: { from: "triage", to: "research", by: "model" }, display: "mode → research" },
  ]);
  harness.storeForeign("todo", "items", [{ id: 1, title: "why red", isComplete: false }]);
  assert.throws(
    () => harness.tool("advance_stage", { to: "review" }),
    new PluginError("review stays closed while todos are open. Finish or remove these first:\n- why red"),
  );
  assert.equal(harness.stored("mode"), "research", "a refused advance moves nothing");
  harness.storeForeign("todo", "items", [{ id: 1, title: "why red", isComplete: true }]);
  harness.tool("advance_stage", { to: "review" });
  assert.throws(
    () => harness.tool("advance_stage", { to: "triage" }),
    new PluginError("stages only move forward: you are in `review`, so `triage` is behind you"),
  );
  assert.equal(harness.command("stage"), "stage: review");
});

test("a stage it does not know is refused, naming the stages", () => {
  assert.throws(
    () => triage().tool("advance_stage", { to: "shipping" }),
    new PluginError("unknown stage `shipping`; the stages are `triage`, `research`, `review`"),
  );
});

test("each stage brings its own instructions, reusable until the stage moves", () => {
  const harness = triage();
  const first = harness.provide();
  assert.match(first.instructions ?? "", /You are in the `triage` stage/);
  assert.match(first.instructions ?? "", /The next is `research`\./);
  assert.match(first.instructions ?? "", /You are triaging\./);
  assert.deepEqual(
    first.tools.map((tool) => tool.name),
    ["advance_stage"],
    "declared once, offered first",
  );
  assert.equal(harness.takeReusable(), true, "the instructions depend on the stored stage only");
  harness.tool("advance_stage", { to: "research" });
  assert.match(harness.provide().instructions ?? "", /You are researching\./);
});

test("it takes no configuration", () => {
  assert.deepEqual(triage().requires, [], "only review needs the todo grant");
  assert.throws(
    () => new Harness(plugin, { stages: 2 }),
    new PluginError("this plugin takes no configuration (found `stages`); remove its [plugin.config] table"),
  );
});

test("the view shows the stages and the current one, with no command", () => {
  const harness = triage();
  assert.equal(harness.shows(), true);
  assert.deepEqual(harness.view(), stages("triage"), "a session that never advanced is in triage");
  harness.tool("advance_stage", { to: "research" });
  assert.deepEqual(harness.view(), stages("research"));
});

test("a stage that cannot be read leaves the choice without a current value", () => {
  const harness = triage();
  harness.store("mode", "shipping");
  assert.deepEqual(harness.view(), stages());
  assert.equal(harness.status(), undefined);
});

test("its version is the one package.json gives", () => {
  const { name, version } = triage().manifest();
  assert.deepEqual([name, version], ["triage-modes", manifest.version]);
});
