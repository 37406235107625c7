//! One session's event stream over HTTP: every event numbered, the last ones kept (at most
//! `event_buffer` of them, weighing at most `event_buffer_kb`) for clients that reconnect
//! with `Last-Event-ID`, and each sent live to every open stream.
//!
//! Numbers start at 1 in each hub, and a hub lives as long as the server keeps its session
//! open: after a restart or an idle sweep, a new hub counts again from 1. So an event's id
//! is `EPOCH-N`, the epoch naming the hub, and an id from another epoch is answered with a
//! `gap` and everything kept instead of being read as a number of this one.
//!
//! The hub also keeps the plugins' views as the events it numbered left them, so a client
//! is given the views and the id of the last event together, and follows from that id.
//!
//! Where hosts share the store, a hub also hands each event to the [`Relay`], and streams
//! read the shared log instead (`log_stream.rs`).

use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::broadcast;

use super::kept_events::KeptEvents;
pub use super::kept_events::Numbered;
use super::relay::Relay;
use agent_host::events::{Event, EventSink, PluginView};
use agent_host::unpoisoned::LockUnpoisoned as _;

pub struct Hub {
    epoch: String,
    kept: Mutex<Kept>,
    /// Made by the first stream that follows the hub: a session nobody follows holds no
    /// channel (one of `event_buffer` slots weighs about 110 KiB empty).
    live: OnceLock<broadcast::Sender<Numbered>>,
    /// Where hosts share the store: the relay, the session the events are of, and the
    /// lease they are emitted under.
    relay: Option<(Arc<Relay>, Arc<str>, super::relay::Fence)>,
}

struct Kept {
    next: u64,
    /// Each plugin's view as of event `next - 1`, in the order they were first shown.
    views: Vec<PluginView>,
    events: KeptEvents,
}

/// Where a (re)connecting client says it is, from its `Last-Event-ID`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// No id: a fresh stream, sent everything kept.
    Fresh,
    /// The last event it has, of this hub.
    After(u64),
    /// An id this hub never gave (another epoch, or a number it has not reached): it is
    /// told of a gap and sent everything kept.
    Elsewhere,
}

/// What a (re)connecting client is sent first, and where the live part takes over.
pub struct Replay {
    pub missed: Vec<Numbered>,
    /// Events the client asked for that are no longer kept, if any: the oldest kept id.
    pub gap_before: Option<u64>,
    pub live: broadcast::Receiver<Numbered>,
}

impl Hub {
    /// A hub keeping at most `capacity` events weighing at most `budget` bytes together.
    pub fn new(capacity: usize, budget: usize) -> Self {
        let epoch = uuid::Uuid::new_v4().simple().to_string()[..8].to_owned();
        let kept = Kept { next: 1, views: Vec::new(), events: KeptEvents::new(capacity, budget) };
        Self { epoch, kept: Mutex::new(kept), live: OnceLock::new(), relay: None }
    }

    /// A hub that also hands every event of `session`, emitted under the lease `fence`, to
    /// `relay`, starting from `views` (as the shared log has them).
    pub fn relayed(
        capacity: usize,
        budget: usize,
        relay: Arc<Relay>,
        session: &str,
        fence: super::relay::Fence,
        views: Vec<PluginView>,
    ) -> Self {
        let hub = Self { relay: Some((relay, session.into(), fence)), ..Self::new(capacity, budget) };
        hub.lock().views = views;
        hub
    }

    /// This hub's events' id: `EPOCH-N`.
    pub fn event_id(&self, event: &Numbered) -> String {
        format!("{}-{}", self.epoch, event.id)
    }

    /// Reads a `Last-Event-ID`: `EPOCH-N`, or a plain `N` as ids were before they had an
    /// epoch (taken as this hub's when it has got that far).
    pub fn resume_from(&self, last_event_id: Option<&str>) -> Resume {
        let Some(text) = last_event_id.map(str::trim) else { return Resume::Fresh };
        let (epoch, number) = match text.split_once('-') {
            Some((epoch, number)) => (Some(epoch), number),
            None => (None, text),
        };
        match number.parse::<u64>() {
            Ok(n) if epoch.is_none_or(|epoch| epoch == self.epoch) && n < self.lock().next => {
                Resume::After(n)
            }
            _ => Resume::Elsewhere,
        }
    }

    /// The kept events after `resume`, and a receiver for those that follow, taken together
    /// so that none falls between them.
    pub fn replay(&self, resume: Resume) -> Replay {
        let kept = self.lock();
        let capacity = kept.events.capacity();
        let live = self.live.get_or_init(|| broadcast::channel(capacity.clamp(16, 4096)).0).subscribe();
        let after = match resume {
            Resume::After(n) => n,
            Resume::Fresh | Resume::Elsewhere => 0,
        };
        let missed: Vec<Numbered> = kept.events.after(after).cloned().collect();
        let oldest = kept.events.oldest().unwrap_or(kept.next);
        let gap_before = match resume {
            Resume::Fresh => None,
            Resume::After(n) => (n + 1 < oldest).then_some(oldest),
            Resume::Elsewhere => Some(oldest),
        };
        Replay { missed, gap_before, live }
    }

    /// The views as of the last event numbered, and that event's id (`None` before the
    /// first): what a client draws before it follows the stream from that id. `current`,
    /// when given, is what the session keeps now, and replaces what the hub saw (a view
    /// asked before the hub was made, say); it is read under the hub's lock, so no event
    /// falls between the views and the id.
    pub fn views_and_last_id(&self, current: Option<Vec<PluginView>>) -> (Vec<PluginView>, Option<String>) {
        let mut kept = self.lock();
        if let Some(current) = current {
            kept.views = current;
        }
        let last = (kept.next > 1).then(|| format!("{}-{}", self.epoch, kept.next - 1));
        (kept.views.clone(), last)
    }

    /// Streams open on this hub now.
    pub fn streams(&self) -> usize {
        self.live.get().map_or(0, broadcast::Sender::receiver_count)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock_unpoisoned()
    }
}

impl EventSink for Hub {
    fn emit(&self, event: &Event) {
        let json = serde_json::to_value(event).expect("events serialize");
        let kind: Arc<str> = json["type"].as_str().unwrap_or("event").into();
        let mut kept = self.lock();
        let views_changed = matches!(event, Event::ViewChanged { .. });
        if let Event::ViewChanged { view } = event {
            keep_view(&mut kept.views, view);
        }
        let numbered = Numbered { id: kept.next, kind, json: json.to_string().into() };
        kept.next += 1;
        if let Some((relay, session, fence)) = &self.relay {
            // Streams read the shared log (and this host's wakers hold its own events): a
            // relayed hub keeps none and has no stream of its own.
            let views = views_changed.then(|| serde_json::to_string(&kept.views).expect("views serialize"));
            relay.send(session.clone(), fence.clone(), numbered.kind, numbered.json, views);
            return;
        }
        kept.events.push(numbered.clone());
        // Sent under the lock, so a stream sees events in the order they are numbered.
        if let Some(live) = self.live.get() {
            let _ = live.send(numbered);
        }
    }
}

/// `view` in place of the plugin's kept one; an empty view (no widgets, no error) is none.
fn keep_view(views: &mut Vec<PluginView>, view: &PluginView) {
    let shows = !view.widgets.is_empty() || view.error.is_some();
    match views.iter().position(|kept| kept.plugin == view.plugin) {
        Some(at) if shows => views[at] = view.clone(),
        Some(at) => {
            views.remove(at);
        }
        None if shows => views.push(view.clone()),
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(n: u64) -> Event {
        Event::Error { message: format!("e{n}"), plugin: None }
    }

    fn ids(replay: &Replay) -> Vec<u64> {
        replay.missed.iter().map(|e| e.id).collect()
    }

    #[test]
    fn a_reconnect_gets_what_it_missed_and_is_told_of_what_is_no_longer_kept() {
        let hub = Hub::new(3, 1 << 20);
        for n in 1..=5 {
            hub.emit(&error(n));
        }
        let replay = hub.replay(Resume::After(3));
        assert_eq!(ids(&replay), [4, 5]);
        assert_eq!(replay.gap_before, None);
        let replay = hub.replay(Resume::After(1));
        assert_eq!(ids(&replay), [3, 4, 5]);
        assert_eq!(replay.gap_before, Some(3), "event 2 is gone");
        assert!(replay.missed[0].json.contains("\"e3\"") && &*replay.missed[0].kind == "error");
    }

    #[tokio::test]
    async fn what_follows_a_replay_arrives_live_in_order() {
        let hub = Hub::new(10, 1 << 20);
        hub.emit(&error(1));
        let mut replay = hub.replay(Resume::Fresh);
        hub.emit(&error(2));
        assert_eq!(replay.missed.len(), 1);
        assert_eq!(replay.live.recv().await.unwrap().id, 2);
    }

    #[test]
    fn kept_events_stay_within_the_byte_budget_and_a_resume_past_it_is_a_gap() {
        // Each event weighs its text (about 1 KiB here) and its overhead.
        let big = |n: u64| Event::Error { message: format!("{n}{}", "x".repeat(1_000)), plugin: None };
        let hub = Hub::new(1_000, 4 * 1024);
        for n in 1..=20 {
            hub.emit(&big(n));
        }
        let all = hub.replay(Resume::Fresh);
        let weight: usize = all.missed.iter().map(|e| e.json.len()).sum();
        assert!(weight <= 4 * 1024, "{weight} bytes kept past a 4 KiB budget");
        let kept = ids(&all);
        // 4 KiB hold three events of a little over 1 KiB: the newest, the oldest dropped.
        assert_eq!(kept, [18, 19, 20]);
        let resumed = hub.replay(Resume::After(10));
        assert_eq!((resumed.gap_before, ids(&resumed)), (Some(18), kept));

        // One event heavier than the whole budget is still kept, alone.
        let hub = Hub::new(1_000, 100);
        hub.emit(&error(1));
        hub.emit(&big(2));
        assert_eq!(ids(&hub.replay(Resume::Fresh)), [2]);
    }

    #[test]
    fn a_hub_nobody_follows_holds_no_channel() {
        let hub = Hub::new(2_000, 1 << 20);
        hub.emit(&error(1));
        assert!(hub.live.get().is_none(), "a channel was made with no stream to send to");
        let replay = hub.replay(Resume::Fresh);
        assert_eq!((hub.streams(), ids(&replay)), (1, vec![1]));
        drop(replay);
        assert_eq!(hub.streams(), 0);
    }

    #[test]
    fn an_id_from_another_epoch_or_ahead_of_the_hub_is_a_gap_and_a_full_replay() {
        let hub = Hub::new(10, 1 << 20);
        for n in 1..=4 {
            hub.emit(&error(n));
        }
        let third = hub.replay(Resume::Fresh).missed[2].clone();
        let own = hub.event_id(&third);
        assert!(own.ends_with("-3") && own.len() > 2, "{own}");
        assert_eq!(hub.resume_from(Some(&own)), Resume::After(3));
        assert_eq!(hub.resume_from(Some("3")), Resume::After(3), "a plain number, as before epochs");
        assert_eq!(hub.resume_from(None), Resume::Fresh);
        for foreign in ["0000zzzz-3", "5", "99", "-3", "x-y", "garbage"] {
            assert_eq!(hub.resume_from(Some(foreign)), Resume::Elsewhere, "{foreign}");
        }
        let replay = hub.replay(hub.resume_from(Some("0000zzzz-2")));
        assert_eq!((replay.gap_before, ids(&replay)), (Some(1), vec![1, 2, 3, 4]));
        let other = Hub::new(10, 1 << 20);
        other.emit(&error(1));
        let theirs = other.event_id(&other.replay(Resume::Fresh).missed[0]);
        assert_eq!(hub.resume_from(Some(&theirs)), Resume::Elsewhere, "another hub's {theirs}");
    }

    fn text_view(plugin: &str, markdown: &str) -> Event {
        let widgets = if markdown.is_empty() {
            Vec::new()
        } else {
            vec![agent_host::events::Widget::Text {
                id: "t".into(),
                label: "T".into(),
                markdown: markdown.into(),
            }]
        };
        Event::ViewChanged { view: PluginView { plugin: plugin.into(), widgets, error: None } }
    }

    #[test]
    fn the_views_go_with_the_id_of_the_last_event_that_changed_them() {
        let hub = Hub::new(10, 1 << 20);
        assert_eq!(hub.views_and_last_id(None), (Vec::new(), None));
        hub.emit(&text_view("a", "one"));
        hub.emit(&text_view("b", "two"));
        hub.emit(&error(3));
        hub.emit(&text_view("a", "three"));
        let (views, last) = hub.views_and_last_id(None);
        let shown: Vec<(&str, &Vec<agent_host::events::Widget>)> =
            views.iter().map(|view| (view.plugin.as_str(), &view.widgets)).collect();
        assert_eq!(shown.len(), 2);
        assert_eq!((shown[0].0, shown[1].0), ("a", "b"), "first shown first");
        assert!(
            matches!(&shown[0].1[0], agent_host::events::Widget::Text { markdown, .. } if markdown == "three")
        );
        let last = last.unwrap();
        assert_eq!(hub.resume_from(Some(&last)), Resume::After(4), "{last}");
        hub.emit(&text_view("b", ""));
        assert_eq!(hub.views_and_last_id(None).0.len(), 1, "an emptied view is no longer shown");
        let seeded = hub.views_and_last_id(Some(Vec::new()));
        assert!(seeded.0.is_empty() && seeded.1.unwrap().ends_with("-5"));
    }
}
