declare module 'agent-host:plugin/meter@0.2.11' {
  /**
   * The meter as of this call.
   */
  export function read(): Reading;
  /**
   * Since 0.2.7. The session's totals as of this call; all zero outside a session.
   */
  export function session(): SessionReading;
  /**
   * The deployment's caps on one turn; none where it sets none.
   */
  export interface Caps {
    /**
     * Model calls a turn may make (`agent.max_iterations`).
     */
    maxIterations: number,
    /**
     * Tokens a turn may spend, its plugins' model calls included.
     */
    maxTurnTokens?: bigint,
    /**
     * Seconds a turn may run.
     */
    maxTurnSecs?: bigint,
    /**
     * Times `stop` hooks may send the model on in one turn.
     */
    maxContinuations?: number,
  }
  /**
   * What the running turn has spent so far. Outside a turn (a command, a view, a load)
   * every count is zero.
   */
  export interface Reading {
    /**
     * Input and output tokens of the turn's model calls, as the endpoint reported them,
     * and of its plugins' `model.complete` calls.
     */
    turnTokens: bigint,
    /**
     * Model calls the turn has made.
     */
    turnModelCalls: number,
    /**
     * Milliseconds since the turn began.
     */
    turnMs: bigint,
    /**
     * Times `stop` hooks sent the model on in this turn.
     */
    turnContinuations: number,
    caps: Caps,
  }
  /**
   * Since 0.2.7. What the whole session has spent, the running turn included.
   */
  export interface SessionReading {
    /**
     * Tokens of every turn's model calls and its plugins' model calls.
     */
    tokens: bigint,
    /**
     * Model calls of every turn.
     */
    modelCalls: bigint,
  }
}
