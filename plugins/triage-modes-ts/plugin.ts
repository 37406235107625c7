/**
 * The `triage-modes` plugin in TypeScript: the same workflow as plugins/triage-modes (Rust).
 * A session moves through `triage` → `research` → `review`, forward only, through the
 * `advance_stage` tool; `review` opens only when the `todo` list has no open items (read
 * through a `read_state = ["todo"]` grant); every stage has its own instructions.
 */

import { Choice, Plugin, PluginError, events, log, state, t } from "agent-host-sdk";

// The version is package.json's: esbuild bundles the file's values, so nothing is read at run time.
import manifest from "./package.json";
import { STAGES, names, position } from "./stages.ts";

const AdvanceArgs = t.object({ to: t.string("A later stage: `research` or `review`.") });

/** The index of the session's stage; a session that never advanced is in `triage`. */
function currentStage(): number {
  const name = state.get<string>("mode");
  if (name === undefined) return 0;
  const index = position(name);
  if (index === undefined) throw new PluginError(`the stored stage \`${name}\` is not a known stage`);
  return index;
}

/** Throws, in words the model can act on, unless the `todo` plugin has no open items. */
function reviewMayOpen(): void {
  const items = state.read<{ title: string; isComplete?: boolean }[]>("todo", "items") ?? [];
  const open = items.filter((item) => !item.isComplete).map((item) => `- ${item.title}`);
  if (open.length > 0) {
    throw new PluginError(
      `review stays closed while todos are open. Finish or remove these first:\n${open.join("\n")}`,
    );
  }
}

/** The session's stage by name, or undefined when what is stored is no stage. */
function stageShown(): string | undefined {
  try {
    return STAGES[currentStage()].name;
  } catch {
    return undefined;
  }
}

export default new Plugin("triage-modes", manifest.version)
  .tool("advance_stage", "Moves the triage workflow forward to a later stage.", AdvanceArgs, (_ctx, { to }) => {
    const target = position(to);
    if (target === undefined) throw new PluginError(`unknown stage \`${to}\`; the stages are ${names()}`);
    const current = currentStage();
    const from = STAGES[current].name;
    if (target <= current) {
      throw new PluginError(`stages only move forward: you are in \`${from}\`, so \`${to}\` is behind you`);
    }
    if (STAGES[target].name === "review") reviewMayOpen();
    state.set("mode", to);
    events.emit("mode-changed", { from, to, by: "model" }, `mode → ${to}`);
    return `Stage is now ${to}.`;
  })
  .provide((_ctx, contribution) => {
    let current = 0;
    try {
      current = currentStage();
    } catch (error) {
      log.error(String(error));
    }
    const stage = STAGES[current];
    const next = STAGES[current + 1];
    const following = next ? ` The next is \`${next.name}\`.` : "";
    // Depends on the stored stage only.
    return contribution
      .instructions(
        `## Triage workflow\n\nYou are in the \`${stage.name}\` stage of triage → research → review. ` +
          `Stages only move forward.${following}\n\n${stage.instructions}`,
      )
      .reusable();
  })
  .status(stageShown)
  .command("stage", "/stage", "Shows the current triage stage", () => `stage: ${STAGES[currentStage()].name}`)
  .view(() => {
    // No command: only the model moves the stage, through the checks of `advance_stage`. A
    // stage that cannot be read shows none, rather than no view at all.
    const choice = new Choice("stage", "Stage", stageShown());
    for (const stage of STAGES) choice.option(stage.name, stage.label, stage.summary);
    return [choice.category("mode")];
  });
