//! An ask as `session/request_permission`: the exact call shown, the client's pick mapped
//! onto the host's answers. "Always" is the host's "always this tool, asked for the same
//! reason"; there is no standing refusal in the host, so no `reject_always` is offered.
//! A client that cancels the request (or cannot be reached) denies the call.
//!
//! The title and the text shown are escaped as the console escapes an approval card
//! ([`agent_host::sanitize`]): an editor shows them as they are, and a bidi override or an
//! invisible character in the arguments could make the call read as another. `rawInput`
//! stays the arguments exactly as the tool gets them, for a client that shows its own way.
//!
//! A child agent's call names the child in its title and text, and is asked where the
//! client knows the call. A client that takes child sessions is asked under the child's
//! session id: the spec makes everything of a child's turn traffic of the child's session
//! (announced first on its parent's; "child events are delivered automatically"), the call
//! was announced there as the child's tool call, and the child's state on its parent's
//! session says `requires_action` while the question waits, as the spec's state for "blocked
//! on user action" is. Any other client knows no session but the parent's, so it is asked
//! there, the call's id prefixed with the child's session id: call ids are unique within a
//! session only, and a child's `call_1` may be its parent's too.

use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SessionNotification, SessionUpdate, ToolCallContent, ToolCallUpdate, ToolCallUpdateFields,
};
use futures_util::future::BoxFuture;

use super::children::{Children, awaiting};
use super::takes::Takes;
use agent_host::agent::{ApprovalAnswer, ApprovalRequest, Approver};
use agent_host::sanitize::one_line;

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT_ONCE: &str = "reject_once";

pub struct AcpApprover {
    pub cx: ConnectionTo<Client>,
    pub session_id: String,
    pub takes: Takes,
    /// The session's child agents, whose calls are asked about too.
    pub children: Arc<Children>,
}

/// Where a request goes: the session, the call as that session knows it, and the parent to
/// tell that the child waits.
struct Where {
    session_id: String,
    call_id: String,
    waiting_parent: Option<String>,
}

impl AcpApprover {
    fn place(&self, request: &ApprovalRequest) -> Where {
        let own =
            |call_id: String| Where { session_id: self.session_id.clone(), call_id, waiting_parent: None };
        let Some(agent) = &request.agent else { return own(request.call_id.clone()) };
        let parent = self.children.parent_of(&agent.session_id).filter(|_| self.takes.child_sessions);
        match parent {
            Some(parent) => Where {
                session_id: agent.session_id.clone(),
                call_id: request.call_id.clone(),
                waiting_parent: Some(parent),
            },
            None => own(format!("{}/{}", agent.session_id, request.call_id)),
        }
    }

    /// Tells `parent` whether its child `child` waits for the person.
    fn waiting(&self, parent: &str, child: &str, waiting: bool) {
        let update: SessionUpdate = awaiting(child, waiting);
        if let Err(error) = self.cx.send_notification(SessionNotification::new(parent.to_owned(), update)) {
            tracing::debug!(error = %error, "a child agent's state could not be sent");
        }
    }
}

impl Approver for AcpApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async move {
            let (tool, arguments) = (one_line(&request.tool), one_line(&request.arguments_text));
            let mut shown = format!(
                "{tool}({arguments})\n{} ({})",
                one_line(&request.reason),
                one_line(&request.asked_by)
            );
            let mut title = format!("{tool} {arguments}");
            if let Some(agent) = &request.agent {
                let name = one_line(&agent.name);
                title = format!("{name}: {title}");
                shown.push_str(&format!("\nasked for agent `{name}` (session {})", agent.session_id));
            }
            let place = self.place(request);
            let call = ToolCallUpdate::new(
                place.call_id.clone(),
                ToolCallUpdateFields::new()
                    .title(title)
                    .raw_input(request.arguments.clone())
                    .content(vec![ToolCallContent::from(ContentBlock::from(shown))]),
            );
            let options = vec![
                PermissionOption::new(ALLOW_ONCE, "Allow once", PermissionOptionKind::AllowOnce),
                PermissionOption::new(
                    ALLOW_ALWAYS,
                    "Always allow this tool",
                    PermissionOptionKind::AllowAlways,
                ),
                PermissionOption::new(REJECT_ONCE, "Reject", PermissionOptionKind::RejectOnce),
            ];
            let asked = RequestPermissionRequest::new(place.session_id.clone(), call, options);
            if let Some(parent) = &place.waiting_parent {
                self.waiting(parent, &place.session_id, true);
            }
            let answer = match self.cx.send_request(asked).block_task().await {
                Ok(response) => response.outcome,
                Err(error) => {
                    tracing::warn!(error = %error, "a permission request failed; the call is denied");
                    RequestPermissionOutcome::Cancelled
                }
            };
            if let Some(parent) = &place.waiting_parent {
                self.waiting(parent, &place.session_id, false);
            }
            match answer {
                RequestPermissionOutcome::Selected(selected) => match &*selected.option_id.0 {
                    ALLOW_ONCE => ApprovalAnswer::AllowOnce,
                    ALLOW_ALWAYS => ApprovalAnswer::AllowToolAlways,
                    _ => ApprovalAnswer::Deny { reason: None },
                },
                _ => ApprovalAnswer::Deny {
                    reason: Some("the editor cancelled the permission request".into()),
                },
            }
        })
    }
}
