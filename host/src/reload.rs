//! Hot reload: a debounced watcher on the config file and every plugin's files (the
//! component, or a plugin folder's sources) that calls [`Host::reload`] when one changes.
//!
//! A reload happens once per change a person made, never because a file was read: the host's
//! own reload reads the config and builds plugin folders, and a reload started by that would
//! start the next, forever. So only events that may change a file count (`changes.rs`), only
//! on the files the deployment runs, never a build's outputs or the host's own store
//! (`targets.rs`), and only when what the files hold differs from what the last reload read
//! (`fingerprint.rs`): a rejected change is reported once, and tried again when it changes.
//!
//! A half-written component never goes live: a file that does not compile is rejected by
//! the reload, the old version keeps serving, and the next save triggers another try.

mod changes;
mod fingerprint;
mod targets;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use notify_debouncer_full::{DebounceEventResult, DebouncedEvent, new_debouncer};

use crate::agent::Host;
use crate::events::{Event, EventSink};
use fingerprint::Fingerprint;
use targets::Targets;

/// How long a burst of file events must be quiet before a reload starts.
pub const DEBOUNCE: Duration = Duration::from_millis(300);

/// Watches until dropped.
pub struct Watcher {
    _thread: std::thread::JoinHandle<()>,
    stop: std::sync::mpsc::Sender<()>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.stop.send(());
    }
}

/// Starts watching `host`'s config and plugins; reload events go to `sink`.
pub fn watch(host: Arc<Host>, sink: Arc<dyn EventSink>) -> anyhow::Result<Watcher> {
    let runtime = tokio::runtime::Handle::current();
    let (events_tx, events_rx) = std::sync::mpsc::channel::<DebounceEventResult>();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let mut debouncer = new_debouncer(DEBOUNCE, None, events_tx)?;
    let mut watched = Targets::of(&host.config());
    for (path, mode) in &watched.dirs {
        if let Err(error) = debouncer.watch(path, *mode) {
            tracing::warn!(path = %path.display(), %error, "cannot watch");
        }
    }
    // What the plugins running now were loaded from, give or take a save since.
    let mut seen = Fingerprint::of(&watched);
    let thread = std::thread::Builder::new().name("plugin-watch".into()).spawn(move || {
        loop {
            if stop_rx.try_recv().is_ok() {
                return;
            }
            let Ok(batch) = events_rx.recv_timeout(Duration::from_millis(200)) else { continue };
            let Ok(events) = batch else { continue };
            let Some(changed) = first_change(&events, &watched) else { continue };
            let now = Fingerprint::of(&watched);
            if now == seen {
                tracing::debug!(path = %changed.display(), "a file event that changed nothing the host reads");
                continue;
            }
            tracing::info!(changed = %changed.display(), "reloading");
            seen = now;
            // The result is reported through the sink and `/plugins`; a failed reload
            // leaves the current plugins serving.
            let _ = runtime.block_on(host.reload(&*sink));
            let next = Targets::of(&host.config());
            for (path, mode) in next.dirs.difference(&watched.dirs) {
                let _ = debouncer.watch(path, *mode);
            }
            seen.follow(&next);
            watched = next;
        }
    })?;
    Ok(Watcher { _thread: thread, stop: stop_tx })
}

/// What a reload the watcher started did, in the log: for a front end that draws no events
/// (`serve`), whose operator reads a rejected change there.
pub struct LogReloads;

impl EventSink for LogReloads {
    fn emit(&self, event: &Event) {
        if let Event::PluginRejected { path, error } = event {
            tracing::warn!(%path, %error, "reload rejected; the current plugins keep serving");
        }
    }
}

/// The first path of `events` whose change may matter to what the deployment runs; the
/// watched files themselves when the watcher lost events and cannot say which.
fn first_change(events: &[DebouncedEvent], watched: &Targets) -> Option<PathBuf> {
    events.iter().filter(|event| changes::may_change(event)).find_map(|event| {
        if event.need_rescan() {
            return Some(PathBuf::from("(every watched file: events were lost)"));
        }
        event.paths.iter().find(|path| watched.covers(path)).cloned()
    })
}
