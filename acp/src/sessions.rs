//! The sessions this connection has open: each the host's session, what its views showed
//! the client, the turn running in it, and the child agents that turn runs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::Error;
use tokio_util::sync::CancellationToken;

use super::children::Children;
use super::views::Shown;
use agent_host::agent::{Host, InputWaiting, SessionHandle};
use agent_host::events::{CollectEvents, Event};
use agent_host::unpoisoned::LockUnpoisoned as _;

pub struct Open {
    pub id: String,
    pub handle: SessionHandle,
    pub shown: Arc<Mutex<Shown>>,
    /// Cancels the running turn; `None` when none runs.
    pub turn: Mutex<Option<CancellationToken>>,
    /// Marked when a prompt arrives while a turn runs: the turn ends at its next
    /// continuation, and the editor's prompt goes next.
    pub input: InputWaiting,
    /// Its child agents as the client is shown them.
    pub children: Arc<Children>,
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

    /// Session `id` from the store, kept open (the one already open when it is).
    pub async fn open_stored(&self, host: &Host, id: &str) -> Result<Arc<Open>, Error> {
        if let Ok(open) = self.get(id) {
            return Ok(open);
        }
        match host.sessions().open(id) {
            Ok(Some(handle)) => Ok(self.keep(host, handle).await),
            Ok(None) => Err(Error::invalid_params().data(format!("no session {id} in the store"))),
            Err(error) => Err(Error::invalid_request().data(error.to_string())),
        }
    }

    /// Lets go of session `id`: its turn cancelled, its lease released when the turn is gone.
    pub fn close(&self, id: &str) -> Result<(), Error> {
        let open = self.open.lock_unpoisoned().remove(id);
        let open = open.ok_or_else(|| Error::invalid_params().data(format!("no open session {id}")))?;
        super::prompt::cancel(&open);
        Ok(())
    }

    /// The open session `id`.
    pub fn get(&self, id: &str) -> Result<Arc<Open>, Error> {
        self.open.lock_unpoisoned().get(id).cloned().ok_or_else(|| {
            Error::invalid_params().data(format!("no open session {id}; call session/new or session/load"))
        })
    }

    async fn keep(&self, host: &Host, handle: SessionHandle) -> Arc<Open> {
        let collected = CollectEvents::default();
        let (id, input) = {
            let mut session = handle.lock().await;
            host.refresh_views(&mut session, &collected).await;
            (session.id().to_owned(), session.input_waiting().clone())
        };
        let mut shown = Shown::default();
        for event in collected.take() {
            if let Event::ViewChanged { view } = event {
                shown.changed(&view);
            }
        }
        let open = Arc::new(Open {
            id: id.clone(),
            handle,
            shown: Arc::new(Mutex::new(shown)),
            turn: Mutex::new(None),
            input,
            children: Arc::default(),
        });
        self.open.lock_unpoisoned().insert(id, open.clone());
        open
    }
}

pub fn internal(error: impl std::fmt::Display) -> Error {
    Error::internal_error().data(error.to_string())
}
