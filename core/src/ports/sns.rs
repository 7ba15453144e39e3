//! The `SnsFetcher` port: the two HTTP GETs an SNS subscriber makes, to URLs the host rules
//! allowed ([`AllowedUrl`]).

use async_trait::async_trait;

use crate::sns::AllowedUrl;

/// Why a fetch produced nothing usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnsFetchError {
    /// Refused before connecting (the adapter re-checks the host rules).
    #[error("refused: {0}")]
    Refused(String),
    /// No answer, a non-2xx answer, a time-out or a body over the size limit.
    #[error("fetch failed: {0}")]
    Failed(String),
}

/// Fetches what SNS messages point to.
///
/// Contract: each method makes at most one GET to exactly the given URL (no redirect is
/// followed), bounded in time and size; neither retries.
#[async_trait]
pub trait SnsFetcher: Send + Sync {
    /// The PEM signing certificate at `url`. Adapters cache certificates by URL (SNS signs
    /// with few, long-lived ones), so a cached one may be returned without any request.
    async fn certificate(&self, url: &AllowedUrl) -> Result<Vec<u8>, SnsFetchError>;

    /// Visits a `SubscribeURL`, which confirms the subscription; `Ok` on a 2xx answer.
    async fn confirm_subscription(&self, url: &AllowedUrl) -> Result<(), SnsFetchError>;
}
