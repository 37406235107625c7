//! What loaded plugins need from the host, checked against their `[plugin.grants]` at load:
//! a feature that needs a missing grant would otherwise do nothing, silently; an export that
//! acts in the operator's place (`powers.rs`) would otherwise act unasked.

use std::sync::Arc;

use super::loaded::LoadedPlugin;
use super::powers;
use super::types::Requirement;
use crate::config::{Config, ConfigError, Grants};

/// Every requirement a plugin's configuration declared (contract 0.2) must be granted, and
/// every plugin whose state it reads (by requirement or by `read_state` grant) must be
/// loaded. The error points at the plugin's entry and names the grant to add.
pub(super) fn check_requirements(config: &Config, plugins: &[Arc<LoadedPlugin>]) -> Result<(), ConfigError> {
    let loaded = |name: &str| plugins.iter().any(|p| p.name() == name);
    let enabled = config.plugins.iter().enumerate().filter(|(_, p)| p.enabled);
    for ((index, entry), plugin) in enabled.zip(plugins) {
        let at = |message: String| config.error_at(entry.origin_span(), format!("plugin[{index}]"), message);
        if let Some(power) = powers::ungranted(|export| plugin.implements(export), &entry.grants) {
            return Err(at(format!(
                "{} implements `{}`, which may {}, but is not granted it: add `{}` under its [plugin.grants]",
                plugin.label(),
                power.export_name,
                power.what,
                power.grant
            )));
        }
        for requirement in plugin.requires() {
            if let Some(grant) = missing_grant(requirement, &entry.grants) {
                return Err(at(format!(
                    "{} {} but is not granted it: add {grant} under its [plugin.grants]",
                    plugin.label(),
                    needs(requirement)
                )));
            }
            if let Requirement::ReadsState(namespace) = requirement
                && !loaded(namespace)
            {
                return Err(at(format!(
                    "{} reads the state of `{namespace}`, but no loaded plugin has that name",
                    plugin.label()
                )));
            }
        }
        for namespace in &entry.grants.read_state {
            if !loaded(namespace) {
                return Err(at(format!(
                    "{} is granted to read the state of `{namespace}`, but no loaded plugin has that name",
                    plugin.label()
                )));
            }
        }
    }
    Ok(())
}

/// What a plugin with `requirement` does, for the error.
fn needs(requirement: &Requirement) -> String {
    match requirement {
        Requirement::ReadsState(namespace) => format!("reads the state of `{namespace}`"),
        Requirement::RunsProcesses => "runs processes".to_owned(),
        Requirement::Network => "needs the network for its processes".to_owned(),
    }
}

/// The grant `requirement` needs, as the line to add, if `grants` lacks it.
fn missing_grant(requirement: &Requirement, grants: &Grants) -> Option<String> {
    match requirement {
        Requirement::ReadsState(namespace) => (!grants.read_state.iter().any(|granted| granted == namespace))
            .then(|| format!("`read_state = [\"{namespace}\"]`")),
        Requirement::RunsProcesses => (!grants.process).then(|| "`process = true`".to_owned()),
        Requirement::Network => (!grants.network).then(|| "`network = true`".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_requirement_names_the_grant_it_lacks() {
        let none = Grants::default();
        let reads = Requirement::ReadsState("lamp".into());
        assert_eq!(missing_grant(&reads, &none).as_deref(), Some("`read_state = [\"lamp\"]`"));
        assert_eq!(missing_grant(&Requirement::RunsProcesses, &none).as_deref(), Some("`process = true`"));
        assert_eq!(missing_grant(&Requirement::Network, &none).as_deref(), Some("`network = true`"));

        let granted =
            Grants { read_state: vec!["lamp".into()], process: true, network: true, ..Grants::default() };
        for requirement in [reads, Requirement::RunsProcesses, Requirement::Network] {
            assert_eq!(missing_grant(&requirement, &granted), None, "{requirement:?}");
        }
        let other = Grants { read_state: vec!["clock".into()], ..Grants::default() };
        assert!(missing_grant(&Requirement::ReadsState("lamp".into()), &other).is_some());
    }
}
