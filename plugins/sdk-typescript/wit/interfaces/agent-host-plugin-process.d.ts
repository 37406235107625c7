declare module 'agent-host:plugin/process@0.2.11' {
  /**
   * Runs `request.command`; an error when the grant is missing or it cannot start.
   */
  export function run(request: RunRequest): RunOutput;
  /**
   * What to run and how long to let it run.
   */
  export interface RunRequest {
    /**
     * The command line, given to `sh -c`.
     */
    command: string,
    /**
     * Milliseconds before the process is killed.
     */
    timeoutMs: bigint,
    /**
     * Bytes of stdout, and separately of stderr, kept; the rest is dropped.
     */
    maxOutputBytes: bigint,
  }
  /**
   * How a run ended.
   */
  export interface RunOutput {
    /**
     * The exit code; none when the process was killed (timeout, signal).
     */
    status?: number,
    /**
     * Standard output, lossily decoded as UTF-8.
     */
    stdout: string,
    /**
     * Standard error, lossily decoded as UTF-8.
     */
    stderr: string,
    /**
     * Whether the process was killed because its time ran out.
     */
    timedOut: boolean,
    /**
     * Whether stdout or stderr was cut at `max-output-bytes`.
     */
    truncated: boolean,
    /**
     * Since 0.2.0. Set when the host gave the command less time than `timeout-ms`
     * asked for: the milliseconds it was given, which is what was left of the calling
     * plugin's own deadline.
     */
    timeoutCutToMs?: bigint,
  }
}
