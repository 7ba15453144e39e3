use axum::http::Method;
use serde_json::json;

use crate::harness::TestApp;

#[tokio::test]
async fn unknown_routes_and_methods_use_the_envelope() {
    let app = TestApp::new().await;
    app.get("/nope").await.expect_error(404, "NOT_FOUND");
    app.call(Method::GET, "/v2/send", None, None, &[])
        .await
        .expect_error(404, "NOT_FOUND");
    let res = app
        .call(Method::DELETE, "/v1/send", Some(&app.sk.clone()), None, &[])
        .await;
    assert_eq!(res.status, 405);
    assert_eq!(res.body["success"], json!(false));
}

#[tokio::test]
async fn an_empty_body_is_no_body_but_whitespace_is_not_json() {
    let app = TestApp::new().await;
    let sk = app.sk.clone();
    let created = app
        .call(
            Method::POST,
            "/segments",
            Some(&sk),
            Some(json!({"name": "Static", "type": "STATIC"})),
            &[],
        )
        .await
        .expect(201);
    let path = format!(
        "/segments/{}",
        created.body["id"].as_str().unwrap_or_default()
    );
    // No bytes: an empty patch, which changes nothing.
    app.raw(
        Method::PATCH,
        &path,
        Some(&sk),
        Some(""),
        Some("application/json"),
        &[],
    )
    .await
    .expect(200);
    for blank in ["\r", " ", "\n\t"] {
        let res = app
            .raw(
                Method::PATCH,
                &path,
                Some(&sk),
                Some(blank),
                Some("application/json"),
                &[],
            )
            .await
            .expect_error(400, "VALIDATION_ERROR");
        assert!(res.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Invalid JSON in request body")));
    }
}

#[tokio::test]
async fn malformed_json_and_wrong_content_type_are_400() {
    let app = TestApp::new().await;
    let sk = app.sk.clone();
    let res = app
        .raw(
            Method::POST,
            "/v1/track",
            Some(&sk),
            Some("{\"email\": "),
            Some("application/json"),
            &[],
        )
        .await
        .expect_error(400, "VALIDATION_ERROR");
    assert!(res.body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("Invalid JSON in request body")));
    app.raw(
        Method::POST,
        "/contacts",
        Some(&sk),
        Some("email=a@x.com"),
        Some("application/x-www-form-urlencoded"),
        &[],
    )
    .await
    .expect_error(400, "VALIDATION_ERROR");
    app.raw(
        Method::POST,
        "/contacts",
        Some(&sk),
        Some("{\"email\":\"a@x.com\"}"),
        None,
        &[],
    )
    .await
    .expect_error(400, "VALIDATION_ERROR");
    app.raw(
        Method::POST,
        "/contacts",
        Some(&sk),
        Some("{\"email\":\"a@x.com\"}"),
        Some("application/json; charset=utf-8"),
        &[],
    )
    .await
    .expect(201);
}

#[tokio::test]
async fn oversized_bodies_are_413() {
    let app = TestApp::new().await;
    let sk = app.sk.clone();
    let huge = format!(
        "{{\"email\":\"a@x.com\",\"event\":\"e\",\"data\":{{\"x\":\"{}\"}}}}",
        "a".repeat(16 * 1024 * 1024)
    );
    app.raw(
        Method::POST,
        "/v1/track",
        Some(&sk),
        Some(&huge),
        Some("application/json"),
        &[],
    )
    .await
    .expect_error(413, "PAYLOAD_TOO_LARGE");
}

#[tokio::test]
async fn request_ids_are_unique_and_echoed() {
    let app = TestApp::new().await;
    let a = app.get("/nope").await;
    let b = app.get("/nope").await;
    let ida = a
        .headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .expect("id")
        .to_string();
    let idb = b
        .headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .expect("id")
        .to_string();
    assert_ne!(ida, idb);
    assert_eq!(a.body["error"]["requestId"], json!(ida));
    let ok = app.get("/contacts").await.expect(200);
    assert!(ok.headers.get("x-request-id").is_some());
}

#[tokio::test]
async fn health_and_openapi_need_no_key() {
    let app = TestApp::new().await;
    let h = app
        .call(Method::GET, "/health", None, None, &[])
        .await
        .expect(200);
    assert_eq!(h.body["status"], json!("ok"));
    let o = app
        .call(Method::GET, "/openapi.json", None, None, &[])
        .await
        .expect(200);
    assert!(o.body["openapi"]
        .as_str()
        .is_some_and(|v| v.starts_with('3')));
}

#[tokio::test]
async fn bad_path_and_query_text_gets_the_envelope_not_an_outage() {
    // A NUL in an id is no id at all (PostgreSQL cannot compare one: it answered 503), and
    // a parameter that is not UTF-8 is a bad request, both in the spec's error body.
    let app = TestApp::new().await;
    for path in [
        "/contacts/%00",
        "/templates/a%00b",
        "/workflows/%00",
        "/segments/x%00/contacts",
    ] {
        app.get(path).await.expect_error(404, "NOT_FOUND");
    }
    for path in ["/contacts/%FF", "/campaigns/%C3%28"] {
        let res = app.get(path).await.expect_error(400, "BAD_REQUEST");
        assert_eq!(
            res.headers
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("application/json")
        );
    }
    app.call(Method::GET, "/t/o/%FF", None, None, &[])
        .await
        .expect_error(400, "BAD_REQUEST");
    for (path, field) in [
        ("/contacts?search=%00", "search"),
        ("/templates?search=a%00", "search"),
        ("/events?eventName=%00", "eventName"),
    ] {
        let res = app.get(path).await.expect_error(422, "VALIDATION_ERROR");
        assert_eq!(res.error_fields(), [field], "{path}");
    }
}
