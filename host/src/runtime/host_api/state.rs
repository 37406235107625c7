use crate::runtime::bindings::agent_host::plugin::state::Host;
use crate::runtime::call::{CallState, MAX_STATE_VALUE_BYTES};

impl Host for CallState {
    fn get(&mut self, key: String) -> Option<String> {
        match self.writes.get(&key) {
            Some(written) => written.clone(),
            None => {
                let plugin = self.plugin.clone();
                self.read_bag(&plugin.name, &key)
            }
        }
    }

    fn set(&mut self, key: String, value: String) -> Result<(), String> {
        if value.len() > MAX_STATE_VALUE_BYTES {
            return Err(format!(
                "state value `{key}` is {} bytes; the limit is {MAX_STATE_VALUE_BYTES}",
                value.len()
            ));
        }
        if let Err(error) = serde_json::from_str::<serde::de::IgnoredAny>(&value) {
            return Err(format!("state value `{key}` is not JSON: {error}"));
        }
        self.writes.insert(key, Some(value));
        Ok(())
    }

    fn remove(&mut self, key: String) {
        self.writes.insert(key, None);
    }

    fn read(&mut self, namespace: String, key: String) -> Result<Option<String>, String> {
        if namespace == self.plugin.name {
            return Ok(self.get(key));
        }
        if !self.read_grants.contains(&namespace) {
            return Err(format!(
                "plugin `{}` may not read the state of `{namespace}`: grant it with \
                 `read_state = [\"{namespace}\"]` under this plugin's [plugin.grants] in config.toml",
                self.plugin.name
            ));
        }
        Ok(self.read_bag(&namespace, &key))
    }
}
