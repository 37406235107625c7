/**
 * The SDK's values to and from the types jco generates for the contract, at the component's
 * edge (`export.ts`). Types only are imported from the contract: these are plain objects.
 */

import type * as judgeTypes from "agent-host:plugin/judge@0.2.11";
import type * as raw from "agent-host:plugin/types@0.2.11";
import type * as viewerTypes from "agent-host:plugin/viewer@0.2.11";

import type { JudgeSpec, ReviewVerdict, TurnVerdict } from "./judge.ts";
import type { PreToolOutcome, PromptOutcome, Requirement } from "./outcomes.ts";
import type { CallContext, Configured, Contributed, Manifest, ToolCall, ToolResult, ToolUse } from "./types.ts";
import type { Widget } from "./view.ts";

// In: what the host sends.

export const callContext = (ctx: raw.CallContext): CallContext => ({
  sessionId: ctx.sessionId,
  config: ctx.config,
  modelCalls: Number(ctx.modelCalls),
  turnIteration: ctx.turnIteration,
});

export const toolCall = ({ id, name, arguments: args }: raw.ToolCall): ToolCall => ({ id, name, arguments: args });

export const toolUse = (use: raw.ToolUse): ToolUse => ({
  call: toolCall(use.call),
  plugin: use.plugin,
  mutates: use.mutates,
});

export const toolResult = ({ ok, output }: raw.ToolResult): ToolResult => ({ ok, output });

// Out: what the plugin answers.

export const manifest = ({ name, version, capabilities, commands }: Manifest): raw.PluginManifest => ({
  name,
  version,
  capabilities: { ...capabilities },
  commands: commands.map(({ name, description, usage }) => ({ name, description, usage })),
});

const requirement = (value: Requirement): raw.Requirement => ({ ...value });

export const configured = ({ config, requires }: Configured): raw.Configured => ({
  config,
  requires: requires.map(requirement),
});

export const contribution = ({ instructions, tools, messages }: Contributed): raw.Contribution => ({
  instructions,
  tools: tools.map(({ name, description, parameters, mutates }) => ({ name, description, parameters, mutates })),
  messages: messages.map(({ role, content }) => ({ role, content })),
});

export const promptOutcome = ({ block, context }: PromptOutcome): raw.PromptOutcome => ({ block, context });

export const preToolOutcome = ({ decision, updatedArguments, context }: PreToolOutcome): raw.PreToolOutcome => ({
  decision: decision && { ...decision },
  updatedArguments,
  context,
});

export const postToolOutcome = (replace: ToolResult | undefined): raw.PostToolOutcome => ({
  replace: replace && { ok: replace.ok, output: replace.output },
});

export const stopOutcome = (message: string | undefined): raw.StopOutcome =>
  message === undefined ? { tag: "stop" } : { tag: "continue", val: message };

export const judgeSpec = ({ turnEnd, review, queued }: JudgeSpec): judgeTypes.JudgeSpec => ({
  turnEnd,
  review,
  queued,
});

export const turnVerdict = (verdict: TurnVerdict): judgeTypes.TurnVerdict =>
  verdict.tag === "stop" ? { tag: "stop", val: { ...verdict.val } } : { ...verdict };

export const reviewVerdict = (verdict: ReviewVerdict): judgeTypes.ReviewVerdict => ({ ...verdict });

export const widget = (shown: Widget): viewerTypes.Widget => {
  switch (shown.tag) {
    case "choice":
      return { tag: "choice", val: { ...shown.val, options: shown.val.options.map((option) => ({ ...option })) } };
    case "checklist":
      return { tag: "checklist", val: { ...shown.val, entries: shown.val.entries.map((entry) => ({ ...entry })) } };
    case "text":
      return { tag: "text", val: { ...shown.val } };
  }
};
