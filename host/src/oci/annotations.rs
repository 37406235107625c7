//! What a plugin artifact's manifest says about it, under one prefix: the contract version
//! its component targets, the exports it implements and the grants it declares. In the
//! manifest, not in a blob, so a host knows what a plugin needs before fetching any.

use std::collections::BTreeMap;

use super::declared_grants::DeclaredGrants;
use super::error::OciError;

/// The prefix of every annotation the host writes and reads.
pub const PREFIX: &str = "dev.agent-host.plugin";
/// The `agent-host:plugin` WIT package version the component targets (`0.2.7`).
pub const CONTRACT: &str = "dev.agent-host.plugin.contract";
/// The exports it implements, comma-separated (`provide,call-tool,view`).
pub const EXPORTS: &str = "dev.agent-host.plugin.exports";
/// The grants it declares, as JSON (`{"process":true}`).
pub const GRANTS: &str = "dev.agent-host.plugin.grants";

/// A plugin artifact's annotations, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginAnnotations {
    pub contract: String,
    pub exports: Vec<String>,
    pub grants: DeclaredGrants,
}

impl PluginAnnotations {
    /// As the manifest carries them.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (CONTRACT.to_owned(), self.contract.clone()),
            (EXPORTS.to_owned(), self.exports.join(",")),
            (GRANTS.to_owned(), serde_json::to_string(&self.grants).unwrap_or_else(|_| "{}".to_owned())),
        ])
    }

    /// Read from the manifest of `reference`; `Err` names the annotation missing or unreadable.
    pub fn from_map(reference: &str, map: Option<&BTreeMap<String, String>>) -> Result<Self, OciError> {
        let get = |key: &str| {
            map.and_then(|map| map.get(key)).ok_or_else(|| OciError::NotAPlugin {
                reference: reference.to_owned(),
                detail: format!(
                    "its manifest has no `{key}` annotation (publish it with `agent-host plugin publish`)"
                ),
            })
        };
        let contract = get(CONTRACT)?.clone();
        let exports = get(EXPORTS)?.split(',').filter(|name| !name.is_empty()).map(str::to_owned).collect();
        let grants = serde_json::from_str(get(GRANTS)?).map_err(|error| OciError::NotAPlugin {
            reference: reference.to_owned(),
            detail: format!("its `{GRANTS}` annotation is not the grants a plugin may declare: {error}"),
        })?;
        Ok(Self { contract, exports, grants })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_read_back_as_written() {
        let grants: DeclaredGrants = toml::from_str("process = true\n[dirs.\"/w\"]\nwrite = true\n").unwrap();
        let written = PluginAnnotations {
            contract: "0.2.7".into(),
            exports: vec!["provide".into(), "call-tool".into()],
            grants,
        };
        let map = written.to_map();
        assert!(map.keys().all(|key| key.starts_with(PREFIX)));
        assert_eq!(PluginAnnotations::from_map("r", Some(&map)).unwrap(), written);
        let error = PluginAnnotations::from_map("reg/x:1", None).unwrap_err().to_string();
        assert!(error.contains("reg/x:1") && error.contains(CONTRACT), "{error}");
    }
}
