//! In-process HTTP tests of the whole API (one test binary, a module per area).

mod admin;
mod auth;
mod campaign_audience;
mod campaign_stats;
mod campaigns;
mod contacts;
mod delivery;
mod error_snapshots;
mod errors;
mod events;
mod gate;
mod harness;
mod idempotency;
mod panics;
mod rate_limit;
mod segments;
mod send;
mod smtp_replies;
mod store_errors;
mod templates;
mod time_limit;
mod track;
mod unavailable;
mod verify;
