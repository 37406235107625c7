use crate::bindings::agent_host::plugin::types::{Capabilities, CommandSpec, PluginManifest as Manifest};

impl Manifest {
    /// A manifest with no capabilities and no commands.
    pub fn new(name: &str, version: &str) -> Self {
        Manifest {
            name: name.to_owned(),
            version: version.to_owned(),
            capabilities: Capabilities::empty(),
            commands: Vec::new(),
        }
    }

    /// Declares implemented exports, e.g. `Capabilities::PROVIDE | Capabilities::CALL_TOOL`.
    pub fn with(mut self, capabilities: Capabilities) -> Self {
        self.capabilities |= capabilities;
        self
    }

    /// Declares an operator command (this also declares the `command` capability).
    pub fn command(mut self, name: &str, usage: &str, description: &str) -> Self {
        self.capabilities |= Capabilities::COMMAND;
        self.commands.push(CommandSpec {
            name: name.to_owned(),
            description: description.to_owned(),
            usage: usage.to_owned(),
        });
        self
    }
}
