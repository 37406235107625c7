//! A session as the agent keeps it while it is open: the stored [`Session`], and beside it
//! what is only cached for it in this process, never persisted.

use std::ops::{Deref, DerefMut};

use crate::model::HistoryEncodings;
use crate::plugins::ProvideMemo;
use crate::state::{self, Session};

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
    /// The history's messages as the model client last sent them.
    encodings: HistoryEncodings,
}

impl From<Session> for LiveSession {
    fn from(stored: Session) -> Self {
        Self { stored, provide_memo: ProvideMemo::default(), encodings: HistoryEncodings::default() }
    }
}

impl LiveSession {
    pub fn provide_memo(&self) -> &ProvideMemo {
        &self.provide_memo
    }

    /// The stored session and the history's encodings, apart: a model call reads the one
    /// while it adds to the other.
    pub(super) fn for_model_call(&mut self) -> (&Session, &mut HistoryEncodings) {
        (&self.stored, &mut self.encodings)
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
