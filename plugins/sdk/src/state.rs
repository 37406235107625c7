//! Typed access to the session's state bag.
//!
//! Keys live in the calling plugin's namespace. Writes take effect when the call succeeds;
//! a call that traps or returns an error leaves the bag untouched.

use std::any::Any;
use std::cell::RefCell;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::context::same_text;
use crate::host::state as raw;

/// Reads `key` as a `T`; `Ok(None)` when it is not set.
pub fn get<T: DeserializeOwned>(key: &str) -> Result<Option<T>, String> {
    raw::get(key).map(|json| decode(key, &json)).transpose()
}

/// Reads `key` as a `T`, or `T::default()` when it is not set.
pub fn get_or_default<T: DeserializeOwned + Default>(key: &str) -> Result<T, String> {
    Ok(get(key)?.unwrap_or_default())
}

/// Writes `value` under `key`. From `configure` (contract 0.2.10) it seeds `key`: every
/// session created while that configuration is loaded starts with `value`.
pub fn set<T: Serialize + ?Sized>(key: &str, value: &T) -> Result<(), String> {
    let json = serde_json::to_string(value).map_err(|error| format!("cannot store `{key}`: {error}"))?;
    raw::set(key, &json)
}

/// Reads `key` as [`get`] does, parsed at most once per instance for one stored text: the
/// host may make several calls in one instance (a tool call, then the contribution and view it
/// asks ahead), and a value read or written with [`set_kept`] is kept, so a later read that
/// finds the same text gets a copy instead of parsing it again. The stored text is always
/// read, so a value changed meanwhile is never missed.
pub fn get_kept<T: DeserializeOwned + Clone + 'static>(key: &str) -> Result<Option<T>, String> {
    let Some(text) = raw::get(key) else {
        return Ok(None);
    };
    let found = KEPT.with_borrow(|kept| {
        kept.iter()
            .find(|entry| entry.key == key && same_text(&entry.text, &text))
            .and_then(|entry| entry.value.downcast_ref::<T>().cloned())
    });
    if let Some(value) = found {
        return Ok(Some(value));
    }
    let value: T = decode(key, &text)?;
    keep(key, text, value.clone());
    Ok(Some(value))
}

/// [`get_kept`], or `T::default()` when `key` is not set.
pub fn get_kept_or_default<T: DeserializeOwned + Clone + Default + 'static>(key: &str) -> Result<T, String> {
    Ok(get_kept(key)?.unwrap_or_default())
}

/// Writes `value` under `key` as [`set`] does, and keeps it for a later [`get_kept`] in this
/// instance. Returns the text it was stored as.
pub fn set_kept<T: Serialize + Clone + 'static>(key: &str, value: &T) -> Result<String, String> {
    let json = serde_json::to_string(value).map_err(|error| format!("cannot store `{key}`: {error}"))?;
    raw::set(key, &json)?;
    keep(key, json.clone(), value.clone());
    Ok(json)
}

/// A value of this instance's state with the text it was read or written as.
struct Kept {
    key: String,
    text: String,
    value: Box<dyn Any>,
}

thread_local! {
    /// What [`get_kept`] and [`set_kept`] saw last, one entry per key; an instance runs one
    /// call at a time.
    static KEPT: RefCell<Vec<Kept>> = const { RefCell::new(Vec::new()) };
}

fn keep<T: 'static>(key: &str, text: String, value: T) {
    KEPT.with_borrow_mut(|kept| {
        kept.retain(|entry| entry.key != key);
        kept.push(Kept { key: key.to_owned(), text, value: Box::new(value) });
    });
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
