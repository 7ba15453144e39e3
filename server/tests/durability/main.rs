//! End-to-end durability of the real `posthorn` binary on PostgreSQL: crashes (SIGKILL),
//! two processes sharing one database, and graceful shutdown (SIGTERM), with a test SMTP
//! sink that records every message it accepts.
//!
//! Needs `POSTHORN_TEST_DATABASE_URL` (see `scripts/services.sh`); without it the tests print
//! a note and pass, except under `CI=true`, where they fail.

mod graceful;
mod sigkill;
mod support;
mod two_processes;
