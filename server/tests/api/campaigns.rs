use std::collections::HashMap;

use axum::http::Method;
use posthorn_core::jobs::{BATCHES_PER_JOB, EXPANSION_BATCH};
use posthorn_core::model::{Contact, EmailAddress};
use posthorn_core::ports::{ChangeSet, Clock, JobPayload, Write};
use serde_json::{json, Value};

use crate::harness::TestApp;

pub(crate) fn campaign_body(audience: Value) -> Value {
    let mut body = json!({
        "name": "Autumn news", "subject": "Hi {{name ?? \"friend\"}}", "body": "<p>News for {{contact.email}}</p>",
        "from": "news@example.com", "fromName": "Acme News",
    });
    if let (Some(b), Some(a)) = (body.as_object_mut(), audience.as_object()) {
        b.extend(a.clone());
    }
    body
}

/// Seeds `n` contacts straight into the store (fast), `subscribed` as given.
pub(crate) async fn seed(
    app: &TestApp,
    prefix: &str,
    n: usize,
    subscribed: bool,
    data: Value,
) -> Vec<String> {
    let mut ids = Vec::new();
    let now = app.clock.now();
    let mut changes = ChangeSet::new();
    for i in 0..n {
        let email = EmailAddress::parse(&format!("{prefix}{i}@x.com")).expect("email");
        let c = Contact::new(
            &*app.clock,
            &app.ws(),
            email,
            subscribed,
            data.as_object().cloned().unwrap_or_default(),
            false,
            now,
        );
        ids.push(c.id.to_string());
        changes.push(Write::InsertContact(c));
    }
    app.engine.store.commit(changes).await.expect("seed");
    ids
}

pub(crate) async fn create(app: &TestApp, audience: Value) -> String {
    let res = app
        .post("/campaigns", campaign_body(audience))
        .await
        .expect(201);
    assert_eq!(res.body["success"], json!(true));
    res.body["data"]["id"].as_str().expect("id").to_string()
}

pub(crate) async fn drain(app: &TestApp) {
    for _ in 0..50 {
        if app.run_jobs().await == 0 {
            return;
        }
    }
}

pub(crate) fn per_recipient(app: &TestApp) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for m in app.transport.messages() {
        *counts.entry(m.to.email.clone()).or_insert(0) += 1;
    }
    counts
}

#[tokio::test]
async fn create_validates_and_answers_in_the_envelope() {
    let app = TestApp::new().await;
    let res = app
        .post("/campaigns", json!({}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(
        res.error_fields(),
        ["name", "subject", "body", "from", "audienceType"]
    );
    app.post(
        "/campaigns",
        campaign_body(json!({"audienceType": "EVERYONE"})),
    )
    .await
    .expect_error(422, "VALIDATION_ERROR");
    app.post(
        "/campaigns",
        campaign_body(json!({"audienceType": "SEGMENT"})),
    )
    .await
    .expect_error(400, "BAD_REQUEST");
    app.post(
        "/campaigns",
        campaign_body(json!({"audienceType": "SEGMENT", "segmentId": "nope"})),
    )
    .await
    .expect_error(404, "SEGMENT_NOT_FOUND");
    app.post(
        "/campaigns",
        campaign_body(json!({"audienceType": "FILTERED"})),
    )
    .await
    .expect_error(400, "BAD_REQUEST");
    let res = app
        .post("/campaigns", campaign_body(json!({"audienceType": "FILTERED", "audienceCondition": {"groups": [{"filters": [{"field": "data.x", "operator": "nope"}]}]}})))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(
        res.error_fields(),
        ["audienceCondition.groups.0.filters.0.operator"]
    );
    let mut body = campaign_body(json!({"audienceType": "ALL"}));
    body["from"] = json!("x@unverified.io");
    app.post("/campaigns", body)
        .await
        .expect_error(403, "DOMAIN_NOT_VERIFIED");

    let res = app
        .post("/campaigns", campaign_body(json!({"audienceType": "ALL"})))
        .await
        .expect(201);
    let c = &res.body["data"];
    assert_eq!(c["status"], json!("DRAFT"));
    for key in [
        "totalRecipients",
        "sentCount",
        "deliveredCount",
        "openedCount",
        "clickedCount",
        "bouncedCount",
    ] {
        assert_eq!(c[key], json!(0), "{key}");
    }
    assert_eq!(c["segment"], json!(null));
    assert_eq!(c["scheduledFor"], json!(null));
    assert!(c.get("version").is_none() && c.get("audienceUntilId").is_none());
    let id = c["id"].as_str().expect("id");
    let read = app.get(&format!("/campaigns/{id}")).await.expect(200);
    assert_eq!(read.body["success"], json!(true));
    assert_eq!(read.body["data"]["name"], json!("Autumn news"));
}

#[tokio::test]
async fn sending_now_mails_every_subscribed_active_contact_once() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"sendRatePerSecond": 100000}))
        .await;
    seed(&app, "in", 1203, true, json!({"name": "Reader"})).await;
    seed(&app, "out", 7, false, json!({})).await;
    let id = create(&app, json!({"audienceType": "ALL"})).await;
    let sent = app
        .post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .expect(200);
    assert_eq!(sent.body["data"]["status"], json!("SENDING"));
    assert!(sent.body["message"].as_str().is_some_and(|m| !m.is_empty()));
    // Contacts created after sending started are not part of this campaign.
    seed(&app, "later", 3, true, json!({})).await;
    drain(&app).await;
    let got = per_recipient(&app);
    assert_eq!(got.len(), 1203);
    assert!(got.values().all(|n| *n == 1));
    assert!(got.keys().all(|k| k.starts_with("in")));
    let m = app.transport.messages().into_iter().next().expect("one");
    assert_eq!(m.subject, "Hi Reader");
    assert_eq!(m.from.name.as_deref(), Some("Acme News"));
    let read = app.get(&format!("/campaigns/{id}")).await.expect(200);
    let c = &read.body["data"];
    assert_eq!(c["status"], json!("SENT"));
    assert_eq!(c["totalRecipients"], json!(1203));
    assert_eq!(c["sentCount"], json!(1203));
    assert!(c["sentAt"].is_string());
    let stats = app.get(&format!("/campaigns/{id}/stats")).await.expect(200);
    assert_eq!(stats.body["data"]["sentCount"], json!(1203));
    assert_eq!(stats.body["data"]["queuedCount"], json!(0));
    let events = app
        .get("/events?eventName=email.sent&limit=1")
        .await
        .expect(200);
    let d = &events.body["events"][0]["data"];
    assert_eq!(d["sourceType"], json!("CAMPAIGN"));
    assert_eq!(d["campaignId"], json!(id));
}

#[tokio::test]
async fn segment_and_filtered_audiences() {
    let app = TestApp::new().await;
    seed(&app, "pro", 4, true, json!({"plan": "pro"})).await;
    seed(&app, "free", 3, true, json!({"plan": "free"})).await;
    let cond = json!({"groups": [{"filters": [{"field": "data.plan", "operator": "equals", "value": "pro"}]}]});
    let seg = app
        .post("/segments", json!({"name": "Pro", "condition": cond}))
        .await
        .expect(201);
    let seg_id = seg.body["id"].as_str().expect("id");
    let by_segment = create(
        &app,
        json!({"audienceType": "SEGMENT", "segmentId": seg_id}),
    )
    .await;
    let read = app
        .get(&format!("/campaigns/{by_segment}"))
        .await
        .expect(200);
    assert_eq!(read.body["data"]["segment"]["id"], json!(seg_id));
    app.post(
        &format!("/campaigns/{by_segment}/send"),
        json!({"scheduledFor": null}),
    )
    .await
    .expect(200);
    drain(&app).await;
    assert_eq!(per_recipient(&app).len(), 4);
    // A segment used by an active campaign cannot be deleted; one that is done can.
    let filtered = create(&app, json!({"audienceType": "FILTERED", "audienceCondition": {"groups": [{"filters": [{"field": "data.plan", "operator": "equals", "value": "free"}]}]}})).await;
    app.post(&format!("/campaigns/{filtered}/send"), json!({}))
        .await
        .expect(200);
    drain(&app).await;
    assert_eq!(per_recipient(&app).len(), 7);
    app.delete(&format!("/segments/{seg_id}")).await.expect(204);
}

#[tokio::test]
async fn state_machine_refuses_what_it_must() {
    let app = TestApp::new().await;
    seed(&app, "a", 2, true, json!({})).await;
    let id = create(&app, json!({"audienceType": "ALL"})).await;
    app.post(&format!("/campaigns/{id}/cancel"), json!({}))
        .await
        .expect_error(400, "INVALID_STATE");
    let past = (app.clock.now() - chrono::Duration::minutes(1)).to_rfc3339();
    let res = app
        .post(
            &format!("/campaigns/{id}/send"),
            json!({"scheduledFor": past}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["scheduledFor"]);
    app.post(
        &format!("/campaigns/{id}/send"),
        json!({"scheduledFor": "tomorrow"}),
    )
    .await
    .expect_error(422, "VALIDATION_ERROR");
    app.call(
        Method::PUT,
        &format!("/campaigns/{id}"),
        Some(&app.sk.clone()),
        Some(json!({"subject": "New"})),
        &[],
    )
    .await
    .expect(200);
    app.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .expect(200);
    app.call(
        Method::PUT,
        &format!("/campaigns/{id}"),
        Some(&app.sk.clone()),
        Some(json!({"subject": "Late"})),
        &[],
    )
    .await
    .expect_error(400, "INVALID_STATE");
    app.delete(&format!("/campaigns/{id}"))
        .await
        .expect_error(400, "INVALID_STATE");
    app.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .expect_error(400, "INVALID_STATE");
    drain(&app).await;
    app.post(&format!("/campaigns/{id}/cancel"), json!({}))
        .await
        .expect_error(400, "INVALID_STATE");
    let draft = create(&app, json!({"audienceType": "ALL"})).await;
    let del = app.delete(&format!("/campaigns/{draft}")).await.expect(200);
    assert_eq!(del.body["success"], json!(true));
    app.get(&format!("/campaigns/{draft}"))
        .await
        .expect_error(404, "CAMPAIGN_NOT_FOUND");
    // No recipients: refused.
    let lonely = create(&app, json!({"audienceType": "FILTERED", "audienceCondition": {"groups": [{"filters": [{"field": "data.none", "operator": "exists"}]}]}})).await;
    app.post(&format!("/campaigns/{lonely}/send"), json!({}))
        .await
        .expect_error(400, "BAD_REQUEST");
}

#[tokio::test]
async fn list_filters_by_status() {
    let app = TestApp::new().await;
    seed(&app, "a", 1, true, json!({})).await;
    let a = create(&app, json!({"audienceType": "ALL"})).await;
    create(&app, json!({"audienceType": "ALL"})).await;
    app.post(&format!("/campaigns/{a}/send"), json!({}))
        .await
        .expect(200);
    let all = app.get("/campaigns").await.expect(200);
    assert_eq!(all.body["total"], json!(2));
    assert_eq!(all.body["page"], json!(1));
    let drafts = app.get("/campaigns?status=DRAFT").await.expect(200);
    assert_eq!(drafts.body["total"], json!(1));
    let res = app
        .get("/campaigns?status=LOST")
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["status"]);
    app.get("/campaigns?pageSize=101")
        .await
        .expect_error(422, "VALIDATION_ERROR");
}

#[tokio::test]
async fn scheduled_campaigns_fire_at_their_time_and_can_be_moved() {
    let app = TestApp::new().await;
    seed(&app, "s", 3, true, json!({})).await;
    let id = create(&app, json!({"audienceType": "ALL"})).await;
    let at = (app.clock.now() + chrono::Duration::hours(2)).to_rfc3339();
    let res = app
        .post(
            &format!("/campaigns/{id}/send"),
            json!({"scheduledFor": at}),
        )
        .await
        .expect(200);
    assert_eq!(res.body["data"]["status"], json!("SCHEDULED"));
    assert!(res.body["data"]["scheduledFor"].is_string());
    // Moved to one hour from now.
    let sooner = (app.clock.now() + chrono::Duration::hours(1)).to_rfc3339();
    app.post(
        &format!("/campaigns/{id}/send"),
        json!({"scheduledFor": sooner}),
    )
    .await
    .expect(200);
    drain(&app).await;
    assert!(app.transport.messages().is_empty());
    app.clock.advance(chrono::Duration::minutes(61));
    drain(&app).await;
    assert_eq!(per_recipient(&app).len(), 3);
    assert_eq!(
        app.get(&format!("/campaigns/{id}")).await.body["data"]["status"],
        json!("SENT")
    );
    // The stale job for the old time does nothing.
    app.clock.advance(chrono::Duration::hours(2));
    drain(&app).await;
    assert_eq!(app.transport.messages().len(), 3);
}

#[tokio::test]
async fn cancel_stops_what_was_not_handed_over() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"sendRatePerSecond": 5}))
        .await;
    seed(&app, "c", 20, true, json!({})).await;
    let id = create(&app, json!({"audienceType": "ALL"})).await;
    app.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .expect(200);
    drain(&app).await;
    let before = app.transport.messages().len();
    assert_eq!(before, 4, "campaign mail takes 4 of the 5 a second");
    let res = app
        .post(&format!("/campaigns/{id}/cancel"), json!({}))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["status"], json!("CANCELLED"));
    assert_eq!(res.body["message"], json!("Campaign cancelled"));
    for _ in 0..5 {
        app.clock.advance(chrono::Duration::seconds(1));
        drain(&app).await;
    }
    assert_eq!(app.transport.messages().len(), before);
    let stats = app.get(&format!("/campaigns/{id}/stats")).await.expect(200);
    assert_eq!(stats.body["data"]["cancelledCount"], json!(16));
    assert_eq!(stats.body["data"]["status"], json!("CANCELLED"));
}

#[tokio::test]
async fn contacts_who_unsubscribe_after_the_start_get_nothing() {
    let app = TestApp::new().await;
    // Campaign mail takes 2 of the 3 a second.
    app.set_workspace(&app.workspace_id, json!({"sendRatePerSecond": 3}))
        .await;
    seed(&app, "u", 6, true, json!({})).await;
    let id = create(&app, json!({"audienceType": "ALL"})).await;
    app.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .expect(200);
    drain(&app).await;
    let mailed: Vec<String> = app
        .transport
        .messages()
        .iter()
        .map(|m| m.to.email.clone())
        .collect();
    assert_eq!(mailed.len(), 2);
    let pending: Vec<String> = (0..6)
        .map(|i| format!("u{i}@x.com"))
        .filter(|e| !mailed.contains(e))
        .collect();
    app.post(
        "/contacts",
        json!({"email": pending[0], "subscribed": false}),
    )
    .await
    .expect(200);
    for _ in 0..5 {
        app.clock.advance(chrono::Duration::seconds(1));
        drain(&app).await;
    }
    let got = per_recipient(&app);
    assert_eq!(got.len(), 5);
    assert!(!got.contains_key(&pending[0]));
    assert_eq!(
        app.get(&format!("/campaigns/{id}")).await.body["data"]["status"],
        json!("SENT")
    );
}

#[tokio::test]
async fn a_worker_killed_mid_campaign_skips_nobody_and_mails_nobody_twice() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"sendRatePerSecond": 100000}))
        .await;
    // More than one expansion job's worth, so the worker dies in the middle of expanding.
    let audience = EXPANSION_BATCH * BATCHES_PER_JOB + 1100;
    seed(&app, "k", audience, true, json!({})).await;
    let id = create(&app, json!({"audienceType": "ALL"})).await;
    app.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .expect(200);
    // A first worker runs a few jobs, then claims a batch and dies holding the leases.
    for job in app
        .engine
        .jobs
        .claim(app.clock.now(), app.engine.settings.job_lease, 1)
        .await
        .expect("claim")
    {
        app.engine.run_job(&job).await.expect("run");
    }
    let held = app
        .engine
        .jobs
        .claim(app.clock.now(), app.engine.settings.job_lease, 300)
        .await
        .expect("claim");
    assert!(
        held.iter()
            .any(|job| matches!(job.payload, JobPayload::ExpandCampaign { .. })),
        "the dead worker held the next expansion batch: {:?}",
        held.iter().take(3).map(|j| &j.payload).collect::<Vec<_>>()
    );
    drop(held);
    // A new worker on the same store picks everything up once the leases expire.
    let restarted = app.restarted_engine().await;
    restarted.run_due_jobs().await.expect("run");
    app.clock.advance(chrono::Duration::seconds(
        app.engine.settings.job_lease.as_secs() as i64 + 1,
    ));
    drain(&app).await;
    let got = per_recipient(&app);
    assert_eq!(got.len(), audience, "nobody skipped");
    assert!(got.values().all(|n| *n == 1), "nobody mailed twice");
    let c = app.get(&format!("/campaigns/{id}")).await.expect(200);
    assert_eq!(c.body["data"]["totalRecipients"], json!(audience));
    assert_eq!(c.body["data"]["status"], json!("SENT"));
}

#[tokio::test]
async fn the_next_batch_is_claimed_before_the_deliveries_of_the_last() {
    let app = TestApp::new().await;
    // Three expansion jobs: two full ones and a short last one.
    let per_job = EXPANSION_BATCH * BATCHES_PER_JOB;
    let audience = 2 * per_job + 100;
    seed(&app, "p", audience, true, json!({})).await;
    let id = create(&app, json!({"audienceType": "ALL"})).await;
    app.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .expect(200);
    let mut kinds = Vec::new();
    for _ in 0..4 {
        app.clock.advance(chrono::Duration::seconds(1));
        let claimed = app
            .engine
            .jobs
            .claim(app.clock.now(), app.engine.settings.job_lease, 1)
            .await
            .expect("claim");
        let job = claimed.into_iter().next().expect("a job is due");
        kinds.push(match job.payload {
            JobPayload::ExpandCampaign { .. } => "expand",
            JobPayload::DeliverEmail { .. } => "deliver",
            _ => "other",
        });
        app.engine.run_job(&job).await.expect("run");
    }
    assert_eq!(kinds, ["expand", "expand", "expand", "deliver"]);
    let c = app.get(&format!("/campaigns/{id}")).await.expect(200);
    assert_eq!(c.body["data"]["totalRecipients"], json!(audience));
}

#[tokio::test]
async fn a_scheduled_campaign_survives_a_restart() {
    let app = TestApp::new().await;
    seed(&app, "r", 5, true, json!({})).await;
    let id = create(&app, json!({"audienceType": "ALL"})).await;
    let at = (app.clock.now() + chrono::Duration::minutes(30)).to_rfc3339();
    app.post(
        &format!("/campaigns/{id}/send"),
        json!({"scheduledFor": at}),
    )
    .await
    .expect(200);
    // "Restart": a new engine over the same database, clock and transport.
    let engine = app.restarted_engine().await;
    app.clock.advance(chrono::Duration::minutes(31));
    for _ in 0..20 {
        if engine.run_due_jobs().await.expect("run") == 0 {
            break;
        }
    }
    assert_eq!(per_recipient(&app).len(), 5);
    assert_eq!(
        app.get(&format!("/campaigns/{id}")).await.body["data"]["status"],
        json!("SENT")
    );
}

#[tokio::test]
async fn sending_checks_the_sender_again() {
    let app = TestApp::new().await;
    seed(&app, "s", 3, true, json!({})).await;
    app.admin(
        Method::POST,
        &format!("/admin/workspaces/{}/domains", app.workspace_id),
        Some(json!({"domain": "brand.test", "verified": true})),
    )
    .await
    .expect(201);
    let mut body = campaign_body(json!({"audienceType": "ALL"}));
    body["from"] = json!("news@brand.test");
    let id = app.post("/campaigns", body).await.expect(201).body["data"]["id"]
        .as_str()
        .expect("id")
        .to_string();

    // A key limited to example.com may neither change nor send a brand.test campaign.
    let scoped_sk = app.scoped_secret_key(&["example.com"]).await;
    let as_scoped = |method: Method, path: String, body: Option<Value>| {
        let sk = scoped_sk.clone();
        let app = &app;
        async move { app.call(method, &path, Some(&sk), body, &[]).await }
    };
    as_scoped(
        Method::PUT,
        format!("/campaigns/{id}"),
        Some(json!({"subject": "changed by another domain's key"})),
    )
    .await
    .expect_error(403, "FORBIDDEN");
    as_scoped(
        Method::POST,
        format!("/campaigns/{id}/send"),
        Some(json!({})),
    )
    .await
    .expect_error(403, "FORBIDDEN");

    // The domain is deleted while the campaign is a draft: sending it is refused.
    let domains = app.get("/domains").await.expect(200).body;
    let brand = domains["data"]
        .as_array()
        .and_then(|all| all.iter().find(|d| d["domain"] == "brand.test"))
        .and_then(|d| d["id"].as_str())
        .expect("brand.test")
        .to_string();
    app.delete(&format!("/domains/{brand}")).await.expect(204);
    let refused = app
        .post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .expect_error(403, "DOMAIN_NOT_VERIFIED");
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("brand.test")),
        "{}",
        refused.body
    );
    drain(&app).await;
    assert_eq!(app.transport.attempts().len(), 0, "nothing went out");
    let read = app.get(&format!("/campaigns/{id}")).await.expect(200);
    assert_eq!(read.body["data"]["status"], json!("DRAFT"));
}
