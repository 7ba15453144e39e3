//! Posthorn's server: the HTTP API, the job workers (from `posthorn-runtime`) and the one
//! place that composes adapters from configuration.

pub mod compose;
pub mod config;
pub mod dns_hosts;
pub mod export;
pub mod http;
pub mod huge_pages;
pub mod secret;
pub mod smtp;
pub mod sqlite_tools;
pub mod store_spec;

pub use compose::build_engine;
pub use config::Config;
pub use http::{router, AppState};
