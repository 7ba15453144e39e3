//! The `WebhookSink` port over HTTP(S), behind an SSRF guard.
//!
//! [`guard`] decides which IP addresses a webhook may connect to.

pub mod guard;

pub use guard::{forbidden_range, AddressPolicy, Range};
