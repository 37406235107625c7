//! Passing what plugins say and how they fail onto the event stream.

use crate::events::{Event, EventSink};
use crate::plugins::{CallContext, LoadedPlugin, PluginError, PluginEvent, PluginOutput};

/// Forwards a successful call's events, in the order the plugin emitted them, with the
/// display form the plugin gave each.
pub fn forward_events(sink: &dyn EventSink, plugin: &LoadedPlugin, events: Vec<PluginEvent>) {
    for PluginEvent { kind, payload, display } in events {
        sink.emit(&Event::Plugin { plugin: plugin.name().to_owned(), kind, payload, display });
    }
}

/// Forwards the `plugin_model_call` events of the model calls plugins made from calls with
/// `ctx`, whether those calls then succeeded or not: the tokens are spent either way.
pub fn forward_model_calls(sink: &dyn EventSink, ctx: &CallContext) {
    for event in ctx.model.iter().flat_map(|model| model.0.take_events()) {
        sink.emit(&event);
    }
}

/// Reports a failed plugin call; the caller decides what the failure means for the turn.
pub fn report_failure(sink: &dyn EventSink, error: &PluginError) {
    tracing::warn!(plugin = error.plugin(), %error, "plugin call failed");
    sink.emit(&Event::Error { message: error.to_string(), plugin: Some(error.plugin().to_owned()) });
}

/// What a hook answered: its value with its events forwarded, or none with its failure
/// reported (a hook that failed has no say).
pub fn heard<T>(
    sink: &dyn EventSink,
    plugin: &LoadedPlugin,
    result: Result<PluginOutput<T>, PluginError>,
) -> Option<T> {
    match result {
        Ok(output) => {
            forward_events(sink, plugin, output.events);
            Some(output.value)
        }
        Err(error) => {
            report_failure(sink, &error);
            None
        }
    }
}
