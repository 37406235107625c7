//! The host's and the plugins' slash commands, announced as `available_commands_update` and
//! run when a prompt is `/name args`.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, UnstructuredCommandInput,
};

use agent_host::agent::{BUILT_IN_COMMANDS, Host};

pub fn available(host: &Host) -> AvailableCommandsUpdate {
    let mut commands: Vec<AvailableCommand> = BUILT_IN_COMMANDS
        .iter()
        .map(|name| AvailableCommand::new(*name, format!("the host's /{name} (/help says more)")))
        .collect();
    for plugin in host.plugins().plugins().iter() {
        for command in plugin.commands() {
            let mut available = AvailableCommand::new(command.name.clone(), command.description.clone());
            if !command.usage.trim().is_empty() {
                available = available.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(command.usage.clone()),
                ));
            }
            commands.push(available);
        }
    }
    AvailableCommandsUpdate::new(commands)
}
