//! Hot reload: a debounced watcher on the config file and every plugin's files (the
//! component, or a crate folder's sources) that calls [`Host::reload`] when one changes.
//!
//! A half-written component never goes live: a file that does not compile is rejected by
//! the reload, the old version keeps serving, and the next save triggers another try.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, new_debouncer};

use crate::agent::Host;
use crate::config::PluginSource;
use crate::events::EventSink;

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
    let mut watched = watch_targets(&host);
    for (path, mode) in &watched.dirs {
        if let Err(error) = debouncer.watch(path, *mode) {
            tracing::warn!(path = %path.display(), %error, "cannot watch");
        }
    }
    let thread = std::thread::Builder::new().name("plugin-watch".into()).spawn(move || {
        loop {
            if stop_rx.try_recv().is_ok() {
                return;
            }
            let Ok(batch) = events_rx.recv_timeout(Duration::from_millis(200)) else { continue };
            let Ok(events) = batch else { continue };
            let relevant =
                events.iter().flat_map(|event| event.paths.iter()).any(|path| watched.covers(path));
            if !relevant {
                continue;
            }
            // The result is reported through the sink and `/plugins`; a failed reload
            // leaves the current plugins serving.
            let _ = runtime.block_on(host.reload(&*sink));
            let next = watch_targets(&host);
            for (path, mode) in next.dirs.difference(&watched.dirs) {
                let _ = debouncer.watch(path, *mode);
            }
            watched = next;
        }
    })?;
    Ok(Watcher { _thread: thread, stop: stop_tx })
}

/// What to watch, and which changed paths matter.
#[derive(Default)]
struct Targets {
    /// Folders handed to the OS watcher.
    dirs: BTreeSet<(PathBuf, RecursiveMode)>,
    /// Exact files that matter (the config, `.wasm` components).
    files: BTreeSet<PathBuf>,
    /// Plugin source folders whose files matter (all but build outputs).
    folders: BTreeSet<PathBuf>,
}

impl Targets {
    fn covers(&self, path: &Path) -> bool {
        self.files.contains(path)
            || self.folders.iter().any(|dir| path.strip_prefix(dir).is_ok_and(|rest| !is_build_output(rest)))
    }

    fn file(&mut self, path: PathBuf) {
        // Editors save by renaming a new file over the old one, which ends a watch on the
        // file itself; watching its folder survives that.
        if let Some(parent) = path.parent() {
            self.dirs.insert((parent.to_path_buf(), RecursiveMode::NonRecursive));
        }
        self.files.insert(path);
    }
}

fn watch_targets(host: &Host) -> Targets {
    let config = host.config();
    let mut targets = Targets::default();
    targets.file(absolute(&config.source.file));
    for entry in config.plugins.iter().filter(|p| p.enabled) {
        let path = absolute(&config.resolve(entry.path.get_ref()));
        match PluginSource::of(&path) {
            Some(PluginSource::Crate) => {
                targets.file(path.join("Cargo.toml"));
                targets.dirs.insert((path.join("src"), RecursiveMode::Recursive));
                targets.folders.insert(path);
            }
            Some(PluginSource::Python | PluginSource::TypeScript) => {
                targets.dirs.insert((path.clone(), RecursiveMode::Recursive));
                targets.folders.insert(path);
            }
            Some(PluginSource::Component) | None => targets.file(path),
        }
    }
    targets
}

/// Whether a path inside a plugin folder is a build's output rather than its source (the
/// build itself writes there, which must not start another).
fn is_build_output(relative: &Path) -> bool {
    relative
        .components()
        .any(|part| PluginSource::NOT_SOURCE.iter().any(|skipped| part.as_os_str() == *skipped))
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
