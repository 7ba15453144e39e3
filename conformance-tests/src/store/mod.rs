//! Checks of the `Store` and `Jobs` ports, by area.

mod campaigns;
mod commit;
mod contacts;
mod isolation;
mod jobs;
mod matching;
mod records;
mod segments;

pub use campaigns::*;
pub use commit::*;
pub use contacts::*;
pub use isolation::*;
pub use jobs::*;
pub use matching::*;
pub use records::*;
pub use segments::*;
