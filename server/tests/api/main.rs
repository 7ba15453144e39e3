//! In-process HTTP tests of the whole API (one test binary, a module per area).

mod admin;
mod auth;
mod campaigns;
mod contacts;
mod delivery;
mod error_snapshots;
mod errors;
mod events;
mod harness;
mod idempotency;
mod panics;
mod rate_limit;
mod segments;
mod send;
mod templates;
mod track;
mod unavailable;
mod verify;
