use axum::http::Method;
use serde_json::json;

use crate::harness::TestApp;

#[tokio::test]
async fn track_creates_contact_and_stores_event() {
    let app = TestApp::new().await;
    let pk = app.pk.clone();
    let res = app
        .call(
            Method::POST,
            "/v1/track",
            Some(&pk),
            Some(json!({"email": "New@X.com", "event": "signup", "data": {"plan": "pro"}})),
            &[],
        )
        .await
        .expect(200);
    assert_eq!(res.body["success"], json!(true));
    let data = &res.body["data"];
    let contact_id = data["contact"].as_str().expect("contact");
    let event_id = data["event"].as_str().expect("event");
    assert!(data["timestamp"].as_str().is_some());
    let contact = app
        .get(&format!("/contacts/{contact_id}"))
        .await
        .expect(200);
    assert_eq!(contact.body["email"], json!("new@x.com"));
    assert_eq!(contact.body["subscribed"], json!(true));
    assert_eq!(contact.body["data"], json!({"plan": "pro"}));
    let events = app.get("/events?eventName=signup").await.expect(200);
    let e = &events.body["events"][0];
    assert_eq!(e["id"], json!(event_id));
    assert_eq!(e["name"], json!("signup"));
    assert_eq!(e["data"], json!({"plan": "pro"}));
    assert_eq!(e["contactId"], json!(contact_id));
    assert_eq!(e["projectId"], json!(app.workspace_id));
}

#[tokio::test]
async fn subscription_flag_changes_only_when_given() {
    let app = TestApp::new().await;
    app.post(
        "/v1/track",
        json!({"email": "f@x.com", "event": "a", "subscribed": false}),
    )
    .await
    .expect(200);
    let res = app
        .post("/v1/track", json!({"email": "f@x.com", "event": "b"}))
        .await
        .expect(200);
    let id = res.body["data"]["contact"].as_str().expect("id");
    assert_eq!(
        app.get(&format!("/contacts/{id}")).await.body["subscribed"],
        json!(false)
    );
    app.post(
        "/v1/track",
        json!({"email": "f@x.com", "event": "c", "subscribed": true}),
    )
    .await
    .expect(200);
    assert_eq!(
        app.get(&format!("/contacts/{id}")).await.body["subscribed"],
        json!(true)
    );
    let events = app
        .get(&format!(
            "/events?contactId={id}&eventName=contact.subscribed"
        ))
        .await
        .expect(200);
    assert_eq!(events.body["events"].as_array().map(Vec::len), Some(1));
    // Data with no event data stores an empty object.
    let e = app.get("/events?eventName=b").await.expect(200);
    assert_eq!(e.body["events"][0]["data"], json!({}));
}

#[tokio::test]
async fn track_validates_and_refuses_reserved_names() {
    let app = TestApp::new().await;
    let res = app
        .post("/v1/track", json!({}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["email", "event"]);
    let res = app
        .post(
            "/v1/track",
            json!({"email": "bad", "event": 5, "subscribed": "yes", "data": []}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["email", "event", "subscribed", "data"]);
    for reserved in [
        "email.sent",
        "contact.subscribed",
        "contact.unsubscribed",
        "segment.vip.entry",
        "email.open",
    ] {
        let res = app
            .post("/v1/track", json!({"email": "a@x.com", "event": reserved}))
            .await
            .expect_error(422, "VALIDATION_ERROR");
        assert_eq!(res.error_fields(), ["event"]);
    }
    app.post("/v1/track", json!({"email": "a@x.com", "event": "   "}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    // Nothing partial was written by the refused requests.
    let list = app.get("/contacts").await.expect(200);
    assert_eq!(list.body["total"], json!(0));
}
