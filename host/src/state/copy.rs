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
        // Listed as last used when it was in the source, not when it was copied.
        let last_used = entry.updated_at.saturating_mul(1_000);
        to.create_copy(&entry.id, &holder, &claim, now_millis(), &contents, Some(last_used))?;
        to.release_lease(&entry.id, &claim)?;
        done.copied += 1;
        done.messages += contents.history.len();
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::test_stores::TestDatabase;

    #[test]
    fn copied_sessions_keep_when_they_were_last_used() {
        let (source, target) = (TestDatabase::sqlite(), TestDatabase::postgres());
        let (from, to) = (source.open(), target.open());
        for id in ["older", "newer"] {
            from.create(id, &Holder::this_process(), "c", 0).unwrap();
        }
        source.execute(
            "UPDATE sessions SET updated_at = 1000000 WHERE id = 'older';
             UPDATE sessions SET updated_at = 2000000 WHERE id = 'newer';",
        );
        let done = copy_sessions(&*from, &*to).unwrap();
        assert_eq!((done.copied, done.already_there), (2, 0));
        let listed: Vec<(String, i64)> =
            to.entries(10).unwrap().into_iter().map(|entry| (entry.id, entry.updated_at)).collect();
        assert_eq!(listed, [("newer".to_owned(), 2_000), ("older".to_owned(), 1_000)]);
    }
}
