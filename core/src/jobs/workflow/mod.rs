//! The workflow engine's jobs: dispatching a stored event, running one step of an execution
//! (and going on after a delay, a wait or a webhook attempt), and the ticks of SCHEDULE
//! workflows. Every step's side effect commits with its step record, keyed by (execution,
//! step), and with the job of the next step, so a crash at any point resumes without doing
//! anything twice (a webhook call excepted: it may repeat, always with the same
//! `webhook-id`).

mod event;
mod ids;
mod schedule;
mod send;
mod settle;
mod step;
mod update_contact;
mod webhook;

pub use ids::derived_id;
