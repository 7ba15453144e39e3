//! Workflow engine tests: in process, on the memory store, with a manual clock.

mod crud;
mod harness;
mod schedule;
mod steps;
mod waits;
mod webhook;
