//! Runtime tests, in process on the memory store: the workflow engine (with a manual clock)
//! and the lease heartbeat of a running job (on tokio's paused clock).

mod crud;
mod give_way;
mod harness;
mod lease;
mod schedule;
mod steps;
mod waits;
mod webhook;
