//! `Idempotency-Key` records in the store: read on a repeated key, committed with the
//! request's own changes where the use case supports it, purged once expired.

use crate::error::Result;
use crate::model::{IdempotencyRecord, IdempotencyTicket, StoredAnswer};
use crate::ports::{ChangeSet, StoreError, Write};
use crate::Engine;

/// A request's key and how its answer is written from the use case's typed result.
///
/// The use case calls `Keyed::record` on the result it is about to answer with and
/// commits the record in the same change set as its changes: a crash keeps both or neither,
/// so a retry after a crash either replays the answer or runs the request for the first
/// time.
pub struct Keyed<'a, T> {
    /// The key, its scope and the request's fingerprint.
    pub ticket: &'a IdempotencyTicket,
    /// The answer the API sends for `T`, byte for byte.
    pub answer: &'a (dyn Fn(&T) -> StoredAnswer + Send + Sync),
}

impl<T> Keyed<'_, T> {
    /// The record answering `result`, answered at `engine`'s present time.
    pub(crate) fn record(&self, engine: &Engine, result: &T) -> IdempotencyRecord {
        self.ticket
            .record((self.answer)(result), engine.clock.now())
    }
}

impl Engine {
    /// The unexpired record of `key` in `scope`.
    pub async fn idempotency_record(
        &self,
        scope: &str,
        key: &str,
    ) -> Result<Option<IdempotencyRecord>> {
        Ok(self
            .store
            .idempotency_record(scope, key, self.clock.now())
            .await?)
    }

    /// Keeps `record` in a commit of its own, for requests whose use case does not commit it
    /// with its changes (or changes nothing). `false` when another record of the key won.
    pub async fn keep_idempotency_record(&self, record: IdempotencyRecord) -> Result<bool> {
        let mut changes = ChangeSet::new();
        changes.push(Write::PutIdempotency(record));
        match self.store.commit(changes).await {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Deletes the expired idempotency records (the maintenance job); how many.
    pub async fn purge_idempotency_records(&self) -> Result<u64> {
        Ok(self.store.purge_idempotency(self.clock.now()).await?)
    }
}
