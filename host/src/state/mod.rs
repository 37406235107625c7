//! Per-session state: the bag plugins keep their memory in, and the conversation history.
//!
//! A [`Session`] is loaded from the [`SessionStore`] when used and written back after every
//! step (a model reply, a tool result), so a killed host loses at most the step in flight.
//! SQLite is the default store; PostgreSQL (`[storage] url`) is the one hosts on several
//! machines share. A
//! session open in one process is leased to it in the store, so a second process cannot
//! write it too ([`lease`]), and a step never overwrites a history position.

mod bag;
mod checkpoint;
mod copy;
pub mod document;
mod estimated_usage;
mod group_commit;
mod landing;
pub mod lease;
mod listing;
mod message_rows;
mod model_usage;
mod open;
mod postgres;
mod schema;
mod session;
mod sessions;
pub mod shared;
mod sqlite;
mod store;
#[cfg(test)]
mod store_tests;
#[cfg(test)]
pub(crate) mod test_stores;
mod wait;

pub use bag::{Seeds, StateBag, StateChange};
pub use copy::{Copied, copy_sessions};
pub use estimated_usage::{ESTIMATED_USAGE_NAMESPACE, EstimatedUsage};
pub use listing::{SessionEntry, TITLE_CHARS};
pub use model_usage::{MODEL_USAGE_NAMESPACE, PluginModelUsage};
pub use open::{open_named_store, open_store};
pub use postgres::PostgresStore;
pub use session::{CompactError, Session};
pub use sessions::{DEFAULT_LEASE, SessionHandle, Sessions, new_session_id};
pub use sqlite::SqliteStore;
pub use store::{SessionStore, Step, StoreError, StoreFuture, StoredSession, StoredView, ViewChange};

/// What the host's own namespaces of a session's bag begin with: its standing approvals, a
/// served session's owner, plugins' model usage, the estimated usage of its own calls. No
/// plugin's (plugin names hold no dot).
pub const HOST_NAMESPACES: &str = "agent-host.";

/// The bag namespace and key a session's owner is kept under (a principal of `serve`, as a
/// JSON string): the host's own namespace, which no plugin can be named. The store lists and
/// counts sessions by it ([`SessionStore::entries_owned`]).
pub const OWNER: (&str, &str) = ("agent-host.serve", "owner");
