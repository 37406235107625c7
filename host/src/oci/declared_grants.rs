//! The grants a plugin declares it needs: written by its author in the plugin folder's
//! manifest, carried in its artifact's annotations and in `plugins.lock`, so an operator
//! sees (and the host checks) what a plugin needs before any of its bytes are fetched.
//!
//! The keys are `[plugin.grants]`'s, but a folder is named by its guest path alone: which
//! host folder backs it is the operator's choice, never the author's.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::Grants;

/// What a plugin declares it needs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeclaredGrants {
    /// Other plugins' state namespaces it reads.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub read_state: Vec<String>,
    /// Folders it expects, by guest path.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub dirs: BTreeMap<String, DeclaredDir>,
    /// It runs host processes.
    #[serde(skip_serializing_if = "is_false")]
    pub process: bool,
    /// Variables its processes need.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Its processes need the network.
    #[serde(skip_serializing_if = "is_false")]
    pub network: bool,
    /// It asks the deployment's model.
    #[serde(skip_serializing_if = "is_false")]
    pub model: bool,
    /// Its `review` decides calls in the operator's place.
    #[serde(skip_serializing_if = "is_false")]
    pub review: bool,
    /// Its `queued` starts turns.
    #[serde(skip_serializing_if = "is_false")]
    pub start_turns: bool,
    /// It starts child agents.
    #[serde(skip_serializing_if = "is_false")]
    pub agents: bool,
}

/// A folder a plugin expects at a guest path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeclaredDir {
    /// It writes there (else it only reads).
    #[serde(skip_serializing_if = "is_false")]
    pub write: bool,
}

fn is_false(value: &bool) -> bool {
    !value
}

impl DeclaredGrants {
    /// Every declared grant `granted` lacks, each as the `[plugin.grants]` line to add.
    pub fn missing_from(&self, granted: &Grants) -> Vec<String> {
        let mut missing = Vec::new();
        for namespace in &self.read_state {
            if !granted.read_state.contains(namespace) {
                missing.push(format!("read_state = [\"{namespace}\"]"));
            }
        }
        for (guest, dir) in &self.dirs {
            match granted.dirs.get(guest) {
                None => missing.push(format!(
                    "dirs.\"{guest}\" = {{ host = \"FOLDER\"{} }}",
                    if dir.write { ", write = true" } else { "" }
                )),
                Some(given) if dir.write && !given.write => {
                    missing.push(format!("dirs.\"{guest}\".write = true"))
                }
                Some(_) => {}
            }
        }
        for (flag, wanted, given) in [
            ("process", self.process, granted.process),
            ("network", self.network, granted.network),
            ("model", self.model, granted.model),
            ("review", self.review, granted.review),
            ("start_turns", self.start_turns, granted.start_turns),
            ("agents", self.agents, granted.agents),
        ] {
            if wanted && !given {
                missing.push(format!("{flag} = true"));
            }
        }
        for name in &self.env {
            if !granted.env.contains(name) {
                missing.push(format!("env = [\"{name}\"]"));
            }
        }
        missing
    }

    /// What `newer` declares beyond this: each grant added or widened (a folder read →
    /// write), named as [`DeclaredGrants::missing_from`] names it.
    pub fn widened_by(&self, newer: &DeclaredGrants) -> Vec<String> {
        newer.missing_from(&self.as_granted())
    }

    /// These grants as the least `[plugin.grants]` that holds them (folders backed by
    /// nothing yet): what an entry added for the plugin starts from.
    pub fn as_granted(&self) -> Grants {
        Grants {
            read_state: self.read_state.clone(),
            dirs: self
                .dirs
                .iter()
                .map(|(guest, dir)| {
                    (guest.clone(), crate::config::DirGrant { host: Default::default(), write: dir.write })
                })
                .collect(),
            process: self.process,
            env: self.env.clone(),
            network: self.network,
            model: self.model,
            review: self.review,
            start_turns: self.start_turns,
            agents: self.agents,
            ..Grants::default()
        }
    }

    /// What `granted` allows, in the same terms: what `agent-host plugin list` shows of an
    /// entry's `[plugin.grants]`.
    pub fn of_granted(granted: &Grants) -> Self {
        Self {
            read_state: granted.read_state.clone(),
            dirs: granted
                .dirs
                .iter()
                .map(|(guest, dir)| (guest.clone(), DeclaredDir { write: dir.write }))
                .collect(),
            process: granted.process,
            env: granted.env.clone(),
            network: granted.network,
            model: granted.model,
            review: granted.review,
            start_turns: granted.start_turns,
            agents: granted.agents,
        }
    }

    /// The on-or-off grants it declares, by their `[plugin.grants]` keys.
    pub fn flags_set(&self) -> impl Iterator<Item = &'static str> {
        [
            ("process", self.process),
            ("network", self.network),
            ("model", self.model),
            ("review", self.review),
            ("start_turns", self.start_turns),
            ("agents", self.agents),
        ]
        .into_iter()
        .filter_map(|(flag, set)| set.then_some(flag))
    }

    /// Whether it declares nothing at all.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// The grants as one line of text, for a person: `process, dirs "/workspace" (write)`.
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if !self.read_state.is_empty() {
            parts.push(format!("read_state {}", self.read_state.join(", ")));
        }
        for (guest, dir) in &self.dirs {
            parts.push(format!("dirs \"{guest}\" ({})", if dir.write { "write" } else { "read" }));
        }
        parts.extend(self.flags_set().map(str::to_owned));
        if !self.env.is_empty() {
            parts.push(format!("env {}", self.env.join(", ")));
        }
        if parts.is_empty() { "none".to_owned() } else { parts.join(", ") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(text: &str) -> DeclaredGrants {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn each_grant_the_config_lacks_is_named_as_the_key_to_add() {
        let wants = declared(
            "process = true\nmodel = true\nread_state = [\"lamp\"]\n[dirs.\"/workspace\"]\nwrite = true\n",
        );
        assert_eq!(
            wants.missing_from(&Grants::default()),
            [
                "read_state = [\"lamp\"]",
                "dirs.\"/workspace\" = { host = \"FOLDER\", write = true }",
                "process = true",
                "model = true"
            ]
        );
        let mut granted = wants.as_granted();
        assert!(wants.missing_from(&granted).is_empty());
        granted.dirs.get_mut("/workspace").unwrap().write = false;
        assert_eq!(wants.missing_from(&granted), ["dirs.\"/workspace\".write = true"]);
    }

    #[test]
    fn a_newer_version_widening_a_folder_or_adding_a_grant_is_named() {
        let old = declared("[dirs.\"/w\"]\n");
        let newer = declared("network = true\n[dirs.\"/w\"]\nwrite = true\n");
        assert_eq!(old.widened_by(&newer), ["dirs.\"/w\".write = true", "network = true"]);
        assert!(newer.widened_by(&old).is_empty());
    }

    #[test]
    fn an_unknown_key_is_refused_by_name() {
        let error = toml::from_str::<DeclaredGrants>("proces = true").unwrap_err().to_string();
        assert!(error.contains("proces"), "{error}");
    }
}
