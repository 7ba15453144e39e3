//! The test app: the real router on the memory adapters, a capturing transport, a fake DNS
//! and a manual clock, driven in-process with `tower::ServiceExt::oneshot`.

use posthorn_core::model::WorkspaceId;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use axum::Router;
use chrono::{TimeZone, Utc};
use http_body_util::BodyExt;
use posthorn_core::ports::{Cache, Jobs, ManualClock, RateLimiter, RecordKind, Store};
use posthorn_core::{Engine, Settings};
use posthorn_dns::StaticDns;
use posthorn_memory::{CapturingTransport, MemoryCache, MemoryRateLimiter, MemoryStore};
use posthorn_server::http::time_limit::REQUEST_TIME_LIMIT;
use posthorn_server::{router, AppState};
use serde_json::{json, Value};
use tower::ServiceExt;

use crate::gate::GatedDns;

pub const ADMIN: &str = "admin-token-for-tests";

/// A response: status, headers and the body as JSON (`Null` when empty).
#[derive(Debug)]
pub struct Res {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Res {
    /// Asserts the status and returns self.
    #[track_caller]
    pub fn expect(self, status: u16) -> Self {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.body
        );
        self
    }

    /// Asserts the spec's error envelope with `status` and `code`.
    #[track_caller]
    pub fn expect_error(self, status: u16, code: &str) -> Self {
        let this = self.expect_replayed_error(status, code);
        assert_eq!(
            this.headers
                .get("x-request-id")
                .and_then(|v| v.to_str().ok()),
            this.body["error"]["requestId"].as_str(),
            "the error names this request"
        );
        this
    }

    /// Checks an error envelope replayed for an `Idempotency-Key`: it names the first
    /// request, not this one.
    pub fn expect_replayed_error(self, status: u16, code: &str) -> Self {
        let b = &self.body;
        assert_eq!(self.status.as_u16(), status, "unexpected status; body: {b}");
        assert_eq!(b["success"], json!(false), "{b}");
        assert_eq!(b["error"]["code"], json!(code), "{b}");
        assert_eq!(b["error"]["statusCode"], json!(status), "{b}");
        assert!(
            b["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{b}"
        );
        assert!(
            b["error"]["suggestion"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{b}"
        );
        let rid = b["error"]["requestId"].as_str().unwrap_or_default();
        assert!(!rid.is_empty(), "{b}");
        assert!(b["timestamp"].as_str().is_some(), "{b}");
        self
    }

    /// The `field`s of `error.errors`.
    pub fn error_fields(&self) -> Vec<String> {
        self.body["error"]["errors"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| e["field"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }
}

pub struct TestApp {
    pub router: Router,
    /// The requests in flight, as the server counts them for its job workers.
    pub requests: posthorn_runtime::RequestGauge,
    pub engine: Engine,
    pub transport: Arc<CapturingTransport>,
    pub clock: Arc<ManualClock>,
    pub workspace_id: String,
    pub sk: String,
    pub pk: String,
    /// The test database, when running on PostgreSQL.
    pub database_url: Option<String>,
}

/// The API over `engine` as the server composes it, and the requests in flight it counts.
fn serve(engine: Engine, time_limit: Duration) -> (Router, posthorn_runtime::RequestGauge) {
    let state = AppState::with_limits(
        engine,
        Some(ADMIN.to_string()),
        15 * 1024 * 1024,
        time_limit,
    );
    let requests = state.requests.clone();
    (router(state), requests)
}

/// The store under test: memory; a fresh PostgreSQL database when
/// `POSTHORN_API_TEST_STORE=postgres` (with `POSTHORN_TEST_DATABASE_URL`); a fresh SQLite
/// database in its own temporary directory when `POSTHORN_API_TEST_STORE=sqlite`.
async fn test_store() -> (Arc<dyn Store>, Arc<dyn Jobs>, Option<String>) {
    let chosen = std::env::var("POSTHORN_API_TEST_STORE").unwrap_or_default();
    if chosen == "sqlite" {
        let store = Arc::new(
            posthorn_sqlite::testing::temporary()
                .await
                .expect("a fresh SQLite test database"),
        );
        return (store.clone(), store, None);
    }
    assert!(
        matches!(chosen.as_str(), "" | "memory" | "postgres"),
        "POSTHORN_API_TEST_STORE must be memory, postgres or sqlite, got `{chosen}`"
    );
    if chosen == "postgres" {
        let url = std::env::var("POSTHORN_TEST_DATABASE_URL")
            .expect("POSTHORN_API_TEST_STORE=postgres needs POSTHORN_TEST_DATABASE_URL");
        let (store, name) = posthorn_postgres::testing::fresh_database(&url)
            .await
            .expect("a fresh test database");
        let store = Arc::new(store);
        let db_url = format!(
            "{}/{name}",
            url.rsplit_once('/').map(|(base, _)| base).unwrap_or(&url)
        );
        return (store.clone(), store, Some(db_url));
    }
    let store = Arc::new(MemoryStore::new());
    (store.clone(), store, None)
}

/// Rate limiter and cache for a test app: in-process, or on Redis with
/// `POSTHORN_API_TEST_REDIS=1` (with `POSTHORN_TEST_REDIS_URL`), under a prefix of its own.
async fn test_limits() -> (Arc<dyn RateLimiter>, Arc<dyn Cache>) {
    if std::env::var("POSTHORN_API_TEST_REDIS").as_deref() == Ok("1") {
        let url = std::env::var("POSTHORN_TEST_REDIS_URL")
            .expect("POSTHORN_API_TEST_REDIS=1 needs POSTHORN_TEST_REDIS_URL");
        let prefix = format!("posthorn-api-test:{}:", uuid::Uuid::now_v7());
        let redis = posthorn_redis::RedisConnection::connect(&url, &prefix)
            .await
            .expect("a Redis connection");
        return (Arc::new(redis.rate_limiter()), Arc::new(redis.cache()));
    }
    (
        Arc::new(MemoryRateLimiter::new()),
        Arc::new(MemoryCache::new()),
    )
}

pub fn fake_dns() -> StaticDns {
    StaticDns::new()
        .with_mail_domain("gmail.com")
        .with_mail_domain("example.com")
        .with("nomail.io", RecordKind::A, ["192.0.2.1"])
        .nxdomain("does-not-exist-posthorn.com")
}

impl TestApp {
    /// The test workspace's id, typed for calls into the engine and the store.
    pub fn ws(&self) -> WorkspaceId {
        WorkspaceId::from(self.workspace_id.as_str())
    }

    pub async fn new() -> Self {
        Self::with_settings(Settings::default()).await
    }

    pub async fn with_settings(settings: Settings) -> Self {
        Self::with_webhooks(
            settings,
            std::sync::Arc::new(posthorn_core::ports::RefusingWebhookSink),
        )
        .await
    }

    /// A test app whose WEBHOOK steps go out through `webhooks`.
    pub async fn with_webhooks(
        settings: Settings,
        webhooks: Arc<dyn posthorn_core::ports::WebhookSink>,
    ) -> Self {
        let (store, jobs, database_url) = test_store().await;
        let (rate_limiter, cache) = test_limits().await;
        let transport = Arc::new(CapturingTransport::new());
        let clock = Arc::new(ManualClock::new(
            Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0)
                .single()
                .expect("date"),
        ));
        let engine = Engine {
            store,
            jobs,
            transport: transport.clone(),
            clock: clock.clone(),
            dns: Arc::new(fake_dns()),
            rate_limiter,
            cache,
            webhooks,
            inbound: Default::default(),
            settings,
        };
        let (router, requests) = serve(engine.clone(), REQUEST_TIME_LIMIT);
        let mut app = TestApp {
            router,
            requests,
            engine,
            transport,
            clock,
            workspace_id: String::new(),
            sk: String::new(),
            pk: String::new(),
            database_url,
        };
        let (id, pk, sk) = app.new_workspace("Acme").await;
        app.workspace_id = id;
        app.pk = pk;
        app.sk = sk;
        app
    }

    /// Creates a workspace with the verified domain example.com; returns (id, pk, sk).
    pub async fn new_workspace(&self, name: &str) -> (String, String, String) {
        let res = self
            .admin(
                Method::POST,
                "/admin/workspaces",
                Some(json!({"name": name})),
            )
            .await
            .expect(201);
        let id = res.body["workspace"]["id"]
            .as_str()
            .expect("id")
            .to_string();
        let pk = res.body["keySet"]["publicKey"]
            .as_str()
            .expect("pk")
            .to_string();
        let sk = res.body["keySet"]["secretKey"]
            .as_str()
            .expect("sk")
            .to_string();
        self.admin(
            Method::POST,
            &format!("/admin/workspaces/{id}/domains"),
            Some(json!({"domain": "example.com", "verified": true})),
        )
        .await
        .expect(201);
        (id, pk, sk)
    }

    pub async fn admin(&self, method: Method, path: &str, body: Option<Value>) -> Res {
        self.call(method, path, Some(ADMIN), body, &[]).await
    }

    pub async fn call(
        &self,
        method: Method,
        path: &str,
        bearer: Option<&str>,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Res {
        let raw = body.map(|b| b.to_string());
        self.raw(
            method,
            path,
            bearer,
            raw.as_deref(),
            Some("application/json"),
            headers,
        )
        .await
    }

    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        bearer: Option<&str>,
        body: Option<&str>,
        content_type: Option<&str>,
        headers: &[(&str, &str)],
    ) -> Res {
        let mut req = Request::builder().method(method).uri(path);
        if let Some(key) = bearer {
            req = req.header("authorization", format!("Bearer {key}"));
        }
        if let (Some(ct), Some(_)) = (content_type, body) {
            req = req.header("content-type", ct);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(Body::from(body.unwrap_or("").to_string()))
            .expect("request");
        let res = self.router.clone().oneshot(req).await.expect("infallible");
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.into_body().collect().await.expect("body").to_bytes();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
        };
        Res {
            status,
            headers,
            body,
        }
    }

    pub async fn get(&self, path: &str) -> Res {
        self.call(Method::GET, path, Some(&self.sk), None, &[])
            .await
    }

    pub async fn post(&self, path: &str, body: Value) -> Res {
        self.call(Method::POST, path, Some(&self.sk), Some(body), &[])
            .await
    }

    /// The secret key of a new key set limited to sender `domains`.
    pub async fn scoped_secret_key(&self, domains: &[&str]) -> String {
        let created = self
            .post("/keys", json!({"name": "scoped", "domains": domains}))
            .await
            .expect(201);
        created.body["secretKey"]
            .as_str()
            .expect("secret key")
            .to_string()
    }

    /// Posts every body of `bodies` to `path` at once, each from a task of its own (a
    /// race); the answers in the order of `bodies`.
    pub async fn post_concurrently(self: &Arc<Self>, path: &str, bodies: Vec<Value>) -> Vec<Res> {
        let tasks: Vec<_> = bodies
            .into_iter()
            .map(|body| {
                let app = Arc::clone(self);
                let path = path.to_string();
                tokio::spawn(async move { app.post(&path, body).await })
            })
            .collect();
        let mut answers = Vec::with_capacity(tasks.len());
        for task in tasks {
            answers.push(task.await.expect("a racing request's task"));
        }
        answers
    }

    pub async fn patch(&self, path: &str, body: Value) -> Res {
        self.call(Method::PATCH, path, Some(&self.sk), Some(body), &[])
            .await
    }

    pub async fn delete(&self, path: &str) -> Res {
        self.call(Method::DELETE, path, Some(&self.sk), None, &[])
            .await
    }

    /// The engine of a restarted process: a new connection to the same database (the
    /// memory store has no other copy, so it is shared; the SQLite store is shared too, as
    /// one process holds its file's lock while the first engine lives), and fresh limits
    /// (on Redis, the same ones: they outlive the process).
    pub async fn restarted_engine(&self) -> Engine {
        let (store, jobs): (Arc<dyn Store>, Arc<dyn Jobs>) = match &self.database_url {
            Some(url) => {
                let store = Arc::new(
                    posthorn_postgres::PgStore::connect(url)
                        .await
                        .expect("reconnect"),
                );
                (store.clone(), store)
            }
            None => (self.engine.store.clone(), self.engine.jobs.clone()),
        };
        let (rate_limiter, cache) =
            if std::env::var("POSTHORN_API_TEST_REDIS").as_deref() == Ok("1") {
                (self.engine.rate_limiter.clone(), self.engine.cache.clone())
            } else {
                test_limits().await
            };
        Engine {
            store,
            jobs,
            rate_limiter,
            cache,
            ..self.engine.clone()
        }
    }

    /// Sends one email to `to` (200 expected) and returns its id.
    pub async fn send_one(&self, to: &str) -> String {
        let res = self
            .post("/v1/send", send_body(json!(to)))
            .await
            .expect(200);
        res.body["data"]["emails"][0]["email"]
            .as_str()
            .expect("id")
            .to_string()
    }

    /// Runs every due job (deliveries) to completion.
    pub async fn run_jobs(&self) -> usize {
        self.engine.run_due_jobs().await.expect("jobs run")
    }

    /// Puts a closed [`GatedDns`] in front of the fake DNS, so that `POST /v1/verify` stays
    /// in flight until the test opens it; handlers run within `time_limit`.
    pub fn gate_dns(&mut self, time_limit: Duration) -> Arc<GatedDns> {
        let gate = GatedDns::closed(fake_dns());
        let engine = Engine {
            dns: gate.clone(),
            ..self.engine.clone()
        };
        (self.router, self.requests) = serve(engine, time_limit);
        gate
    }

    /// Answers DNS lookups from `dns` from now on (HTTP handlers and jobs alike).
    pub fn set_dns(&mut self, dns: StaticDns) {
        self.engine = Engine {
            dns: Arc::new(dns),
            ..self.engine.clone()
        };
        (self.router, self.requests) = serve(self.engine.clone(), REQUEST_TIME_LIMIT);
    }

    /// Judges received mail with `checkers` from now on (HTTP handlers and jobs alike).
    pub fn set_inbound(&mut self, checkers: posthorn_core::ports::InboundCheckers) {
        self.engine = Engine {
            inbound: checkers,
            ..self.engine.clone()
        };
        (self.router, self.requests) = serve(self.engine.clone(), REQUEST_TIME_LIMIT);
    }

    /// Sets a workspace's limits through the operator API.
    pub async fn set_workspace(&self, id: &str, patch: Value) {
        self.admin(
            Method::PATCH,
            &format!("/admin/workspaces/{id}"),
            Some(patch),
        )
        .await
        .expect(200);
    }
}

/// A minimal valid send body.
pub fn send_body(to: Value) -> Value {
    json!({"to": to, "from": "hello@example.com", "subject": "Hi {{name ?? \"there\"}}", "body": "<p>Hello {{name}}</p>"})
}
