//! Which of this host's streams to wake when another host moved a session: one counter per
//! followed session, bumped when the shared log says the session moved, so a stream that
//! was busy sending when it moved still sees the change at its next wait.

use std::collections::HashMap;
use std::sync::Mutex;

use agent_host::unpoisoned::LockUnpoisoned as _;
use tokio::sync::watch;

#[derive(Default)]
pub struct Wakers {
    followed: Mutex<HashMap<String, watch::Sender<u64>>>,
}

impl Wakers {
    /// A receiver that changes each time `session` moves from now on.
    pub fn follow(&self, session: &str) -> watch::Receiver<u64> {
        let mut followed = self.lock();
        // Swept when the map would grow, so a long-running host keeps only followed sessions.
        if followed.len() == followed.capacity() {
            followed.retain(|_, sender| sender.receiver_count() > 0);
        }
        followed.entry(session.to_owned()).or_insert_with(|| watch::channel(0).0).subscribe()
    }

    /// Wakes the streams following `session`, if any.
    pub fn wake(&self, session: &str) {
        let mut followed = self.lock();
        if let Some(sender) = followed.get(session) {
            if sender.receiver_count() == 0 {
                followed.remove(session);
            } else {
                sender.send_modify(|moves| *moves += 1);
            }
        }
    }

    /// Wakes every stream: what moved while the host was not listening was not told.
    pub fn wake_all(&self) {
        let mut followed = self.lock();
        followed.retain(|_, sender| sender.receiver_count() > 0);
        for sender in followed.values() {
            sender.send_modify(|moves| *moves += 1);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, watch::Sender<u64>>> {
        self.followed.lock_unpoisoned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_follower_sees_each_move_of_its_session_only_and_the_unfollowed_are_forgotten() {
        let wakers = Wakers::default();
        let mut first = wakers.follow("s1");
        let other = wakers.follow("s2");
        wakers.wake("s1");
        wakers.wake("s3");
        first.changed().await.unwrap();
        assert!(!other.has_changed().unwrap(), "s2 did not move");
        drop(other);
        wakers.wake("s2");
        assert!(!wakers.lock().contains_key("s2"), "no one follows s2 any more");
        assert!(wakers.lock().contains_key("s1"));
        wakers.wake_all();
        first.changed().await.unwrap();
    }
}
