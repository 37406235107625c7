//! A plugin's next contribution and `stop` asked ahead, in the instance its tool call left: a
//! tool call that moved the state of a plugin whose `provide` is reusable
//! (`reuse.until-state-changes`) makes the contribution the next model call would ask for
//! stale, so it is asked now, while the instance is at hand, and kept in the session's
//! [`ProvideMemo`] with the values it read; likewise the outcome of a reusable `stop` (contract
//! 0.2.11), which the turn's end would ask for, in its [`StopMemo`]. The next model call and
//! the turn's end then find them there instead of instantiating the plugin again.
//!
//! `provide` is asked only of a plugin whose last `provide` in the session was reusable,
//! `stop` of one whose last `stop` in any session was (a session's first turn ends after its
//! tool calls); each with no model and no children to reach (like a view asked so), `stop`
//! with an empty reply (a reusable one does not read it). Whatever they write or emit is
//! discarded, and a call that does either, or does not declare itself reusable again, leaves
//! nothing kept: the next model call or turn end asks as ever. A failed call is not reported
//! (the real one will be) and ends the instance's use.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::calls::checked;
use super::export::Export;
use super::loaded::LoadedPlugin;
use super::outputs::{ProvidedAhead, StoppedAhead};
use super::reuse::{ProvideMemo, StopMemo};
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

    /// Asks `stop` ahead in `warm` and keeps a reusable outcome in `memo`; answers the
    /// instance back unless the call failed in it.
    pub(super) async fn stop_ahead(
        &self,
        warm: Warm,
        ctx: &CallContext,
        bag: &StateBag,
        memo: &StopMemo,
    ) -> Option<Warm> {
        let Some(reuse) = &self.stop_reuse else { return Some(warm) };
        if !self.implements(Exports::STOP) || !reuse.last_reusable.load(Ordering::Relaxed) {
            return Some(warm);
        }
        let ctx = CallContext { session_id: ctx.session_id.clone(), ..CallContext::default() };
        let (linked, bounds) = (&self.linked, &self.bounds);
        let asked = linked
            .bounded(bounds, Export::Stop, async |deadline| {
                let Warm { mut store, instance } = warm;
                let func = linked.rearm(bounds, &mut store, &instance, Export::Stop, deadline)?;
                let result =
                    linked.guest.stop(&mut store, func, &ctx, &self.config, "").await.map(StoppedAhead);
                let mut settled = linked.settle(bounds, &mut store, result, bag)?;
                let reads = settled.reads.take();
                let outcome = checked(bounds, settled.output)?.value.0;
                Ok((reads, outcome, Warm { store, instance }))
            })
            .await;
        match asked {
            Ok((reads, outcome, warm)) => {
                if let Some(reads) = reads {
                    memo.keep(self.load_id, &reuse.shared, Some((reads, Arc::new(outcome))));
                }
                Some(warm)
            }
            Err(error) => {
                tracing::debug!("{}'s stop asked ahead failed: {error}", self.name());
                None
            }
        }
    }
}
