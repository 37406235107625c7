//! `state.get`, `state.set`, `state.remove` and `state.read`.

use crate::runtime::call::CallState;
use crate::runtime::caps::StateUsage;

impl CallState {
    pub fn state_get(&mut self, key: String) -> Option<String> {
        match self.writes.get(&key) {
            Some(written) => written.clone(),
            None => {
                let plugin = self.plugin.clone();
                self.read_bag(&plugin.name, &key)
            }
        }
    }

    pub fn state_set(&mut self, key: String, value: String) -> wasmtime::Result<Result<(), String>> {
        self.caps.state_value(&key, value.len())?;
        // PostgreSQL's text cannot hold one, and SQLite's cuts a key there: no store keeps it.
        if key.contains('\0') {
            return Ok(Err(format!(
                "state key `{}` holds a NUL character; no store keeps one",
                key.escape_default()
            )));
        }
        if let Err(error) = serde_json::from_str::<serde::de::IgnoredAny>(&value) {
            return Ok(Err(format!("state value `{key}` is not JSON: {error}")));
        }
        self.account_write(&key, Some(value.len()))?;
        self.writes.insert(key, Some(value));
        Ok(Ok(()))
    }

    pub fn state_remove(&mut self, key: String) {
        // Removing only ever shrinks the state, so it cannot go over a cap.
        let _ = self.account_write(&key, None);
        self.writes.insert(key, None);
    }

    pub fn state_read(&mut self, namespace: String, key: String) -> Result<Option<String>, String> {
        if namespace == self.plugin.name {
            return Ok(self.state_get(key));
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

impl CallState {
    /// Counts a write of `key` (`new`: its value's bytes, `None`: removed) against the
    /// session caps of the plugin's state.
    fn account_write(&mut self, key: &str, new: Option<usize>) -> wasmtime::Result<()> {
        let namespace = &self.plugin.name;
        let old = match self.writes.get(key) {
            Some(written) => written.as_ref().map(String::len),
            None => self.bag.value_len(namespace, key),
        };
        let bag = &self.bag;
        self.caps.state_write(key, old, new, || {
            let (keys, bytes) = bag.usage(namespace);
            StateUsage { keys, bytes }
        })
    }
}
