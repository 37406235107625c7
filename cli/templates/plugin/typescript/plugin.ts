/** `{{name}}`: one tool, `greet`, whose greeting comes from the plugin's config, and a
 * counter of greetings kept in the session's state bag. */

import { Plugin, PluginError, events, state, t } from "agent-host-sdk";

// Its version is package.json's (the bundle carries the file's values).
import manifest from "./package.json";

/** The `[plugin.config]` table, with defaults. */
const Config = t.object({ greeting: t.optional(t.string(), "Hello") });

/** The arguments of `greet`; the model sees this schema, `greet` gets its type. */
const GreetArgs = t.object({ name: t.string("The name to greet.") });

export default new Plugin("{{name}}", manifest.version, Config)
  .configure((config) => {
    if (!config.greeting?.trim()) throw new PluginError("`greeting` must not be blank");
  })
  .tool("greet", "Greets someone by name.", GreetArgs, (ctx, { name }) => {
    const count = state.get<number>("count") ?? 0;
    state.set("count", count + 1);
    events.emit("greeted", { name }, `greeted ${name}`);
    return `${ctx.config.greeting}, ${name}!`;
  })
  .provide((_ctx, contribution) =>
    contribution.instructions("When the user introduces themselves, greet them with the `greet` tool.").reusable(),
  )
  .command("greetings", "/greetings", "Shows how many greetings were sent", () => {
    return `${state.get<number>("count") ?? 0} greetings so far`;
  });
