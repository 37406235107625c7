// The harness applies the host's rules for what a call keeps, and stands in for every host
// call, under Node's test runner.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  Checklist,
  Plugin,
  PluginError,
  ReviewVerdict,
  addContext,
  block,
  deny,
  events,
  meter,
  model,
  process,
  state,
  t,
} from "../index.ts";
import { Harness, Trapped } from "../testing/index.ts";

/** Notes texts: `note` writes and emits, then fails on `fail`; `status` and `view` write and
 * emit too, which the host drops. */
function noter(): Plugin {
  return new Plugin("noter", "0.1.0")
    .tool(
      "note",
      "Notes a text.",
      t.object({ text: t.string() }),
      (_ctx, { text }) => {
        state.set("notes", [...(state.get<string[]>("notes") ?? []), text]);
        events.emit("noted", { text });
        if (text === "fail") throw new PluginError("not that one");
        if (text === "crash") throw new TypeError("crash");
        return `noted ${text}`;
      },
      { mutates: true },
    )
    .command("forget", "/forget", "Forgets every note", () => {
      state.remove("notes");
      return "forgotten";
    })
    .status(() => {
      state.set("looked", true);
      events.emit("looked", {});
      return `${(state.get<string[]>("notes") ?? []).length} notes`;
    })
    .view(() => {
      state.set("looked", true);
      events.emit("looked", {});
      const checklist = new Checklist("notes", "Notes");
      for (const text of state.get<string[]>("notes") ?? []) checklist.entry(text, "completed");
      return [checklist];
    })
    .onSessionStart(() => {
      state.set("started", true);
      throw new Error("no start");
    });
}

test("a tool call keeps its writes and events", () => {
  const harness = new Harness(noter());
  assert.equal(harness.tool("note", { text: "a" }), "noted a");
  assert.deepEqual(harness.stored("notes"), ["a"]);
  assert.deepEqual(harness.takeEvents(), [{ kind: "noted", payload: { text: "a" } }]);
  assert.deepEqual(harness.takeEvents(), [], "taken once");
});

test("a failed tool call changes no state, but its events stand", () => {
  const harness = new Harness(noter());
  harness.tool("note", { text: "a" });
  harness.takeEvents();
  assert.throws(() => harness.tool("note", { text: "fail" }), new PluginError("not that one"));
  assert.deepEqual(harness.stored("notes"), ["a"]);
  assert.deepEqual(harness.takeEvents(), [{ kind: "noted", payload: { text: "fail" } }]);
});

test("an error the plugin did not mean reads as its type, and its stack is logged", () => {
  const harness = new Harness(noter());
  assert.throws(() => harness.tool("note", { text: "crash" }), { message: "TypeError: crash" });
  assert.match(harness.logs[0].message, /^noter: TypeError: crash\n/);
  assert.equal(harness.stored("notes"), undefined);
});

test("arguments that do not fit are an error naming the field", () => {
  assert.throws(() => new Harness(noter()).tool("note", { txt: "a" }), {
    message: "invalid arguments for `note`: unknown field `txt`, expected `text`",
  });
});

test("status and view change nothing", () => {
  const harness = new Harness(noter());
  harness.tool("note", { text: "a" });
  harness.takeEvents();
  assert.equal(harness.status(), "1 notes");
  assert.deepEqual(harness.view(), [
    { tag: "checklist", val: { id: "notes", label: "Notes", entries: [{ title: "a", state: "completed" }] } },
  ]);
  assert.equal(harness.stored("looked"), undefined);
  assert.deepEqual(harness.takeEvents(), []);
});

test("a call that traps keeps nothing", () => {
  const harness = new Harness(noter());
  assert.throws(() => harness.sessionStart(), new Trapped("Error: no start"));
  assert.equal(harness.stored("started"), undefined);
  assert.match(harness.logs[0].message, /^noter: `session-start` failed: Error: no start/);
});

test("a command answers, and an unknown one is an error", () => {
  const harness = new Harness(noter());
  harness.store("notes", ["old"]);
  assert.equal(harness.command("forget"), "forgotten");
  assert.equal(harness.stored("notes"), undefined);
  assert.throws(() => harness.command("remember"), { message: "the noter plugin has no command named `/remember`" });
});

test("declared tools come first, and a plugin without provide is reusable", () => {
  const harness = new Harness(noter());
  assert.deepEqual(
    harness.declared.map((tool) => [tool.name, tool.mutates]),
    [["note", true]],
  );
  assert.deepEqual(
    harness.provide().tools.map((tool) => tool.name),
    ["note"],
  );
  assert.equal(harness.takeReusable(), true);
  assert.equal(harness.takeReusable(), false);
});

test("two harnesses keep two sessions, and outside their calls there is no host", () => {
  const one = new Harness(noter());
  const two = new Harness(noter());
  one.tool("note", { text: "a" });
  assert.equal(two.stored("notes"), undefined);
  assert.throws(() => state.get("notes"), /no host to call/);
});

test("the tool hooks see the call and answer in the SDK's types", () => {
  const plugin = new Plugin("guard", "0.1.0")
    .onPreToolUse((_ctx, use) => (use.mutates ? deny(`no ${use.call.name} of ${use.plugin}`) : undefined))
    .onPostToolUse((_ctx, use, result) =>
      use.call.name === "shout" ? { ok: result.ok, output: result.output.toUpperCase() } : undefined,
    )
    .onUserPrompt((_ctx, text) => (text.includes("secret") ? block("not here") : addContext("be brief")))
    .onStop((_ctx, reply) => (reply === "halfway" ? "go on" : undefined));
  const harness = new Harness(plugin);
  assert.deepEqual(harness.preToolUse("shell", "rm", { path: "a" }, true), deny("no rm of shell"));
  assert.deepEqual(harness.preToolUse("shell", "ls"), {});
  assert.deepEqual(harness.postToolUse("shell", "shout", "hi"), { ok: true, output: "HI" });
  assert.equal(harness.postToolUse("shell", "ls", "hi"), undefined);
  assert.deepEqual(harness.userPrompt("a secret"), block("not here"));
  assert.deepEqual(harness.userPrompt("hello"), { context: "be brief" });
  assert.equal(harness.stop("halfway"), "go on");
  assert.equal(harness.stop(), undefined);
  assert.deepEqual(harness.review("shell", "rm", {}, "asks"), ReviewVerdict.abstain());
});

test("model, process and meter answer what the test sets", () => {
  const plugin = new Plugin("asker", "0.1.0")
    .tool("ask", "Asks the model.", t.object({}), () => {
      const messages = [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi?" },
      ] as const;
      return model.complete([...messages], 5).text;
    })
    .tool("run", "Runs a command.", t.object({}), () => process.run("echo hi", 100).stdout)
    .tool("spent", "Reads the meter.", t.object({}), () => {
      const { turnTokens, caps } = meter.read();
      return `${turnTokens} of ${caps.maxTurnTokens}, ${meter.session().tokens}`;
    });
  const harness = new Harness(plugin);
  assert.throws(() => harness.tool("ask"), /onModel/);
  harness.takeModelRequests();
  harness.onModel((messages, most) => ({ text: `${messages.length} messages, ${most} tokens`, inputTokens: 3, outputTokens: 4 }));
  assert.equal(harness.tool("ask"), "2 messages, 5 tokens");
  assert.deepEqual(harness.takeModelRequests(), [
    {
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi?" },
      ],
      maxOutputTokens: 5,
    },
  ]);
  harness.onProcess((request) => ({
    status: 0,
    stdout: `${request.command} in ${request.timeoutMs}`,
    stderr: "",
    timedOut: false,
    truncated: false,
  }));
  assert.equal(harness.tool("run"), "echo hi in 100");
  assert.equal(harness.tool("spent"), "0 of undefined, 0");
  harness.setMeter({
    turnTokens: 120,
    turnModelCalls: 2,
    turnMs: 5,
    turnContinuations: 0,
    caps: { maxIterations: 10, maxTurnTokens: 1000 },
  });
  harness.setSessionMeter({ tokens: 900, modelCalls: 7 });
  assert.equal(harness.tool("spent"), "120 of 1000, 900");
});

test("another plugin's namespace is read as stored", () => {
  const plugin = new Plugin("reader", "0.1.0").tool(
    "peek",
    "Reads the todo list.",
    t.object({}),
    () => JSON.stringify(state.read("todo", "items") ?? "none"),
  );
  const harness = new Harness(plugin);
  assert.equal(harness.tool("peek"), '"none"');
  harness.storeForeign("todo", "items", [1, 2]);
  assert.equal(harness.tool("peek"), "[1,2]");
});

test("the manifest's capabilities are what the plugin declares", () => {
  const manifest = new Harness(noter()).manifest();
  assert.deepEqual(manifest.capabilities, {
    provide: false,
    callTool: true,
    command: true,
    sessionStart: true,
    userPromptSubmit: false,
    preToolUse: false,
    postToolUse: false,
    stop: false,
    status: true,
  });
  assert.deepEqual(manifest.commands, [{ name: "forget", usage: "/forget", description: "Forgets every note" }]);
});
