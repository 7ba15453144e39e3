//! Posthorn's in-process adapters: every port without an external service.
//!
//! - [`MemoryStore`]: the `Store` and `Jobs` ports (indexed for large contact lists).
//! - [`MemoryRateLimiter`]: the `RateLimiter` port with fixed windows.
//! - [`MemoryCache`]: the `Cache` port.
//! - [`CapturingTransport`]: a `MailTransport` that records messages, for tests and demos.
//!
//! Everything lives in this process only: data is lost when it stops.

#![warn(missing_docs)]

mod cache;
mod jobs;
mod rate_limiter;
mod store;
mod transport;

pub use cache::MemoryCache;
pub use rate_limiter::MemoryRateLimiter;
pub use store::MemoryStore;
pub use transport::CapturingTransport;
