use serde_json::json;

use crate::harness::TestApp;

#[tokio::test]
async fn requests_over_the_budget_get_429_with_headers() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"rateLimitPerMinute": 3}))
        .await;
    for remaining in ["2", "1", "0"] {
        let res = app.get("/contacts").await.expect(200);
        assert_eq!(
            res.headers
                .get("ratelimit-limit")
                .and_then(|v| v.to_str().ok()),
            Some("3")
        );
        assert_eq!(
            res.headers
                .get("ratelimit-remaining")
                .and_then(|v| v.to_str().ok()),
            Some(remaining)
        );
        assert!(res.headers.get("ratelimit-reset").is_some());
    }
    let res = app
        .get("/contacts")
        .await
        .expect_error(429, "RATE_LIMIT_EXCEEDED");
    let retry: u64 = res
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("retry-after");
    assert!((1..=60).contains(&retry));
    // Another workspace has its own budget.
    let (_, _, other) = app.new_workspace("Other").await;
    app.call(
        axum::http::Method::GET,
        "/contacts",
        Some(&other),
        None,
        &[],
    )
    .await
    .expect(200);
    // The window passes and the budget is whole again.
    app.clock.advance(chrono::Duration::seconds(61));
    app.get("/contacts").await.expect(200);
}

#[tokio::test]
async fn default_budget_is_1000_per_minute() {
    let app = TestApp::new().await;
    let res = app.get("/contacts").await.expect(200);
    assert_eq!(
        res.headers
            .get("ratelimit-limit")
            .and_then(|v| v.to_str().ok()),
        Some("1000")
    );
}
