/** The error a plugin throws for a message to go back as it is, and how anything else reads. */

/** An error whose message goes back as it is: to the model from a tool, to the operator
 * from a command or a configuration. */
export class PluginError extends Error {}

/** The text of anything thrown: a PluginError's message as it is, a host error's payload,
 * another Error's name and message (so the model or the operator can tell a plugin's word
 * from a bug), or the value. */
export function messageOf(error: unknown): string {
  if (error instanceof PluginError) return error.message;
  if (typeof error === "object" && error !== null && "payload" in error) {
    return String((error as { payload: unknown }).payload);
  }
  if (error instanceof Error) return error.message ? `${error.name}: ${error.message}` : error.name;
  return String(error);
}

/** An Error's stack, on a line of its own, for the log. */
export function stackOf(error: unknown): string {
  return error instanceof Error && error.stack ? `\n${error.stack}` : "";
}
