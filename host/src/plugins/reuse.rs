//! Reusing what a plugin call returned: a plugin that calls `reuse.until-state-changes` says
//! the result depends only on its configuration and the state it read, so the host keeps that
//! result with the values read and skips the call while they are unchanged. `provide`'s
//! contributions (since contract 0.1.1), `view`'s widgets (since 0.2.9) and `stop`'s outcomes
//! (since 0.2.11) are kept so.
//!
//! The check is by value, not by version: a key written back with the same text keeps the
//! result, a key removed or changed drops it. Nothing to invalidate, nothing to miss.
//!
//! Since such a result depends on nothing else, it serves any session whose state holds the
//! same values: each plugin load also keeps the last few in [`SharedResults`], so a new
//! session (empty state) starts from them instead of calling every plugin.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::types::{Contribution, StopOutcome};
use crate::events::Widget;
use crate::recent::RecentlyUsed;
use crate::runtime::StateRead;
use crate::state::StateBag;
use crate::unpoisoned::LockUnpoisoned as _;

/// One session's reusable results of one export, by plugin load. Lives as long as the
/// session is in memory; a session read back from the store starts empty, which only costs
/// one call each.
pub struct Memo<T> {
    entries: Mutex<HashMap<u64, Arc<Kept<T>>>>,
    reused: AtomicU64,
}

/// One session's reusable contributions (`provide`, contract 0.1.1).
pub type ProvideMemo = Memo<Contribution>;

/// One session's reusable `stop` outcomes (contract 0.2.11): what its last turn's end said,
/// while the state it read holds.
pub type StopMemo = Memo<StopOutcome>;

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Self { entries: Mutex::default(), reused: AtomicU64::default() }
    }
}

/// A reusable result and the state values it was computed from.
#[derive(Debug)]
pub(super) struct Kept<T> {
    reads: Vec<StateRead>,
    value: Arc<T>,
}

impl<T> Kept<T> {
    /// Whether every value read still holds in `bag`.
    fn holds(&self, bag: &StateBag) -> bool {
        self.reads.iter().all(|read| bag.holds(&read.namespace, &read.key, read.value.as_deref()))
    }
}

impl<T> Memo<T> {
    /// The result kept for the plugin load `load_id` by this session, or else by any
    /// session (`shared`), if every value it read holds in `bag`.
    pub(super) fn reuse(&self, load_id: u64, shared: &SharedResults<T>, bag: &StateBag) -> Option<Arc<T>> {
        let mut entries = lock(&self.entries);
        let kept = match entries.get(&load_id).filter(|kept| kept.holds(bag)) {
            Some(kept) => kept.clone(),
            None => {
                let kept = shared.find_kept(bag)?;
                entries.insert(load_id, kept.clone());
                kept
            }
        };
        self.reused.fetch_add(1, Ordering::Relaxed);
        Some(kept.value.clone())
    }

    /// Keeps a result for `load_id` (with the reads it depends on), here and in `shared`; or
    /// with `None` forgets what this session kept: the last call did not declare itself
    /// reusable.
    pub(super) fn keep(
        &self,
        load_id: u64,
        shared: &SharedResults<T>,
        kept: Option<(Vec<StateRead>, Arc<T>)>,
    ) {
        let mut entries = lock(&self.entries);
        match kept {
            Some((reads, value)) => {
                let kept = Arc::new(Kept { reads, value });
                shared.keep_kept(kept.clone());
                entries.insert(load_id, kept);
            }
            None => {
                entries.remove(&load_id);
            }
        }
    }

    /// Whether the last call of the plugin load `load_id` in this session declared itself
    /// reusable (or was answered from a reusable one), whether or not it still holds.
    pub(super) fn was_reusable(&self, load_id: u64) -> bool {
        lock(&self.entries).contains_key(&load_id)
    }

    /// How many calls this memo answered instead of the plugin (tests, benches).
    pub fn reused(&self) -> u64 {
        self.reused.load(Ordering::Relaxed)
    }
}

/// Results kept per plugin load across sessions.
const SHARED_KEPT: usize = 8;

/// One plugin load's last few reusable results of one export, from any session, the most
/// recently kept or reused first. Dropped with the load, so a reloaded plugin starts afresh.
///
/// Reuse moves an entry to the front, so the ones many sessions meet (an empty list, a
/// default setting) stay while the ones only their own session ever held (a particular
/// list) pass through.
pub(super) struct SharedResults<T> {
    kept: RecentlyUsed<Arc<Kept<T>>>,
}

/// `provide`'s reusable contributions of one plugin load.
pub(super) type SharedContributions = SharedResults<Contribution>;

/// `view`'s reusable widgets of one plugin load (contract 0.2.9). Only shared: a session asks
/// a view again only after the state it read changed, so a memo of its own would not hold.
pub(super) type SharedViews = SharedResults<Vec<Widget>>;

/// `stop`'s reusable outcomes of one plugin load (contract 0.2.11, for plugins built against
/// it): a turn ends without instantiating the plugin where the state it read holds — an
/// empty or unchanged list, most often.
pub(super) type SharedStops = SharedResults<StopOutcome>;

impl<T> Default for SharedResults<T> {
    fn default() -> Self {
        Self { kept: RecentlyUsed::new(SHARED_KEPT) }
    }
}

impl<T> SharedResults<T> {
    /// A result whose every value read holds in `bag`, moved to the front.
    pub(super) fn find(&self, bag: &StateBag) -> Option<Arc<T>> {
        self.find_kept(bag).map(|kept| kept.value.clone())
    }

    /// Keeps `value`, computed from `reads`, first.
    pub(super) fn keep(&self, reads: Vec<StateRead>, value: Arc<T>) {
        self.keep_kept(Arc::new(Kept { reads, value }));
    }

    fn find_kept(&self, bag: &StateBag) -> Option<Arc<Kept<T>>> {
        self.kept.find(|kept| kept.holds(bag))
    }

    pub(super) fn clear(&self) {
        self.kept.clear();
    }

    /// Puts `kept` first, in place of one computed from the same values.
    fn keep_kept(&self, kept: Arc<Kept<T>>) {
        let new = kept.clone();
        self.kept.put(kept, |other| other.reads == new.reads);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock_unpoisoned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contribution(text: &str) -> Arc<Contribution> {
        Arc::new(Contribution { instructions: Some(text.into()), tools: Vec::new(), messages: Vec::new() })
    }

    fn read(key: &str, value: Option<&str>) -> StateRead {
        StateRead { namespace: "notes".into(), key: key.into(), value: value.map(str::to_owned) }
    }

    #[test]
    fn a_kept_contribution_holds_while_every_value_read_holds() {
        let (memo, shared, bag) =
            (ProvideMemo::default(), SharedContributions::default(), StateBag::default());
        bag.put("notes", "items", Some("[]".into()));
        memo.keep(
            7,
            &shared,
            Some((vec![read("items", Some("[]")), read("absent", None)], contribution("list: []"))),
        );
        assert_eq!(
            memo.reuse(7, &shared, &bag).and_then(|c| c.instructions.clone()).as_deref(),
            Some("list: []")
        );
        let other = SharedContributions::default();
        assert!(memo.reuse(8, &other, &bag).is_none(), "another plugin load sees nothing");

        // Written back with the same text: still the same contribution.
        bag.put("notes", "items", Some("[]".into()));
        assert!(memo.reuse(7, &shared, &bag).is_some());
        // A key that was absent appears, or a value read changes: recompute.
        bag.put("notes", "absent", Some("1".into()));
        assert!(memo.reuse(7, &shared, &bag).is_none());
        bag.put("notes", "absent", None);
        bag.put("notes", "items", Some("[1]".into()));
        assert!(memo.reuse(7, &shared, &bag).is_none());
        assert_eq!(memo.reused(), 2);
    }

    #[test]
    fn a_call_that_did_not_declare_reuse_forgets_what_the_session_kept() {
        let (memo, shared, bag) =
            (ProvideMemo::default(), SharedContributions::default(), StateBag::default());
        memo.keep(1, &shared, Some((vec![read("items", None)], contribution("a"))));
        assert!(memo.reuse(1, &shared, &bag).is_some());
        memo.keep(1, &shared, None);
        let fresh = SharedContributions::default();
        assert!(memo.reuse(1, &fresh, &bag).is_none());
    }

    #[test]
    fn another_session_with_the_same_values_gets_the_contribution_and_one_with_others_does_not() {
        let shared = SharedContributions::default();
        let (first, first_bag) = (ProvideMemo::default(), StateBag::default());
        first_bag.put("notes", "items", Some("[1]".into()));
        first.keep(3, &shared, Some((vec![read("items", Some("[1]"))], contribution("one item"))));
        first.keep(3, &shared, Some((vec![read("items", None)], contribution("empty"))));

        let (second, second_bag) = (ProvideMemo::default(), StateBag::default());
        assert_eq!(
            second.reuse(3, &shared, &second_bag).and_then(|c| c.instructions.clone()).as_deref(),
            Some("empty")
        );
        second_bag.put("notes", "items", Some("[1]".into()));
        assert_eq!(
            second.reuse(3, &shared, &second_bag).and_then(|c| c.instructions.clone()).as_deref(),
            Some("one item")
        );
        second_bag.put("notes", "items", Some("[2]".into()));
        assert!(second.reuse(3, &shared, &second_bag).is_none(), "no session saw these values");
    }

    #[test]
    fn only_the_last_few_are_shared_and_the_same_values_are_kept_once() {
        let (memo, shared) = (ProvideMemo::default(), SharedContributions::default());
        for n in 0..SHARED_KEPT + 2 {
            let value = n.to_string();
            memo.keep(1, &shared, Some((vec![read("n", Some(&value))], contribution(&value))));
        }
        memo.keep(1, &shared, Some((vec![read("n", Some("9"))], contribution("9 again"))));
        let kept = &shared.kept;
        assert_eq!(kept.len(), SHARED_KEPT);
        let first = kept.find(|_| true).unwrap();
        assert_eq!(first.value.instructions.as_deref(), Some("9 again"));
        assert!(kept.find(|k| k.reads == vec![read("n", Some("0"))]).is_none(), "the oldest went first");
    }

    #[test]
    fn a_contribution_other_sessions_reuse_outlives_ones_nobody_does() {
        let shared = SharedContributions::default();
        let empty = StateBag::default();
        ProvideMemo::default().keep(1, &shared, Some((vec![read("n", None)], contribution("empty"))));
        for round in 0..3 * SHARED_KEPT {
            // A new session starts empty and meets the shared entry ...
            let session = ProvideMemo::default();
            assert!(session.reuse(1, &shared, &empty).is_some(), "lost in round {round}");
            // ... then keeps a few states of its own that no other session will hold.
            for step in 0..SHARED_KEPT - 1 {
                let value = format!("{round}.{step}");
                session.keep(1, &shared, Some((vec![read("n", Some(&value))], contribution(&value))));
            }
        }
    }
}
