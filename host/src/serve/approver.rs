//! Approvals over HTTP: an `ask` waits, under the `approval_requested` event's id, for an
//! answer posted to the session, and after `approval_timeout_secs` falls to `agent.on_ask`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::sync::oneshot;

use crate::agent::{ApprovalAnswer, ApprovalRequest, Approver};

pub struct HttpApprover {
    pending: Mutex<HashMap<String, oneshot::Sender<ApprovalAnswer>>>,
    timeout: Duration,
}

impl HttpApprover {
    pub fn new(timeout: Duration) -> Self {
        Self { pending: Mutex::new(HashMap::new()), timeout }
    }

    /// Answers the waiting ask `id`; `false` when none waits under it (answered already,
    /// timed out, or never asked).
    pub fn answer(&self, id: &str, answer: ApprovalAnswer) -> bool {
        let waiting = self.lock().remove(id);
        waiting.is_some_and(|sender| sender.send(answer).is_ok())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<ApprovalAnswer>>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Approver for HttpApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        let (sender, receiver) = oneshot::channel();
        self.lock().insert(request.call_id.clone(), sender);
        Box::pin(async move {
            let answer = tokio::time::timeout(self.timeout, receiver).await;
            self.lock().remove(&request.call_id);
            match answer {
                Ok(Ok(answer)) => answer,
                // Nobody answered in time: `agent.on_ask` decides, as with no operator.
                Ok(Err(_)) | Err(_) => ApprovalAnswer::Unanswerable,
            }
        })
    }
}
