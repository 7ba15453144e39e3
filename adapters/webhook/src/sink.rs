//! `HttpWebhookSink`: the `WebhookSink` port on reqwest (rustls), behind the SSRF guard.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use posthorn_core::ports::{
    body_excerpt, parse_retry_after, WebhookError, WebhookMethod, WebhookRequest, WebhookResponse,
    WebhookSink, BODY_EXCERPT_LIMIT,
};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, LOCATION, RETRY_AFTER};
use reqwest::redirect::Policy;

use crate::resolver::{HostResolver, SystemResolver};
use crate::settings::WebhookSettings;
use crate::target::{check_target, CheckedTarget};

/// The `User-Agent` sent unless the request sets its own.
pub const USER_AGENT: &str = concat!("Posthorn-Webhook/", env!("CARGO_PKG_VERSION"));

/// Headers the HTTP client owns: a request that sets them is invalid.
const RESERVED_HEADERS: [&str; 4] = ["host", "content-length", "transfer-encoding", "connection"];

/// Sends webhooks over HTTP(S): checks the target ([`check_target`]), then connects only to
/// the checked addresses, with redirects disabled and no proxy.
pub struct HttpWebhookSink {
    settings: WebhookSettings,
    resolver: Arc<dyn HostResolver>,
}

impl HttpWebhookSink {
    /// A sink resolving names with the operating system's resolver.
    pub fn new(settings: WebhookSettings) -> Self {
        Self::with_resolver(settings, Arc::new(SystemResolver))
    }

    /// A sink resolving names with `resolver` (tests feed addresses this way).
    pub fn with_resolver(settings: WebhookSettings, resolver: Arc<dyn HostResolver>) -> Self {
        Self { settings, resolver }
    }

    /// The settings in force.
    pub fn settings(&self) -> &WebhookSettings {
        &self.settings
    }

    /// Runs the guard on `url` alone: what [`WebhookSink::deliver`] would connect to, or why
    /// it would refuse. Opens no socket.
    pub async fn check(&self, url: &str) -> Result<CheckedTarget, WebhookError> {
        check_target(url, &self.settings, self.resolver.as_ref()).await
    }

    /// Everything up to the response head: validation, the guard, the connection.
    async fn send(
        &self,
        request: &WebhookRequest,
        headers: HeaderMap,
        timeout: Duration,
    ) -> Result<reqwest::Response, WebhookError> {
        let target = self.check(&request.url).await?;
        let client = pinned_client(&target)?;
        client
            .request(method(request.method), target.url)
            .headers(headers)
            .body(request.body.clone())
            .send()
            .await
            .map_err(|e| classify_reqwest(e, timeout))
    }
}

#[async_trait]
impl WebhookSink for HttpWebhookSink {
    async fn deliver(&self, request: &WebhookRequest) -> Result<WebhookResponse, WebhookError> {
        let timeout = request.timeout.unwrap_or(self.settings.default_timeout);
        let started = Instant::now();
        let headers = header_map(&request.headers)?;
        let mut response = tokio::time::timeout(timeout, self.send(request, headers, timeout))
            .await
            .map_err(|_| WebhookError::Timeout(timeout))??;

        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, chrono::Utc::now()));
        let location = response
            .status()
            .is_redirection()
            .then(|| response.headers().get(LOCATION))
            .flatten()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        // The status is in: a body that is slow or breaks off only shortens the excerpt.
        let remaining = timeout.saturating_sub(started.elapsed());
        let mut body = Vec::new();
        let _ = tokio::time::timeout(remaining, async {
            while body.len() <= BODY_EXCERPT_LIMIT {
                match response.chunk().await {
                    Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                    Ok(None) | Err(_) => break,
                }
            }
        })
        .await;
        let (body_excerpt, body_truncated) = body_excerpt(&body, BODY_EXCERPT_LIMIT);
        let latency = started.elapsed();
        tracing::debug!(url = %request.url, status, ?latency, "webhook answered");
        Ok(WebhookResponse {
            status,
            body_excerpt,
            body_truncated,
            retry_after,
            location,
            latency,
        })
    }
}

/// A client that can only reach the checked addresses: its resolver answers the target's
/// name with them and refuses every other name, so no second lookup can happen.
fn pinned_client(target: &CheckedTarget) -> Result<reqwest::Client, WebhookError> {
    let mut builder = reqwest::Client::builder()
        .redirect(Policy::none())
        // A proxy would resolve (and reach) the host itself, past the guard.
        .no_proxy()
        .pool_max_idle_per_host(0)
        .user_agent(USER_AGENT);
    if let Some(domain) = &target.domain {
        builder = builder.dns_resolver(Arc::new(PinnedResolver {
            domain: domain.clone(),
            addrs: target.addrs.clone(),
        }));
    }
    builder
        .build()
        .map_err(|e| WebhookError::Connect(format!("cannot set up the HTTP client: {e}")))
}

/// Answers one name with the addresses the guard checked.
struct PinnedResolver {
    domain: String,
    addrs: Vec<SocketAddr>,
}

impl reqwest::dns::Resolve for PinnedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let asked = name.as_str().trim_end_matches('.');
        let result: Result<reqwest::dns::Addrs, Box<dyn std::error::Error + Send + Sync>> =
            if asked.eq_ignore_ascii_case(&self.domain) {
                Ok(Box::new(self.addrs.clone().into_iter()))
            } else {
                Err(format!("{asked} was not checked by the webhook guard").into())
            };
        Box::pin(std::future::ready(result))
    }
}

fn method(m: WebhookMethod) -> reqwest::Method {
    match m {
        WebhookMethod::Get => reqwest::Method::GET,
        WebhookMethod::Post => reqwest::Method::POST,
        WebhookMethod::Put => reqwest::Method::PUT,
        WebhookMethod::Patch => reqwest::Method::PATCH,
        WebhookMethod::Delete => reqwest::Method::DELETE,
    }
}

fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, WebhookError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| WebhookError::Invalid(format!("header name {name:?}")))?;
        if RESERVED_HEADERS.contains(&header.as_str()) {
            return Err(WebhookError::Invalid(format!(
                "header {name} is set by the HTTP client"
            )));
        }
        let value = HeaderValue::from_str(value)
            .map_err(|_| WebhookError::Invalid(format!("value of header {name}")))?;
        map.append(header, value);
    }
    Ok(map)
}

/// Maps a reqwest failure to the port's error, keeping the cause chain in the message.
fn classify_reqwest(err: reqwest::Error, timeout: Duration) -> WebhookError {
    let mut message = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    if err.is_timeout() {
        WebhookError::Timeout(timeout)
    } else if err.is_builder() {
        WebhookError::Invalid(message)
    } else if err.is_connect() {
        WebhookError::Connect(message)
    } else {
        WebhookError::Network(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_checked_before_anything_is_sent() {
        let ok = header_map(&[
            ("Content-Type".into(), "application/json".into()),
            ("X-Tag".into(), "a".into()),
            ("x-tag".into(), "b".into()),
        ])
        .expect("valid headers");
        assert_eq!(ok.get_all("x-tag").iter().count(), 2);
        for (name, value) in [
            ("bad name", "x"),
            ("X-Ok", "line\r\nbreak"),
            ("Host", "internal"),
            ("Content-Length", "5"),
            ("Transfer-Encoding", "chunked"),
        ] {
            let err = header_map(&[(name.into(), value.into())]).expect_err(name);
            assert!(matches!(err, WebhookError::Invalid(_)), "{name}: {err:?}");
        }
    }

    #[tokio::test]
    async fn the_pinned_resolver_answers_only_the_checked_name() {
        use reqwest::dns::Resolve;
        let addr: SocketAddr = "127.0.0.1:9".parse().expect("addr");
        let pinned = PinnedResolver {
            domain: "hooks.test".into(),
            addrs: vec![addr],
        };
        let name = |s: &str| s.parse::<reqwest::dns::Name>().expect("name");
        let got: Vec<SocketAddr> = pinned
            .resolve(name("HOOKS.test."))
            .await
            .expect("pinned")
            .collect();
        assert_eq!(got, vec![addr]);
        assert!(pinned.resolve(name("other.test")).await.is_err());
    }
}
