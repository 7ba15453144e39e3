//! What a receiver gets and what the sink reports, status by status.

use std::time::{Duration, Instant};

use chrono::TimeZone;
use posthorn_core::ports::{
    classify_attempt, AttemptVerdict, RetrySchedule, SigningKeys, WebhookError, WebhookMethod,
    WebhookRequest, WebhookSecret, WebhookSink, BODY_EXCERPT_LIMIT,
};
use posthorn_webhook::{AllowHosts, HttpWebhookSink, WebhookSettings, USER_AGENT};

use crate::server::{Reply, TestServer};
use crate::verifier::verify;

/// A sink confined to 127.0.0.1 by the allow-list (loopback permitted, nothing else).
pub fn loopback_sink() -> HttpWebhookSink {
    HttpWebhookSink::new(WebhookSettings {
        allow_hosts: Some(AllowHosts::parse("127.0.0.1").expect("valid list")),
        ..WebhookSettings::default()
    })
}

const BODY: &str = r#"{"contact":{"email":"ada@example.com","subscribed":true,"data":{}},"workflow":{"id":"wf_1","name":"Welcome"},"execution":{"id":"ex_1","startedAt":"2026-11-23T04:00:00Z"},"event":{"plan":"pro"}}"#;

#[tokio::test]
async fn a_2xx_is_delivered_with_signatures_an_independent_verifier_accepts() {
    let server = TestServer::start(|_, _| Reply::status(200, "thanks")).await;
    let old = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let new = WebhookSecret::from_key((1..=32).collect()).expect("valid key");
    let now = chrono::Utc.with_ymd_and_hms(2026, 11, 23, 4, 0, 0).unwrap();
    // A rotation an hour ago: both secrets sign.
    let keys = SigningKeys::new(WebhookSecret::parse(old).expect("valid secret"))
        .rotate(new.clone(), now - chrono::Duration::hours(1));
    let mut request = WebhookRequest::post(server.url("/hooks/posthorn?x=1"), BODY)
        .header("Content-Type", "application/json")
        .header("X-Custom", "yes");
    for (name, value) in keys.headers("msg_01J", BODY.as_bytes(), now) {
        request = request.header(name, value);
    }

    let result = loopback_sink().deliver(&request).await;
    let response = result.clone().expect("a response");
    assert_eq!(response.status, 200);
    assert_eq!(response.body_excerpt, "thanks");
    assert!(!response.body_truncated);
    assert_eq!(response.retry_after, None);
    assert_eq!(response.location, None);
    assert!(response.latency > Duration::ZERO);
    assert_eq!(classify_attempt(&result), AttemptVerdict::Delivered);

    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    let got = &seen[0];
    assert_eq!(got.method, "POST");
    assert_eq!(got.path, "/hooks/posthorn?x=1");
    assert_eq!(got.body, BODY.as_bytes());
    assert_eq!(got.header("content-type"), Some("application/json"));
    assert_eq!(got.header("x-custom"), Some("yes"));
    assert_eq!(got.header("user-agent"), Some(USER_AGENT));
    assert_eq!(got.header("webhook-id"), Some("msg_01J"));
    let timestamp = got.header("webhook-timestamp").expect("timestamp");
    assert_eq!(timestamp, now.timestamp().to_string());
    let signature = got.header("webhook-signature").expect("signature");
    assert_eq!(signature.split(' ').count(), 2, "{signature}");
    // Receivers holding either secret accept the request; a tampered body is rejected.
    assert!(verify(old, "msg_01J", timestamp, &got.body, signature));
    assert!(verify(
        &new.expose(),
        "msg_01J",
        timestamp,
        &got.body,
        signature
    ));
    assert!(!verify(old, "msg_01J", timestamp, b"{}", signature));
}

#[tokio::test]
async fn the_method_and_repeated_headers_are_sent_as_given() {
    let server = TestServer::start(|_, _| Reply::status(204, "")).await;
    let request = WebhookRequest {
        method: "put".parse::<WebhookMethod>().expect("method"),
        url: server.url("/r"),
        headers: vec![
            ("X-Tag".into(), "a".into()),
            ("X-Tag".into(), "b".into()),
            ("User-Agent".into(), "custom/1".into()),
        ],
        body: Vec::new(),
        timeout: None,
    };
    let response = loopback_sink().deliver(&request).await.expect("a response");
    assert_eq!(response.status, 204);
    let got = &server.requests()[0];
    assert_eq!(got.method, "PUT");
    let tags: Vec<_> = got.headers.get_all("x-tag").iter().collect();
    assert_eq!(tags, ["a", "b"]);
    assert_eq!(got.header("user-agent"), Some("custom/1"));
}

#[tokio::test]
async fn a_500_is_a_retryable_failure_and_the_retry_with_the_same_id_succeeds() {
    let server = TestServer::start(|n, _| match n {
        0 => Reply::status(500, "database down"),
        _ => Reply::status(200, "ok"),
    })
    .await;
    let sink = loopback_sink();
    let schedule = RetrySchedule::new(vec![Duration::from_millis(50); 2], 0.0).expect("valid");
    let request = WebhookRequest::post(server.url("/"), "{}").header("webhook-id", "msg_retry");

    let first = sink.deliver(&request).await;
    let response = first.clone().expect("a response");
    assert_eq!(response.status, 500);
    assert_eq!(response.body_excerpt, "database down");
    assert_eq!(classify_attempt(&first), AttemptVerdict::Retry);
    assert_eq!(
        schedule.delay_after(1, response.retry_after, 0.5),
        Some(Duration::from_millis(50))
    );

    let second = sink.deliver(&request).await;
    assert_eq!(classify_attempt(&second), AttemptVerdict::Delivered);
    let ids: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.header("webhook-id").map(str::to_string))
        .collect();
    assert_eq!(ids, [Some("msg_retry".into()), Some("msg_retry".into())]);
}

#[tokio::test]
async fn a_4xx_other_than_429_fails_at_once() {
    let server = TestServer::start(|_, _| Reply::status(410, "gone")).await;
    let result = loopback_sink()
        .deliver(&WebhookRequest::post(server.url("/"), "{}"))
        .await;
    assert_eq!(result.as_ref().map(|r| r.status), Ok(410));
    assert_eq!(classify_attempt(&result), AttemptVerdict::Fail);
}

#[tokio::test]
async fn a_429_reports_retry_after_and_the_schedule_waits_at_least_that_long() {
    let server =
        TestServer::start(|_, _| Reply::status(429, "slow down").with_header("Retry-After", "120"))
            .await;
    let result = loopback_sink()
        .deliver(&WebhookRequest::post(server.url("/"), "{}"))
        .await;
    let response = result.clone().expect("a response");
    assert_eq!(response.status, 429);
    assert_eq!(response.retry_after, Some(Duration::from_secs(120)));
    assert_eq!(classify_attempt(&result), AttemptVerdict::Retry);
    // The standard first retry is about 5 s; the receiver asked for 2 minutes.
    let schedule = RetrySchedule::standard();
    for sample in [0.0, 0.5, 1.0] {
        assert_eq!(
            schedule.delay_after(1, response.retry_after, sample),
            Some(Duration::from_secs(120))
        );
    }
}

#[tokio::test]
async fn a_302_is_reported_and_not_followed() {
    // The redirect points back at this same server, where following it would succeed.
    let server = TestServer::start(|_, got| match got.path.as_str() {
        "/hook" => {
            let host = got.header("host").unwrap_or_default().to_string();
            Reply::status(302, "moved").with_header("Location", format!("http://{host}/moved"))
        }
        _ => Reply::status(200, "followed"),
    })
    .await;
    let result = loopback_sink()
        .deliver(&WebhookRequest::post(server.url("/hook"), "{}"))
        .await;
    let response = result.clone().expect("a response");
    assert_eq!(response.status, 302);
    assert_eq!(response.body_excerpt, "moved");
    assert_eq!(response.location, Some(server.url("/moved")));
    assert_eq!(classify_attempt(&result), AttemptVerdict::Retry);
    let paths: Vec<_> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, ["/hook"], "the redirect must not be followed");
}

#[tokio::test]
async fn a_server_that_never_answers_hits_the_timeout() {
    let server = TestServer::start(|_, _| Reply::Hang).await;
    let mut request = WebhookRequest::post(server.url("/"), "{}");
    request.timeout = Some(Duration::from_millis(300));
    let started = Instant::now();
    let result = loopback_sink().deliver(&request).await;
    let elapsed = started.elapsed();
    assert_eq!(
        result,
        Err(WebhookError::Timeout(Duration::from_millis(300)))
    );
    assert_eq!(classify_attempt(&result), AttemptVerdict::Retry);
    assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert_eq!(server.requests().len(), 1, "the request did arrive");
}

#[tokio::test]
async fn the_default_timeout_comes_from_the_settings() {
    let server = TestServer::start(|_, _| Reply::Hang).await;
    let sink = HttpWebhookSink::new(WebhookSettings {
        allow_hosts: Some(AllowHosts::parse("127.0.0.1").expect("valid list")),
        default_timeout: Duration::from_millis(200),
        ..WebhookSettings::default()
    });
    let result = sink
        .deliver(&WebhookRequest::post(server.url("/"), "{}"))
        .await;
    assert_eq!(
        result,
        Err(WebhookError::Timeout(Duration::from_millis(200)))
    );
}

#[tokio::test]
async fn a_long_body_is_cut_to_the_excerpt() {
    let server = TestServer::start(|_, _| Reply::status(500, &"x".repeat(100_000))).await;
    let response = loopback_sink()
        .deliver(&WebhookRequest::post(server.url("/"), "{}"))
        .await
        .expect("a response");
    assert_eq!(response.body_excerpt.len(), BODY_EXCERPT_LIMIT);
    assert!(response.body_truncated);
}

#[tokio::test]
async fn a_closed_port_is_a_retryable_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let result = loopback_sink()
        .deliver(&WebhookRequest::post(
            format!("http://127.0.0.1:{port}/"),
            "{}",
        ))
        .await;
    assert!(
        matches!(result, Err(WebhookError::Connect(_))),
        "{result:?}"
    );
    assert_eq!(classify_attempt(&result), AttemptVerdict::Retry);
}

#[tokio::test]
async fn an_invalid_header_fails_before_any_connection() {
    let server = TestServer::start(|_, _| Reply::status(200, "")).await;
    let request = WebhookRequest::post(server.url("/"), "{}").header("Bad Name", "x");
    let result = loopback_sink().deliver(&request).await;
    assert!(
        matches!(result, Err(WebhookError::Invalid(_))),
        "{result:?}"
    );
    assert_eq!(classify_attempt(&result), AttemptVerdict::Fail);
    assert_eq!(server.connections(), 0);
}
