//! `SnsHttpFetcher`: the `SnsFetcher` port on reqwest. Fetches signing certificates (cached
//! by URL) and visits subscribe URLs, only URLs the SNS host rules allow (checked again
//! here), without redirects or proxy, bounded in time and size.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use posthorn_core::ports::{SnsFetchError, SnsFetcher};
use posthorn_core::sns::{AllowedUrl, SnsHostRules};
use reqwest::redirect::Policy;

use crate::sink::USER_AGENT;

/// Limits of [`SnsHttpFetcher`]; the defaults are production's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnsFetchSettings {
    /// Bound on one whole request (connection, answer and body).
    pub timeout: Duration,
    /// Largest certificate accepted, in bytes (a PEM certificate is about 2 KB).
    pub max_certificate_bytes: usize,
    /// How long a fetched certificate is used before it is fetched again.
    pub certificate_ttl: Duration,
    /// Certificates kept at most (the oldest is dropped first).
    pub max_cached_certificates: usize,
}

impl Default for SnsFetchSettings {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            max_certificate_bytes: 64 * 1024,
            certificate_ttl: Duration::from_secs(24 * 3600),
            max_cached_certificates: 64,
        }
    }
}

/// Fetches what SNS messages point to, over HTTP(S).
pub struct SnsHttpFetcher {
    rules: SnsHostRules,
    settings: SnsFetchSettings,
    client: reqwest::Client,
    cache: Mutex<HashMap<String, (Instant, Vec<u8>)>>,
}

/// The body of a subscribe answer is read only this far (it is not used).
const SUBSCRIBE_BODY_LIMIT: usize = 64 * 1024;

impl SnsHttpFetcher {
    /// A fetcher for URLs `rules` allow.
    pub fn new(rules: SnsHostRules, settings: SnsFetchSettings) -> Result<Self, SnsFetchError> {
        let client = reqwest::Client::builder()
            .redirect(Policy::none())
            .no_proxy()
            .timeout(settings.timeout)
            .user_agent(USER_AGENT)
            .build()
            .map_err(|e| SnsFetchError::Failed(format!("HTTP client: {e}")))?;
        Ok(Self {
            rules,
            settings,
            client,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// One GET of `url` (re-checked against the rules): the body, up to `limit` bytes.
    async fn get(&self, url: &AllowedUrl, limit: usize) -> Result<Vec<u8>, SnsFetchError> {
        let url = self
            .rules
            .check(url.as_str())
            .map_err(|e| SnsFetchError::Refused(e.to_string()))?;
        let fetch = async {
            let mut response = self
                .client
                .get(url.url().clone())
                .send()
                .await
                .map_err(|e| SnsFetchError::Failed(e.to_string()))?;
            let status = response.status();
            if !status.is_success() {
                return Err(SnsFetchError::Failed(format!("answered {status}")));
            }
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| SnsFetchError::Failed(e.to_string()))?
            {
                if body.len() + chunk.len() > limit {
                    return Err(SnsFetchError::Failed(format!(
                        "the answer is larger than {limit} bytes"
                    )));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(body)
        };
        tokio::time::timeout(self.settings.timeout, fetch)
            .await
            .map_err(|_| {
                SnsFetchError::Failed(format!("no answer within {:?}", self.settings.timeout))
            })?
    }

    fn cached(&self, url: &str) -> Option<Vec<u8>> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .get(url)
            .filter(|(at, _)| at.elapsed() < self.settings.certificate_ttl)
            .map(|(_, pem)| pem.clone())
    }

    fn remember(&self, url: &str, pem: &[u8]) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let ttl = self.settings.certificate_ttl;
        cache.retain(|_, (at, _)| at.elapsed() < ttl);
        while cache.len() >= self.settings.max_cached_certificates.max(1) {
            let oldest = cache
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => cache.remove(&k),
                None => break,
            };
        }
        cache.insert(url.to_owned(), (Instant::now(), pem.to_vec()));
    }
}

#[async_trait]
impl SnsFetcher for SnsHttpFetcher {
    async fn certificate(&self, url: &AllowedUrl) -> Result<Vec<u8>, SnsFetchError> {
        if let Some(pem) = self.cached(url.as_str()) {
            return Ok(pem);
        }
        let pem = self.get(url, self.settings.max_certificate_bytes).await?;
        self.remember(url.as_str(), &pem);
        Ok(pem)
    }

    async fn confirm_subscription(&self, url: &AllowedUrl) -> Result<(), SnsFetchError> {
        self.get(url, SUBSCRIBE_BODY_LIMIT).await.map(|_| ())
    }
}
