/**
 * What the host answers a plugin's calls with: the meter's readings, the model's completion,
 * a process's output. The SDK's own types, counts as numbers (the contract's u64 fit them).
 */

/** The deployment's caps on one turn (`[agent]` in config.toml); absent where it sets none. */
export interface Caps {
  maxIterations: number;
  maxTurnTokens?: number;
  maxTurnSecs?: number;
  maxContinuations?: number;
}

/** What the running turn has spent and the caps on it (contract 0.2.6); outside a turn
 * every count is zero. */
export interface MeterReading {
  turnTokens: number;
  turnModelCalls: number;
  turnMs: number;
  turnContinuations: number;
  caps: Caps;
}

/** What the whole session has spent, the running turn included (contract 0.2.7). */
export interface SessionReading {
  tokens: number;
  modelCalls: number;
}

/** One message sent to the model. */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** The model's answer and what it cost, as the endpoint counted it. */
export interface Completion {
  text: string;
  inputTokens: number;
  outputTokens: number;
}

/** What to run in the host's sandbox, and how long to let it run. */
export interface RunRequest {
  command: string;
  timeoutMs: number;
  maxOutputBytes: number;
}

/** How a run ended: `status` is absent when the process was killed; `timeoutCutToMs` is set
 * when the host gave it less time than asked (what was left of the plugin's own). */
export interface RunOutput {
  status?: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  truncated: boolean;
  timeoutCutToMs?: number;
}
