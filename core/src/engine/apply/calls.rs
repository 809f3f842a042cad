//! The calls a step makes to the service, each within the apply's bound on requests in
//! flight.
//!
//! The walk runs more nodes than there are call slots: a node spends part of its time on
//! local work (its intent made durable in the write-ahead log, its result recorded in state
//! and in the world, the kind's own work between its requests), and a node holding a slot
//! through that work leaves the service idle. So the bound the user sets with
//! `parallelism` is held by each request the kind sends (see `call_slots`), and these
//! methods run the kind's operation within it. Every call a step makes goes through one of
//! them; a call made directly on the kind would not be bounded.

use super::{Shared, Step};
use crate::provider::{OpContext, ProviderResult, Remote};
use crate::value::Object;
use std::future::Future;

/// How many nodes the walk runs for each call slot: one with a request in flight, one
/// doing its local work. Nodes beyond the slots wait with their intent logged, so this
/// also bounds the intents logged for calls not sent yet.
pub(super) const NODES_PER_CALL_SLOT: usize = 2;

impl Shared {
    /// Runs `call` with its requests within the apply's call slots.
    pub(super) async fn bounded<T>(&self, call: impl Future<Output = T>) -> T {
        crate::call_slots::within(self.calls.clone(), call).await
    }
}

impl Step<'_> {
    pub(super) async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        self.shared.bounded(self.kind.create(ctx, config)).await
    }

    pub(super) async fn update(
        &self,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let call = self.kind.update(self.ctx, id, prior, config);
        self.shared.bounded(call).await
    }

    /// The object `id` as the service holds it, given what the plan read.
    pub(super) async fn read(&self, id: &str) -> ProviderResult<Option<Remote>> {
        let prior = self.prior();
        self.shared
            .bounded(self.kind.read(self.ctx, id, &prior))
            .await
    }

    pub(super) async fn delete(&self, id: &str) -> ProviderResult<()> {
        let prior = self.prior();
        self.shared
            .bounded(self.kind.delete(self.ctx, id, &prior))
            .await
    }

    pub(super) async fn find_by_key(
        &self,
        ctx: &OpContext,
        key: &str,
    ) -> ProviderResult<Option<Remote>> {
        self.shared.bounded(self.kind.find_by_key(ctx, key)).await
    }

    pub(super) async fn complete_create(
        &self,
        ctx: &OpContext,
        remote: Remote,
    ) -> ProviderResult<Remote> {
        self.shared
            .bounded(self.kind.complete_create(ctx, remote))
            .await
    }

    /// What the container `id` holds now.
    pub(super) async fn contents(
        &self,
        id: &str,
    ) -> ProviderResult<Vec<crate::location::Location>> {
        let prior = self.prior();
        self.shared
            .bounded(self.kind.contents(self.ctx, id, &prior))
            .await
    }
}
