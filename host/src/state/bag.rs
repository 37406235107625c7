use crate::unpoisoned::LockUnpoisoned as _;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

/// One session's plugin state: namespace → key → JSON text.
///
/// A cheap handle (`Arc` inside): the session owns it, and each plugin call's store holds a
/// clone for the duration of the call. Values stay JSON text end to end — plugins send text,
/// SQLite stores text — so the host never re-serializes them.
#[derive(Clone, Default)]
pub struct StateBag {
    inner: Arc<Mutex<BagData>>,
}

#[derive(Default)]
struct BagData {
    values: BTreeMap<String, BTreeMap<String, String>>,
    /// Keys changed since the last [`StateBag::take_changes`], for the step commit.
    dirty: BTreeSet<(String, String)>,
    /// How many times each namespace really changed since the bag was made: what tells a
    /// front end's view of a plugin that it may be stale, without comparing values.
    revisions: BTreeMap<String, u64>,
}

/// State values a new session starts with, by namespace: what plugins wrote in `configure`
/// (contract 0.2.10), handed over by the layer above at every (re)load (see
/// [`super::Sessions::seed_new_sessions`]).
pub type Seeds = Vec<(String, BTreeMap<String, String>)>;

/// A key whose value changed; `value: None` means removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateChange {
    pub namespace: String,
    pub key: String,
    pub value: Option<String>,
}

impl StateBag {
    /// A bag holding `entries` (namespace, key, JSON text), nothing dirty.
    pub fn from_entries(entries: impl IntoIterator<Item = (String, String, String)>) -> Self {
        let mut values: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (namespace, key, value) in entries {
            values.entry(namespace).or_default().insert(key, value);
        }
        Self { inner: Arc::new(Mutex::new(BagData { values, ..BagData::default() })) }
    }

    pub fn get(&self, namespace: &str, key: &str) -> Option<String> {
        self.lock().values.get(namespace)?.get(key).cloned()
    }

    /// Whether `key` holds exactly `value` (`None`: is absent), without copying it.
    pub fn holds(&self, namespace: &str, key: &str, value: Option<&str>) -> bool {
        self.lock().values.get(namespace).and_then(|keys| keys.get(key)).map(String::as_str) == value
    }

    /// The length of `key`'s value, without copying it.
    pub fn value_len(&self, namespace: &str, key: &str) -> Option<usize> {
        self.lock().values.get(namespace)?.get(key).map(String::len)
    }

    /// How many keys `namespace` holds and their bytes, keys and values together (what the
    /// host-side caps on a plugin's state count).
    pub fn usage(&self, namespace: &str) -> (usize, usize) {
        let data = self.lock();
        let Some(keys) = data.values.get(namespace) else { return (0, 0) };
        (keys.len(), keys.iter().map(|(key, value)| key.len() + value.len()).sum())
    }

    /// Reads a value as JSON (for the host's own use: commands, tests).
    pub fn get_json(&self, namespace: &str, key: &str) -> Option<serde_json::Value> {
        serde_json::from_str(&self.get(namespace, key)?).ok()
    }

    /// Sets (or with `None`, removes) one key.
    pub fn put(&self, namespace: &str, key: &str, value: Option<String>) {
        let mut data = self.lock();
        let current = data.values.entry(namespace.to_owned()).or_default();
        match value {
            Some(value) => current.insert(key.to_owned(), value),
            None => current.remove(key),
        };
        data.dirty.insert((namespace.to_owned(), key.to_owned()));
        *data.revisions.entry(namespace.to_owned()).or_default() += 1;
    }

    /// How many times `namespace` changed since the bag was made (0 for one never written).
    pub fn revision(&self, namespace: &str) -> u64 {
        self.lock().revisions.get(namespace).copied().unwrap_or(0)
    }

    /// Applies a call's writes to `namespace` at once.
    pub fn apply(&self, namespace: &str, writes: BTreeMap<String, Option<String>>) {
        if writes.is_empty() {
            return;
        }
        let mut data = self.lock();
        let data = &mut *data;
        let current = data.values.entry(namespace.to_owned()).or_default();
        let mut changed = false;
        for (key, value) in writes {
            // A key written back as it was is not a change: the step has nothing to store
            // for it (a plugin may write its unchanged id counter with every list).
            if current.get(&key) == value.as_ref() {
                continue;
            }
            match value {
                Some(value) => current.insert(key.clone(), value),
                None => current.remove(&key),
            };
            data.dirty.insert((namespace.to_owned(), key));
            changed = true;
        }
        if changed {
            *data.revisions.entry(namespace.to_owned()).or_default() += 1;
        }
    }

    /// Writes `seeds` into this bag, like any write (so the session's next step stores them).
    pub fn seed(&self, seeds: &Seeds) {
        for (namespace, values) in seeds {
            let writes = values.iter().map(|(key, value)| (key.clone(), Some(value.clone()))).collect();
            self.apply(namespace, writes);
        }
    }

    /// A bag of its own holding what this one holds now: later writes to either leave the
    /// other as it is (what a child agent's calls are checked against of its parent's).
    pub fn detached(&self) -> Self {
        let values = self.lock().values.clone();
        Self { inner: Arc::new(Mutex::new(BagData { values, ..BagData::default() })) }
    }

    /// Every key of a namespace, for `/state`-style inspection and tests.
    pub fn namespace(&self, namespace: &str) -> BTreeMap<String, String> {
        self.lock().values.get(namespace).cloned().unwrap_or_default()
    }

    /// The changes since the last call, with their current values, clearing the dirty set.
    pub fn take_changes(&self) -> Vec<StateChange> {
        let mut data = self.lock();
        let dirty = std::mem::take(&mut data.dirty);
        dirty
            .into_iter()
            .map(|(namespace, key)| {
                let value = data.values.get(&namespace).and_then(|keys| keys.get(&key)).cloned();
                StateChange { namespace, key, value }
            })
            .collect()
    }

    /// Puts changes back after a failed commit, so the next commit retries them.
    pub fn restore_changes(&self, changes: &[StateChange]) {
        let mut data = self.lock();
        for change in changes {
            data.dirty.insert((change.namespace.clone(), change.key.clone()));
        }
    }

    fn lock(&self) -> MutexGuard<'_, BagData> {
        // A panic while holding this lock cannot leave the maps half-updated in a way
        // that matters more than losing the session, so recover the data.
        self.inner.lock_unpoisoned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_reported_once_with_their_latest_value() {
        let bag = StateBag::default();
        bag.put("notes", "items", Some("[1]".into()));
        bag.put("notes", "items", Some("[1,2]".into()));
        bag.put("drafts", "current", Some("\"first\"".into()));
        bag.put("drafts", "current", None);
        let changes = bag.take_changes();
        assert_eq!(changes.len(), 2);
        assert!(changes.contains(&StateChange {
            namespace: "notes".into(),
            key: "items".into(),
            value: Some("[1,2]".into())
        }));
        assert!(changes.iter().any(|c| c.namespace == "drafts" && c.value.is_none()));
        assert!(bag.take_changes().is_empty());
    }

    #[test]
    fn a_call_writing_a_key_back_as_it_was_changes_nothing() {
        let bag = StateBag::from_entries([("notes".into(), "counter".into(), "5".into())]);
        let writes = BTreeMap::from([
            ("counter".to_owned(), Some("5".to_owned())),
            ("gone".to_owned(), None),
            ("items".to_owned(), Some("[]".to_owned())),
        ]);
        bag.apply("notes", writes);
        let changes = bag.take_changes();
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0].key, "items");
    }

    #[test]
    fn a_namespace_revision_moves_only_when_a_value_really_changes() {
        let bag = StateBag::from_entries([("notes".into(), "counter".into(), "5".into())]);
        assert_eq!(bag.revision("notes"), 0);
        bag.apply("notes", BTreeMap::from([("counter".to_owned(), Some("5".to_owned()))]));
        assert_eq!(bag.revision("notes"), 0, "written back as it was");
        bag.apply("notes", BTreeMap::from([("counter".to_owned(), Some("6".to_owned()))]));
        bag.put("notes", "other", None);
        assert_eq!(bag.revision("notes"), 2);
        assert_eq!(bag.revision("drafts"), 0, "namespaces are apart");
    }

    #[test]
    fn namespaces_are_separate() {
        let bag = StateBag::from_entries([("a".into(), "k".into(), "1".into())]);
        assert_eq!(bag.get("a", "k").as_deref(), Some("1"));
        assert_eq!(bag.get("b", "k"), None);
        assert!(bag.take_changes().is_empty(), "loaded entries are not dirty");
    }
}
