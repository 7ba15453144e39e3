//! Use cases, one module per capability. Each reads through the ports, decides, and
//! commits its decision in one atomic change set.

pub mod campaigns;
pub mod contacts;
pub mod dead_jobs;
pub mod domains;
pub mod events;
pub mod idempotency;
pub mod inbound;
pub mod keys;
pub mod lifecycle;
pub mod membership;
pub mod segments;
pub mod send;
pub mod sns;
pub mod suppression;
pub mod templates;
pub mod track;
pub mod verify;
pub mod workflows;
pub mod workspaces;

mod caller;
pub(crate) mod commit;
mod page;
mod patch;
mod retry;

pub use caller::Caller;
pub use page::{check_page, PageRequest};
pub use patch::Patch;
pub use retry::StepError;
