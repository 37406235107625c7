//! Reusing `provide` contributions: a plugin that calls `reuse.until-state-changes` says its
//! contribution depends only on its configuration and the state it read, so the host keeps
//! that contribution with the values read and skips the call while they are unchanged.
//!
//! The check is by value, not by version: a key written back with the same text keeps the
//! contribution, a key removed or changed drops it. Nothing to invalidate, nothing to miss.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::bindings::types::Contribution;
use crate::state::StateBag;

/// One state value a call read: namespace, key and what it held (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StateRead {
    pub namespace: String,
    pub key: String,
    pub value: Option<String>,
}

/// One session's reusable contributions, by plugin load. Lives as long as the session is in
/// memory; a session read back from the store starts empty, which only costs one call each.
#[derive(Default)]
pub struct ProvideMemo {
    entries: Mutex<HashMap<u64, Kept>>,
    reused: AtomicU64,
}

struct Kept {
    reads: Vec<StateRead>,
    contribution: Contribution,
}

impl ProvideMemo {
    /// The contribution kept for the plugin load `load_id`, if every value it read still
    /// holds in `bag`.
    pub(super) fn reuse(&self, load_id: u64, bag: &StateBag) -> Option<Contribution> {
        let entries = self.lock();
        let kept = entries.get(&load_id)?;
        let unchanged =
            kept.reads.iter().all(|read| bag.holds(&read.namespace, &read.key, read.value.as_deref()));
        if !unchanged {
            return None;
        }
        self.reused.fetch_add(1, Ordering::Relaxed);
        Some(kept.contribution.clone())
    }

    /// Keeps `contribution` for `load_id` (with the reads it depends on), or with `None`
    /// forgets whatever was kept: the last call did not declare itself reusable.
    pub(super) fn keep(&self, load_id: u64, kept: Option<(Vec<StateRead>, &Contribution)>) {
        let mut entries = self.lock();
        match kept {
            Some((reads, contribution)) => {
                entries.insert(load_id, Kept { reads, contribution: contribution.clone() });
            }
            None => {
                entries.remove(&load_id);
            }
        }
    }

    /// How many `provide` calls this memo answered instead of the plugin (tests, benches).
    pub fn reused(&self) -> u64 {
        self.reused.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Kept>> {
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contribution(text: &str) -> Contribution {
        Contribution { instructions: Some(text.into()), tools: Vec::new(), messages: Vec::new() }
    }

    fn read(key: &str, value: Option<&str>) -> StateRead {
        StateRead { namespace: "todo".into(), key: key.into(), value: value.map(str::to_owned) }
    }

    #[test]
    fn a_kept_contribution_holds_while_every_value_read_holds() {
        let (memo, bag) = (ProvideMemo::default(), StateBag::default());
        bag.put("todo", "items", Some("[]".into()));
        memo.keep(
            7,
            Some((vec![read("items", Some("[]")), read("absent", None)], &contribution("list: []"))),
        );
        assert_eq!(memo.reuse(7, &bag).and_then(|c| c.instructions).as_deref(), Some("list: []"));
        assert!(memo.reuse(8, &bag).is_none(), "another plugin load sees nothing");

        // Written back with the same text: still the same contribution.
        bag.put("todo", "items", Some("[]".into()));
        assert!(memo.reuse(7, &bag).is_some());
        // A key that was absent appears, or a value read changes: recompute.
        bag.put("todo", "absent", Some("1".into()));
        assert!(memo.reuse(7, &bag).is_none());
        bag.put("todo", "absent", None);
        bag.put("todo", "items", Some("[1]".into()));
        assert!(memo.reuse(7, &bag).is_none());
        assert_eq!(memo.reused(), 2);
    }

    #[test]
    fn a_call_that_did_not_declare_reuse_forgets_what_was_kept() {
        let (memo, bag) = (ProvideMemo::default(), StateBag::default());
        memo.keep(1, Some((Vec::new(), &contribution("a"))));
        assert!(memo.reuse(1, &bag).is_some());
        memo.keep(1, None);
        assert!(memo.reuse(1, &bag).is_none());
    }
}
