//! Copying every session of one store into another (`agent-host sessions copy`): moving a
//! deployment from SQLite to PostgreSQL, or back. Each session is copied whole, in one
//! transaction of the target; one the target already has is left as it is there.

use super::lease::{Holder, now_millis};
use super::{SessionStore, StoreError};

/// What a copy did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    /// Sessions written to the target.
    pub copied: usize,
    /// Sessions the target had already, left as they were.
    pub already_there: usize,
    /// Messages of the sessions copied.
    pub messages: usize,
}

/// Copies every session of `from` into `to`. The copies are leased to this process only for
/// the instant of their writing, then released, so any host may open them at once.
pub fn copy_sessions(from: &dyn SessionStore, to: &dyn SessionStore) -> Result<Copied, StoreError> {
    let holder = Holder::this_process();
    let mut done = Copied::default();
    for entry in from.entries(usize::MAX)? {
        if to.load(&entry.id)?.is_some() {
            done.already_there += 1;
            continue;
        }
        // Gone from the source since it was listed: nothing to copy.
        let Some(contents) = from.load(&entry.id)? else { continue };
        let claim = uuid::Uuid::new_v4().simple().to_string();
        to.create_copy(&entry.id, &holder, &claim, now_millis(), &contents)?;
        to.release_lease(&entry.id, &claim)?;
        done.copied += 1;
        done.messages += contents.history.len();
    }
    Ok(done)
}
