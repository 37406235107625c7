/// <reference path="./agent-host-plugin-types.d.ts" />
declare module 'agent-host:plugin/judge@0.2.11' {
  /**
   * Once per load, after `configure`, with the configuration it returned.
   */
  export function spec(config: Json): JudgeSpec;
  /**
   * When the model ends a step without tool calls; `reply` is its final text. Asked after
   * the `stop` hooks, in config order; the meter import reads what the turn has spent.
   */
  export function turnEnd(ctx: CallContext, reply: string): TurnVerdict;
  /**
   * Before the operator is asked about `call`; `asked` is why the permission hooks ask.
   * Every review is audited, with the call it reviewed.
   */
  export function review(ctx: CallContext, call: ToolUse, asked: string): ReviewVerdict;
  /**
   * After an operator command: a prompt to run at once as a turn of its own (a goal just
   * set or resumed starts working), or none. Never asked after a turn: a turn that should
   * go on is continued by `turn-end`, within the caps.
   */
  export function queued(ctx: CallContext): string | undefined;
  export type Json = import('agent-host:plugin/types@0.2.11').Json;
  export type CallContext = import('agent-host:plugin/types@0.2.11').CallContext;
  export type ToolUse = import('agent-host:plugin/types@0.2.11').ToolUse;
  /**
   * Which of this interface's functions the plugin really implements. The host never
   * calls the others.
   */
  export interface JudgeSpec {
    turnEnd: boolean,
    review: boolean,
    queued: boolean,
  }
  /**
   * Why a plugin ends a turn that the model would have ended anyway, or would go on with.
   * # Variants
   * 
   * ## `"need-input"`
   * 
   * The work needs something only the operator can give (an answer, a secret).
   * ## `"blocked"`
   * 
   * The work cannot go on (no progress, a missing tool).
   * ## `"token-budget"`
   * 
   * A budget of the plugin's own (a goal's tokens) is spent.
   * ## `"time-budget"`
   * 
   * A time limit of the plugin's own is reached.
   */
  export type StopReason = 'need-input' | 'blocked' | 'token-budget' | 'time-budget';
  /**
   * A stop with its reason, and a line for the operator.
   */
  export interface StopVerdict {
    reason: StopReason,
    message: string,
  }
  /**
   * What a plugin says when the model ends a step without tool calls.
   */
  export type TurnVerdict = TurnVerdictEnd | TurnVerdictContinue | TurnVerdictStop;
  /**
   * No opinion: the turn ends as the model ended it, unless another plugin says more.
   */
  export interface TurnVerdictEnd {
    tag: 'end',
  }
  /**
   * Send the model on: the text is given to it as a user message. Granted within the
   * turn's caps (`max_continuations`, the budgets), and not when the operator's input
   * is waiting.
   */
  export interface TurnVerdictContinue {
    tag: 'continue',
    val: string,
  }
  /**
   * End the turn with this reason; it wins over every `continue`.
   */
  export interface TurnVerdictStop {
    tag: 'stop',
    val: StopVerdict,
  }
  /**
   * What a reviewer says of one call the permission hooks would ask the operator about.
   */
  export type ReviewVerdict = ReviewVerdictAbstain | ReviewVerdictAllow | ReviewVerdictDeny | ReviewVerdictError;
  /**
   * Not this reviewer's call: the operator is asked, as without it.
   */
  export interface ReviewVerdictAbstain {
    tag: 'abstain',
  }
  /**
   * Run it.
   */
  export interface ReviewVerdictAllow {
    tag: 'allow',
  }
  /**
   * Refuse it; the text goes back to the model as the tool's error.
   */
  export interface ReviewVerdictDeny {
    tag: 'deny',
    val: string,
  }
  /**
   * The review failed (the model could not be asked, its answer made no sense). Never
   * a denial and never an approval: the operator is asked, or `agent.on_ask` decides.
   */
  export interface ReviewVerdictError {
    tag: 'error',
    val: string,
  }
}
