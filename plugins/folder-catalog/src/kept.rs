//! A catalog found once (when the session starts, or by the plugin's command) and kept in the
//! session's state, so that no model call reads a folder.

use agent_host_sdk::state;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The state key the catalog is kept under.
const CATALOG_KEY: &str = "catalog";

/// What a plugin finds in its folders. The plugin says how it is found, what is reported of
/// it and what of it the system prompt offers; how it is kept is the same for every plugin.
pub trait FolderCatalog: Serialize + DeserializeOwned {
    /// The plugin's configuration, which names the folders.
    type Config;

    /// What the catalog holds, plural, as the host's log names it: `skills`, `agents`.
    const FOUND: &'static str;

    /// Reads the configured folders.
    fn scan(config: &Self::Config) -> Self;

    /// Tells the operator and the host's log what a scan found and skipped.
    fn report(&self);

    /// What the system prompt offers of the catalog; none when there is nothing to offer.
    fn instructions(&self, config: &Self::Config) -> Option<String>;

    /// The catalog as kept, without scanning: for `provide` and views, which must not read
    /// folders on every call.
    fn kept() -> Result<Option<Self>, String> {
        state::get(CATALOG_KEY)
    }

    /// The session's catalog: the one kept, or, when there is none yet (a tool called before
    /// the session's first turn, or a session older than the plugin's loading), a scan kept now.
    fn current(config: &Self::Config) -> Result<Self, String> {
        match Self::kept()? {
            Some(catalog) => Ok(catalog),
            None => Self::rescan(config),
        }
    }

    /// Scans the configured folders anew, reports what it found and keeps the result.
    fn rescan(config: &Self::Config) -> Result<Self, String> {
        let catalog = Self::scan(config);
        catalog.report();
        state::set(CATALOG_KEY, &catalog)?;
        Ok(catalog)
    }
}
