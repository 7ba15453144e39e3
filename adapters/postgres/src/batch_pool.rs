//! The connections of the batched reads, which plan their statements once, for key lookups.
//!
//! The batched reads (of a track's or a send's contact, of emails, workspaces and domains)
//! each run one fixed statement over arrays of keys (`= ANY($1)`, `unnest($1, …)`).
//! PostgreSQL's plan cache picks a custom plan for such a statement for good: a custom plan
//! sees how many keys the array holds and so always looks cheaper than the generic one, and
//! every execution was planned again. Measured while workers delivered mail, planning took
//! more of the database's time than executing (the event read: 350 µs of planning per call
//! against 75 µs of execution). So their connections run with
//! `plan_cache_mode=force_generic_plan`.
//!
//! A generic plan is kept until something invalidates it (an `ANALYZE`, a schema change),
//! so one made while a table is still empty (a new deployment) is a sequential scan with a
//! hash join, and stays one while the table grows: the batched email read took 610 µs a
//! row in a benchmark that started from an empty database. Each of these reads finds its
//! rows by key, an index lookup per key whatever the table's size, so these connections
//! also turn off sequential scans, hash joins and merge joins (PostgreSQL still uses them
//! where nothing else can run the statement).
//!
//! The group commit and the job settlements stay on the main pool: a generic plan of the
//! settlements' `DELETE ... USING unnest` made on an empty queue scans every running job
//! (the partial index `jobs_leased`) for each batch, 260 µs a job in a benchmark. Every other
//! statement (listings, searches, segment conditions, whose best plan depends on the values
//! and the table) keeps the defaults too.

use sqlx::postgres::PgPool;

use crate::{domain_reads, event_reads, record_reads};

/// Connections the batched reads hold at most at once: one per batch in flight.
pub(crate) const BATCH_CONNECTIONS: u32 = (event_reads::RUNNERS
    + domain_reads::RUNNERS
    + record_reads::KINDS * record_reads::RUNNERS) as u32;

/// A pool beside `pool`, to the same database with the same limits, whose connections use
/// generic plans made for key lookups; it connects on first use.
pub(crate) fn batch_pool(pool: &PgPool) -> PgPool {
    let options = (*pool.connect_options()).clone().options([
        ("plan_cache_mode", "force_generic_plan"),
        ("enable_seqscan", "off"),
        ("enable_hashjoin", "off"),
        ("enable_mergejoin", "off"),
    ]);
    pool.options()
        .clone()
        .max_connections(BATCH_CONNECTIONS)
        .min_connections(0)
        .connect_lazy_with(options)
}

#[cfg(all(test, posthorn_pg_tests))]
mod tests;
