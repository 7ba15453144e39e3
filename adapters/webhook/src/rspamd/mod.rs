//! `RspamdScanner`: the spam verdict of received mail from rspamd's HTTP API (`/checkv2`).

use std::time::Duration;

use async_trait::async_trait;
use posthorn_core::model::Verdict;
use posthorn_core::ports::{ContentScanner, InboundContext};

/// Asks rspamd's controller or normal worker (`POST <url>/checkv2`, the raw message as the
/// body, the envelope in headers) whether a message is spam.
///
/// rspamd's `action` decides: `no action` is PASS; `reject`, `add header` and
/// `rewrite subject` are FAIL (spam); `greylist`, `soft reject` and a skipped scan are
/// GRAY. An error status, a time-out, a connection failure or an answer without `action`
/// is PROCESSING_FAILED.
pub struct RspamdScanner {
    endpoint: reqwest::Url,
    client: reqwest::Client,
}

/// Why an rspamd URL cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RspamdUrlError {
    /// Not an absolute http(s) URL.
    #[error("POSTHORN_RSPAMD_URL must be an http:// or https:// URL: {0}")]
    Invalid(String),
}

impl RspamdScanner {
    /// A scanner for the rspamd at `base` (e.g. `http://127.0.0.1:11333`), each scan bounded
    /// by `timeout`.
    pub fn new(base: &str, timeout: Duration) -> Result<Self, RspamdUrlError> {
        let mut url =
            reqwest::Url::parse(base.trim()).map_err(|e| RspamdUrlError::Invalid(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(RspamdUrlError::Invalid(format!(
                "unsupported scheme or no host in {}",
                url.scheme()
            )));
        }
        // `/checkv2` beside whatever path the operator gave (a reverse proxy prefix).
        let path = format!("{}/checkv2", url.path().trim_end_matches('/'));
        url.set_path(&path);
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| RspamdUrlError::Invalid(e.to_string()))?;
        Ok(Self {
            endpoint: url,
            client,
        })
    }

    async fn ask(&self, ctx: &InboundContext<'_>) -> Result<Verdict, String> {
        let mut request = self
            .client
            .post(self.endpoint.clone())
            .body(ctx.raw.to_vec());
        if let Some(ip) = ctx.client_ip {
            request = request.header("IP", ip.to_string());
        }
        if let Some(helo) = ctx.helo.filter(|h| is_header_safe(h)) {
            request = request.header("Helo", helo);
        }
        if let Some(from) = ctx.envelope_from.filter(|f| is_header_safe(f)) {
            request = request.header("From", from);
        }
        for rcpt in ctx.recipients.iter().filter(|r| is_header_safe(r)) {
            request = request.header("Rcpt", rcpt.as_str());
        }
        let response = request.send().await.map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("rspamd answered {}", response.status()));
        }
        let body: serde_json::Value = response.json().await.map_err(|e| e.to_string())?;
        verdict_of(&body).ok_or_else(|| format!("rspamd answer without a known action: {body}"))
    }
}

/// Header values must not carry line breaks or other control characters.
fn is_header_safe(value: &str) -> bool {
    !value.chars().any(char::is_control)
}

/// The verdict of a `/checkv2` answer.
fn verdict_of(body: &serde_json::Value) -> Option<Verdict> {
    if body.get("is_skipped").and_then(serde_json::Value::as_bool) == Some(true) {
        return Some(Verdict::Gray);
    }
    match body.get("action")?.as_str()? {
        "no action" => Some(Verdict::Pass),
        "reject" | "add header" | "rewrite subject" => Some(Verdict::Fail),
        "greylist" | "soft reject" => Some(Verdict::Gray),
        _ => None,
    }
}

#[async_trait]
impl ContentScanner for RspamdScanner {
    async fn scan(&self, ctx: &InboundContext<'_>) -> Verdict {
        match self.ask(ctx).await {
            Ok(verdict) => verdict,
            Err(error) => {
                tracing::warn!(%error, "rspamd scan failed");
                Verdict::ProcessingFailed
            }
        }
    }
}

#[cfg(test)]
mod tests;
