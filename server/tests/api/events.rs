use serde_json::json;

use crate::harness::TestApp;

#[tokio::test]
async fn events_are_newest_first_filtered_and_limited() {
    let app = TestApp::new().await;
    for i in 0..5 {
        app.post("/v1/track", json!({"email": format!("e{i}@x.com"), "event": if i % 2 == 0 { "even" } else { "odd" }}))
            .await
            .expect(200);
        app.clock.advance(chrono::Duration::seconds(1));
    }
    let all = app.get("/events").await.expect(200);
    let list = all.body["events"].as_array().expect("array");
    assert_eq!(list.len(), 5);
    assert_eq!(list[0]["name"], json!("even"));
    assert!(list[0]["createdAt"].as_str() > list[4]["createdAt"].as_str());
    let even = app.get("/events?eventName=even").await.expect(200);
    assert_eq!(even.body["events"].as_array().map(Vec::len), Some(3));
    let two = app.get("/events?limit=2").await.expect(200);
    assert_eq!(two.body["events"].as_array().map(Vec::len), Some(2));
    for bad in ["limit=0", "limit=1001", "limit=x"] {
        let res = app
            .get(&format!("/events?{bad}"))
            .await
            .expect_error(422, "VALIDATION_ERROR");
        assert_eq!(res.error_fields(), ["limit"]);
    }
    app.get("/events?limit=1000").await.expect(200);
}

#[tokio::test]
async fn event_names_include_custom_and_internal() {
    let app = TestApp::new().await;
    app.post(
        "/v1/track",
        json!({"email": "n@x.com", "event": "purchase"}),
    )
    .await
    .expect(200);
    app.post(
        "/v1/track",
        json!({"email": "n@x.com", "event": "purchase"}),
    )
    .await
    .expect(200);
    let res = app.get("/events/names").await.expect(200);
    let names = res.body["eventNames"].as_array().expect("array");
    assert_eq!(names.iter().filter(|n| *n == "purchase").count(), 1);
    assert!(names.contains(&json!("email.sent")));
    assert!(names.contains(&json!("contact.unsubscribed")));
}
