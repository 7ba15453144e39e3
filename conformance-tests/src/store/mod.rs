//! Checks of the `Store` and `Jobs` ports, by area.

mod commit;
mod contacts;
mod isolation;
mod jobs;
mod records;

pub use commit::*;
pub use contacts::*;
pub use isolation::*;
pub use jobs::*;
pub use records::*;
