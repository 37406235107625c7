//! A session as the agent keeps it while it is open: the stored [`Session`], and beside it
//! what is only cached for it in this process, never persisted.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use super::report::forward_model_calls;
use super::turn::judges::InputWaiting;
use super::turn::prepare::FreshViews;
use crate::events::EventSink;
use crate::mcp::McpSet;
use crate::model::HistoryEncodings;
use crate::model::tokens::ContextAccount;
use crate::plugins::{CallContext, PluginSet, ProvideMemo, StopMemo};
use crate::state::{self, Session, SessionStore, StoreError};
pub use views::Views;

pub(super) mod command;
mod export_file;
pub(super) mod mcp_table;
pub(super) mod views;

/// The handle every front end holds to an open session; see [`state::SessionHandle`].
pub type SessionHandle = state::SessionHandle<LiveSession>;

/// The sessions a [`super::Host`] has open, each kept as a [`LiveSession`].
pub type LiveSessions = state::Sessions<LiveSession>;

/// An open session: what the store has of it, and the caches that make its next round trip
/// cheaper. It reads as the stored [`Session`] it holds.
pub struct LiveSession {
    stored: Session,
    /// Contributions plugins declared reusable.
    provide_memo: ProvideMemo,
    /// `stop` outcomes plugins declared reusable (contract 0.2.11).
    stop_memo: StopMemo,
    /// The history's messages as the model client last sent them.
    encodings: HistoryEncodings,
    /// What the history's messages come to, and the calibration of the estimate.
    context: ContextAccount,
    /// What plugins show of the session, as last asked.
    views: Views,
    /// Views the step's calls brought with them, kept at its end.
    fresh_views: FreshViews,
    /// MCP servers the front end that opened the session attached to it alone (an editor's
    /// `mcpServers`), offered after the deployment's; stopped when the session is let go.
    own_mcp: Option<Arc<McpSet>>,
    /// Set by a front end when the operator's input arrives while a turn runs.
    input_waiting: InputWaiting,
}

impl From<Session> for LiveSession {
    fn from(stored: Session) -> Self {
        Self {
            provide_memo: ProvideMemo::default(),
            stop_memo: StopMemo::default(),
            encodings: HistoryEncodings::default(),
            context: ContextAccount::resumed(stored.last_usage().map(|(_, usage)| usage)),
            views: Views::default(),
            fresh_views: FreshViews::new(),
            own_mcp: None,
            input_waiting: InputWaiting::default(),
            stored,
        }
    }
}

impl LiveSession {
    pub fn provide_memo(&self) -> &ProvideMemo {
        &self.provide_memo
    }

    pub fn stop_memo(&self) -> &StopMemo {
        &self.stop_memo
    }

    /// What the session's model calls came to: the last one's estimate, the tokens in use.
    pub fn context(&self) -> &ContextAccount {
        &self.context
    }

    /// The stored session and the caches of the history's messages, apart: a model call reads
    /// the one while it adds to the others.
    pub(in crate::agent) fn for_model_call(
        &mut self,
    ) -> (&Session, &mut HistoryEncodings, &mut ContextAccount) {
        (&self.stored, &mut self.encodings, &mut self.context)
    }

    pub(in crate::agent) fn context_mut(&mut self) -> &mut ContextAccount {
        &mut self.context
    }

    /// The MCP servers attached to this session alone, if any.
    pub fn own_mcp(&self) -> Option<&Arc<McpSet>> {
        self.own_mcp.as_ref()
    }

    /// Attaches `servers` to this session alone, in place of any attached before.
    pub fn attach_mcp(&mut self, servers: McpSet) {
        self.own_mcp = Some(Arc::new(servers));
    }

    /// What a front end marks when the operator's input arrives while a turn holds the
    /// session: taken once, as the session is opened, and kept beside its handle.
    pub fn input_waiting(&self) -> &InputWaiting {
        &self.input_waiting
    }

    /// The session's child agents (contract 0.2.8), by session id, in the order they were
    /// started: what front ends list under it.
    pub fn children(&self) -> Vec<(String, crate::agent::ChildRecord)> {
        super::children::children(self.bag())
    }

    /// The session's parent, when it is a child agent's: its session id and agent name.
    pub fn parent(&self) -> Option<(String, String)> {
        super::children::ChildLink::of(self.bag()).map(|link| (link.parent_id, link.name))
    }

    /// What plugins show of the session, as last asked (see [`Views`]).
    pub fn views(&self) -> &Views {
        &self.views
    }

    /// Holds the views a call brought with it (see [`Views::offer`]) until the step ends.
    pub(in crate::agent) fn bring_views(&mut self, fresh: FreshViews) {
        self.fresh_views.extend(fresh);
    }

    /// The end of a step, the one place where it ends: the model calls plugins made from
    /// `ctx`'s calls are reported (their tokens are spent whether the calls succeeded or
    /// not), the views are gathered, and the session is committed.
    pub(in crate::agent) async fn end_step(
        &mut self,
        plugins: &PluginSet,
        ctx: &CallContext,
        sink: &dyn EventSink,
        store: &dyn SessionStore,
    ) -> Result<(), StoreError> {
        forward_model_calls(sink, ctx);
        self.gather_views(plugins, sink).await;
        self.stored.commit_async(store).await
    }

    /// Where views are gathered, at the end of each step and after each tool call (a view
    /// changed by one call shows before the next call of the same reply runs): those the
    /// calls brought kept, every other one whose state moved asked again, `view_changed` sent
    /// for each that changed.
    pub(in crate::agent) async fn gather_views(&mut self, plugins: &PluginSet, sink: &dyn EventSink) {
        for (plugin, view) in std::mem::take(&mut self.fresh_views) {
            self.views.offer(&plugin, view, sink);
        }
        self.refresh_views(plugins, sink).await;
    }

    /// Asks again every view that may be stale, sending `view_changed` for each that changed.
    pub async fn refresh_views(
        &mut self,
        plugins: &crate::plugins::PluginSet,
        sink: &dyn crate::events::EventSink,
    ) {
        let Self { stored, views, .. } = self;
        views.refresh(plugins, stored.id(), stored.bag(), sink).await;
    }
}

impl Deref for LiveSession {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.stored
    }
}

impl DerefMut for LiveSession {
    fn deref_mut(&mut self) -> &mut Session {
        &mut self.stored
    }
}
