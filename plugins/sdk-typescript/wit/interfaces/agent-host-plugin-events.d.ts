/// <reference path="./agent-host-plugin-types.d.ts" />
declare module 'agent-host:plugin/events@0.2.11' {
  /**
   * Emits an event, e.g. kind `todos-changed` with the list as payload. Delivered
   * when the call succeeds, in the order emitted. More than `events_per_call` events, or
   * a payload (with its display form) over `event_payload_kb`, ends the call and none of
   * its events is kept.
   * 
   * `display` (since 0.2.0) is how a person should see the event: plain text, possibly
   * several lines, that a console prints as it is (control characters escaped) and a web
   * page shows as preformatted text. None means front ends show nothing for it; the
   * payload is for programs (`--json`), and its schema is the plugin's to document.
   */
  export function emit(kind: string, payload: Json, display: string | undefined): void;
  export type Json = import('agent-host:plugin/types@0.2.11').Json;
}
