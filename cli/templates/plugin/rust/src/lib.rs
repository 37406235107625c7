//! `{{name}}`: one tool, `greet`, whose greeting comes from the plugin's config, and a
//! counter of greetings kept in the session's state bag.

use agent_host_sdk::prelude::*;
use serde::{Deserialize, Serialize};

/// The `[plugin.config]` table, with defaults.
#[derive(Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Config {
    greeting: String,
}

impl Default for Config {
    fn default() -> Self {
        Self { greeting: "Hello".to_owned() }
    }
}

/// The arguments of `greet`; the model sees this struct's JSON Schema.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GreetArgs {
    /// The name to greet.
    name: String,
}

fn greet(ctx: &Context<Config>, GreetArgs { name }: GreetArgs) -> Result<String, String> {
    let count: u64 = state::get_or_default("count")?;
    state::set("count", &(count + 1))?;
    events::emit("greeted", &json!({ "name": name }), Some(&format!("greeted {name}")));
    Ok(format!("{}, {name}!", ctx.config.greeting))
}

fn plugin() -> Plugin<Config> {
    Plugin::new("{{name}}", env!("CARGO_PKG_VERSION"))
        .configure(|config: &mut Config| {
            if config.greeting.trim().is_empty() {
                return Err("`greeting` must not be blank".to_owned());
            }
            Ok(Vec::new())
        })
        .tool(Tool::new("greet", "Greets someone by name.", greet))
        .provide(|_, tools| {
            tools.instructions("When the user introduces themselves, greet them with the `greet` tool.").reusable()
        })
        .command(Command::new("greetings", "/greetings", "Shows how many greetings were sent", |_, _| {
            let count: u64 = state::get_or_default("count")?;
            Ok(format!("{count} greetings so far"))
        }))
}

export_plugin!(plugin);
