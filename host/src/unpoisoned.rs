//! Locks taken whatever a panicking holder left behind. What each of the host's locks guards
//! is whole between statements (a map, a counter, a cache), so a panic in one task — a plugin
//! call's, a front end's — must not make the data unusable for every other.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// [`Mutex::lock`], through a poisoning.
pub trait LockUnpoisoned<T: ?Sized> {
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> LockUnpoisoned<T> for Mutex<T> {
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// [`RwLock::read`] and [`RwLock::write`], through a poisoning.
pub trait RwLockUnpoisoned<T: ?Sized> {
    fn read_unpoisoned(&self) -> RwLockReadGuard<'_, T>;
    fn write_unpoisoned(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T: ?Sized> RwLockUnpoisoned<T> for RwLock<T> {
    fn read_unpoisoned(&self) -> RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write_unpoisoned(&self) -> RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_a_panicking_holder_poisoned_is_taken_with_what_it_left() {
        let shared = std::sync::Arc::new(Mutex::new(1));
        let holder = shared.clone();
        let _ = std::thread::spawn(move || {
            let mut value = holder.lock().unwrap();
            *value = 2;
            panic!("the holder panics");
        })
        .join();
        assert!(shared.is_poisoned());
        assert_eq!(*shared.lock_unpoisoned(), 2);
        let both = RwLock::new(3);
        *both.write_unpoisoned() += 1;
        assert_eq!(*both.read_unpoisoned(), 4);
    }
}
