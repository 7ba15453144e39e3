//! An EVENT workflow run end to end over HTTP: `POST /v1/track` starts it, a CONDITION step
//! branches, a WEBHOOK step calls a real receiver on 127.0.0.1 through the HTTP sink (SSRF
//! guard confined to that host), whose requests are checked with an independent Standard
//! Webhooks verifier (hmac + sha2 + base64), retried after a 500 and a 429 with Retry-After;
//! a 4xx fails the step; the execution read shows every attempt.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use posthorn_core::ports::RetrySchedule;
use posthorn_core::Settings;
use posthorn_webhook::{AllowHosts, HttpWebhookSink, WebhookSettings};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::harness::TestApp;

/// What the receiver got: headers and body of each request.
#[derive(Default)]
struct Received {
    requests: Vec<(HeaderMap, Bytes)>,
    /// Status and `Retry-After` of the next answers; 200 once they run out.
    script: VecDeque<(u16, Option<&'static str>)>,
}

type Shared = Arc<Mutex<Received>>;

async fn receive(
    axum::extract::State(shared): axum::extract::State<Shared>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (status, retry_after) = {
        let mut r = shared.lock().expect("receiver lock");
        r.requests.push((headers, body));
        r.script.pop_front().unwrap_or((200, None))
    };
    let status = StatusCode::from_u16(status).expect("status");
    match retry_after {
        Some(v) => (status, [("retry-after", v)], "").into_response(),
        None => (status, "").into_response(),
    }
}

/// Starts a receiver on 127.0.0.1 (any free port); returns its URL and what it records.
async fn receiver(script: &[(u16, Option<&'static str>)]) -> (String, Shared) {
    let shared: Shared = Arc::new(Mutex::new(Received {
        requests: Vec::new(),
        script: script.iter().copied().collect(),
    }));
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(receive))
        .with_state(shared.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/hook"), shared)
}

/// A test app whose webhooks go through the real HTTP sink, confined to 127.0.0.1, with
/// retries after 10 s and 20 s (no jitter).
async fn app() -> TestApp {
    let sink = HttpWebhookSink::new(WebhookSettings {
        allow_private: false,
        allow_hosts: Some(AllowHosts::parse("127.0.0.1").expect("allow list")),
        ..WebhookSettings::default()
    });
    let settings = Settings {
        webhook_retry: RetrySchedule::new(
            vec![Duration::from_secs(10), Duration::from_secs(20)],
            0.0,
        )
        .expect("schedule"),
        ..Settings::default()
    };
    TestApp::with_webhooks(settings, Arc::new(sink)).await
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> &'h str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// Standard Webhooks, written out independently: `v1,` + base64(HMAC-SHA256(key,
/// "{id}.{timestamp}.{body}")), the key being the base64 after `whsec_`.
fn signature_verifies(headers: &HeaderMap, body: &[u8], secret: &str) -> bool {
    let Ok(key) = base64::engine::general_purpose::STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap_or(secret))
    else {
        return false;
    };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&key) else {
        return false;
    };
    mac.update(header(headers, "webhook-id").as_bytes());
    mac.update(b".");
    mac.update(header(headers, "webhook-timestamp").as_bytes());
    mac.update(b".");
    mac.update(body);
    let expected = format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    );
    header(headers, "webhook-signature")
        .split(' ')
        .any(|s| s == expected)
}

fn id(v: &Value) -> String {
    v["id"].as_str().expect("id").to_string()
}

/// An enabled EVENT workflow on `signup`: TRIGGER -> CONDITION (event.plan = pro) -yes->
/// WEBHOOK to `url` -> EXIT. Returns the workflow id.
async fn event_flow(app: &TestApp, url: &str) -> String {
    let wf = app
        .post(
            "/workflows",
            json!({"name": "Signup hook", "triggerType": "EVENT", "triggerConfig": {"eventName": "signup"}, "enabled": true}),
        )
        .await
        .expect(201);
    let trigger = id(&wf.body["steps"][0]);
    let wf = id(&wf.body);
    let steps = format!("/workflows/{wf}/steps");
    let cond = id(&app
        .post(&steps, json!({"type": "CONDITION", "name": "Pro?", "config": {"field": "event.plan", "operator": "equals", "value": "pro"}}))
        .await
        .expect(201)
        .body);
    let hook = id(&app
        .post(&steps, json!({"type": "WEBHOOK", "name": "CRM", "config": {"url": url, "headers": {"X-Plan": "{{event.plan}}"}}}))
        .await
        .expect(201)
        .body);
    let exit = id(&app
        .post(
            &steps,
            json!({"type": "EXIT", "name": "Done", "config": {"reason": "notified"}}),
        )
        .await
        .expect(201)
        .body);
    let edges = format!("/workflows/{wf}/transitions");
    for (from, to, condition) in [
        (&trigger, &cond, Value::Null),
        (&cond, &hook, json!({"branch": "yes"})),
        (&hook, &exit, Value::Null),
    ] {
        app.post(
            &edges,
            json!({"fromStepId": from, "toStepId": to, "condition": condition}),
        )
        .await
        .expect(201);
    }
    wf
}

async fn track(app: &TestApp, email: &str, plan: &str) {
    app.post(
        "/v1/track",
        json!({"email": email, "event": "signup", "data": {"plan": plan}}),
    )
    .await
    .expect(200);
}

/// The only execution of `wf`, as `GET .../executions/{id}` shows it.
async fn only_execution(app: &TestApp, wf: &str) -> Value {
    let list = app
        .get(&format!("/workflows/{wf}/executions"))
        .await
        .expect(200);
    assert_eq!(list.body["total"], json!(1), "{}", list.body);
    let exec = id(&list.body["executions"][0]);
    app.get(&format!("/workflows/{wf}/executions/{exec}"))
        .await
        .expect(200)
        .body
}

fn attempt_statuses(step: &Value) -> Vec<Value> {
    step["attempts"]
        .as_array()
        .map(|a| a.iter().map(|a| a["statusCode"].clone()).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_tracked_event_runs_the_webhook_signed_and_retried() {
    let (url, received) = receiver(&[(500, None), (429, Some("60"))]).await;
    let app = app().await;
    let wf = event_flow(&app, &url).await;
    let secret = app.get("/workflows/signing-secret").await.expect(200).body["secret"]
        .as_str()
        .expect("secret")
        .to_string();

    // A free-plan signup takes the `no` branch, which has no edge: no webhook.
    track(&app, "free@example.com", "free").await;
    // The pro signup runs to the webhook: first attempt answered 500.
    track(&app, "pro@example.com", "pro").await;
    app.run_jobs().await;
    assert_eq!(received.lock().expect("lock").requests.len(), 1);

    // Retried after 10 s: answered 429 with Retry-After: 60, longer than the next 20 s.
    app.clock.advance(chrono::Duration::seconds(10));
    app.run_jobs().await;
    assert_eq!(received.lock().expect("lock").requests.len(), 2);
    app.clock.advance(chrono::Duration::seconds(30));
    app.run_jobs().await;
    assert_eq!(
        received.lock().expect("lock").requests.len(),
        2,
        "Retry-After holds the retry back"
    );
    app.clock.advance(chrono::Duration::seconds(30));
    app.run_jobs().await;
    let requests = received.lock().expect("lock").requests.clone();
    assert_eq!(requests.len(), 3, "the third attempt after Retry-After");

    // Every attempt is signed with the workspace's secret, under one webhook-id.
    let first_id = header(&requests[0].0, "webhook-id").to_string();
    assert!(!first_id.is_empty());
    for (headers, body) in &requests {
        assert!(
            signature_verifies(headers, body, &secret),
            "signature of {headers:?}"
        );
        assert_eq!(header(headers, "webhook-id"), first_id);
        assert_eq!(header(headers, "x-plan"), "pro");
        assert_eq!(header(headers, "content-type"), "application/json");
    }
    assert!(!signature_verifies(&requests[0].0, b"tampered", &secret));
    let body: Value = serde_json::from_slice(&requests[2].1).expect("json body");
    assert_eq!(body["contact"]["email"], json!("pro@example.com"));
    assert_eq!(body["event"], json!({"plan": "pro"}));
    assert_eq!(body["workflow"]["id"], json!(wf));
    assert_eq!(body["workflow"]["name"], json!("Signup hook"));

    // Two executions: the free one completed at the condition, the pro one at EXIT.
    let list = app
        .get(&format!("/workflows/{wf}/executions"))
        .await
        .expect(200);
    assert_eq!(list.body["total"], json!(2));
    let pro = list.body["executions"]
        .as_array()
        .and_then(|e| {
            e.iter()
                .find(|e| e["status"] == json!("COMPLETED") && e["reason"] == json!("notified"))
                .cloned()
        })
        .expect("the pro execution");
    let view = app
        .get(&format!("/workflows/{wf}/executions/{}", id(&pro)))
        .await
        .expect(200)
        .body;
    assert_eq!(view["execution"], Value::Null, "the execution is flattened");
    let steps = view["steps"].as_array().expect("steps");
    let kinds: Vec<&Value> = steps.iter().map(|s| &s["type"]).collect();
    assert_eq!(
        kinds,
        [
            &json!("TRIGGER"),
            &json!("CONDITION"),
            &json!("WEBHOOK"),
            &json!("EXIT")
        ]
    );
    let hook = &steps[2];
    assert_eq!(hook["status"], json!("COMPLETED"));
    assert_eq!(attempt_statuses(hook), [json!(500), json!(429), json!(200)]);
    for attempt in hook["attempts"].as_array().expect("attempts") {
        assert!(attempt["at"].is_string());
        assert!(attempt["latencyMs"].is_u64());
    }
    assert!(hook["attempts"][0]["error"].is_string());
    assert_eq!(hook["attempts"][2]["error"], Value::Null);
    for key in ["stepId", "output", "error", "startedAt", "completedAt"] {
        assert!(hook.get(key).is_some(), "{key} in {hook}");
    }
}

#[tokio::test]
async fn a_client_error_fails_the_step_and_the_execution() {
    let (url, received) = receiver(&[(404, None)]).await;
    let app = app().await;
    let wf = event_flow(&app, &url).await;
    track(&app, "pro@example.com", "pro").await;
    app.run_jobs().await;
    app.clock.advance(chrono::Duration::minutes(5));
    app.run_jobs().await;
    assert_eq!(
        received.lock().expect("lock").requests.len(),
        1,
        "a 4xx is not retried"
    );
    let view = only_execution(&app, &wf).await;
    assert_eq!(view["status"], json!("FAILED"));
    let hook = &view["steps"][2];
    assert_eq!(hook["type"], json!("WEBHOOK"));
    assert_eq!(hook["status"], json!("FAILED"));
    assert!(hook["error"].is_string());
    assert_eq!(attempt_statuses(hook), [json!(404)]);
}

#[tokio::test]
async fn a_target_outside_the_allow_list_fails_without_a_request() {
    let app = app().await;
    // Port 9 of another loopback address: the guard refuses it before any connection.
    let wf = event_flow(&app, "http://127.0.0.2:9/hook").await;
    track(&app, "pro@example.com", "pro").await;
    app.run_jobs().await;
    let view = only_execution(&app, &wf).await;
    assert_eq!(view["status"], json!("FAILED"), "{view}");
    assert_eq!(view["steps"][2]["status"], json!("FAILED"));
}
