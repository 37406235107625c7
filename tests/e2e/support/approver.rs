//! An operator that answers approval requests from a script.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use agent_host::agent::{ApprovalAnswer, ApprovalRequest, Approver};

/// Answers approval requests from a script, in order, and records the tool and reason of
/// each; a request past the end of the script fails the test.
pub struct ScriptedApprover {
    answers: Mutex<VecDeque<ApprovalAnswer>>,
    asked: Mutex<Vec<(String, String)>>,
    requests: Mutex<Vec<ApprovalRequest>>,
}

impl ScriptedApprover {
    pub fn new(answers: impl IntoIterator<Item = ApprovalAnswer>) -> Self {
        Self {
            answers: Mutex::new(answers.into_iter().collect()),
            asked: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
        }
    }

    /// The tool and reason of every request so far.
    pub fn asked(&self) -> Vec<(String, String)> {
        self.asked.lock().unwrap().clone()
    }

    /// Every request so far, whole.
    pub fn requests(&self) -> Vec<ApprovalRequest> {
        self.requests.lock().unwrap().clone()
    }

    /// The tool of every request so far.
    pub fn asked_tools(&self) -> Vec<String> {
        self.asked().into_iter().map(|(tool, _)| tool).collect()
    }
}

impl Approver for ScriptedApprover {
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalAnswer> + Send + 'a>> {
        self.asked.lock().unwrap().push((request.tool.clone(), request.reason.clone()));
        self.requests.lock().unwrap().push(request.clone());
        let answer = self.answers.lock().unwrap().pop_front().expect("the script has an answer");
        Box::pin(async move { answer })
    }
}
