//! Approvals over HTTP: an `ask` waits, under the `approval_requested` event's id, for an
//! answer posted to the session, and after `approval_timeout_secs` falls to `agent.on_ask`.
//! A child agent's call (contract 0.2.8) asks its parent's operator, on its parent's stream:
//! it waits under its own session's id and the call's, since children running at once may
//! each make a call of the same id.
//! Where hosts share the store, the ask is also recorded in the shared log, so an answer
//! posted to another host reaches the turn waiting here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::sync::{oneshot, watch};

use agent_host::agent::{ApprovalAnswer, ApprovalRequest, Approver};
use agent_host::state::SessionStore;
use agent_host::unpoisoned::LockUnpoisoned as _;

/// How often a waiting ask reads the shared log with no notice that its session moved (a
/// safety net: see `log_stream.rs`).
const POLL: Duration = Duration::from_secs(30);

pub struct HttpApprover {
    /// The session whose turns ask: its own calls wait under their bare ids.
    session: String,
    pending: Mutex<HashMap<String, oneshot::Sender<ApprovalAnswer>>>,
    timeout: Duration,
    shared: Option<SharedAsks>,
}

/// What an ask waits under: the call's id, or for a child agent's call (`agent`, its session,
/// not the asking session itself) `AGENT/CALL`. Session ids hold no `/`.
pub fn ask_key(session: &str, agent: Option<&str>, call_id: &str) -> String {
    match agent {
        Some(agent) if agent != session => format!("{agent}/{call_id}"),
        _ => call_id.to_owned(),
    }
}

/// A session's asks in the shared log, and the notices that one was answered.
pub struct SharedAsks {
    store: Arc<dyn SessionStore>,
    session: String,
    answered: watch::Receiver<()>,
}

impl SharedAsks {
    pub fn new(store: Arc<dyn SessionStore>, session: &str, answered: watch::Receiver<()>) -> Self {
        Self { store, session: session.to_owned(), answered }
    }

    /// Runs `work` on the shared log off the async threads; `None` when it failed (said).
    async fn with_log<T: Send + 'static>(
        &self,
        work: impl FnOnce(
            &dyn agent_host::state::shared::SharedLog,
            &str,
        ) -> Result<T, agent_host::state::StoreError>
        + Send
        + 'static,
    ) -> Option<T> {
        let (store, session) = (self.store.clone(), self.session.clone());
        let done = tokio::task::spawn_blocking(move || {
            let log = store.shared().ok_or_else(|| "the store has no shared log".to_owned())?;
            work(log, &session).map_err(|error| error.to_string())
        })
        .await;
        match done {
            Ok(Ok(value)) => Some(value),
            Ok(Err(error)) => {
                tracing::warn!(session = self.session, "shared log: {error}");
                None
            }
            Err(error) => {
                tracing::warn!(session = self.session, "shared log: {error}");
                None
            }
        }
    }

    /// Waits for an answer to `id` given on any host, reading the log whenever one of the
    /// session's asks may have been answered (and every [`POLL`]).
    async fn answer(&self, id: &str) -> ApprovalAnswer {
        let mut moved = self.answered.clone();
        loop {
            moved.borrow_and_update();
            let id_now = id.to_owned();
            if let Some(Some(json)) = self.with_log(move |log, session| log.answer_to(session, &id_now)).await
            {
                match serde_json::from_str(&json) {
                    Ok(answer) => return answer,
                    Err(error) => tracing::warn!(
                        session = self.session,
                        "an answer in the shared log cannot be read: {error}"
                    ),
                }
            }
            tokio::select! {
                _ = moved.changed() => {}
                () = tokio::time::sleep(POLL) => {}
            }
        }
    }
}

impl HttpApprover {
    pub fn new(session: &str, timeout: Duration) -> Self {
        Self { session: session.to_owned(), pending: Mutex::new(HashMap::new()), timeout, shared: None }
    }

    /// Asks also recorded in, and answered from, the shared log.
    pub fn shared(self, asks: SharedAsks) -> Self {
        Self { shared: Some(asks), ..self }
    }

    /// Answers the waiting ask `id` (an [`ask_key`]); `false` when none waits under it
    /// (answered already, timed out, or never asked).
    pub fn answer(&self, id: &str, answer: ApprovalAnswer) -> bool {
        let waiting = self.lock().remove(id);
        waiting.is_some_and(|sender| sender.send(answer).is_ok())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<ApprovalAnswer>>> {
        self.pending.lock_unpoisoned()
    }
}

impl Approver for HttpApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        let (sender, receiver) = oneshot::channel();
        let agent = request.agent.as_ref().map(|agent| agent.session_id.as_str());
        let key = ask_key(&self.session, agent, &request.call_id);
        self.lock().insert(key.clone(), sender);
        Box::pin(async move {
            let id = key;
            let elsewhere = async {
                match &self.shared {
                    Some(asks) => {
                        let asked = id.clone();
                        asks.with_log(move |log, session| log.ask(session, &asked)).await;
                        asks.answer(&id).await
                    }
                    None => std::future::pending().await,
                }
            };
            let answered = async {
                tokio::select! {
                    here = receiver => here.ok(),
                    there = elsewhere => Some(there),
                }
            };
            let answer = tokio::time::timeout(self.timeout, answered).await;
            self.lock().remove(&id);
            if let Some(asks) = &self.shared {
                asks.with_log(move |log, session| log.forget_ask(session, &id)).await;
            }
            match answer {
                Ok(Some(answer)) => answer,
                // Nobody answered in time: `agent.on_ask` decides, as with no operator.
                Ok(None) | Err(_) => ApprovalAnswer::Unanswerable,
            }
        })
    }
}

/// How long an answer posted to a host may wait for its ask to reach the shared log: the
/// asking host records it as its turn asks, and the client may have seen the event first.
const ASK_ARRIVAL: Duration = Duration::from_secs(1);

/// Where hosts share the store: gives `answer` to the ask `id` of `session` waiting on
/// whichever host; `false` when none waits (or there is no shared log).
pub async fn answer_elsewhere(
    app: &super::state::App,
    session: &str,
    id: &str,
    answer: &ApprovalAnswer,
) -> bool {
    if app.shared.is_none() {
        return false;
    }
    let asks = SharedAsks::new(app.host.sessions().store().clone(), session, watch::channel(()).1);
    let json = serde_json::to_string(answer).expect("answers serialize");
    let deadline = tokio::time::Instant::now() + ASK_ARRIVAL;
    loop {
        let (id_now, json_now) = (id.to_owned(), json.clone());
        if asks.with_log(move |log, session| log.answer(session, &id_now, &json_now)).await == Some(true) {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::ask_key;

    #[test]
    fn a_childs_ask_waits_under_its_session_and_the_call() {
        assert_eq!(ask_key("parent", None, "call_1"), "call_1");
        assert_eq!(ask_key("parent", Some("child"), "call_1"), "child/call_1");
        assert_eq!(
            ask_key("child", Some("child"), "call_1"),
            "call_1",
            "a child's session's own turn asks as any"
        );
    }
}
