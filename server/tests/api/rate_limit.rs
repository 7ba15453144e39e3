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

#[tokio::test]
async fn the_429_itself_carries_the_rate_limit_headers() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"rateLimitPerMinute": 2}))
        .await;
    app.get("/contacts").await.expect(200);
    // Spend the last unit with a write, 20 s into the minute.
    app.clock.advance(chrono::Duration::seconds(20));
    app.post("/contacts", json!({"email": "r@x.com"}))
        .await
        .expect(201);
    app.clock.advance(chrono::Duration::seconds(5));
    let header = |res: &crate::harness::Res, name: &str| {
        res.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .unwrap_or_else(|| panic!("{name} missing on {}: {:?}", res.status, res.headers))
    };
    for res in [
        app.get("/contacts").await,
        app.post("/contacts", json!({"email": "late@x.com"})).await,
    ] {
        let res = res.expect_error(429, "RATE_LIMIT_EXCEEDED");
        assert_eq!(header(&res, "ratelimit-limit"), "2");
        assert_eq!(header(&res, "ratelimit-remaining"), "0");
        // Windows are fixed minutes: this one (from 10:00:00) ends 35 s from now.
        assert_eq!(header(&res, "ratelimit-reset"), "35");
        assert_eq!(header(&res, "retry-after"), "35");
    }
    // The refused write wrote nothing; the next window has the budget back.
    app.clock.advance(chrono::Duration::seconds(35));
    let list = app.get("/contacts").await.expect(200);
    assert_eq!(list.body["total"], json!(1));
    assert_eq!(header(&list, "ratelimit-remaining"), "1");
}
