//! Typed access to the session's state bag.
//!
//! Keys live in the calling plugin's namespace. Writes take effect when the call succeeds;
//! a call that traps or returns an error leaves the bag untouched.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::host::state as raw;

/// Reads `key` as a `T`; `Ok(None)` when it is not set.
pub fn get<T: DeserializeOwned>(key: &str) -> Result<Option<T>, String> {
    raw::get(key).map(|json| decode(key, &json)).transpose()
}

/// Reads `key` as a `T`, or `T::default()` when it is not set.
pub fn get_or_default<T: DeserializeOwned + Default>(key: &str) -> Result<T, String> {
    Ok(get(key)?.unwrap_or_default())
}

/// Writes `value` under `key`.
pub fn set<T: Serialize + ?Sized>(key: &str, value: &T) -> Result<(), String> {
    let json = serde_json::to_string(value).map_err(|error| format!("cannot store `{key}`: {error}"))?;
    raw::set(key, &json)
}

/// Removes `key`.
pub fn remove(key: &str) {
    raw::remove(key)
}

/// Reads `key` from another plugin's namespace; needs a `read_state` grant in config.toml,
/// which the plugin declares from `configure` with [`Requirement::ReadsState`](crate::Requirement).
pub fn read<T: DeserializeOwned>(namespace: &str, key: &str) -> Result<Option<T>, String> {
    raw::read(namespace, key)?.map(|json| decode(key, &json)).transpose()
}

fn decode<T: DeserializeOwned>(key: &str, json: &str) -> Result<T, String> {
    serde_json::from_str(json).map_err(|error| format!("stored `{key}` does not fit: {error}"))
}
