//! An ask as `session/request_permission`: the exact call shown, the client's pick mapped
//! onto the host's answers. "Always" is the host's "always this tool, asked for the same
//! reason"; there is no standing refusal in the host, so no `reject_always` is offered.
//! A client that cancels the request (or cannot be reached) denies the call.
//!
//! The title and the text shown are escaped as the console escapes an approval card
//! ([`agent_host::sanitize`]): an editor shows them as they are, and a bidi override or an
//! invisible character in the arguments could make the call read as another. `rawInput`
//! stays the arguments exactly as the tool gets them, for a client that shows its own way.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    ToolCallContent, ToolCallUpdate, ToolCallUpdateFields,
};
use futures_util::future::BoxFuture;

use agent_host::agent::{ApprovalAnswer, ApprovalRequest, Approver};
use agent_host::sanitize::one_line;

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT_ONCE: &str = "reject_once";

pub struct AcpApprover {
    pub cx: ConnectionTo<Client>,
    pub session_id: String,
}

impl Approver for AcpApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async move {
            let (tool, arguments) = (one_line(&request.tool), one_line(&request.arguments_text));
            let shown = format!(
                "{tool}({arguments})\n{} ({})",
                one_line(&request.reason),
                one_line(&request.asked_by)
            );
            let call = ToolCallUpdate::new(
                request.call_id.clone(),
                ToolCallUpdateFields::new()
                    .title(format!("{tool} {arguments}"))
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
            let asked = RequestPermissionRequest::new(self.session_id.clone(), call, options);
            let answer = match self.cx.send_request(asked).block_task().await {
                Ok(response) => response.outcome,
                Err(error) => {
                    tracing::warn!(error = %error, "a permission request failed; the call is denied");
                    RequestPermissionOutcome::Cancelled
                }
            };
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
