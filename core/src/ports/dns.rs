//! The `Dns` port: the few lookups address verification and domain checks need.

use async_trait::async_trait;

/// The kinds of DNS record Posthorn asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordKind {
    /// Mail exchangers; answers are host names.
    Mx,
    /// IPv4 (or IPv6) addresses; answers are textual addresses.
    A,
    /// Name servers; answers are host names.
    Ns,
    /// Text records; answers are the joined character strings.
    Txt,
}

/// Why a lookup gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DnsError {
    /// The name does not exist (NXDOMAIN).
    #[error("the domain does not exist")]
    NoSuchDomain,
    /// No resolver answered in time, or resolution is impossible here.
    #[error("DNS is unavailable: {0}")]
    Unavailable(String),
}

/// Resolves DNS records.
///
/// Contract: `Ok(vec![])` means the name exists but has no record of that kind;
/// `Err(NoSuchDomain)` means NXDOMAIN; `Err(Unavailable)` means the answer is unknown
/// (time-out, no resolver) and callers must not treat it as a negative answer.
/// Implementations bound every lookup by a short time-out and may cache answers.
#[async_trait]
pub trait Dns: Send + Sync {
    /// Looks up the records of `kind` for the fully qualified `name`, which core passes in
    /// ASCII form (internationalised labels as A-labels, see `model::canonical_domain`).
    async fn lookup(&self, name: &str, kind: RecordKind) -> Result<Vec<String>, DnsError>;
}
