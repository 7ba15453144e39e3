//! A backing service that is down answers 503 in the envelope, never 500 or a hang.

use std::sync::Arc;

use async_trait::async_trait;
use axum::http::Method;
use chrono::{DateTime, Utc};
use posthorn_core::ports::{Cache, Clock, EventQuery, PortError, Quota, RateDecision, RateLimiter};
use posthorn_core::Engine;
use posthorn_server::{router, AppState};
use serde_json::json;
use std::time::Duration;

use crate::harness::{send_body, TestApp, ADMIN};

/// Redis gone: every call fails.
struct Down;

fn down() -> PortError {
    PortError::Unavailable("connection refused".into())
}

#[async_trait]
impl RateLimiter for Down {
    async fn take(
        &self,
        _: &str,
        _: u32,
        _: Quota,
        _: DateTime<Utc>,
    ) -> Result<RateDecision, PortError> {
        Err(down())
    }
}

#[async_trait]
impl Cache for Down {
    async fn get(&self, _: &str, _: DateTime<Utc>) -> Result<Option<Vec<u8>>, PortError> {
        Err(down())
    }
    async fn put(
        &self,
        _: &str,
        _: Vec<u8>,
        _: Duration,
        _: DateTime<Utc>,
    ) -> Result<(), PortError> {
        Err(down())
    }
    async fn put_if_absent(
        &self,
        _: &str,
        _: Vec<u8>,
        _: Duration,
        _: DateTime<Utc>,
    ) -> Result<bool, PortError> {
        Err(down())
    }
    async fn delete(&self, _: &str) -> Result<(), PortError> {
        Err(down())
    }
}

#[tokio::test]
async fn limits_backend_down_answers_503_with_retry_after() {
    let mut app = TestApp::new().await;
    let engine = Engine {
        rate_limiter: Arc::new(Down),
        cache: Arc::new(Down),
        webhooks: std::sync::Arc::new(posthorn_core::ports::RefusingWebhookSink),
        ..app.engine.clone()
    };
    app.router = router(AppState::new(engine, Some(ADMIN.to_string())));

    let health = app
        .call(Method::GET, "/health", None, None, &[])
        .await
        .expect(503);
    assert_eq!(
        health.body,
        json!({"status": "unavailable", "failing": ["limits"]})
    );

    let res = app
        .get("/contacts")
        .await
        .expect_error(503, "SERVICE_UNAVAILABLE");
    assert_eq!(
        res.headers.get("retry-after").and_then(|v| v.to_str().ok()),
        Some("2")
    );
    let message = res.body["error"]["message"].as_str().unwrap_or_default();
    assert!(!message.contains("refused"), "no internals leak: {message}");

    // The limit is taken before the idempotency record: a keyed write is refused alike,
    // and nothing is written.
    app.call(
        Method::POST,
        "/v1/track",
        Some(&app.sk.clone()),
        Some(json!({"event": "signed-up", "email": "a@x.com"})),
        &[("idempotency-key", "k-1")],
    )
    .await
    .expect_error(503, "SERVICE_UNAVAILABLE");
    let events = app
        .engine
        .store
        .events(
            &app.ws(),
            &EventQuery {
                name: None,
                contact_id: None,
                limit: 10,
            },
        )
        .await
        .expect("events");
    assert!(events.is_empty(), "nothing was tracked: {events:?}");
}

#[tokio::test]
async fn a_job_whose_handler_fails_is_put_back_with_backoff() {
    let app = TestApp::new().await;
    app.post("/v1/send", send_body(json!("later@x.com")))
        .await
        .expect(200);
    // The worker's limiter (the send throttle) is down while it delivers.
    let worker = Engine {
        rate_limiter: Arc::new(Down),
        ..app.engine.clone()
    };
    let lease = worker.settings.job_lease;
    let claimed = worker
        .jobs
        .claim(app.clock.now(), lease, 10)
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1);
    let failed = worker.run_job(&claimed[0]).await;
    assert!(failed.is_err(), "the error reaches the caller: {failed:?}");
    // Put back at once with the first backoff, not left to its lease.
    let backoff = worker.retry_delay(1);
    assert!(backoff < chrono::Duration::from_std(lease).expect("lease"));
    let stats = worker.jobs.stats(app.clock.now()).await.expect("stats");
    assert_eq!((stats.queued, stats.running), (1, 0));
    let early = worker
        .jobs
        .claim(
            app.clock.now() + backoff - chrono::Duration::seconds(1),
            lease,
            10,
        )
        .await
        .expect("claim");
    assert!(early.is_empty(), "claimed before its backoff");
    app.clock.advance(backoff);
    let again = worker
        .jobs
        .claim(app.clock.now(), lease, 10)
        .await
        .expect("claim");
    assert_eq!(again.len(), 1);
    assert_eq!(
        (again[0].attempts, again[0].claims),
        (0, 1),
        "an outage of the limiter is no delivery attempt"
    );
    // With the limiter back, the email goes out.
    app.engine.run_job(&again[0]).await.expect("run");
    assert_eq!(app.transport.messages().len(), 1);
}

#[tokio::test]
async fn an_outage_does_not_spend_a_deliverys_attempts() {
    let settings = posthorn_core::Settings {
        max_delivery_attempts: 2,
        ..posthorn_core::Settings::default()
    };
    let app = TestApp::with_settings(settings).await;
    app.post("/v1/send", send_body(json!("outage@x.com")))
        .await
        .expect(200);
    // The limiter is down for longer than two attempts' backoff.
    let worker = Engine {
        rate_limiter: Arc::new(Down),
        ..app.engine.clone()
    };
    for _ in 0..4 {
        assert!(
            worker.run_due_jobs().await.is_err(),
            "the outage is reported"
        );
        app.clock.advance(chrono::Duration::hours(1));
    }
    // Back up, the mail server asks to try later once: that is the first real attempt.
    app.transport.fail_next(
        1,
        posthorn_core::ports::TransportError::Transient("421 try later".into()),
    );
    app.run_jobs().await;
    let stats = app.engine.jobs.stats(app.clock.now()).await.expect("stats");
    assert_eq!((stats.queued, stats.dead), (1, 0), "retried, not given up");
    app.clock.advance(chrono::Duration::hours(1));
    app.run_jobs().await;
    assert_eq!(app.transport.messages().len(), 1, "delivered");
}

#[tokio::test]
async fn a_failing_job_does_not_strand_the_rest_of_its_batch() {
    let app = TestApp::new().await;
    app.post("/v1/send", send_body(json!(["one@x.com", "two@x.com"])))
        .await
        .expect(200);
    let worker = Engine {
        rate_limiter: Arc::new(Down),
        ..app.engine.clone()
    };
    assert!(worker.run_due_jobs().await.is_err());
    let stats = app.engine.jobs.stats(app.clock.now()).await.expect("stats");
    assert_eq!(
        (stats.queued, stats.running),
        (2, 0),
        "both put back, none left leased"
    );
}
