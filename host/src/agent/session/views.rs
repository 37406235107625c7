//! What plugins show (contract 0.2.4, the `viewer` export), as an open session keeps it: each
//! plugin's last view, asked again only when what it may read changed — a namespace's
//! revision in the bag moved, or the plugin was reloaded — and sent whole on `view_changed`
//! when it differs from the one kept. Never per model call: a refresh where nothing changed
//! calls no plugin.
//!
//! A tool call or `provide` that moved a viewing plugin's state brings the plugin's view with
//! it, asked in that call's own instance ([`FreshView`]), and the session keeps it
//! ([`Views::offer`]) so the refresh after it finds nothing stale.
//!
//! The agent gathers them in one place ([`super::LiveSession::gather_views`]) at the end of
//! every step — the prompt's hooks, a model reply with its tools' results, a compaction, an
//! operator command — and after each tool call.
//! A front end refreshes them once more when it opens a session
//! ([`crate::agent::Host::refresh_views`]), so a new or resumed session starts with every view.

use crate::events::{Event, EventSink, PluginView, Widget};
use crate::plugins::{CallContext, Exports, FreshView, LoadedPlugin, PluginError, PluginSet};
use crate::state::StateBag;

/// The views one session keeps, in config order.
#[derive(Default)]
pub struct Views {
    kept: Vec<Kept>,
}

/// One plugin's view and what it was read from.
struct Kept {
    load_id: u64,
    /// The revision of each namespace the plugin may read, when the view was asked.
    revisions: Vec<u64>,
    view: PluginView,
}

impl Views {
    /// The views kept, in config order; a plugin that shows nothing now is left out.
    pub fn current(&self) -> Vec<PluginView> {
        let shown = |kept: &&Kept| !kept.view.widgets.is_empty() || kept.view.error.is_some();
        self.kept.iter().filter(shown).map(|kept| kept.view.clone()).collect()
    }

    /// The view of `plugin` kept now, if it shows one.
    pub fn of(&self, plugin: &str) -> Option<&PluginView> {
        self.kept.iter().map(|kept| &kept.view).find(|view| view.plugin == plugin)
    }

    /// Whether any view kept may be stale in `bag`, or `plugins` shows other views than those
    /// kept: the check every refresh makes first, with no allocation and no plugin call.
    fn stale(&self, plugins: &PluginSet, bag: &StateBag) -> bool {
        let mut kept = self.kept.iter();
        let fresh = viewing(plugins).all(|plugin| {
            kept.next().is_some_and(|kept| {
                kept.view.plugin == plugin.name()
                    && kept.load_id == plugin.load_id()
                    && plugin.revisions_read(bag).eq(kept.revisions.iter().copied())
            })
        });
        !fresh || kept.next().is_some()
    }

    /// Asks again every plugin of `plugins` whose view may be stale in `bag`, and sends a
    /// `view_changed` for each view that differs from the one kept (a plugin no longer loaded,
    /// or no longer showing a view, changes to an empty one).
    pub async fn refresh(
        &mut self,
        plugins: &PluginSet,
        session_id: &str,
        bag: &StateBag,
        sink: &dyn EventSink,
    ) {
        if !self.stale(plugins, bag) {
            return;
        }
        let ctx = CallContext { session_id: session_id.to_owned(), ..CallContext::default() };
        let mut kept = Vec::with_capacity(self.kept.len());
        for plugin in viewing(plugins) {
            let revisions: Vec<u64> = plugin.revisions_read(bag).collect();
            let previous = self.take(plugin.name());
            match previous {
                Some(previous) if previous.load_id == plugin.load_id() && previous.revisions == revisions => {
                    kept.push(previous);
                }
                previous => {
                    let view = ask(plugin, &ctx, bag).await;
                    let changed = match &previous {
                        Some(previous) => previous.view != view,
                        None => !view.widgets.is_empty() || view.error.is_some(),
                    };
                    let view = if changed { sent(view, sink) } else { view };
                    kept.push(Kept { load_id: plugin.load_id(), revisions, view });
                }
            }
        }
        for gone in std::mem::replace(&mut self.kept, kept) {
            if !gone.view.widgets.is_empty() || gone.view.error.is_some() {
                sink.emit(&Event::ViewChanged { view: empty(&gone.view.plugin) });
            }
        }
    }

    /// Keeps `fresh`, the view `plugin` showed right after one of its calls moved its state
    /// (see [`FreshView`]), in place of the one kept, sending `view_changed` if it differs:
    /// what spares the next refresh asking it again. A plugin not kept yet, or reloaded
    /// since, is left to that refresh.
    pub fn offer(&mut self, plugin: &LoadedPlugin, fresh: FreshView, sink: &dyn EventSink) {
        let same_load = |kept: &&mut Kept| kept.view.plugin == plugin.name() && kept.load_id == fresh.load_id;
        let Some(kept) = self.kept.iter_mut().find(same_load) else {
            return;
        };
        let view = shown(plugin, fresh.widgets);
        kept.view = if kept.view != view { sent(view, sink) } else { view };
        kept.revisions = fresh.revisions;
    }

    fn take(&mut self, plugin: &str) -> Option<Kept> {
        let index = self.kept.iter().position(|kept| kept.view.plugin == plugin)?;
        Some(self.kept.remove(index))
    }
}

/// The plugins of `plugins` that show a view, in config order.
fn viewing(plugins: &PluginSet) -> impl Iterator<Item = &std::sync::Arc<LoadedPlugin>> {
    plugins.plugins().iter().filter(|plugin| plugin.implements(Exports::VIEW))
}

/// `plugin`'s view now.
async fn ask(plugin: &LoadedPlugin, ctx: &CallContext, bag: &StateBag) -> PluginView {
    shown(plugin, plugin.view(ctx, bag).await)
}

/// What `plugin` shows for what its view call returned: a failed call shows its error in
/// place of the widgets.
fn shown(plugin: &LoadedPlugin, widgets: Result<Vec<Widget>, PluginError>) -> PluginView {
    match widgets {
        Ok(widgets) => PluginView { plugin: plugin.name().to_owned(), widgets, error: None },
        Err(error) => {
            tracing::warn!(plugin = error.plugin(), %error, "view call failed");
            PluginView {
                plugin: plugin.name().to_owned(),
                widgets: Vec::new(),
                error: Some(error.to_string()),
            }
        }
    }
}

/// Sends `view` on `view_changed` and hands it back to be kept: the event holds it only
/// while it goes out, so it is never copied.
fn sent(view: PluginView, sink: &dyn EventSink) -> PluginView {
    let event = Event::ViewChanged { view };
    sink.emit(&event);
    match event {
        Event::ViewChanged { view } => view,
        _ => unreachable!("the event was made a view_changed above"),
    }
}

fn empty(plugin: &str) -> PluginView {
    PluginView { plugin: plugin.to_owned(), widgets: Vec::new(), error: None }
}
