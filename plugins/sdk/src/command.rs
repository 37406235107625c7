use crate::Context;
use crate::bindings::agent_host::plugin::types::CommandSpec;

/// An operator command such as `/todos`, answered without a model call.
pub struct Command<C> {
    pub(crate) name: &'static str,
    usage: &'static str,
    description: &'static str,
    run: fn(&Context<C>, &str) -> Result<String, String>,
}

impl<C> Command<C> {
    /// `/name`, shown in `/help` as `usage` and `description`; `run` gets the text after
    /// the name, trimmed.
    pub fn new(
        name: &'static str,
        usage: &'static str,
        description: &'static str,
        run: fn(&Context<C>, &str) -> Result<String, String>,
    ) -> Self {
        Self { name, usage, description, run }
    }

    pub(crate) fn spec(&self) -> CommandSpec {
        CommandSpec {
            name: self.name.to_owned(),
            description: self.description.to_owned(),
            usage: self.usage.to_owned(),
        }
    }

    pub(crate) fn call(&self, ctx: &Context<C>, args: &str) -> Result<String, String> {
        (self.run)(ctx, args.trim())
    }
}
