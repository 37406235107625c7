//! One `session/prompt`: a turn run outside the dispatch loop, its events streamed as
//! updates, answered with its stop reason. `session/cancel` drops the turn's future, as
//! Ctrl-C does: what was committed stays, and the prompt is answered `cancelled`. The child
//! agents the turn runs run inside it, so they stop with it.

use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, PromptRequest, PromptResponse, SessionUpdate, StopReason,
};
use agent_client_protocol::{Client, Error, Responder, V1};
use tokio_util::sync::CancellationToken;

use super::approver::AcpApprover;
use super::sessions::{Open, internal};
use super::takes::Takes;
use super::updates::Updates;
use agent_host::agent::{Host, TurnEnd};
use agent_host::unpoisoned::LockUnpoisoned as _;

/// Starts the turn; the response is sent when it ends.
pub fn start(
    host: Arc<Host>,
    open: Arc<Open>,
    request: PromptRequest,
    responder: Responder<PromptResponse, V1>,
    cx: ConnectionTo<Client>,
    takes: Takes,
) -> Result<(), Error> {
    let text = prompt_text(&request.prompt);
    let cancel = CancellationToken::new();
    {
        let mut turn = open.turn.lock_unpoisoned();
        if turn.is_some() {
            open.input.mark();
            return responder.respond_with_error(Error::invalid_request().data(format!(
                "a prompt is running in session {}; it ends at its next continuation, or cancel it",
                open.id
            )));
        }
        *turn = Some(cancel.clone());
    }
    tokio::spawn(async move {
        let children = open.children.clone();
        let updates = Updates::new(
            host.clone(),
            cx.clone(),
            open.id.clone(),
            open.shown.clone(),
            takes,
            children.clone(),
        );
        let approver = AcpApprover { cx, session_id: open.id.clone(), takes, children };
        let mut text = text;
        if agent_host::agent::is_command(&text) {
            let (answer, queued) = {
                let mut session = open.handle.lock().await;
                let answer = host.command(&mut session, &text, &updates).await;
                // A plugin may queue a turn after a command (a loop set or resumed starts
                // working): it runs as this prompt's turn.
                let queued = host.queued_turn(&mut session, &updates).await;
                host.refresh_views(&mut session, &updates).await;
                (answer, queued)
            };
            let shown = answer.unwrap_or_else(|error| error);
            updates.send(SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(shown))));
            let Some(queued) = queued else {
                *open.turn.lock_unpoisoned() = None;
                let _ = responder.respond(PromptResponse::new(StopReason::EndTurn));
                return;
            };
            text = queued;
        }
        let result = {
            let mut session = open.handle.lock().await;
            tokio::select! {
                result = host.run_turn(&mut session, &text, &updates, &approver) => Some(result),
                () = cancel.cancelled() => None,
            }
        };
        *open.turn.lock_unpoisoned() = None;
        open.children.stopped(&updates);
        let answer = match result {
            None => Ok(PromptResponse::new(StopReason::Cancelled)),
            Some(Ok(outcome)) => Ok(PromptResponse::new(stop_reason(outcome.end))),
            Some(Err(error)) => Err(internal(format!("the turn failed: {error}"))),
        };
        let sent = match answer {
            Ok(response) => responder.respond(response),
            Err(error) => responder.respond_with_error(error),
        };
        if let Err(error) = sent {
            tracing::debug!(error = %error, "a prompt's answer could not be sent");
        }
    });
    Ok(())
}

/// Cancels the turn running in `open`, if one is.
pub fn cancel(open: &Open) {
    if let Some(token) = open.turn.lock_unpoisoned().as_ref() {
        token.cancel();
    }
}

fn stop_reason(end: TurnEnd) -> StopReason {
    match end {
        TurnEnd::Done => StopReason::EndTurn,
        TurnEnd::ReplyCut => StopReason::MaxTokens,
        TurnEnd::MaxIterations => StopReason::MaxTurnRequests,
        // The token budget is the turn's, not a reply's, but an editor reads both alike: the
        // agent stopped because it was out of tokens.
        TurnEnd::TokenBudget => StopReason::MaxTokens,
        // ACP has no time limit; the nearest is the turn's own cap.
        TurnEnd::TimeBudget => StopReason::MaxTurnRequests,
        TurnEnd::Blocked => StopReason::Refusal,
        // The agent ended its turn to wait for the person, which is what an end of turn is.
        TurnEnd::NeedInput => StopReason::EndTurn,
        TurnEnd::Cancelled => StopReason::Cancelled,
        // A failed turn is answered with an error, not a stop reason.
        TurnEnd::Error => StopReason::EndTurn,
    }
}

/// The prompt's text: its text blocks and the text of embedded resources, in order.
fn prompt_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
