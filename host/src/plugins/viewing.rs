//! The `viewer` exports (contract 0.2.4) as the host calls them: `shows` once per load,
//! `view` on a fresh instance when a session asks, or in the instance a tool call or
//! `provide` left when that call moved its plugin's state ([`FreshView`]), which saves
//! instantiating the plugin again for the view the session would ask next.

use std::sync::Arc;

use wasmtime::Store;
use wasmtime::component::{Func, Instance};

use super::calls::{PluginOutput, checked};
use super::error::PluginError;
use super::export::Export;
use super::loaded::{Linked, LoadedPlugin, PluginBounds};
use super::outputs::ViewWidgets;
use super::types::{CallContext, Exports};
use crate::events::Widget;
use crate::runtime::host_api::ModelGrant;
use crate::runtime::{CallState, Deadline, PluginFailure, StateRead};
use crate::state::StateBag;

/// A view asked right after a call that moved its plugin's state (see [`PluginOutput::view`]).
#[derive(Debug)]
pub struct FreshView {
    pub load_id: u64,
    /// The revision of each namespace the plugin may read, as the view was asked (in
    /// [`LoadedPlugin::namespaces_read`]'s order).
    pub revisions: Vec<u64>,
    pub widgets: Result<Vec<Widget>, PluginError>,
}

/// The instance a call that committed writes left, with its store: where the plugin's view
/// is asked next (see [`LoadedPlugin::view_after`]).
pub(super) struct Warm {
    pub(super) store: Store<CallState>,
    pub(super) instance: Instance,
}

impl LoadedPlugin {
    /// `view` (contract 0.2.4): what front ends show of the plugin now. Like `status`, its
    /// state writes and events are discarded: asking what a plugin shows changes nothing.
    ///
    /// A view the plugin declared reusable (`reuse.until-state-changes`, contract 0.2.9) is
    /// kept with the values it read, and shown again without a call to any session whose
    /// state holds them: a new session's first view, most often.
    pub async fn view(&self, ctx: &CallContext, bag: &StateBag) -> Result<Vec<Widget>, PluginError> {
        if let Some(widgets) = self.shared_views.find(bag) {
            return Ok(widgets.as_ref().clone());
        }
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.view(store, func, ctx, &self.config).await.map(ViewWidgets)
        };
        let (output, reads) =
            self.linked.invoke_reusable(&self.bounds, bag, Export::View, None, call).await?;
        let widgets = output.value.0;
        if let Some(reads) = reads {
            self.shared_views.keep(reads, Arc::new(widgets.clone()));
        }
        Ok(widgets)
    }

    /// `output`, with the plugin's view asked in the instance its call left when that call
    /// moved the plugin's state and the plugin shows a view: the view the session would ask
    /// next, without instantiating the plugin again. Its failure is the view's, never the
    /// call's.
    pub(super) async fn view_after<R>(
        &self,
        mut output: PluginOutput<R>,
        warm: Option<Warm>,
        ctx: &CallContext,
        bag: &StateBag,
    ) -> PluginOutput<R> {
        let Some(warm) = warm.filter(|_| self.implements(Exports::VIEW)) else {
            return output;
        };
        // Taken before the view reads: a write that lands meanwhile leaves it stale, never fresh.
        let revisions = self.revisions_read(bag).collect();
        let widgets = match self.shared_views.find(bag) {
            Some(widgets) => Ok(widgets.as_ref().clone()),
            None => {
                let ctx = CallContext { session_id: ctx.session_id.clone(), ..CallContext::default() };
                self.linked.view_in(&self.bounds, warm, &ctx, &self.config, bag).await.map(
                    |(widgets, reads)| {
                        if let Some(reads) = reads {
                            self.shared_views.keep(reads, Arc::new(widgets.clone()));
                        }
                        widgets
                    },
                )
            }
        };
        output.view = Some(FreshView { load_id: self.load_id, revisions, widgets });
        output
    }
}

impl Linked {
    /// The `viewer` interface's `shows` under the configuration `configure` returned.
    pub(super) async fn viewer_shows(
        &self,
        bounds: &PluginBounds,
        bag: &StateBag,
        config: &str,
    ) -> Result<bool, PluginError> {
        let call =
            async |store: &mut Store<CallState>, func| self.guest.viewer_shows(store, func, config).await;
        Ok(self.invoke(bounds, bag, Export::ViewerShows, None, call).await?.value)
    }

    /// `store` (the instance a call left) armed for one more call of `export` under
    /// `deadline`, with a model grant but no model (a call asked so reaches none) and its
    /// reads recorded; and the export.
    pub(super) fn rearm(
        &self,
        bounds: &PluginBounds,
        store: &mut Store<CallState>,
        instance: &Instance,
        export: Export,
        deadline: Deadline,
    ) -> Result<Func, PluginFailure> {
        CallState::arm_again(store, deadline);
        let state = store.data_mut();
        state.model = bounds.model.map(|budget| ModelGrant { budget, service: None });
        state.reads = Some(Vec::new());
        self.calls.count(export);
        self.func(store, instance, export)
    }

    /// `view` in the instance `warm` a call left, under a deadline of its own; with the
    /// reads it depends on when it declared itself reusable.
    pub(super) async fn view_in(
        &self,
        bounds: &PluginBounds,
        warm: Warm,
        ctx: &CallContext,
        config: &str,
        bag: &StateBag,
    ) -> Result<(Vec<Widget>, Option<Vec<StateRead>>), PluginError> {
        self.bounded(bounds, Export::View, async |deadline| {
            let Warm { mut store, instance } = warm;
            let func = self.rearm(bounds, &mut store, &instance, Export::View, deadline)?;
            let result = self.guest.view(&mut store, func, ctx, config).await.map(ViewWidgets);
            let mut settled = self.settle(bounds, &mut store, result, bag)?;
            let reads = settled.reads.take();
            Ok((checked(bounds, settled.output)?.value.0, reads))
        })
        .await
    }
}
