//! The SQLite adapter's tests: the shared conformance suites (with probes of the file for
//! the checks that look below the ports) plus adapter-specific checks (the file lock,
//! read-only opens, backups, reopening, one writer beside claimers and readers, the SQL
//! timestamp recognition), in one test binary.

mod adapter;
mod support;

posthorn_conformance::store_suite!(support::make_ports);
posthorn_conformance::store_probe_suite!(support::make_probed);
