//! What the server keeps: the host, who may call, and each session it has open — its owner,
//! event hub, pending approvals and running turn — and the turns each principal runs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use tokio_util::sync::CancellationToken;

use super::api::{ApiError, SessionSummary};
use super::approver::HttpApprover;
use super::auth::{Principal, Principals};
use super::children::{Lineage, stored_lineage};
use super::hub::Hub;
use super::relay::Relay;
use super::wakers::Wakers;
use agent_host::agent::{Host, InputWaiting, SessionHandle};
use agent_host::config::ServeConfig;
use agent_host::state::shared::Moved;
use agent_host::state::{OWNER, StoreError};
use agent_host::unpoisoned::LockUnpoisoned as _;

/// Sessions a list reads at most.
const LIST_LIMIT: usize = 1_000;

/// Where hosts share the store, how long a request waits for another host to let go of
/// the session it wants: a host lets a session go as soon as it is idle, so a longer wait
/// means a turn runs there.
const HANDOFF: Duration = Duration::from_millis(1_500);
const HANDOFF_RETRY: Duration = Duration::from_millis(25);

/// What a host keeps where hosts share the store: the relay its events go out by, and the
/// streams to wake when another host moved a session.
pub struct SharedServe {
    pub relay: Arc<Relay>,
    pub wakers: Arc<Wakers>,
    /// The sessions whose turn another host was asked to cancel, for [`App::cancel_here`].
    pub cancels: Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<String>>>,
}

pub struct App {
    pub host: Arc<Host>,
    pub principals: Principals,
    pub limits: ServeConfig,
    open: Mutex<HashMap<String, Arc<Open>>>,
    turns_by_principal: Mutex<HashMap<String, usize>>,
    /// Held while a session is counted and created, so two at once cannot pass the cap.
    creating: tokio::sync::Mutex<()>,
    /// Cancelled on SIGTERM: streams close, new turns are refused, `readyz` says so.
    pub shutdown: CancellationToken,
    /// What the turns did, for `GET /metrics`.
    pub metrics: super::metrics::Metrics,
    /// `Some` where hosts share the store: then any host answers for any session.
    pub shared: Option<SharedServe>,
}

/// A session the server has open.
pub struct Open {
    pub id: String,
    pub owner: String,
    pub handle: SessionHandle,
    pub hub: Arc<Hub>,
    pub approvals: Arc<HttpApprover>,
    pub turn: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Marked when a prompt or a command arrives while a turn runs: the turn then ends at its
    /// next continuation, and the operator's input goes next.
    pub input: InputWaiting,
    /// The plugins' status lines as last read, shown while a turn holds the session.
    pub status: Mutex<Vec<String>>,
    last_used: Mutex<Instant>,
}

impl Open {
    pub fn busy(&self) -> bool {
        self.turn.lock_unpoisoned().as_ref().is_some_and(|task| !task.is_finished())
    }

    /// Marks the session used now: it is kept open a while longer.
    pub fn touch(&self) {
        *self.last_used.lock_unpoisoned() = Instant::now();
    }

    /// Whether nothing uses it: no turn, no stream, and no request for `idle`.
    fn idle_for(&self, idle: Duration) -> bool {
        !self.busy() && self.hub.streams() == 0 && self.last_used.lock_unpoisoned().elapsed() >= idle
    }
}

/// Whether only the map of open sessions holds `open`: no request or turn has it in hand.
fn unheld(open: &Arc<Open>) -> bool {
    Arc::strong_count(open) == 1
}

impl App {
    pub fn new(host: Arc<Host>, principals: Principals, limits: ServeConfig) -> Self {
        let shutdown = CancellationToken::new();
        let shared = share(&host, &limits, &shutdown);
        Self {
            host,
            principals,
            limits,
            open: Mutex::new(HashMap::new()),
            turns_by_principal: Mutex::new(HashMap::new()),
            creating: tokio::sync::Mutex::new(()),
            shutdown,
            metrics: Default::default(),
            shared,
        }
    }

    /// A new session owned by `principal`, its owner stored with it; `429` when she has
    /// `max_sessions_per_principal` already.
    pub async fn create(&self, principal: &Principal) -> Result<Arc<Open>, ApiError> {
        let _creating = self.creating.lock().await;
        let store = self.host.sessions().store();
        let cap = self.limits.max_sessions_per_principal;
        let kept = store.count_owned(&principal.name, cap).map_err(internal)?;
        if kept >= cap {
            return Err(ApiError(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "you have {cap} sessions, the most `[serve] max_sessions_per_principal` allows; \
                     delete one (DELETE /v1/sessions/{{id}}) to start another"
                ),
            ));
        }
        let handle = self.host.sessions().create().map_err(internal)?;
        {
            let mut session = handle.lock().await;
            session.bag().put(
                OWNER.0,
                OWNER.1,
                Some(serde_json::Value::from(principal.name.clone()).to_string()),
            );
            session.commit_async(&**store).await.map_err(internal)?;
        }
        Ok(self.keep(handle, principal.name.clone()).await)
    }

    /// Session `id` if `principal` may use it: its owner, or an admin. Anything else is
    /// the same 404 as a session that does not exist, decided before the session is opened
    /// (and so leased): a request for another's session keeps no one out of it.
    pub async fn session(&self, principal: &Principal, id: &str) -> Result<Arc<Open>, ApiError> {
        let open = self.lock_open().get(id).cloned();
        let open = match open {
            Some(open) => open,
            None => {
                let owner = self.stored_owner(id)?;
                if !may_use(principal, &owner) {
                    return Err(ApiError::not_found());
                }
                let handle = self.open_handle(id).await?;
                self.keep(handle, owner).await
            }
        };
        if may_use(principal, &open.owner) {
            open.touch();
            Ok(open)
        } else {
            Err(ApiError::not_found())
        }
    }

    /// Opens session `id` here, leasing it. Where hosts share the store, another host that
    /// has it is given [`HANDOFF`] to let it go.
    async fn open_handle(&self, id: &str) -> Result<SessionHandle, ApiError> {
        let deadline = Instant::now() + HANDOFF;
        loop {
            match self.host.sessions().open(id) {
                Ok(Some(handle)) => return Ok(handle),
                Ok(None) => return Err(ApiError::not_found()),
                Err(StoreError::Leased { .. }) if self.shared.is_some() && Instant::now() < deadline => {
                    tokio::time::sleep(HANDOFF_RETRY).await;
                }
                // Which process holds it (pid, host) is the operator's to know, not a caller's.
                Err(StoreError::Leased { .. }) => return Err(in_use(id, self.shared.is_some())),
                Err(error) => return Err(internal(error)),
            }
        }
    }

    /// Whether `principal` may use session `id`, read from the store without opening it (a
    /// host that does not have it open answers so); `404` otherwise, as for none.
    pub fn check_owner(&self, principal: &Principal, id: &str) -> Result<String, ApiError> {
        let owner = match self.lock_open().get(id) {
            Some(open) => open.owner.clone(),
            None => self.stored_owner(id)?,
        };
        if may_use(principal, &owner) { Ok(owner) } else { Err(ApiError::not_found()) }
    }

    /// Cancels session `id`'s turn if it runs here; `false` when none does. Dropping the
    /// turn reports it `cancelled`; its completed steps stay committed.
    pub fn cancel_here(&self, id: &str) -> bool {
        let Some(open) = self.open_here(id) else { return false };
        let running = open.turn.lock_unpoisoned();
        match running.as_ref() {
            Some(task) if !task.is_finished() => {
                task.abort();
                true
            }
            _ => false,
        }
    }

    /// Checks that `principal` may read session `id`'s committed contents, opening nothing:
    /// what is read comes from the store, so no lease is needed, and a turn on another host
    /// or a console sitting at its prompt with the session open does not stand in the way.
    pub async fn readable(&self, principal: &Principal, id: &str) -> Result<(), ApiError> {
        self.check_owner(principal, id)?;
        if self.exists(id)? { Ok(()) } else { Err(ApiError::not_found()) }
    }

    /// Session `id` as this host has it open, if it does.
    pub fn open_here(&self, id: &str) -> Option<Arc<Open>> {
        self.lock_open().get(id).cloned()
    }

    /// Whether session `id` exists: open here, or in the store.
    pub fn exists(&self, id: &str) -> Result<bool, ApiError> {
        if self.lock_open().contains_key(id) {
            return Ok(true);
        }
        let listed = self.host.sessions().store().state_value(id, OWNER.0, OWNER.1).map_err(internal)?;
        Ok(listed.is_some() || self.host.sessions().store().load(id).map_err(internal)?.is_some())
    }

    /// Session `id`'s owner as stored (a child agent's session: its parent's); empty for a
    /// session started at the console (only an admin may use it) or one that does not exist.
    fn stored_owner(&self, id: &str) -> Result<String, ApiError> {
        self.stored_lineage(id).map(|lineage| lineage.owner)
    }

    fn stored_lineage(&self, id: &str) -> Result<Lineage, ApiError> {
        stored_lineage(&**self.host.sessions().store(), id).map_err(internal)
    }

    /// Lets go of the sessions nothing has used for `idle`: their leases are released and
    /// their kept events dropped (they are in the store; a client reopens them by id).
    pub fn close_idle(&self, idle: Duration) {
        self.lock_open().retain(|_, open| !(open.idle_for(idle) && unheld(open)));
    }

    /// Where hosts share the store: lets go of the sessions no turn or request has used for
    /// `idle`, streams or not (they read the shared log), once their events are in the log,
    /// so that another host may take them and its events follow these.
    pub async fn let_go_idle(&self, idle: Duration) {
        let Some(shared) = &self.shared else { return };
        let mut idle_now = Vec::new();
        self.lock_open().retain(|_, open| {
            let keep = open.busy() || !unheld(open) || open.last_used.lock_unpoisoned().elapsed() < idle;
            if !keep {
                idle_now.push(open.clone());
            }
            keep
        });
        if !idle_now.is_empty() {
            shared.relay.flush().await;
        }
        drop(idle_now);
    }

    async fn keep(&self, handle: SessionHandle, owner: String) -> Arc<Open> {
        let (id, fence, input) = {
            let session = handle.lock().await;
            let fence = session.fence();
            let input = session.input_waiting().clone();
            (session.id().to_owned(), Arc::new((fence.token.to_owned(), fence.generation)), input)
        };
        let timeout = Duration::from_secs(self.limits.approval_timeout_secs);
        let (capacity, budget) = (self.limits.event_buffer, self.limits.event_buffer_kb * 1024);
        let (hub, approvals) = match &self.shared {
            Some(shared) => {
                let store = self.host.sessions().store().clone();
                let views = super::shared::logged_views(&*store, &id);
                let asks = super::approver::SharedAsks::new(store, &id, shared.wakers.follow_answers(&id));
                (
                    Hub::relayed(capacity, budget, shared.relay.clone(), &id, fence, views),
                    HttpApprover::new(&id, timeout).shared(asks),
                )
            }
            None => (Hub::new(capacity, budget), HttpApprover::new(&id, timeout)),
        };
        let open = Arc::new(Open {
            id: id.clone(),
            owner,
            handle,
            hub: Arc::new(hub),
            approvals: Arc::new(approvals),
            turn: Mutex::new(None),
            input,
            status: Mutex::new(Vec::new()),
            last_used: Mutex::new(Instant::now()),
        });
        self.lock_open().entry(id).or_insert(open).clone()
    }

    /// The sessions `principal` may see, most recently used first (every one for an admin).
    /// Read from the store, not opened: listing leases nothing.
    pub fn list(&self, principal: &Principal) -> Result<Vec<SessionSummary>, ApiError> {
        let store = self.host.sessions().store();
        let entries = if principal.admin {
            store.entries(LIST_LIMIT)
        } else {
            store.entries_owned(&principal.name, LIST_LIMIT)
        };
        let mut visible = Vec::new();
        for entry in entries.map_err(internal)? {
            let open = self.lock_open().get(&entry.id).cloned();
            // Only an admin's list holds child agents' sessions (they have no owner of their
            // own): each says whose child it is.
            let lineage = if principal.admin { Some(self.stored_lineage(&entry.id)?) } else { None };
            // A session open elsewhere is busy there: where hosts share the store, a host holds
            // a session only while it uses it.
            let busy = open.as_ref().map_or(entry.held, |open| open.busy());
            let (owner, parent) = match (open, lineage) {
                (Some(open), lineage) => (open.owner.clone(), lineage.and_then(|lineage| lineage.parent)),
                (None, Some(lineage)) => (lineage.owner, lineage.parent),
                (None, None) => (principal.name.clone(), None),
            };
            visible.push(SessionSummary {
                id: entry.id,
                owner,
                busy,
                updated_at: entry.updated_at,
                title: entry.title,
                parent,
            });
        }
        Ok(visible)
    }

    /// Deletes session `id` and everything kept of it; a running turn is stopped first.
    pub async fn delete(&self, open: &Open) -> Result<(), ApiError> {
        let running = open.turn.lock_unpoisoned().take();
        if let Some(task) = running {
            task.abort();
            let _ = task.await;
        }
        self.lock_open().remove(&open.id);
        self.host.sessions().store().delete(&open.id).map_err(internal)?;
        Ok(())
    }

    /// Counts a turn of `principal` while the returned guard lives; `None` past the cap.
    /// The sessions open now.
    pub fn open_sessions(&self) -> Vec<Arc<Open>> {
        self.lock_open().values().cloned().collect()
    }

    pub fn start_turn(self: &Arc<Self>, principal: &str) -> Option<TurnSlot> {
        let mut turns = self.turns_by_principal.lock_unpoisoned();
        let running = turns.entry(principal.to_owned()).or_default();
        if *running >= self.limits.max_turns_per_principal {
            return None;
        }
        *running += 1;
        Some(TurnSlot { app: self.clone(), principal: principal.to_owned() })
    }

    /// Every running turn's task, to wait for at shutdown.
    pub fn running_turns(&self) -> Vec<tokio::task::JoinHandle<()>> {
        self.lock_open().values().filter_map(|open| open.turn.lock_unpoisoned().take()).collect()
    }

    fn lock_open(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Open>>> {
        self.open.lock_unpoisoned()
    }
}

/// One running turn of a principal; dropping it (the turn ended, or was cancelled) frees it.
pub struct TurnSlot {
    app: Arc<App>,
    principal: String,
}

impl Drop for TurnSlot {
    fn drop(&mut self) {
        let mut turns = self.app.turns_by_principal.lock_unpoisoned();
        if let Some(running) = turns.get_mut(&self.principal) {
            *running = running.saturating_sub(1);
        }
    }
}

/// Where hosts share the store: the relay and the wakers, and the thread that wakes this
/// host's streams when another host moves a session (until shutdown).
fn share(host: &Host, limits: &ServeConfig, shutdown: &CancellationToken) -> Option<SharedServe> {
    let store = host.sessions().store();
    let wakers = Arc::new(Wakers::new(limits.event_buffer, limits.event_buffer_kb * 1024));
    let relay = Relay::start(store.clone(), limits.event_buffer, wakers.clone())?;
    let (waking, stopped) = (wakers.clone(), shutdown.clone());
    let (cancel, cancels) = tokio::sync::mpsc::unbounded_channel();
    let follow = Box::new(move |moved: Moved<'_>| {
        match moved {
            Moved::Appended { session, newest } => waking.noticed(session, newest),
            Moved::Answered(session) => waking.answered(session),
            Moved::Cancel(session) => {
                let _ = cancel.send(session.to_owned());
            }
            Moved::Listening => waking.wake_all(),
            Moved::Tick => {}
        }
        !stopped.is_cancelled()
    });
    if let Err(error) = store.shared()?.follow(follow) {
        tracing::warn!("streams here will see other hosts' events only by polling: {error}");
    }
    Some(SharedServe { relay, wakers, cancels: Mutex::new(Some(cancels)) })
}

/// A session another process has: `409`. Where hosts share the store, that is nearly
/// always a turn on another host, said as a turn here is.
fn in_use(id: &str, shared: bool) -> ApiError {
    if shared {
        return ApiError(
            StatusCode::CONFLICT,
            format!(
                "a turn is running in session {id} on another host of this deployment (or a console has it); \
                 wait for its turn_ended event"
            ),
        );
    }
    ApiError(
        StatusCode::CONFLICT,
        format!(
            "session {id} is in use by another process on this deployment (a turn on another host, a console, \
             or another server); try again when it is done with it"
        ),
    )
}

/// Whether `principal` may use a session owned by `owner`: hers, or any for an admin.
fn may_use(principal: &Principal, owner: &str) -> bool {
    owner == principal.name || principal.admin
}

pub fn internal(error: impl std::fmt::Display) -> ApiError {
    ApiError(StatusCode::INTERNAL_SERVER_ERROR, error.to_string())
}
