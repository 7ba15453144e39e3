//! A tracked segment's first snapshot of members is quiet, even when another job reaches
//! the segment before the snapshot's own job: the minute sweep's sync, or a contact's
//! re-evaluation. Members from before tracking began are never announced as entries.

use chrono::Duration;
use posthorn_core::ports::Clock;
use serde_json::{json, Value};

use crate::harness::TestApp;

/// The workspace's `segment.*` events, oldest first, as (name, contact id).
async fn segment_events(app: &TestApp) -> Vec<(String, String)> {
    let body = app.get("/events?limit=1000").await.expect(200).body;
    let mut events: Vec<(String, String)> = body["events"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|e| {
                    e["name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with("segment."))
                })
                .map(|e| {
                    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
                    (text(&e["name"]), text(&e["contactId"]))
                })
                .collect()
        })
        .unwrap_or_default();
    events.reverse();
    events
}

/// Runs jobs until none is due.
async fn settle(app: &TestApp) {
    for _ in 0..20 {
        if app.run_jobs().await == 0 {
            return;
        }
    }
    panic!("jobs still due after 20 rounds");
}

async fn track(app: &TestApp, email: &str, event: &str) -> String {
    let t = app
        .post("/v1/track", json!({"email": email, "event": event}))
        .await
        .expect(200);
    t.body["data"]["contact"]
        .as_str()
        .expect("contact id")
        .to_string()
}

#[tokio::test]
async fn a_sweep_before_the_first_snapshot_announces_no_earlier_member() {
    let app = TestApp::new().await;
    track(&app, "earlier@x.com", "login").await;
    settle(&app).await;
    let created = app.clock.now();
    let cond = json!({"groups": [{"filters": [{"field": "event.login", "operator": "triggeredWithin", "value": 1, "unit": "hours"}]}]});
    app.post(
        "/segments",
        json!({"name": "Active", "condition": cond, "trackMembership": true}),
    )
    .await
    .expect(201);
    // The sweep's announcing sync becomes due before the snapshot's own job, as when another
    // worker claims it first.
    app.clock.set(created - Duration::seconds(1));
    app.engine
        .sweep_time_based_segments(&app.ws())
        .await
        .expect("sweep");
    app.clock.set(created);
    settle(&app).await;
    assert_eq!(
        segment_events(&app).await,
        Vec::<(String, String)>::new(),
        "a contact active before tracking began is no entry"
    );
    let count = app.get("/segments").await.expect(200).body["data"][0]["memberCount"].clone();
    assert_eq!(count, json!(1), "the earlier member is stored");

    // Entries after the snapshot are announced.
    let later = track(&app, "later@x.com", "login").await;
    settle(&app).await;
    assert_eq!(
        segment_events(&app).await,
        vec![("segment.active.entry".to_string(), later)]
    );
}

#[tokio::test]
async fn a_reevaluation_before_the_first_snapshot_is_quiet() {
    let app = TestApp::new().await;
    let earlier = track(&app, "earlier@x.com", "signup").await;
    app.patch(
        &format!("/contacts/{earlier}"),
        json!({"data": {"plan": "pro"}}),
    )
    .await
    .expect(200);
    settle(&app).await;
    let created = app.clock.now();
    let cond = json!({"groups": [{"filters": [{"field": "data.plan", "operator": "equals", "value": "pro"}]}]});
    app.post(
        "/segments",
        json!({"name": "Pro", "condition": cond, "trackMembership": true}),
    )
    .await
    .expect(201);
    // The contact changes, and its re-evaluation is due before the snapshot's job.
    app.clock.set(created - Duration::seconds(1));
    app.patch(
        &format!("/contacts/{earlier}"),
        json!({"data": {"seats": 3}}),
    )
    .await
    .expect(200);
    app.clock.set(created);
    settle(&app).await;
    assert_eq!(
        segment_events(&app).await,
        Vec::<(String, String)>::new(),
        "a contact that was pro before tracking began is no entry"
    );

    // Changes after the snapshot are announced, both ways.
    app.patch(
        &format!("/contacts/{earlier}"),
        json!({"data": {"plan": "free"}}),
    )
    .await
    .expect(200);
    settle(&app).await;
    assert_eq!(
        segment_events(&app).await,
        vec![("segment.pro.exit".to_string(), earlier)]
    );
}
