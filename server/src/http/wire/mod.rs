//! The wire: request bodies and query strings turned into the core's typed commands and
//! queries, every failing field reported at once (paths and codes as in docs/api.md).
//! Handlers parse here, then call the engine with Rust values only.

pub mod admin;
pub mod campaigns;
pub mod contacts;
pub mod events;
pub mod page;
pub mod segments;
pub mod send;
pub mod templates;
pub mod track;
