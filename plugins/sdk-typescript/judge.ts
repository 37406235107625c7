/**
 * What the `judge` hooks (contract 0.2.7) answer: how a turn ends (`onTurnEnd`) and what
 * becomes of a call the permission hooks would ask the operator about (`onReview`). Each type,
 * and beside it its constructors.
 */

/** Why a plugin ends a turn: the work needs the operator, cannot go on, or a budget or time
 * limit of the plugin's own is reached. */
export type StopReason = "need-input" | "blocked" | "token-budget" | "time-budget";

/** What `onTurnEnd` says when the model ends a step without tool calls. */
export type TurnVerdict =
  | { tag: "end" }
  | { tag: "continue"; val: string }
  | { tag: "stop"; val: { reason: StopReason; message: string } };
export const TurnVerdict = {
  /** No opinion: the turn ends as the model ended it, unless another plugin says more. */
  end: (): TurnVerdict => ({ tag: "end" }),
  /** Send the model on with `text` as a user message (within the turn's caps). */
  continue: (text: string): TurnVerdict => ({ tag: "continue", val: text }),
  /** End the turn with a reason and a line for the operator; it wins over every `continue`. */
  stop: (reason: StopReason, message: string): TurnVerdict => ({ tag: "stop", val: { reason, message } }),
};

/** What `onReview` says of a call the permission hooks would ask the operator about. */
export type ReviewVerdict =
  | { tag: "abstain" }
  | { tag: "allow" }
  | { tag: "deny"; val: string }
  | { tag: "error"; val: string };
export const ReviewVerdict = {
  /** Not this reviewer's call: the operator is asked, as without it. */
  abstain: (): ReviewVerdict => ({ tag: "abstain" }),
  /** Run it. */
  allow: (): ReviewVerdict => ({ tag: "allow" }),
  /** Refuse it; `why` goes back to the model as the tool's error. */
  deny: (why: string): ReviewVerdict => ({ tag: "deny", val: why }),
  /** The review failed: neither a denial nor an approval (the operator decides). */
  error: (why: string): ReviewVerdict => ({ tag: "error", val: why }),
};

/** Which judge hooks a plugin implements; the host calls only those. */
export interface JudgeSpec {
  turnEnd: boolean;
  review: boolean;
  queued: boolean;
}
