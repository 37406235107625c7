//! A short list of the most recently used values, for caches that keep the last few of
//! something and find them by what they hold rather than by a key: reusable plugin
//! contributions by the state they read, request encodings by the text they encode.

use crate::unpoisoned::LockUnpoisoned as _;
use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

/// At most `capacity` values, the most recently put or found first; values are cloned out,
/// so make them cheap to clone (an `Arc`).
pub(crate) struct RecentlyUsed<T> {
    values: Mutex<VecDeque<T>>,
    capacity: usize,
}

impl<T: Clone> RecentlyUsed<T> {
    pub(crate) fn new(capacity: usize) -> Self {
        Self { values: Mutex::new(VecDeque::with_capacity(capacity)), capacity }
    }

    /// The most recent value `matches` accepts, moved to the front.
    pub(crate) fn find(&self, matches: impl Fn(&T) -> bool) -> Option<T> {
        let mut values = self.lock();
        let position = values.iter().position(matches)?;
        let value = values.remove(position)?;
        values.push_front(value.clone());
        Some(value)
    }

    /// Puts `value` first, in place of any value `same` accepts; the least recently used
    /// goes when the list is full.
    pub(crate) fn put(&self, value: T, same: impl Fn(&T) -> bool) {
        let mut values = self.lock();
        values.retain(|other| !same(other));
        values.push_front(value);
        values.truncate(self.capacity);
    }

    pub(crate) fn clear(&self) {
        self.lock().clear();
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<T>> {
        self.values.lock_unpoisoned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_values_move_to_the_front_and_the_least_recently_used_goes_first() {
        let recent = RecentlyUsed::new(3);
        for n in [1, 2, 3] {
            recent.put(n, |&other| other == n);
        }
        assert_eq!(recent.find(|&n| n == 1), Some(1));
        recent.put(4, |&other| other == 4);
        assert_eq!(recent.find(|&n| n == 2), None, "2 was the least recently used");
        assert_eq!(recent.find(|&n| n == 1), Some(1));
        recent.put(3, |&other| other == 3);
        assert_eq!(recent.len(), 3, "a value put again replaces itself");
        recent.clear();
        assert_eq!(recent.find(|_| true), None);
    }
}
