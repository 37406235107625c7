//! The `viewer` exports (contract 0.2.4) as the host calls them: `shows` once per load,
//! `view` on a fresh instance when a session asks, or in the instance a tool call or
//! `provide` left when that call moved its plugin's state ([`FreshView`]), which saves
//! instantiating the plugin again for the view the session would ask next.

use wasmtime::Store;
use wasmtime::component::Instance;

use super::calls::{PluginOutput, checked};
use super::error::PluginError;
use super::export::Export;
use super::loaded::{Linked, LoadedPlugin, PluginBounds};
use super::outputs::ViewWidgets;
use super::types::{CallContext, Exports};
use crate::events::Widget;
use crate::runtime::CallState;
use crate::runtime::host_api::ModelGrant;
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
    pub async fn view(&self, ctx: &CallContext, bag: &StateBag) -> Result<Vec<Widget>, PluginError> {
        let call = async |store: &mut Store<CallState>, func| {
            self.linked.guest.view(store, func, ctx, &self.config).await.map(ViewWidgets)
        };
        Ok(self.linked.invoke(&self.bounds, bag, Export::View, None, call).await?.value.0)
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
        let ctx = CallContext { session_id: ctx.session_id.clone(), ..CallContext::default() };
        let widgets = self.linked.view_in(&self.bounds, warm, &ctx, &self.config, bag).await;
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

    /// `view` in the instance `warm` a call left, under a deadline of its own.
    pub(super) async fn view_in(
        &self,
        bounds: &PluginBounds,
        warm: Warm,
        ctx: &CallContext,
        config: &str,
        bag: &StateBag,
    ) -> Result<Vec<Widget>, PluginError> {
        self.bounded(bounds, Export::View, async |deadline| {
            let Warm { mut store, instance } = warm;
            CallState::arm_again(&mut store, deadline);
            store.data_mut().model = bounds.model.map(|budget| ModelGrant { budget, service: None });
            self.calls.count(Export::View);
            let func = self.func(&mut store, &instance, Export::View)?;
            let result = self.guest.view(&mut store, func, ctx, config).await.map(ViewWidgets);
            Ok(checked(bounds, self.settle(bounds, &mut store, result, bag)?.output)?.value.0)
        })
        .await
    }
}
