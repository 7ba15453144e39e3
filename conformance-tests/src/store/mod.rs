//! Checks of the `Store` and `Jobs` ports, by area.

mod campaigns;
mod commit;
mod conditions;
mod contacts;
mod domains;
mod executions;
mod isolation;
mod jobs;
mod lifecycle;
mod matching;
mod probed;
mod races;
mod records;
mod search;
mod segments;
mod workflow_events;
mod workflow_reads;
mod workflows;

pub use campaigns::*;
pub use commit::*;
pub use conditions::*;
pub use contacts::*;
pub use domains::*;
pub use executions::*;
pub use isolation::*;
pub use jobs::*;
pub use lifecycle::*;
pub use matching::*;
pub use probed::*;
pub use races::*;
pub use records::*;
pub use search::*;
pub use segments::*;
pub use workflow_events::*;
pub use workflow_reads::*;
pub use workflows::*;
