//! Route handlers, one module per area.

pub mod admin;
pub mod campaigns;
pub mod contacts;
pub mod domains;
pub mod events;
pub mod health;
pub mod inbound;
pub mod keys;
pub mod links;
pub mod public;
pub mod segments;
pub mod sns;
pub mod stats;
pub mod templates;
pub mod workflows;
