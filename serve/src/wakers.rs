//! What this host knows of the shared log of each session it follows, so that a stream
//! reads the log only for what it cannot know otherwise: the events this host appended
//! (handed over by the relay, numbered, kept within the event buffer's bounds while a stream
//! follows the session) and the newest number each notice of an append says.
//!
//! A session is followed by its streams (the log) and by the asks waiting in it (answers),
//! each on a channel of its own, so neither is woken for the other's news. The log's
//! channel counts the times the log may have moved unseen (the connection that hears
//! notices was made again): a stream reads the log after each. Any other news is sent on it
//! without changing that count, so a stream that was busy sending when the session moved
//! still sees it at its next wait.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_host::unpoisoned::LockUnpoisoned as _;
use tokio::sync::watch;

use super::kept_events::{KeptEvents, Numbered};

pub struct Wakers {
    followed: Mutex<HashMap<String, Followed>>,
    capacity: usize,
    budget: usize,
}

struct Followed {
    log: watch::Sender<u64>,
    answers: watch::Sender<()>,
    /// The newest number the session's log is known to have reached.
    newest: u64,
    /// This host's appends of the session's events under way: a notice heard meanwhile is
    /// most likely of one of them, whose events come with its end (which wakes the streams
    /// either way, so they read the log if the notice was another host's).
    appending: usize,
    /// The newest events this host appended, numbered without a gap; kept only while a
    /// stream follows.
    appended: KeptEvents,
}

/// What a stream that has every event up to a number can know of the rest without the log.
#[derive(Debug)]
pub enum Since {
    /// The next events, from memory.
    Events(Vec<Numbered>),
    /// Nothing newer is known of.
    Nothing,
    /// Newer events are known of but not held here: read the log.
    Read,
}

impl Wakers {
    /// Wakers keeping, for each session a stream follows, at most `capacity` of the events
    /// this host appended, weighing at most `budget` bytes.
    pub fn new(capacity: usize, budget: usize) -> Self {
        Self { followed: Mutex::default(), capacity, budget }
    }

    /// For a stream of `session`'s log: a receiver that changes each time the log moves
    /// from now on, its value counting the times it may have moved unseen.
    pub fn follow_log(&self, session: &str) -> watch::Receiver<u64> {
        self.entry(session, |followed| followed.log.subscribe())
    }

    /// For the asks of `session`: a receiver that changes each time one may have been
    /// answered from now on.
    pub fn follow_answers(&self, session: &str) -> watch::Receiver<()> {
        self.entry(session, |followed| followed.answers.subscribe())
    }

    fn entry<T>(&self, session: &str, subscribe: impl FnOnce(&Followed) -> T) -> T {
        let mut followed = self.lock();
        // Swept when the map would grow, so a long-running host keeps only followed sessions.
        if followed.len() == followed.capacity() {
            followed.retain(|_, followed| followed.is_followed());
        }
        let (capacity, budget) = (self.capacity, self.budget);
        let at = followed.entry(session.to_owned()).or_insert_with(|| Followed {
            log: watch::channel(0).0,
            answers: watch::channel(()).0,
            newest: 0,
            appending: 0,
            appended: KeptEvents::new(capacity, budget),
        });
        subscribe(at)
    }

    /// What is known of `session`'s log after event `after`.
    pub fn since(&self, session: &str, after: u64) -> Since {
        let followed = self.lock();
        let Some(followed) = followed.get(session) else { return Since::Read };
        if followed.newest <= after {
            return Since::Nothing;
        }
        match followed.appended.oldest() {
            Some(oldest) if oldest <= after + 1 && followed.appended.newest() > Some(after) => {
                Since::Events(followed.appended.after(after).cloned().collect())
            }
            _ => Since::Read,
        }
    }

    /// This host's relay is appending events of `sessions`; each is answered by
    /// [`Self::appended`].
    pub fn appending<'a>(&self, sessions: impl IntoIterator<Item = &'a str>) {
        let mut followed = self.lock();
        for session in sessions {
            if let Some(at) = followed.get_mut(session) {
                at.appending += 1;
            }
        }
    }

    /// This host's append of `events` to `session`'s log ended: written after number
    /// `prior`, or (`None`) not written. Kept for the session's streams, which are woken.
    pub fn appended(
        &self,
        session: &str,
        prior: Option<u64>,
        events: impl IntoIterator<Item = (Arc<str>, Arc<str>)>,
    ) {
        let mut followed = self.lock();
        let Some(at) = live(&mut followed, session) else { return };
        at.appending = at.appending.saturating_sub(1);
        let Some(prior) = prior else {
            at.log.send_modify(|_| {});
            return;
        };
        let streams = at.log.receiver_count() > 0;
        if !streams || at.appended.newest().is_some_and(|newest| newest != prior) {
            // Another host wrote between: what is kept would not run on into these.
            at.appended.clear();
        }
        let mut newest = prior;
        for (kind, json) in events {
            newest += 1;
            if streams {
                at.appended.push(Numbered { id: newest, kind, json });
            }
        }
        at.newest = at.newest.max(newest);
        at.log.send_modify(|_| {});
    }

    /// A notice says `session`'s log reached `newest`: its streams are woken unless that
    /// is known already, or this host's own append of it is still under way (its end
    /// wakes them, with the events).
    pub fn noticed(&self, session: &str, newest: u64) {
        let mut followed = self.lock();
        let Some(at) = live(&mut followed, session) else { return };
        if newest <= at.newest {
            return;
        }
        at.newest = newest;
        if at.appending == 0 {
            at.log.send_modify(|_| {});
        }
    }

    /// One of `session`'s asks may have been answered.
    pub fn answered(&self, session: &str) {
        let mut followed = self.lock();
        if let Some(at) = live(&mut followed, session) {
            at.answers.send_modify(|()| {});
        }
    }

    /// Wakes everything followed, the streams to read the log: what moved while the host
    /// was not listening was not told.
    pub fn wake_all(&self) {
        let mut followed = self.lock();
        followed.retain(|_, followed| followed.is_followed());
        for followed in followed.values() {
            followed.log.send_modify(|unseen| *unseen += 1);
            followed.answers.send_modify(|()| {});
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Followed>> {
        self.followed.lock_unpoisoned()
    }
}

impl Followed {
    fn is_followed(&self) -> bool {
        self.log.receiver_count() + self.answers.receiver_count() > 0
    }
}

/// `session`'s entry while something follows it; forgotten once nothing does.
fn live<'a>(followed: &'a mut HashMap<String, Followed>, session: &str) -> Option<&'a mut Followed> {
    if !followed.get(session)?.is_followed() {
        followed.remove(session);
        return None;
    }
    followed.get_mut(session)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(texts: &[&str]) -> Vec<(Arc<str>, Arc<str>)> {
        texts.iter().map(|text| (Arc::from("note"), Arc::from(*text))).collect()
    }

    fn shown(since: Since) -> String {
        match since {
            Since::Events(events) => events
                .iter()
                .map(|event| format!("{}:{}", event.id, event.json))
                .collect::<Vec<_>>()
                .join(" "),
            other => format!("{other:?}"),
        }
    }

    /// This host appends events of `session` after `prior`, its notice heard after the end.
    fn append(wakers: &Wakers, session: &str, prior: u64, texts: &[&str]) {
        wakers.appending([session]);
        wakers.appended(session, Some(prior), events(texts));
    }

    #[tokio::test]
    async fn answers_and_the_log_wake_their_own_followers_and_the_unfollowed_are_forgotten() {
        let wakers = Wakers::new(100, 1 << 20);
        let (mut asks, mut log) = (wakers.follow_answers("s1"), wakers.follow_log("s1"));
        let other = wakers.follow_answers("s2");
        wakers.answered("s1");
        wakers.answered("s3");
        asks.changed().await.unwrap();
        assert!(!log.has_changed().unwrap(), "an answer is no news to a stream");
        assert!(!other.has_changed().unwrap(), "s2 did not move");
        append(&wakers, "s1", 0, &["a"]);
        log.changed().await.unwrap();
        assert!(!asks.has_changed().unwrap(), "an event is no answer");
        drop(other);
        wakers.answered("s2");
        assert!(!wakers.lock().contains_key("s2"), "no one follows s2 any more");
        assert_eq!(*log.borrow_and_update(), 0);
        wakers.wake_all();
        asks.changed().await.unwrap();
        log.changed().await.unwrap();
        assert_eq!(*log.borrow_and_update(), 1, "after a lost connection, read the log");
    }

    #[tokio::test]
    async fn what_this_host_appended_is_known_without_the_log_and_a_notice_of_it_wakes_nobody() {
        let wakers = Wakers::new(100, 1 << 20);
        let mut log = wakers.follow_log("s1");
        assert_eq!(shown(wakers.since("s1", 0)), "Nothing");
        append(&wakers, "s1", 4, &["a", "b"]);
        log.changed().await.unwrap();
        assert_eq!(shown(wakers.since("s1", 4)), "5:a 6:b");
        assert_eq!(shown(wakers.since("s1", 5)), "6:b");
        assert_eq!(shown(wakers.since("s1", 6)), "Nothing");
        assert_eq!(shown(wakers.since("s1", 2)), "Read", "events 3 and 4 were never held here");
        wakers.noticed("s1", 6);
        assert!(!log.has_changed().unwrap(), "the notice of this host's own append");

        // Another host appends 7 and 8: known of, not held.
        wakers.noticed("s1", 8);
        log.changed().await.unwrap();
        assert_eq!(shown(wakers.since("s1", 6)), "Read");
        // This host takes the session back and appends 9: what it held no longer runs on.
        append(&wakers, "s1", 8, &["c"]);
        assert_eq!(shown(wakers.since("s1", 8)), "9:c");
        assert_eq!(shown(wakers.since("s1", 6)), "Read");
        assert_eq!(shown(wakers.since("s2", 0)), "Read", "a session not followed here");
        append(&wakers, "s2", 0, &["x"]);
        assert!(!wakers.lock().contains_key("s2"), "nothing is kept for a session nobody follows");
    }

    #[tokio::test]
    async fn a_notice_heard_before_this_hosts_append_ends_waits_for_its_events() {
        let wakers = Wakers::new(100, 1 << 20);
        let mut log = wakers.follow_log("s1");
        wakers.appending(["s1"]);
        wakers.noticed("s1", 2);
        assert!(!log.has_changed().unwrap(), "woken by the append's end instead");
        wakers.appended("s1", Some(0), events(&["a", "b"]));
        log.changed().await.unwrap();
        assert_eq!(shown(wakers.since("s1", 0)), "1:a 2:b");

        // An append left out (another host has the session) while that host's notice came.
        wakers.appending(["s1"]);
        wakers.noticed("s1", 3);
        assert!(!log.has_changed().unwrap());
        wakers.appended("s1", None, events(&["c"]));
        log.changed().await.unwrap();
        assert_eq!(shown(wakers.since("s1", 2)), "Read", "event 3 is the other host's");
    }

    #[test]
    fn what_this_host_appended_is_kept_within_the_event_buffer_and_only_for_a_stream() {
        let wakers = Wakers::new(3, 1 << 20);
        let _asks = wakers.follow_answers("s1");
        append(&wakers, "s1", 0, &["a", "b"]);
        let _log = wakers.follow_log("s1");
        assert_eq!(shown(wakers.since("s1", 0)), "Read", "no stream followed when they came");
        append(&wakers, "s1", 2, &["c", "d", "e", "f"]);
        assert_eq!(shown(wakers.since("s1", 3)), "4:d 5:e 6:f");
        assert_eq!(shown(wakers.since("s1", 2)), "Read", "event 3 was dropped past three");
    }
}
