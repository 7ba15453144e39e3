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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_tracks_of_one_new_email_keep_every_event_and_its_data() {
    // Racing tracks insert the same contact; the losers' commits conflict (on SQLite and
    // PostgreSQL, where this suite also runs) and they retry as updates, and must still
    // store their own event with its own data.
    let app = std::sync::Arc::new(TestApp::new().await);
    let bodies = (0..20)
        .map(|i| json!({"email": "race@x.com", "event": "raced", "data": {format!("k{i}"): i}}))
        .collect();
    for res in app.post_concurrently("/v1/track", bodies).await {
        assert_eq!(res.status, 200, "{}", res.body);
    }
    let list = app.get("/contacts?search=race").await.expect(200);
    assert_eq!(list.body["total"], json!(1));
    let contact = &list.body["data"][0];
    assert_eq!(contact["data"].as_object().map(|m| m.len()), Some(20));
    let events = app
        .get("/events?eventName=raced&limit=100")
        .await
        .expect(200);
    let mut seen: Vec<String> = events.body["events"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter_map(|e| e["data"].as_object())
                .flat_map(|data| data.keys().cloned())
                .collect()
        })
        .unwrap_or_default();
    seen.sort();
    let mut wanted: Vec<String> = (0..20).map(|i| format!("k{i}")).collect();
    wanted.sort();
    assert_eq!(seen, wanted, "each event kept its own data");
}

#[tokio::test]
async fn a_web_page_may_track_with_the_public_key() {
    let app = TestApp::new().await;
    let origin = ("origin", "https://shop.example");
    let preflight = app
        .raw(
            Method::OPTIONS,
            "/v1/track",
            None,
            None,
            None,
            &[
                origin,
                ("access-control-request-method", "POST"),
                (
                    "access-control-request-headers",
                    "authorization,content-type",
                ),
            ],
        )
        .await;
    assert!(preflight.status.is_success(), "{preflight:?}");
    let header = |res: &crate::harness::Res, name: &str| {
        res.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase()
    };
    assert_eq!(header(&preflight, "access-control-allow-origin"), "*");
    assert!(header(&preflight, "access-control-allow-methods").contains("post"));
    let allowed = header(&preflight, "access-control-allow-headers");
    assert!(
        allowed.contains("authorization") && allowed.contains("content-type"),
        "{allowed}"
    );
    let pk = app.pk.clone();
    let tracked = app
        .call(
            Method::POST,
            "/v1/track",
            Some(&pk),
            Some(json!({"email": "page@x.com", "event": "viewed"})),
            &[origin],
        )
        .await
        .expect(200);
    assert_eq!(header(&tracked, "access-control-allow-origin"), "*");
    assert!(
        header(&tracked, "access-control-expose-headers").contains("ratelimit-remaining"),
        "{tracked:?}"
    );
    assert_eq!(header(&tracked, "vary"), "origin", "{tracked:?}");
    // A server's request (no Origin) gets no CORS headers, and the same Vary.
    let sk = app.sk.clone();
    let from_server = app
        .call(
            Method::POST,
            "/v1/track",
            Some(&sk),
            Some(json!({"email": "server@x.com", "event": "viewed"})),
            &[],
        )
        .await
        .expect(200);
    assert!(
        !from_server
            .headers
            .keys()
            .any(|name| name.as_str().starts_with("access-control-")),
        "{from_server:?}"
    );
    assert_eq!(header(&from_server, "vary"), "origin", "{from_server:?}");
}
