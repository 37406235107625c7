//! The sessions this connection has open: each the host's session, what its views showed
//! the client, and the turn running in it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::Error;
use tokio_util::sync::CancellationToken;

use super::views::Shown;
use crate::agent::{Host, SessionHandle};
use crate::events::{CollectEvents, Event};

pub struct Open {
    pub id: String,
    pub handle: SessionHandle,
    pub shown: Arc<Mutex<Shown>>,
    /// Cancels the running turn; `None` when none runs.
    pub turn: Mutex<Option<CancellationToken>>,
}

#[derive(Default)]
pub struct Sessions {
    open: Mutex<HashMap<String, Arc<Open>>>,
}

impl Sessions {
    /// A new session of `host`, its views read (and recorded as shown) before it is answered.
    pub async fn create(&self, host: &Host) -> Result<Arc<Open>, Error> {
        let handle = host.sessions().create().map_err(internal)?;
        Ok(self.keep(host, handle).await)
    }

    /// The open session `id`.
    pub fn get(&self, id: &str) -> Result<Arc<Open>, Error> {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
            .ok_or_else(|| Error::invalid_params().data(format!("no open session {id}; call session/new or session/load")))
    }

    async fn keep(&self, host: &Host, handle: SessionHandle) -> Arc<Open> {
        let collected = CollectEvents::default();
        let id = {
            let mut session = handle.lock().await;
            host.refresh_views(&mut session, &collected).await;
            session.id().to_owned()
        };
        let mut shown = Shown::default();
        for event in collected.take() {
            if let Event::ViewChanged { view } = event {
                shown.changed(&view);
            }
        }
        let open = Arc::new(Open { id: id.clone(), handle, shown: Arc::new(Mutex::new(shown)), turn: Mutex::new(None) });
        self.open.lock().unwrap_or_else(|p| p.into_inner()).insert(id, open.clone());
        open
    }
}

pub fn internal(error: impl std::fmt::Display) -> Error {
    Error::internal_error().data(error.to_string())
}
