use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The configuration of a plugin that has none: `{}` (or no table at all), and an error
/// that says so for any key.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct NoConfig;

impl<'de> Deserialize<'de> for NoConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let table = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        match table.keys().next() {
            None => Ok(NoConfig),
            Some(key) => Err(serde::de::Error::custom(format!(
                "this plugin takes no configuration (found `{key}`); remove its [plugin.config] table"
            ))),
        }
    }
}

impl Serialize for NoConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serde_json::Map::new().serialize(serializer)
    }
}
