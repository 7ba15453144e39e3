//! Posthorn's core: the domain models, the rules, the use cases and the ports.
//!
//! Nothing here performs I/O itself: use cases take the ports (`Store`, `Jobs`,
//! `MailTransport`, `Clock`, `Dns`, `RateLimiter`, `Cache`) and adapters carry the work out.

#![warn(missing_docs)]

pub mod bounce;
pub mod error;
pub mod model;
pub mod ports;
pub mod render;
pub mod secret_cell;
pub mod segment;
pub mod send_class;
pub mod send_pacer;
pub mod sns;
pub mod tracking;
pub mod validate;
pub mod verify;
pub mod workflow;

pub use error::{Error, FieldError, Resource, Result};
pub mod app;
pub mod engine;
pub mod jobs;

pub use engine::{Engine, Settings, LOOPBACK_PUBLIC_URL};
