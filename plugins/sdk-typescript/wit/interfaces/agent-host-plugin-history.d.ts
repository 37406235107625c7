declare module 'agent-host:plugin/history@0.2.11' {
  /**
   * The position in the stored history of the result of the tool call `call-id` (what
   * `message-id.message` names), or none when it has no result there. Answered in the
   * `pre-compact` hooks only; none in any other call.
   */
  export function resultOf(callId: string): bigint | undefined;
}
