/**
 * A TypeScript judge for the host's tests (tests/e2e/judge_typescript.rs), its verdicts read
 * off what it is shown so a test scripts them through the fake model:
 *
 * - turn-end: a reply starting `halfway` sends the model on; one starting `stuck` stops the
 *   turn as blocked, one starting `ask me` as needing input; `throw` throws; anything else
 *   ends the turn as the model ended it.
 * - review (of a call the permission hooks would ask about): a `note` whose text holds `rm`
 *   is denied, one holding `make` allowed, one holding `throw` throws; any other abstains.
 * - queued: after `/work TEXT`, a turn that works on TEXT.
 */

import { Plugin, ReviewVerdict, TurnVerdict, state, t } from "agent-host-sdk";

const NoteArgs = t.object({ text: t.string("What to note.") });

export default new Plugin("judge-ts", "0.1.0")
  .tool("note", "Notes a line.", NoteArgs, (_ctx, { text }) => `noted: ${text}`, { mutates: true })
  .command("work", "/work TEXT", "Queues a turn that works on TEXT.", (_ctx, text) => {
    state.set("work", text);
    return `queued: ${text}`;
  })
  .onTurnEnd((_ctx, reply) => {
    if (reply.startsWith("halfway")) return TurnVerdict.continue("Keep going: finish it.");
    if (reply.startsWith("stuck")) return TurnVerdict.stop("blocked", `judge-ts: ${reply}`);
    if (reply.startsWith("ask me")) return TurnVerdict.stop("need-input", "judge-ts needs the operator");
    if (reply === "throw") throw new Error("the turn-end hook broke");
    return undefined;
  })
  .onReview((_ctx, call, asked) => {
    const { text } = JSON.parse(call.call.arguments) as { text: string };
    if (text.includes("throw")) throw new Error("the review hook broke");
    if (text.includes("rm")) return ReviewVerdict.deny(`judge-ts refuses \`${text}\` (${asked})`);
    if (text.includes("make")) return ReviewVerdict.allow();
    return ReviewVerdict.abstain();
  })
  .onQueued(() => {
    const work = state.get<string>("work");
    return work === undefined ? undefined : `Work on: ${work}`;
  });
