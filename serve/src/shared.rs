//! What a host reads of the shared log for a session it may not have open: the views as the
//! last event that changed them left them, and the id of the last event.

use agent_host::events::PluginView;
use agent_host::state::SessionStore;

/// The views the shared log has for `session`; none when it has none or they cannot be read
/// (the session's next view change writes them again).
pub fn logged_views(store: &dyn SessionStore, session: &str) -> Vec<PluginView> {
    logged_views_and_id(store, session).0
}

/// The views the shared log has for `session`, and the id of the event they are as of.
pub fn logged_views_and_id(store: &dyn SessionStore, session: &str) -> (Vec<PluginView>, Option<String>) {
    let Some(log) = store.shared() else { return (Vec::new(), None) };
    match log.views(session) {
        Ok(Some((json, seq))) => match serde_json::from_str(&json) {
            Ok(views) => (views, Some(super::log_stream::event_id(seq))),
            Err(error) => {
                tracing::warn!(session, "the shared log's views cannot be read: {error}");
                (Vec::new(), None)
            }
        },
        Ok(None) => (Vec::new(), None),
        Err(error) => {
            tracing::warn!(session, "cannot read the shared log's views: {error}");
            (Vec::new(), None)
        }
    }
}

/// The id of `session`'s last event in the shared log, `None` before the first.
pub fn last_event_id(store: &dyn SessionStore, session: &str) -> Option<String> {
    let seq = store.shared()?.last_event(session).ok()?;
    (seq > 0).then(|| super::log_stream::event_id(seq))
}
