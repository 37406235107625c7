declare module 'agent-host:plugin/log@0.2.11' {
  /**
   * Writes one log line; control characters are shown escaped. More than
   * `log_kb_per_call` of log text in one call ends the call.
   */
  export function write(level: Level, message: string): void;
  /**
   * How important a log line is.
   * # Variants
   * 
   * ## `"trace"`
   * 
   * ## `"debug"`
   * 
   * ## `"info"`
   * 
   * ## `"warn"`
   * 
   * ## `"error"`
   */
  export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';
}
