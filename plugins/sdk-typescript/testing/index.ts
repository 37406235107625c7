/**
 * Native stand-ins for the host, for plugins' unit tests (Node, no component): `Harness`
 * configures a plugin and makes its calls as the host would, in a session of its own, and
 * shows what they wrote, emitted and logged.
 *
 * ```ts
 * const harness = new Harness(plugin, { greeting: "Hi" });
 * assert.equal(harness.tool("greet", { name: "Ada" }), "Hi, Ada!");
 * assert.equal(harness.stored("count"), 1);
 * ```
 */

export { Trapped } from "../guest.ts";
export { Harness } from "./harness.ts";
export type { Emitted, ModelStandIn, ProcessStandIn } from "./session.ts";
