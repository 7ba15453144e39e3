//! The connections of the batchers, which plan their statements once.
//!
//! The batchers (the group commit, the batched reads, the job settlements) each run one
//! fixed statement over arrays of keys (`= ANY($1)`, `unnest($1, …)`). PostgreSQL's plan
//! cache picks a custom plan for such a statement for good: a custom plan sees how many
//! keys the array holds and so always looks cheaper than the generic one, and every
//! execution was planned again. Measured while workers delivered mail, planning took more
//! of the database's time than executing (the event read: 350 µs of planning per call
//! against 75 µs of execution). Their statements look rows up by key, where the generic
//! plan is the plan, so their connections run with `plan_cache_mode=force_generic_plan`.
//! Every other statement (listings, searches, segment conditions, whose best plan can
//! depend on the values) keeps the default on the main pool.

use sqlx::postgres::PgPool;

use crate::{domain_reads, event_reads, group, job_settlements, record_reads};

/// Connections the batchers hold at most at once: one per batch in flight.
pub(crate) const BATCH_CONNECTIONS: u32 = (group::COMMITTERS
    + event_reads::RUNNERS
    + domain_reads::RUNNERS
    + record_reads::KINDS * record_reads::RUNNERS
    + job_settlements::RUNNERS) as u32;

/// A pool beside `pool`, to the same database with the same limits, whose connections use
/// generic plans; it connects on first use.
pub(crate) fn batch_pool(pool: &PgPool) -> PgPool {
    let options = (*pool.connect_options())
        .clone()
        .options([("plan_cache_mode", "force_generic_plan")]);
    pool.options()
        .clone()
        .max_connections(BATCH_CONNECTIONS)
        .min_connections(0)
        .connect_lazy_with(options)
}

#[cfg(all(test, posthorn_pg_tests))]
mod tests;
