//! End-to-end tests of `HttpWebhookSink` against a real HTTP server on 127.0.0.1.
//!
//! Every request here goes to loopback: the sinks are confined by an allow-list naming
//! 127.0.0.1, or by a static resolver answering loopback addresses. Refusals of other ranges
//! are tested without traffic, in the crate's unit tests.

mod delivery;
mod guard;
mod server;
mod sns;
mod verifier;
