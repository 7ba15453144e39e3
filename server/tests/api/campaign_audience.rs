//! Who a campaign reaches: PENDING contacts are left out, unknown segments are refused, and
//! a segment in use by an active campaign cannot be deleted.

use axum::http::Method;
use posthorn_core::ports::Clock;
use serde_json::{json, Value};

use crate::campaigns::{campaign_body, create, drain, per_recipient, seed};
use crate::harness::TestApp;

fn plan_is(plan: &str) -> Value {
    json!({"groups": [{"filters": [{"field": "data.plan", "operator": "equals", "value": plan}]}]})
}

fn id_of(res: &crate::harness::Res) -> String {
    res.body["id"].as_str().expect("id").to_string()
}

/// A DYNAMIC segment "Pro" (`data.plan` is `pro`) and a campaign to it: (segment, campaign).
async fn pro_segment_campaign(app: &TestApp) -> (String, String) {
    let seg = app
        .post(
            "/segments",
            json!({"name": "Pro", "condition": plan_is("pro")}),
        )
        .await
        .expect(201);
    let seg_id = id_of(&seg);
    let id = create(app, json!({"audienceType": "SEGMENT", "segmentId": seg_id})).await;
    (seg_id, id)
}

#[tokio::test]
async fn pending_contacts_get_no_campaign_mail() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"activeContactLimit": 2}))
        .await;
    for email in ["a1@x.com", "a2@x.com"] {
        let c = app
            .post(
                "/contacts",
                json!({"email": email, "data": {"plan": "pro"}}),
            )
            .await
            .expect(201);
        assert_eq!(c.body["status"], json!("ACTIVE"));
    }
    // At the limit: one PENDING contact created directly, one by tracking an event.
    let p1 = app
        .post(
            "/contacts",
            json!({"email": "p1@x.com", "data": {"plan": "pro"}}),
        )
        .await
        .expect(201);
    assert_eq!(p1.body["status"], json!("PENDING"));
    assert_eq!(p1.body["subscribed"], json!(true));
    let tracked = app
        .post(
            "/v1/track",
            json!({"email": "p2@x.com", "event": "signup", "data": {"plan": "pro"}}),
        )
        .await
        .expect(200);
    let p2 = tracked.body["data"]["contact"].as_str().expect("id");
    let p2 = app.get(&format!("/contacts/{p2}")).await.expect(200);
    assert_eq!(p2.body["status"], json!("PENDING"));
    assert_eq!(p2.body["subscribed"], json!(true));

    // Every kind of audience leaves them out.
    let seg = app
        .post(
            "/segments",
            json!({"name": "Pro", "condition": plan_is("pro")}),
        )
        .await
        .expect(201);
    let seg_id = id_of(&seg);
    let audiences = [
        json!({"audienceType": "ALL"}),
        json!({"audienceType": "SEGMENT", "segmentId": seg_id}),
        json!({"audienceType": "FILTERED", "audienceCondition": plan_is("pro")}),
    ];
    let mut ids = Vec::new();
    for audience in audiences {
        let id = create(&app, audience).await;
        app.post(&format!("/campaigns/{id}/send"), json!({}))
            .await
            .expect(200);
        ids.push(id);
    }
    drain(&app).await;
    let got = per_recipient(&app);
    assert_eq!(
        got,
        [("a1@x.com".to_string(), 3), ("a2@x.com".to_string(), 3)]
            .into_iter()
            .collect::<std::collections::HashMap<_, _>>(),
        "only ACTIVE contacts are mailed, once per campaign"
    );
    for id in &ids {
        let c = app.get(&format!("/campaigns/{id}")).await.expect(200);
        assert_eq!(c.body["data"]["status"], json!("SENT"), "{id}");
        assert_eq!(c.body["data"]["totalRecipients"], json!(2), "{id}");
        assert_eq!(c.body["data"]["sentCount"], json!(2), "{id}");
    }

    // An audience of PENDING contacts only has no recipients: the send is refused.
    let only_pending = create(
        &app,
        json!({"audienceType": "FILTERED", "audienceCondition": {"groups": [{"filters": [
            {"field": "email", "operator": "contains", "value": "p"}
        ]}]}}),
    )
    .await;
    app.post(&format!("/campaigns/{only_pending}/send"), json!({}))
        .await
        .expect_error(400, "BAD_REQUEST");
    // Transactional mail still reaches a PENDING contact.
    app.send_one("p1@x.com").await;
    app.run_jobs().await;
    assert_eq!(app.transport.messages_to("p1@x.com").len(), 1);
}

#[tokio::test]
async fn an_unknown_segment_in_the_audience_is_refused() {
    let app = TestApp::new().await;
    seed(&app, "u", 2, true, json!({"plan": "pro"})).await;
    let unknown = "00000000-0000-7000-8000-000000000000";
    // Create: an unknown segment id, and one of another workspace, are 404s.
    app.post(
        "/campaigns",
        campaign_body(json!({"audienceType": "SEGMENT", "segmentId": unknown})),
    )
    .await
    .expect_error(404, "SEGMENT_NOT_FOUND");
    let (_, _, other) = app.new_workspace("Other").await;
    let theirs = app
        .call(
            Method::POST,
            "/segments",
            Some(&other),
            Some(json!({"name": "Theirs", "condition": plan_is("pro")})),
            &[],
        )
        .await
        .expect(201);
    let theirs = id_of(&theirs);
    app.post(
        "/campaigns",
        campaign_body(json!({"audienceType": "SEGMENT", "segmentId": theirs})),
    )
    .await
    .expect_error(404, "SEGMENT_NOT_FOUND");
    // A FILTERED condition naming an unknown segment: 422 on the field.
    let res = app
        .post(
            "/campaigns",
            campaign_body(
                json!({"audienceType": "FILTERED", "audienceCondition": {"groups": [{"filters": [
                    {"field": format!("segment.{unknown}"), "operator": "memberOfSegment"}
                ]}]}}),
            ),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["audienceCondition"]);
    assert_eq!(
        res.body["error"]["errors"][0]["code"],
        json!("unknown_segment")
    );

    // A FILTERED condition naming a DYNAMIC segment without trackMembership: it keeps no
    // members to match, so it is refused as a segment's condition would be (not accepted
    // and then sent to nobody).
    let untracked = app
        .post(
            "/segments",
            json!({"name": "Untracked", "condition": plan_is("pro")}),
        )
        .await
        .expect(201);
    let untracked = id_of(&untracked);
    let names_untracked = json!({"audienceType": "FILTERED", "audienceCondition": {"groups": [{"filters": [
        {"field": format!("segment.{untracked}"), "operator": "memberOfSegment"}
    ]}]}});
    let res = app
        .post("/campaigns", campaign_body(names_untracked.clone()))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["audienceCondition"]);
    assert_eq!(
        res.body["error"]["errors"][0]["code"],
        json!("segment_not_tracked")
    );
    app.patch(
        &format!("/segments/{untracked}"),
        json!({"trackMembership": true}),
    )
    .await
    .expect(200);
    drain(&app).await;
    let tracked_audience = create(&app, names_untracked).await;

    // Update: switching a draft to an unknown segment is a 404 and changes nothing.
    let id = create(&app, json!({"audienceType": "ALL"})).await;
    let sk = app.sk.clone();
    app.call(
        Method::PUT,
        &format!("/campaigns/{id}"),
        Some(&sk),
        Some(json!({"audienceType": "SEGMENT", "segmentId": unknown})),
        &[],
    )
    .await
    .expect_error(404, "SEGMENT_NOT_FOUND");
    let read = app.get(&format!("/campaigns/{id}")).await.expect(200);
    assert_eq!(read.body["data"]["audienceType"], json!("ALL"));

    // A draft whose segment was deleted since: it reads with no segment, and sending it
    // is refused with a message that says what to do; nobody is mailed.
    let (seg_id, draft) = pro_segment_campaign(&app).await;
    app.delete(&format!("/segments/{seg_id}")).await.expect(204);
    let read = app.get(&format!("/campaigns/{draft}")).await.expect(200);
    assert_eq!(read.body["data"]["segment"], json!(null));
    let res = app
        .post(&format!("/campaigns/{draft}/send"), json!({}))
        .await
        .expect_error(400, "BAD_REQUEST");
    assert!(res.body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("segment")));
    // The same for a FILTERED draft whose named segment was deleted since.
    app.delete(&format!("/segments/{untracked}"))
        .await
        .expect(204);
    let res = app
        .post(&format!("/campaigns/{tracked_audience}/send"), json!({}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(
        res.body["error"]["errors"][0]["code"],
        json!("unknown_segment")
    );
    drain(&app).await;
    assert!(app.transport.messages().is_empty());
    for id in [draft, tracked_audience] {
        assert_eq!(
            app.get(&format!("/campaigns/{id}")).await.body["data"]["status"],
            json!("DRAFT")
        );
    }
}

#[tokio::test]
async fn a_segment_used_by_an_active_campaign_cannot_be_deleted() {
    let app = TestApp::new().await;
    seed(&app, "d", 3, true, json!({"plan": "pro"})).await;
    let segment = |name: &str| {
        let app = &app;
        let name = name.to_string();
        async move {
            let res = app
                .post(
                    "/segments",
                    json!({"name": name, "condition": plan_is("pro")}),
                )
                .await
                .expect(201);
            id_of(&res)
        }
    };

    // SCHEDULED: 409 until the campaign is cancelled.
    let scheduled_seg = segment("Scheduled").await;
    let scheduled = create(
        &app,
        json!({"audienceType": "SEGMENT", "segmentId": scheduled_seg}),
    )
    .await;
    let at = (app.clock.now() + chrono::Duration::hours(1)).to_rfc3339();
    app.post(
        &format!("/campaigns/{scheduled}/send"),
        json!({"scheduledFor": at}),
    )
    .await
    .expect(200);
    let res = app
        .delete(&format!("/segments/{scheduled_seg}"))
        .await
        .expect_error(409, "CONFLICT");
    assert!(res.body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains(&scheduled)));
    app.get(&format!("/segments/{scheduled_seg}"))
        .await
        .expect(200);
    app.post(&format!("/campaigns/{scheduled}/cancel"), json!({}))
        .await
        .expect(200);
    app.delete(&format!("/segments/{scheduled_seg}"))
        .await
        .expect(204);

    // SENDING: 409 until it is SENT.
    let sending_seg = segment("Sending").await;
    let sending = create(
        &app,
        json!({"audienceType": "SEGMENT", "segmentId": sending_seg}),
    )
    .await;
    let res = app
        .post(&format!("/campaigns/{sending}/send"), json!({}))
        .await
        .expect(200);
    assert_eq!(res.body["data"]["status"], json!("SENDING"));
    app.delete(&format!("/segments/{sending_seg}"))
        .await
        .expect_error(409, "CONFLICT");
    drain(&app).await;
    assert_eq!(
        app.get(&format!("/campaigns/{sending}")).await.body["data"]["status"],
        json!("SENT")
    );
    assert_eq!(per_recipient(&app).len(), 3);
    app.delete(&format!("/segments/{sending_seg}"))
        .await
        .expect(204);

    // A FILTERED campaign whose condition names the segment uses it just as well.
    let named_seg = app
        .post("/segments", json!({"name": "Named", "type": "STATIC"}))
        .await
        .expect(201);
    let named_seg = id_of(&named_seg);
    app.post(
        &format!("/segments/{named_seg}/members"),
        json!({"emails": ["d0@x.com"]}),
    )
    .await
    .expect(200);
    let filtered = create(
        &app,
        json!({"audienceType": "FILTERED", "audienceCondition": {"groups": [{"filters": [
            {"field": format!("segment.{named_seg}"), "operator": "memberOfSegment"}
        ]}]}}),
    )
    .await;
    app.post(
        &format!("/campaigns/{filtered}/send"),
        json!({"scheduledFor": at}),
    )
    .await
    .expect(200);
    app.delete(&format!("/segments/{named_seg}"))
        .await
        .expect_error(409, "CONFLICT");

    // A DRAFT (or a finished campaign) does not hold its segment.
    let draft_seg = segment("Draft").await;
    create(
        &app,
        json!({"audienceType": "SEGMENT", "segmentId": draft_seg}),
    )
    .await;
    app.delete(&format!("/segments/{draft_seg}"))
        .await
        .expect(204);
}

#[tokio::test]
async fn the_audience_field_a_type_does_not_use_is_not_kept() {
    let app = TestApp::new().await;
    seed(&app, "u", 2, true, json!({"plan": "pro"})).await;
    let seg = app
        .post(
            "/segments",
            json!({"name": "Pro", "condition": plan_is("pro")}),
        )
        .await
        .expect(201);
    let seg_id = id_of(&seg);
    let made = app
        .post(
            "/campaigns",
            campaign_body(json!({"audienceType": "ALL", "segmentId": seg_id, "audienceCondition": plan_is("free")})),
        )
        .await
        .expect(201);
    let data = &made.body["data"];
    assert_eq!(data["segmentId"], Value::Null, "{data}");
    assert_eq!(data["segment"], Value::Null, "{data}");
    assert_eq!(data["audienceCondition"], Value::Null, "{data}");
    let id = data["id"].as_str().expect("id").to_string();
    let later = (app.clock.now() + chrono::Duration::hours(1)).to_rfc3339();
    app.post(
        &format!("/campaigns/{id}/send"),
        json!({"scheduledFor": later}),
    )
    .await
    .expect(200);
    // The scheduled ALL campaign does not hold the segment it never used.
    app.delete(&format!("/segments/{seg_id}")).await.expect(204);
    // Switched from FILTERED to ALL by PUT, the old condition goes too.
    let filtered = create(
        &app,
        json!({"audienceType": "FILTERED", "audienceCondition": plan_is("pro")}),
    )
    .await;
    let put = app
        .call(
            Method::PUT,
            &format!("/campaigns/{filtered}"),
            Some(&app.sk),
            Some(json!({"audienceType": "ALL"})),
            &[],
        )
        .await
        .expect(200);
    assert_eq!(
        put.body["data"]["audienceCondition"],
        Value::Null,
        "{}",
        put.body
    );
}

#[tokio::test]
async fn a_segment_edited_while_its_campaign_sends_does_not_change_who_it_reaches() {
    use posthorn_core::jobs::{BATCHES_PER_JOB, EXPANSION_BATCH};
    let app = TestApp::new().await;
    let audience = EXPANSION_BATCH * BATCHES_PER_JOB + 100;
    seed(&app, "f", audience, true, json!({"plan": "pro"})).await;
    let (seg_id, id) = pro_segment_campaign(&app).await;
    app.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .expect(200);
    // The first expansion job takes all but the last 100; then the segment is edited.
    let claimed = app
        .engine
        .jobs
        .claim(app.clock.now(), app.engine.settings.job_lease, 1)
        .await
        .expect("claim");
    let job = claimed.into_iter().next().expect("the expansion is due");
    app.engine.run_job(&job).await.expect("run");
    app.patch(
        &format!("/segments/{seg_id}"),
        json!({"condition": plan_is("enterprise")}),
    )
    .await
    .expect(200);
    drain(&app).await;
    let c = app.get(&format!("/campaigns/{id}")).await.expect(200);
    assert_eq!(
        c.body["data"]["totalRecipients"],
        json!(audience),
        "the last 100 are reached too: {}",
        c.body
    );
}
