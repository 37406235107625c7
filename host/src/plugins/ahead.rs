//! A plugin's next contribution asked ahead, in the instance its tool call left: a tool call
//! that moved the state of a plugin whose `provide` is reusable (`reuse.until-state-changes`)
//! makes the contribution the next model call would ask for stale, so it is asked now, while
//! the instance is at hand, and kept in the session's [`ProvideMemo`] with the values it read.
//! The next model call then finds it there instead of instantiating the plugin again.
//!
//! Asked only of a plugin whose last `provide` in the session was reusable, with no model and
//! no children to reach (like a view asked so). Whatever it writes or emits is discarded, and
//! a call that does either, or does not declare itself reusable again, leaves nothing kept:
//! the next model call calls `provide` as ever. A failed call is not reported (the real one
//! will be) and ends the instance's use.
//!
//! A reusable `stop` (contract 0.2.11) is not asked so: a turn's tool calls move the state
//! several times before it ends, and asking after each cost more than the one instance its
//! end saves (BENCHMARKS.md).

use std::sync::Arc;

use super::calls::checked;
use super::export::Export;
use super::loaded::LoadedPlugin;
use super::outputs::ProvidedAhead;
use super::reuse::ProvideMemo;
use super::types::{CallContext, Exports};
use super::viewing::Warm;
use crate::state::StateBag;

impl LoadedPlugin {
    /// Asks `provide` ahead in `warm` and keeps a reusable answer in `memo`; answers the
    /// instance back unless the call failed in it.
    pub(super) async fn provide_ahead(
        &self,
        warm: Warm,
        ctx: &CallContext,
        bag: &StateBag,
        memo: &ProvideMemo,
    ) -> Option<Warm> {
        if !self.implements(Exports::PROVIDE) || !memo.was_reusable(self.load_id) {
            return Some(warm);
        }
        let ctx = CallContext { session_id: ctx.session_id.clone(), ..CallContext::default() };
        let (linked, bounds) = (&self.linked, &self.bounds);
        let asked = linked
            .bounded(bounds, Export::Provide, async |deadline| {
                let Warm { mut store, instance } = warm;
                let func = linked.rearm(bounds, &mut store, &instance, Export::Provide, deadline)?;
                let result =
                    linked.guest.provide(&mut store, func, &ctx, &self.config).await.map(ProvidedAhead);
                let mut settled = linked.settle(bounds, &mut store, result, bag)?;
                let reads = settled.reads.take();
                let contribution = checked(bounds, settled.output)?.value.0;
                self.check_schemas(&contribution)?;
                Ok((reads, contribution, Warm { store, instance }))
            })
            .await;
        match asked {
            Ok((reads, contribution, warm)) => {
                if let Some(reads) = reads {
                    memo.keep(self.load_id, &self.shared, Some((reads, Arc::new(contribution))));
                }
                Some(warm)
            }
            Err(error) => {
                tracing::debug!("{}'s contribution asked ahead failed: {error}", self.name());
                None
            }
        }
    }
}
