/**
 * What a configuration requires of the host, and what the guest hooks answer: a prompt
 * blocked or given context, a tool call allowed, put to the operator or refused. Each type
 * with the functions that build it.
 */

/** What a configuration needs of the host. */
export type Requirement = { tag: "reads-state"; val: string } | { tag: "runs-processes" } | { tag: "network" };

/** The configuration reads another plugin's namespace (a `read_state` grant). */
export const readsState = (namespace: string): Requirement => ({ tag: "reads-state", val: namespace });
export const RUNS_PROCESSES: Requirement = { tag: "runs-processes" };
export const NETWORK: Requirement = { tag: "network" };

/** What `onUserPrompt` says of a prompt: block it (with the reason), or add context. */
export interface PromptOutcome {
  block?: string;
  context?: string;
}

export const block = (reason: string): PromptOutcome => ({ block: reason });
export const addContext = (text: string): PromptOutcome => ({ context: text });

/** Allow a tool call, put it to the operator, or refuse it; the text says why. */
export type Decision = { tag: "allow" } | { tag: "ask"; val: string } | { tag: "deny"; val: string };

/** What `onPreToolUse` says of a call: a decision (none: no opinion), arguments to run it
 * with instead (JSON text), and context for the model. */
export interface PreToolOutcome {
  decision?: Decision;
  updatedArguments?: string;
  context?: string;
}

export const allow = (): PreToolOutcome => ({ decision: { tag: "allow" } });
export const ask = (why: string): PreToolOutcome => ({ decision: { tag: "ask", val: why } });
export const deny = (why: string): PreToolOutcome => ({ decision: { tag: "deny", val: why } });
