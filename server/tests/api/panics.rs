use axum::body::Body;
use axum::http::Request;
use axum::routing::get;
use axum::Router;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

async fn boom() -> &'static str {
    let parts: Vec<u8> = Vec::new();
    // A handler bug: indexing out of bounds panics.
    if parts[usize::from(parts.is_empty())] == 0 {
        return "unreachable";
    }
    "ok"
}

#[tokio::test]
async fn a_panicking_handler_answers_500_in_the_envelope() {
    let app = posthorn_server::http::with_edge(Router::new().route("/boom", get(boom)));
    let res = app
        .oneshot(Request::get("/boom").body(Body::empty()).expect("request"))
        .await
        .expect("infallible");
    assert_eq!(res.status(), 500);
    let rid = res
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body: Value =
        serde_json::from_slice(&res.into_body().collect().await.expect("body").to_bytes())
            .expect("json");
    assert_eq!(body["success"], json!(false));
    assert_eq!(body["error"]["code"], json!("INTERNAL_ERROR"));
    assert_eq!(body["error"]["statusCode"], json!(500));
    assert_eq!(body["error"]["requestId"].as_str().map(str::to_string), rid);
    assert!(
        !body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("index out of bounds"),
        "no internals leak"
    );
}
