//! The SQLite adapter's tests: the shared conformance suite plus adapter-specific checks
//! (SQL matching against the evaluator, concurrency, leases, the file lock, read-only
//! opens, backups, reopening), in one test binary.

mod adapter;
mod support;

posthorn_conformance::store_suite!(support::make_ports);
