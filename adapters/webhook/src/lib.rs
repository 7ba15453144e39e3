//! The `WebhookSink` port over HTTP(S): [`HttpWebhookSink`], on reqwest with rustls.
//!
//! Every request passes the SSRF guard first: only `http` and `https`; the host resolved
//! once and EVERY address checked against the forbidden ranges ([`guard`]); the connection
//! made only to the checked addresses (the client's resolver is pinned to them, so a DNS
//! answer that changes between check and connect cannot slip past); redirects never followed;
//! no proxy. [`WebhookSettings`] lifts the refusal of internal ranges (`allow_private`) or
//! confines webhooks to named hosts (`allow_hosts`; a listed loopback host such as
//! `127.0.0.1` or `localhost` may then be reached).
//!
//! [`SnsHttpFetcher`] is the `SnsFetcher` port: the certificate and subscribe URLs of SNS
//! messages, allowed by the SNS host rules instead of the guard.
//!
//! [`HostResolver`] is the seam for tests: [`StaticResolver`] feeds any address to the guard
//! without DNS and without traffic.

pub mod guard;
mod resolver;
mod rspamd;
mod settings;
mod sink;
mod sns;
mod target;

pub use guard::{forbidden_range, AddressPolicy, Range};
pub use resolver::{HostResolver, StaticResolver, SystemResolver};
pub use rspamd::{RspamdScanner, RspamdUrlError};
pub use settings::{
    AllowHosts, SettingsError, WebhookSettings, ALLOW_HOSTS_ENV, ALLOW_PRIVATE_ENV,
};
pub use sink::{HttpWebhookSink, USER_AGENT};
pub use sns::{SnsFetchSettings, SnsHttpFetcher};
pub use target::{check_target, CheckedTarget};
