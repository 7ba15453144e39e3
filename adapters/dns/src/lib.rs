//! The `Dns` port on hickory-resolver ([`HickoryDns`]), plus [`StaticDns`], a table-driven
//! fake for other crates' tests.
//!
//! `HickoryDns` bounds every lookup by a short time-out, makes one attempt, and caches
//! answers in memory for their TTL. Failures to get an answer become
//! `DnsError::Unavailable`, never a negative answer.

mod cache;
mod hickory;
mod inbound_auth;
mod static_dns;
pub mod testing;

pub use hickory::HickoryDns;
pub use inbound_auth::MailAuthenticator;
pub use static_dns::StaticDns;

/// How long a lookup may take before it counts as unavailable, unless configured otherwise.
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Lower-cases `name` and strips a trailing dot, so that `Example.COM.` and `example.com`
/// share cache and table entries.
fn normalise(name: &str) -> String {
    name.trim().trim_end_matches('.').to_lowercase()
}
