/** The three stages, in order, and what the model does in each. */

export interface Stage {
  /** As stored under `mode` and used by `advance_stage`. */
  name: string;
  /** How a person sees it, and one line on what happens in it (the view's option). */
  label: string;
  summary: string;
  /** The stage's own system-prompt instructions. */
  instructions: string;
}

export const STAGES: readonly Stage[] = [
  {
    name: "triage",
    label: "Triage",
    summary: "Work out what the report is about and write the open questions down",
    instructions:
      "You are triaging. Work out what the report is really about, how severe it is and what is " +
      "still unknown. Write each open question down as a todo. Do not try to fix anything yet. " +
      "When the questions are written down, call `advance_stage` with `research`.",
  },
  {
    name: "research",
    label: "Research",
    summary: "Answer the open questions; review opens when every todo is done",
    instructions:
      "You are researching. Answer the open questions one by one with the tools you have, and mark " +
      "each todo complete as soon as it is answered. The review stage stays closed while any todo " +
      "is open. When every todo is done, call `advance_stage` with `review`.",
  },
  {
    name: "review",
    label: "Review",
    summary: "Summarise the findings and recommend what comes next",
    instructions:
      "You are reviewing. Summarise what was found, how confident you are in each finding and what " +
      "you recommend next. This is the last stage.",
  },
];

/** The position of `name` in STAGES, or undefined. */
export function position(name: string): number | undefined {
  const index = STAGES.findIndex((stage) => stage.name === name);
  return index < 0 ? undefined : index;
}

/** The stage names, for error messages: "`triage`, `research`, `review`". */
export function names(): string {
  return STAGES.map((stage) => `\`${stage.name}\``).join(", ");
}
