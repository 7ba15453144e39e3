//! A handler that outruns the request time limit is answered 503, never left hanging.

use std::time::{Duration, Instant};

use axum::http::Method;
use serde_json::json;

use crate::gate::answered;
use crate::harness::TestApp;

#[tokio::test]
async fn a_request_over_the_time_limit_is_503_and_its_key_is_forgotten() {
    let mut app = TestApp::new().await;
    // Every DNS lookup hangs until the gate opens: `POST /v1/verify` cannot finish.
    let gate = app.gate_dns(Duration::from_secs(1));
    let sk = app.sk.clone();
    let body = json!({"email": "ada@gmail.com"});
    let started = Instant::now();
    let res = answered(
        Duration::from_secs(30),
        app.call(
            Method::POST,
            "/v1/verify",
            Some(&sk),
            Some(body.clone()),
            &[("idempotency-key", "late-1")],
        ),
    )
    .await
    .expect_error(503, "SERVICE_UNAVAILABLE");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "answered before the limit: {:?}",
        started.elapsed()
    );
    assert!(gate.lookups() > 0, "the handler was running");
    assert_eq!(
        res.headers.get("retry-after").and_then(|v| v.to_str().ok()),
        Some("2")
    );
    let message = res.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("within 1 s"), "{message}");
    // The rate-limit headers are still there: the limit sits inside authentication.
    assert!(res.headers.get("ratelimit-remaining").is_some());

    // A stopped request's key is forgotten like any 5xx: the retry runs again, and with
    // DNS back it succeeds (no 409 for a request that is no longer in flight).
    gate.open();
    let retry = app
        .call(
            Method::POST,
            "/v1/verify",
            Some(&sk),
            Some(body),
            &[("idempotency-key", "late-1")],
        )
        .await
        .expect(200);
    assert!(retry.headers.get("idempotent-replayed").is_none());
    assert_eq!(retry.body["data"]["hasMxRecords"], json!(true));
    // Requests that finish in time are untouched by the limit.
    app.get("/contacts").await.expect(200);
}

#[tokio::test]
async fn requests_in_flight_are_counted_for_the_job_workers_until_answered() {
    let mut app = TestApp::new().await;
    let gate = app.gate_dns(Duration::from_secs(30));
    let sk = app.sk.clone();
    assert_eq!(app.requests.in_flight(), 0);
    let held = app.call(
        Method::POST,
        "/v1/verify",
        Some(&sk),
        Some(json!({"email": "ada@gmail.com"})),
        &[],
    );
    let watch = async {
        while gate.lookups() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let counted = app.requests.in_flight();
        gate.open();
        counted
    };
    let (res, counted) = tokio::join!(held, watch);
    res.expect(200);
    assert_eq!(counted, 1, "the request waiting on DNS is in flight");
    assert_eq!(app.requests.in_flight(), 0, "answered: no longer counted");
}
