//! Set-up calls against the server: readiness, the operator API, seeding, queue draining.

use std::time::Duration;

use futures::stream::{self, StreamExt, TryStreamExt};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE};
use hyper::{Method, Request, StatusCode};
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::load::HttpClient;
use crate::BoxError;

/// The server under test.
#[derive(Clone)]
pub struct Api {
    client: HttpClient,
    base: String,
}

/// What the benchmark works in.
pub struct Workspace {
    /// Workspace id.
    pub id: String,
    /// Secret key of its first key set.
    pub secret_key: String,
}

impl Api {
    /// `base` is `http://host:port` without a trailing slash.
    pub fn new(client: HttpClient, base: &str) -> Self {
        Self {
            client,
            base: base.trim_end_matches('/').to_string(),
        }
    }

    /// `base` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// One request with an optional JSON body; answers the status and the JSON body
    /// (`Null` when the body is empty or not JSON).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<(StatusCode, Value), BoxError> {
        let mut builder = Request::builder().method(method).uri(self.url(path));
        if let Some(token) = token {
            builder = builder.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        let payload = match body {
            Some(body) => {
                builder = builder.header(CONTENT_TYPE, "application/json");
                Bytes::from(serde_json::to_vec(body)?)
            }
            None => Bytes::new(),
        };
        let response = self
            .client
            .request(builder.body(Full::new(payload))?)
            .await?;
        let status = response.status();
        let bytes = response.into_body().collect().await?.to_bytes();
        let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Ok((status, value))
    }

    /// Like [`Api::call`], but any status other than `want` is an error naming the body.
    pub async fn expect(
        &self,
        want: StatusCode,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<Value, BoxError> {
        let (status, value) = self.call(method.clone(), path, token, body).await?;
        if status != want {
            return Err(format!("{method} {path}: expected {want}, got {status}: {value}").into());
        }
        Ok(value)
    }

    /// Polls `GET /health` until it answers 200 or `patience` runs out.
    pub async fn wait_ready(&self, patience: Duration) -> Result<(), BoxError> {
        let deadline = Instant::now() + patience;
        loop {
            let last = match self.call(Method::GET, "/health", None, None).await {
                Ok((StatusCode::OK, _)) => return Ok(()),
                Ok((status, body)) => format!("{status}: {body}"),
                Err(e) => e.to_string(),
            };
            if Instant::now() >= deadline {
                return Err(format!("{} not ready: {last}", self.url("/health")).into());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Creates a workspace without practical limits, with `domain` verified.
    pub async fn create_workspace(
        &self,
        admin_token: &str,
        name: &str,
        domain: &str,
    ) -> Result<Workspace, BoxError> {
        let created = self
            .expect(
                StatusCode::CREATED,
                Method::POST,
                "/admin/workspaces",
                Some(admin_token),
                Some(&json!({
                    "name": name,
                    "rateLimitPerMinute": 10_000_000,
                    "sendRatePerSecond": 100_000,
                })),
            )
            .await?;
        let id = created["workspace"]["id"]
            .as_str()
            .ok_or("POST /admin/workspaces: no workspace.id in the answer")?
            .to_string();
        let secret_key = created["keySet"]["secretKey"]
            .as_str()
            .ok_or("POST /admin/workspaces: no keySet.secretKey in the answer")?
            .to_string();
        self.expect(
            StatusCode::CREATED,
            Method::POST,
            &format!("/admin/workspaces/{id}/domains"),
            Some(admin_token),
            Some(&json!({"domain": domain, "verified": true})),
        )
        .await?;
        Ok(Workspace { id, secret_key })
    }

    /// Creates `count` contacts (`seed{i}@bench.io`), 16 requests at a time.
    pub async fn seed_contacts(&self, secret_key: &str, count: usize) -> Result<(), BoxError> {
        stream::iter(0..count)
            .map(|i| async move {
                let body = json!({
                    "email": format!("seed{i}@bench.io"),
                    "subscribed": i % 3 != 0,
                    "data": {"name": format!("Seed {i}"), "plan": if i % 2 == 0 { "pro" } else { "free" }},
                });
                let (status, value) = self
                    .call(Method::POST, "/contacts", Some(secret_key), Some(&body))
                    .await?;
                if !status.is_success() {
                    return Err(format!("POST /contacts: {status}: {value}").into());
                }
                Ok::<(), BoxError>(())
            })
            .buffer_unordered(16)
            .try_collect::<()>()
            .await
    }

    /// Jobs queued or running, from `GET /health`.
    pub async fn pending_jobs(&self) -> Result<u64, BoxError> {
        let (status, body) = self.call(Method::GET, "/health", None, None).await?;
        if !status.is_success() {
            return Err(format!("GET /health: {status}: {body}").into());
        }
        let jobs = &body["jobs"];
        Ok(jobs["queued"].as_u64().unwrap_or(0) + jobs["running"].as_u64().unwrap_or(0))
    }

    /// Waits until the job queue has nothing queued or running (at most `patience`);
    /// answers how long it took, or `None` when it did not drain in time.
    pub async fn drain_jobs(&self, patience: Duration) -> Result<Option<Duration>, BoxError> {
        let begin = Instant::now();
        loop {
            if self.pending_jobs().await? == 0 {
                return Ok(Some(begin.elapsed()));
            }
            if begin.elapsed() >= patience {
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
