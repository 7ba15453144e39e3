use posthorn_core::ports::Clock;
use serde_json::{json, Value};

use crate::harness::TestApp;

fn names(events: &Value) -> Vec<String> {
    events["events"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|e| e["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn plan_is(plan: &str) -> Value {
    json!({"logic": "AND", "groups": [{"filters": [{"field": "data.plan", "operator": "equals", "value": plan}]}]})
}

async fn contact(app: &TestApp, email: &str, data: Value) -> String {
    let res = app
        .post("/contacts", json!({"email": email, "data": data}))
        .await;
    assert!(res.status == 200 || res.status == 201, "{}", res.body);
    res.body["id"].as_str().expect("id").to_string()
}

#[tokio::test]
async fn dynamic_segments_count_and_list_their_members() {
    let app = TestApp::new().await;
    for i in 0..5 {
        contact(&app, &format!("pro{i}@x.com"), json!({"plan": "pro"})).await;
    }
    contact(&app, "free@x.com", json!({"plan": "free"})).await;
    let created = app
        .post(
            "/segments",
            json!({"name": "Pro users", "condition": plan_is("pro")}),
        )
        .await
        .expect(201);
    let s = &created.body;
    assert_eq!(s["type"], json!("DYNAMIC"));
    assert_eq!(s["memberCount"], json!(5));
    assert_eq!(s["trackMembership"], json!(false));
    assert_eq!(s["description"], json!(null));
    assert_eq!(s["projectId"], json!(app.workspace_id));
    assert_eq!(
        s["condition"]["groups"][0]["filters"][0]["field"],
        json!("data.plan")
    );
    let id = s["id"].as_str().expect("id");
    contact(&app, "pro9@x.com", json!({"plan": "pro"})).await;
    assert_eq!(
        app.get(&format!("/segments/{id}")).await.expect(200).body["memberCount"],
        json!(6),
        "correct whenever read"
    );
    let page = app
        .get(&format!("/segments/{id}/contacts?pageSize=4"))
        .await
        .expect(200);
    assert_eq!(page.body["total"], json!(6));
    assert_eq!(page.body["totalPages"], json!(2));
    assert_eq!(page.body["data"].as_array().map(Vec::len), Some(4));
    let page2 = app
        .get(&format!("/segments/{id}/contacts?pageSize=4&page=2"))
        .await
        .expect(200);
    assert_eq!(page2.body["data"].as_array().map(Vec::len), Some(2));
    let list = app.get("/segments").await.expect(200);
    assert_eq!(list.body["total"], json!(1));
    assert_eq!(list.body["data"][0]["memberCount"], json!(6));
}

#[tokio::test]
async fn invalid_conditions_name_the_path() {
    let app = TestApp::new().await;
    let res = app
        .post("/segments", json!({}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["name", "condition"]);
    let bad = json!({"name": "x", "condition": {"logic": "XOR", "groups": [{"filters": [
        {"field": "data.plan", "operator": "sortOf", "value": 1},
        {"field": "nope", "operator": "equals", "value": 1},
        {"field": "createdAt", "operator": "within", "value": 3}
    ]}]}});
    let res = app
        .post("/segments", bad)
        .await
        .expect_error(422, "VALIDATION_ERROR");
    let fields = res.error_fields();
    for f in [
        "condition.logic",
        "condition.groups.0.filters.0.operator",
        "condition.groups.0.filters.1.field",
        "condition.groups.0.filters.2.unit",
    ] {
        assert!(fields.iter().any(|x| x == f), "{f} missing from {fields:?}");
    }
    let res = app
        .post("/segments", json!({"name": "x", "condition": {"groups": [{"filters": [{"field": "segment.00000000-0000-7000-8000-000000000000", "operator": "memberOfSegment"}]}]}}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["condition"]);
    app.post(
        "/segments",
        json!({"name": "x", "type": "SOMETIMES", "condition": plan_is("a")}),
    )
    .await
    .expect_error(422, "VALIDATION_ERROR");
}

#[tokio::test]
async fn a_segment_cannot_refer_to_itself() {
    let app = TestApp::new().await;
    let a = app
        .post("/segments", json!({"name": "A", "type": "STATIC"}))
        .await
        .expect(201);
    let a_id = a.body["id"].as_str().expect("id").to_string();
    let me = json!({"groups": [{"filters": [{"field": format!("segment.{a_id}"), "operator": "memberOfSegment"}]}]});
    let res = app
        .patch(&format!("/segments/{a_id}"), json!({"condition": me}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(
        res.body["error"]["errors"][0]["code"],
        json!("segment_cycle")
    );
    // Referring to another STATIC segment is fine.
    let b = app
        .post("/segments", json!({"name": "B", "condition": me}))
        .await
        .expect(201);
    assert_eq!(b.body["memberCount"], json!(0));
    // And B referring back to ... A referring to B is a cycle.
    let b_id = b.body["id"].as_str().expect("id").to_string();
    let to_b = json!({"groups": [{"filters": [{"field": format!("segment.{b_id}"), "operator": "memberOfSegment"}]}]});
    app.patch(
        &format!("/segments/{b_id}"),
        json!({"trackMembership": true}),
    )
    .await
    .expect(200);
    app.patch(&format!("/segments/{a_id}"), json!({"condition": to_b}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
}

#[tokio::test]
async fn static_segments_take_members_by_email() {
    let app = TestApp::new().await;
    let a = contact(&app, "a@x.com", json!({})).await;
    contact(&app, "b@x.com", json!({})).await;
    let seg = app
        .post(
            "/segments",
            json!({"name": "Beta testers", "type": "STATIC"}),
        )
        .await
        .expect(201);
    let id = seg.body["id"].as_str().expect("id").to_string();
    let res = app
        .post(
            &format!("/segments/{id}/members"),
            json!({"emails": ["A@x.com", "b@x.com", "ghost@x.com"]}),
        )
        .await
        .expect(200);
    assert_eq!(res.body, json!({"added": 2, "notFound": ["ghost@x.com"]}));
    // Adding again is harmless and counts the matches again.
    app.post(
        &format!("/segments/{id}/members"),
        json!({"emails": ["a@x.com"]}),
    )
    .await
    .expect(200);
    assert_eq!(
        app.get(&format!("/segments/{id}")).await.body["memberCount"],
        json!(2)
    );
    let created = app
        .post(
            &format!("/segments/{id}/members"),
            json!({"emails": ["new@x.com"], "createMissing": true}),
        )
        .await
        .expect(200);
    assert_eq!(
        created.body,
        json!({"added": 1, "notFound": [], "created": 1})
    );
    let members = app
        .get(&format!("/segments/{id}/contacts"))
        .await
        .expect(200);
    assert_eq!(members.body["total"], json!(3));
    let removed = app
        .call(
            axum::http::Method::DELETE,
            &format!("/segments/{id}/members"),
            Some(&app.sk.clone()),
            Some(json!({"emails": ["a@x.com", "ghost@x.com"]})),
            &[],
        )
        .await
        .expect(200);
    assert_eq!(removed.body, json!({"removed": 1}));
    assert_eq!(
        app.get(&format!("/segments/{id}")).await.body["memberCount"],
        json!(2)
    );
    // Deleting a contact removes its memberships.
    let b = app.get("/contacts?search=b@x.com").await.body["data"][0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    app.delete(&format!("/contacts/{b}")).await.expect(204);
    assert_eq!(
        app.get(&format!("/segments/{id}")).await.body["memberCount"],
        json!(1)
    );
    let _ = a;
}

#[tokio::test]
async fn member_requests_are_validated() {
    let app = TestApp::new().await;
    let dynamic = app
        .post(
            "/segments",
            json!({"name": "D", "condition": plan_is("pro")}),
        )
        .await
        .expect(201);
    let did = dynamic.body["id"].as_str().expect("id");
    app.post(
        &format!("/segments/{did}/members"),
        json!({"emails": ["a@x.com"]}),
    )
    .await
    .expect_error(400, "INVALID_STATE");
    let st = app
        .post("/segments", json!({"name": "S", "type": "STATIC"}))
        .await
        .expect(201);
    let sid = st.body["id"].as_str().expect("id");
    let res = app
        .post(&format!("/segments/{sid}/members"), json!({"emails": []}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["emails"]);
    let many: Vec<String> = (0..501).map(|i| format!("u{i}@x.com")).collect();
    app.post(&format!("/segments/{sid}/members"), json!({"emails": many}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    let five_hundred: Vec<String> = (0..500).map(|i| format!("u{i}@x.com")).collect();
    let ok = app
        .post(
            &format!("/segments/{sid}/members"),
            json!({"emails": five_hundred}),
        )
        .await
        .expect(200);
    assert_eq!(ok.body["notFound"].as_array().map(Vec::len), Some(500));
    let res = app
        .post(
            &format!("/segments/{sid}/members"),
            json!({"emails": ["ok@x.com", "bad", 3]}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["emails.1", "emails.2"]);
    app.post("/segments/nope/members", json!({"emails": ["a@x.com"]}))
        .await
        .expect_error(404, "SEGMENT_NOT_FOUND");
}

#[tokio::test]
async fn segments_update_and_delete() {
    let app = TestApp::new().await;
    let s = app
        .post(
            "/segments",
            json!({"name": "Old", "condition": plan_is("pro"), "description": "d"}),
        )
        .await
        .expect(201);
    let id = s.body["id"].as_str().expect("id");
    let p = app
        .patch(
            &format!("/segments/{id}"),
            json!({"name": "New", "description": null, "condition": plan_is("free")}),
        )
        .await
        .expect(200);
    assert_eq!(p.body["name"], json!("New"));
    assert_eq!(p.body["description"], json!(null));
    assert_eq!(
        p.body["condition"]["groups"][0]["filters"][0]["value"],
        json!("free")
    );
    app.patch(&format!("/segments/{id}"), json!({"type": "STATIC"}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    app.delete(&format!("/segments/{id}")).await.expect(204);
    app.get(&format!("/segments/{id}"))
        .await
        .expect_error(404, "SEGMENT_NOT_FOUND");
    for bad in ["page=0", "pageSize=101", "pageSize=x"] {
        app.get(&format!("/segments?{bad}"))
            .await
            .expect_error(422, "VALIDATION_ERROR");
    }
}

#[tokio::test]
async fn tracked_segments_emit_entry_and_exit_once_per_transition() {
    let app = TestApp::new().await;
    let early = contact(&app, "early@x.com", json!({"plan": "pro"})).await;
    let s = app
        .post(
            "/segments",
            json!({"name": "VIP Customers!", "condition": plan_is("pro"), "trackMembership": true}),
        )
        .await
        .expect(201);
    let id = s.body["id"].as_str().expect("id").to_string();
    app.run_jobs().await;
    // The first snapshot is quiet: the existing member did not "enter".
    assert!(
        names(&app.get(&format!("/events?contactId={early}")).await.body)
            .iter()
            .all(|n| !n.starts_with("segment."))
    );

    let c = contact(&app, "late@x.com", json!({"plan": "free"})).await;
    app.run_jobs().await;
    app.post(
        "/contacts",
        json!({"email": "late@x.com", "data": {"plan": "pro"}}),
    )
    .await
    .expect(200);
    app.post(
        "/contacts",
        json!({"email": "late@x.com", "data": {"seen": 1}}),
    )
    .await
    .expect(200);
    app.run_jobs().await;
    app.run_jobs().await;
    app.post(
        "/v1/track",
        json!({"email": "late@x.com", "event": "upgrade", "data": {"plan": "free"}}),
    )
    .await
    .expect(200);
    app.run_jobs().await;
    let events = app.get(&format!("/events?contactId={c}")).await.expect(200);
    let seg_events: Vec<_> = names(&events.body)
        .into_iter()
        .filter(|n| n.starts_with("segment."))
        .collect();
    assert_eq!(
        seg_events,
        ["segment.vip-customers.exit", "segment.vip-customers.entry"]
    );
    let entry = app
        .get("/events?eventName=segment.vip-customers.entry")
        .await
        .expect(200);
    assert_eq!(
        entry.body["events"][0]["data"],
        json!({"segmentId": id, "segmentName": "VIP Customers!"})
    );
    // Re-running the jobs changes nothing.
    app.run_jobs().await;
    let again = app.get(&format!("/events?contactId={c}")).await.expect(200);
    assert_eq!(
        names(&again.body)
            .iter()
            .filter(|n| n.starts_with("segment."))
            .count(),
        2
    );
}

#[tokio::test]
async fn time_based_segments_are_swept() {
    let app = TestApp::new().await;
    let cond = json!({"groups": [{"filters": [{"field": "event.login", "operator": "triggeredWithin", "value": 1, "unit": "hours"}]}]});
    app.post(
        "/segments",
        json!({"name": "Active", "condition": cond, "trackMembership": true}),
    )
    .await
    .expect(201);
    app.run_jobs().await;
    let t = app
        .post("/v1/track", json!({"email": "u@x.com", "event": "login"}))
        .await
        .expect(200);
    let id = t.body["data"]["contact"].as_str().expect("id").to_string();
    app.run_jobs().await;
    app.run_jobs().await;
    app.clock.advance(chrono::Duration::minutes(61));
    app.engine
        .sweep_time_based_segments(&app.ws())
        .await
        .expect("sweep");
    app.run_jobs().await;
    let events = names(&app.get(&format!("/events?contactId={id}")).await.body);
    assert_eq!(
        events
            .iter()
            .filter(|n| n.starts_with("segment.active."))
            .collect::<Vec<_>>(),
        ["segment.active.exit", "segment.active.entry"]
    );
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

/// The `segment.buyers.*` events of the workspace, oldest first, as (name, contact id).
async fn buyer_events(app: &TestApp) -> Vec<(String, String)> {
    let mut events: Vec<(String, String)> = app.get("/events?limit=1000").await.expect(200).body
        ["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| {
            let name = e["name"].as_str()?;
            name.starts_with("segment.buyers.").then(|| {
                (
                    name.to_string(),
                    e["contactId"].as_str().unwrap_or_default().to_string(),
                )
            })
        })
        .collect();
    events.reverse();
    events
}

#[tokio::test]
async fn track_membership_switched_on_and_off_by_patch() {
    let app = TestApp::new().await;
    let a = contact(&app, "a@x.com", json!({"plan": "pro"})).await;
    contact(&app, "b@x.com", json!({"plan": "free"})).await;
    let s = app
        .post(
            "/segments",
            json!({"name": "Buyers", "condition": plan_is("pro")}),
        )
        .await
        .expect(201);
    assert_eq!(s.body["trackMembership"], json!(false));
    let id = s.body["id"].as_str().expect("id").to_string();
    // Untracked, it cannot be referred to by another segment.
    let refers = json!({"name": "Refers", "condition": {"groups": [{"filters": [
        {"field": format!("segment.{id}"), "operator": "memberOfSegment"}
    ]}]}});
    let res = app
        .post("/segments", refers.clone())
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(
        res.body["error"]["errors"][0]["code"],
        json!("segment_not_tracked")
    );
    // Untracked: b entering emits nothing.
    contact(&app, "b@x.com", json!({"plan": "pro"})).await;
    settle(&app).await;
    assert_eq!(buyer_events(&app).await, []);

    // Switched on: the answer says so, and the switch itself is quiet (a and b were
    // already members; they did not "enter").
    let on = app
        .patch(&format!("/segments/{id}"), json!({"trackMembership": true}))
        .await
        .expect(200);
    assert_eq!(on.body["trackMembership"], json!(true));
    assert_eq!(on.body["memberCount"], json!(2));
    settle(&app).await;
    assert_eq!(buyer_events(&app).await, []);
    assert_eq!(
        app.get(&format!("/segments/{id}")).await.body["trackMembership"],
        json!(true)
    );
    // Now c entering and a leaving are announced, once each.
    let c = contact(&app, "c@x.com", json!({"plan": "pro"})).await;
    settle(&app).await;
    contact(&app, "a@x.com", json!({"plan": "free"})).await;
    settle(&app).await;
    assert_eq!(
        buyer_events(&app).await,
        [
            ("segment.buyers.entry".to_string(), c.clone()),
            ("segment.buyers.exit".to_string(), a.clone()),
        ]
    );
    let members = app
        .get(&format!("/segments/{id}/contacts"))
        .await
        .expect(200);
    assert_eq!(members.body["total"], json!(2));
    // Tracked, another segment may refer to it (and sees its members); while it does,
    // tracking cannot be switched off, which would empty the referring segment silently.
    let referring = app.post("/segments", refers).await.expect(201);
    assert_eq!(referring.body["memberCount"], json!(2));
    let referring = referring.body["id"].as_str().expect("id").to_string();
    let res = app
        .patch(
            &format!("/segments/{id}"),
            json!({"trackMembership": false}),
        )
        .await
        .expect_error(409, "CONFLICT");
    assert!(res.body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains(&referring)));
    assert_eq!(
        app.get(&format!("/segments/{referring}")).await.body["memberCount"],
        json!(2)
    );
    app.delete(&format!("/segments/{referring}"))
        .await
        .expect(204);
    // So does a scheduled campaign whose audience names it.
    let campaign = app
        .post(
            "/campaigns",
            crate::campaigns::campaign_body(
                json!({"audienceType": "FILTERED", "audienceCondition": {"groups": [{"filters": [
                    {"field": format!("segment.{id}"), "operator": "memberOfSegment"}
                ]}]}}),
            ),
        )
        .await
        .expect(201);
    let campaign = campaign.body["data"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let at = (app.clock.now() + chrono::Duration::hours(1)).to_rfc3339();
    app.post(
        &format!("/campaigns/{campaign}/send"),
        json!({"scheduledFor": at}),
    )
    .await
    .expect(200);
    app.patch(
        &format!("/segments/{id}"),
        json!({"trackMembership": false}),
    )
    .await
    .expect_error(409, "CONFLICT");
    app.post(&format!("/campaigns/{campaign}/cancel"), json!({}))
        .await
        .expect(200);

    // Switched off: quiet again, whoever moves.
    let off = app
        .patch(
            &format!("/segments/{id}"),
            json!({"trackMembership": false}),
        )
        .await
        .expect(200);
    assert_eq!(off.body["trackMembership"], json!(false));
    settle(&app).await;
    contact(&app, "b@x.com", json!({"plan": "free"})).await;
    contact(&app, "d@x.com", json!({"plan": "pro"})).await;
    settle(&app).await;
    assert_eq!(buyer_events(&app).await.len(), 2, "no events once off");
    // Membership itself is still computed.
    assert_eq!(
        app.get(&format!("/segments/{id}")).await.body["memberCount"],
        json!(2)
    );
    app.patch(
        &format!("/segments/{id}"),
        json!({"trackMembership": "yes"}),
    )
    .await
    .expect_error(422, "VALIDATION_ERROR");
}

#[tokio::test]
async fn a_send_to_a_new_address_enters_tracked_segments() {
    let app = TestApp::new().await;
    let unsubscribed = json!({"groups": [{"filters": [
        {"field": "subscribed", "operator": "equals", "value": false}
    ]}]});
    app.post(
        "/segments",
        json!({"name": "Not subscribed", "condition": unsubscribed, "trackMembership": true}),
    )
    .await
    .expect(201);
    app.run_jobs().await;
    // A send makes its new recipients unsubscribed contacts: they enter the segment.
    let sent = app
        .post(
            "/v1/send",
            crate::harness::send_body(json!(["first@x.com", "second@x.com"])),
        )
        .await
        .expect(200);
    app.run_jobs().await;
    for email in sent.body["data"]["emails"].as_array().expect("emails") {
        let id = email["contact"]["id"].as_str().expect("contact id");
        let events = app
            .get(&format!("/events?contactId={id}"))
            .await
            .expect(200);
        assert!(
            names(&events.body).contains(&"segment.not-subscribed.entry".to_string()),
            "{id}: {}",
            events.body
        );
    }
}

#[tokio::test]
async fn a_swept_segment_moves_the_segments_that_refer_to_it() {
    // "Lapsed" holds buyers who are no longer "Recent" buyers: when the sweep takes a
    // contact out of "Recent", "Lapsed" must take it in (it used to wait for something else
    // to touch the contact).
    let app = TestApp::new().await;
    let recent = json!({"groups": [{"filters": [{"field": "event.purchase", "operator": "triggeredWithin", "value": 1, "unit": "hours"}]}]});
    let created = app
        .post(
            "/segments",
            json!({"name": "Recent", "condition": recent, "trackMembership": true}),
        )
        .await
        .expect(201);
    let recent_id = created.body["id"].as_str().expect("id").to_string();
    let lapsed = json!({"groups": [{"filters": [
        {"field": format!("segment.{recent_id}"), "operator": "notMemberOfSegment"},
        {"field": "event.purchase", "operator": "triggered"}
    ]}]});
    app.post(
        "/segments",
        json!({"name": "Lapsed", "condition": lapsed, "trackMembership": true}),
    )
    .await
    .expect(201);
    settle(&app).await;
    let t = app
        .post(
            "/v1/track",
            json!({"email": "buyer@x.com", "event": "purchase"}),
        )
        .await
        .expect(200);
    let id = t.body["data"]["contact"].as_str().expect("id").to_string();
    settle(&app).await;
    let lapsed_events = |events: Vec<String>| -> Vec<String> {
        events
            .into_iter()
            .filter(|n| n.starts_with("segment.lapsed."))
            .collect()
    };
    // "Lapsed" is decided with "Recent"'s new membership: a recent buyer never enters it,
    // not even for a round (it used to enter and leave while "Recent" took it in).
    let before = names(&app.get(&format!("/events?contactId={id}")).await.body);
    assert_eq!(
        lapsed_events(before),
        Vec::<String>::new(),
        "a recent buyer is not lapsed"
    );
    app.clock.advance(chrono::Duration::minutes(61));
    app.engine
        .sweep_time_based_segments(&app.ws())
        .await
        .expect("sweep");
    settle(&app).await;
    let after = names(&app.get(&format!("/events?contactId={id}")).await.body);
    assert_eq!(
        lapsed_events(after),
        ["segment.lapsed.entry"],
        "the sweep made the buyer lapsed"
    );
}

#[tokio::test]
async fn a_segment_another_refers_to_is_not_deleted_under_it() {
    let app = TestApp::new().await;
    contact(&app, "kept@x.com", json!({"plan": "pro"})).await;
    contact(&app, "suppressed@x.com", json!({"plan": "pro"})).await;
    let suppress = app
        .post("/segments", json!({"name": "Suppress", "type": "STATIC"}))
        .await
        .expect(201);
    let suppress_id = suppress.body["id"].as_str().expect("id").to_string();
    app.post(
        &format!("/segments/{suppress_id}/members"),
        json!({"emails": ["suppressed@x.com"]}),
    )
    .await
    .expect(200);
    let pro = json!({"groups": [{"filters": [
        {"field": "data.plan", "operator": "equals", "value": "pro"},
        {"field": format!("segment.{suppress_id}"), "operator": "notMemberOfSegment"}
    ]}]});
    let reader = app
        .post(
            "/segments",
            json!({"name": "Pro, not suppressed", "condition": pro}),
        )
        .await
        .expect(201);
    let reader_id = reader.body["id"].as_str().expect("id").to_string();
    let refused = app
        .delete(&format!("/segments/{suppress_id}"))
        .await
        .expect_error(409, "CONFLICT");
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&reader_id)),
        "names the segment that refers to it: {}",
        refused.body
    );
    // The reader still leaves the suppressed contact out.
    let read = app.get(&format!("/segments/{reader_id}")).await.expect(200);
    assert_eq!(read.body["memberCount"], json!(1), "{}", read.body);
    // Once nothing refers to it, it goes.
    app.patch(
        &format!("/segments/{reader_id}"),
        json!({"condition": plan_is("pro")}),
    )
    .await
    .expect(200);
    app.delete(&format!("/segments/{suppress_id}"))
        .await
        .expect(204);
}

#[tokio::test]
async fn switching_tracking_off_right_after_a_condition_change_is_quiet() {
    let app = TestApp::new().await;
    for email in ["p1@x.com", "p2@x.com", "p3@x.com"] {
        contact(&app, email, json!({"plan": "pro"})).await;
    }
    let s = app
        .post(
            "/segments",
            json!({"name": "Buyers", "condition": plan_is("pro"), "trackMembership": true}),
        )
        .await
        .expect(201);
    let id = s.body["id"].as_str().expect("id").to_string();
    settle(&app).await;
    // The condition change queues an announcing re-sync; before it runs, tracking goes off.
    app.patch(
        &format!("/segments/{id}"),
        json!({"condition": plan_is("enterprise")}),
    )
    .await
    .expect(200);
    app.patch(
        &format!("/segments/{id}"),
        json!({"trackMembership": false}),
    )
    .await
    .expect(200);
    settle(&app).await;
    assert_eq!(buyer_events(&app).await, [], "cleared quietly");
}
