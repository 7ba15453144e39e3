//! End-to-end durability of the real `posthorn` binary on PostgreSQL and on SQLite (the
//! `sqlite` module: restarts, SIGKILL, the file lock, backup and export): crashes (SIGKILL),
//! two processes sharing one database, graceful shutdown (SIGTERM), and rate limits and
//! Idempotency-Key records shared through Redis, with a test SMTP sink that records every
//! message it accepts.
//!
//! Needs `POSTHORN_TEST_DATABASE_URL`, and `POSTHORN_TEST_REDIS_URL` for the shared limits
//! (see `scripts/services.sh`); without them the tests print a note and pass, except under
//! `CI=true`, where they fail.

mod faults;
mod graceful;
mod huge_pages;
mod revocation;
mod secrets;
mod shared_limits;
mod sigkill;
mod smtp_drain;
mod sqlite;
mod support;
mod two_processes;
mod workflows;
