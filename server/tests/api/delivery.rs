use posthorn_core::model::EmailId;
use posthorn_core::ports::{Clock, TransportError};
use posthorn_core::Settings;
use serde_json::json;

use crate::harness::{send_body, TestApp};

async fn email_status(app: &TestApp, email_id: &str) -> String {
    let ws = app.ws();
    let email = app
        .engine
        .store
        .email(&ws, &EmailId::from(email_id))
        .await
        .expect("store")
        .expect("email");
    serde_json::to_value(email.status)
        .expect("json")
        .as_str()
        .expect("str")
        .to_string()
}

#[tokio::test]
async fn sending_is_throttled_to_the_workspace_rate_without_dropping() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"sendRatePerSecond": 3}))
        .await;
    let ten: Vec<_> = (0..10).map(|i| json!(format!("r{i}@x.com"))).collect();
    app.post("/v1/send", send_body(json!(ten)))
        .await
        .expect(200);
    app.run_jobs().await;
    assert_eq!(app.transport.messages().len(), 3, "one second's budget");
    for expected in [6, 9, 10] {
        app.clock.advance(chrono::Duration::seconds(1));
        app.run_jobs().await;
        assert_eq!(app.transport.messages().len(), expected);
    }
    let mut to: Vec<_> = app
        .transport
        .messages()
        .iter()
        .map(|m| m.to.email.clone())
        .collect();
    to.sort();
    to.dedup();
    assert_eq!(to.len(), 10, "each recipient exactly once");
}

#[tokio::test]
async fn a_throttled_backlog_is_spread_over_the_coming_windows() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"sendRatePerSecond": 3}))
        .await;
    for batch in 0..3 {
        let ten: Vec<_> = (0..10)
            .map(|i| json!(format!("r{batch}-{i}@x.com")))
            .collect();
        app.post("/v1/send", send_body(json!(ten)))
            .await
            .expect(200);
    }
    assert_eq!(app.run_jobs().await, 30, "every delivery is tried once");
    assert_eq!(app.transport.messages().len(), 3, "one second's budget");
    // Each coming window gets a budget's worth of the backlog, not the whole of it again.
    for second in 1..=9 {
        app.clock.advance(chrono::Duration::seconds(1));
        assert_eq!(app.run_jobs().await, 3, "jobs run in second {second}");
        assert_eq!(app.transport.messages().len(), 3 * (second + 1));
    }
}

#[tokio::test]
async fn transient_failures_retry_with_backoff_then_succeed() {
    let app = TestApp::new().await;
    app.transport
        .fail_next(2, TransportError::Transient("421 try later".into()));
    let id = app.send_one("retry@x.com").await;
    app.run_jobs().await;
    assert_eq!(email_status(&app, &id).await, "QUEUED");
    app.clock.advance(chrono::Duration::seconds(31));
    app.run_jobs().await;
    assert_eq!(email_status(&app, &id).await, "QUEUED", "second failure");
    app.clock.advance(chrono::Duration::seconds(61));
    app.run_jobs().await;
    assert_eq!(email_status(&app, &id).await, "SENT");
    assert_eq!(app.transport.messages().len(), 1);
}

#[tokio::test]
async fn permanent_failures_mark_the_email_failed() {
    let app = TestApp::new().await;
    app.transport.fail_for(
        "bounce@x.com",
        TransportError::Permanent("550 no such user".into()),
    );
    let res = app
        .post("/v1/send", send_body(json!(["bounce@x.com", "fine@x.com"])))
        .await
        .expect(200);
    let bad = res.body["data"]["emails"][0]["email"]
        .as_str()
        .expect("id")
        .to_string();
    let good = res.body["data"]["emails"][1]["email"]
        .as_str()
        .expect("id")
        .to_string();
    app.run_jobs().await;
    assert_eq!(email_status(&app, &bad).await, "FAILED");
    assert_eq!(email_status(&app, &good).await, "SENT");
    let stats = app.engine.jobs.stats(app.clock.now()).await.expect("stats");
    assert_eq!((stats.queued, stats.dead), (0, 0));
}

#[tokio::test]
async fn exhausted_retries_dead_letter_the_job() {
    let settings = Settings {
        max_delivery_attempts: 2,
        ..Settings::default()
    };
    let app = TestApp::with_settings(settings).await;
    app.transport
        .fail_next(5, TransportError::Transient("timeout".into()));
    let id = app.send_one("dead@x.com").await;
    app.run_jobs().await;
    app.clock.advance(chrono::Duration::minutes(5));
    app.run_jobs().await;
    assert_eq!(email_status(&app, &id).await, "FAILED");
    let stats = app.engine.jobs.stats(app.clock.now()).await.expect("stats");
    assert_eq!(stats.dead, 1);
}

#[tokio::test]
async fn a_crashed_worker_lease_expires_and_the_email_is_still_sent_once() {
    let app = TestApp::new().await;
    app.post("/v1/send", send_body(json!("crash@x.com")))
        .await
        .expect(200);
    // A worker claims the job and dies without settling it.
    let claimed = app
        .engine
        .jobs
        .claim(app.clock.now(), app.engine.settings.job_lease, 10)
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1);
    drop(claimed);
    app.run_jobs().await;
    assert!(
        app.transport.messages().is_empty(),
        "leased to the dead worker"
    );
    app.clock.advance(chrono::Duration::seconds(61));
    app.run_jobs().await;
    assert_eq!(app.transport.messages().len(), 1);
}

#[tokio::test]
async fn a_job_that_keeps_killing_its_worker_is_given_up() {
    let app = TestApp::new().await;
    let id = app.send_one("poison@x.com").await;
    let lease = app.engine.settings.job_lease;
    let max = app.engine.settings.max_job_claims;
    // Every worker that takes the job dies holding it.
    for claim in 1..=max {
        let claimed = app
            .engine
            .jobs
            .claim(app.clock.now(), lease, 10)
            .await
            .expect("claim");
        assert_eq!(claimed.len(), 1);
        assert_eq!(claimed[0].claims, claim);
        app.clock
            .advance(chrono::Duration::seconds(lease.as_secs() as i64 + 1));
    }
    // The next worker does not run it again: it is dead-lettered and the email FAILED.
    app.run_jobs().await;
    assert!(app.transport.messages().is_empty(), "not run again");
    assert_eq!(email_status(&app, &id).await, "FAILED");
    let stats = app.engine.jobs.stats(app.clock.now()).await.expect("stats");
    assert_eq!((stats.queued, stats.running, stats.dead), (0, 0, 1));
}

#[tokio::test]
async fn the_background_worker_delivers_and_stops_gracefully() {
    let app = TestApp::new().await;
    let (stop, rx) = tokio::sync::watch::channel(false);
    let worker = tokio::spawn(posthorn_runtime::run_workers(
        app.engine.clone(),
        posthorn_runtime::WorkerOptions {
            concurrency: 4,
            ..Default::default()
        },
        rx,
    ));
    app.post("/v1/send", send_body(json!(["w1@x.com", "w2@x.com"])))
        .await
        .expect(200);
    for _ in 0..200 {
        if app.transport.messages().len() == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(app.transport.messages().len(), 2);
    stop.send(true).expect("stop");
    tokio::time::timeout(std::time::Duration::from_secs(5), worker)
        .await
        .expect("stops")
        .expect("joins");
}
