use std::sync::Arc;
use std::time::Duration;

use axum::http::Method;
use serde_json::json;

use crate::gate::answered;
use crate::harness::{send_body, Res, TestApp};

/// Whether `res` is a replayed answer (`Idempotent-Replayed: true`).
fn replayed(res: &Res) -> bool {
    res.headers
        .get("idempotent-replayed")
        .and_then(|v| v.to_str().ok())
        == Some("true")
}

#[tokio::test]
async fn same_key_same_body_replays_the_first_answer() {
    let app = TestApp::new().await;
    let sk = app.sk.clone();
    let body = send_body(json!("idem@x.com"));
    let first = app
        .call(
            Method::POST,
            "/v1/send",
            Some(&sk),
            Some(body.clone()),
            &[("idempotency-key", "k-1")],
        )
        .await
        .expect(200);
    let second = app
        .call(
            Method::POST,
            "/v1/send",
            Some(&sk),
            Some(body),
            &[("idempotency-key", "k-1")],
        )
        .await
        .expect(200);
    assert_eq!(first.body, second.body);
    assert!(replayed(&second));
    assert!(first.headers.get("idempotent-replayed").is_none());
    app.run_jobs().await;
    assert_eq!(app.transport.messages().len(), 1, "sent once");
}

#[tokio::test]
async fn same_key_other_body_is_refused() {
    let app = TestApp::new().await;
    let sk = app.sk.clone();
    app.call(
        Method::POST,
        "/contacts",
        Some(&sk),
        Some(json!({"email": "a@x.com"})),
        &[("idempotency-key", "k-2")],
    )
    .await
    .expect(201);
    app.call(
        Method::POST,
        "/contacts",
        Some(&sk),
        Some(json!({"email": "b@x.com"})),
        &[("idempotency-key", "k-2")],
    )
    .await
    .expect_error(422, "IDEMPOTENCY_KEY_REUSED");
    let long = "k".repeat(256);
    app.call(
        Method::POST,
        "/contacts",
        Some(&sk),
        Some(json!({"email": "b@x.com"})),
        &[("idempotency-key", &long)],
    )
    .await
    .expect_error(400, "BAD_REQUEST");
}

#[tokio::test]
async fn keys_are_scoped_to_the_workspace() {
    let app = TestApp::new().await;
    let (_, _, other) = app.new_workspace("Other").await;
    let sk = app.sk.clone();
    app.call(
        Method::POST,
        "/contacts",
        Some(&sk),
        Some(json!({"email": "a@x.com"})),
        &[("idempotency-key", "shared")],
    )
    .await
    .expect(201);
    let res = app
        .call(
            Method::POST,
            "/contacts",
            Some(&other),
            Some(json!({"email": "a@x.com"})),
            &[("idempotency-key", "shared")],
        )
        .await
        .expect(201);
    assert!(res.headers.get("idempotent-replayed").is_none());
}

#[tokio::test]
async fn validation_failures_are_replayed_too() {
    let app = TestApp::new().await;
    let sk = app.sk.clone();
    app.call(
        Method::POST,
        "/contacts",
        Some(&sk),
        Some(json!({"email": "bad"})),
        &[("idempotency-key", "k-3")],
    )
    .await
    .expect_error(422, "VALIDATION_ERROR");
    let again = app
        .call(
            Method::POST,
            "/contacts",
            Some(&sk),
            Some(json!({"email": "bad"})),
            &[("idempotency-key", "k-3")],
        )
        .await
        .expect(422);
    assert!(replayed(&again));
}

#[tokio::test]
async fn a_key_whose_first_request_is_in_flight_is_409() {
    let mut app = TestApp::new().await;
    // `POST /v1/verify` waits inside its handler until the gate opens.
    let gate = app.gate_dns(Duration::from_secs(60));
    let app = Arc::new(app);
    let sk = app.sk.clone();
    let body = json!({"email": "ada@gmail.com"});
    let first = {
        let (app, sk, body) = (app.clone(), sk.clone(), body.clone());
        tokio::spawn(async move {
            app.call(
                Method::POST,
                "/v1/verify",
                Some(&sk),
                Some(body),
                &[("idempotency-key", "slow-1")],
            )
            .await
        })
    };
    gate.entered().await;
    assert!(
        !first.is_finished(),
        "the first request is held at the gate"
    );

    // Same key, same body, while the first runs: 409, and nothing else runs.
    let lookups = gate.lookups();
    let soon = Duration::from_secs(10);
    answered(
        soon,
        app.call(
            Method::POST,
            "/v1/verify",
            Some(&sk),
            Some(body.clone()),
            &[("idempotency-key", "slow-1")],
        ),
    )
    .await
    .expect_error(409, "CONFLICT");
    // Same key, another body: reused, whether or not the first is done.
    answered(
        soon,
        app.call(
            Method::POST,
            "/v1/verify",
            Some(&sk),
            Some(json!({"email": "bob@gmail.com"})),
            &[("idempotency-key", "slow-1")],
        ),
    )
    .await
    .expect_error(422, "IDEMPOTENCY_KEY_REUSED");
    // Other keys of the workspace are not held up.
    answered(
        soon,
        app.call(
            Method::POST,
            "/contacts",
            Some(&sk),
            Some(json!({"email": "other@x.com"})),
            &[("idempotency-key", "slow-2")],
        ),
    )
    .await
    .expect(201);
    assert_eq!(
        gate.lookups(),
        lookups,
        "refused requests never reached the handler"
    );
    assert!(!first.is_finished(), "still in flight");

    gate.open();
    let first = tokio::time::timeout(Duration::from_secs(10), first)
        .await
        .expect("the first request finishes once the gate opens")
        .expect("no panic")
        .expect(200);
    assert_eq!(first.body["data"]["email"], json!("ada@gmail.com"));
    assert!(first.headers.get("idempotent-replayed").is_none());
    // Now the key replays the first answer, without running the handler again.
    let lookups = gate.lookups();
    let replay = app
        .call(
            Method::POST,
            "/v1/verify",
            Some(&sk),
            Some(body),
            &[("idempotency-key", "slow-1")],
        )
        .await
        .expect(200);
    assert_eq!(replay.body, first.body);
    assert!(replayed(&replay));
    assert_eq!(gate.lookups(), lookups, "a replay does not run the handler");
}

#[tokio::test]
async fn operator_posts_honour_the_key_too() {
    let app = TestApp::new().await;
    let key = [("idempotency-key", "op-1")];
    let body = json!({"name": "Replayed Inc"});
    let first = app
        .call(
            Method::POST,
            "/admin/workspaces",
            Some(crate::harness::ADMIN),
            Some(body.clone()),
            &key,
        )
        .await
        .expect(201);
    let second = app
        .call(
            Method::POST,
            "/admin/workspaces",
            Some(crate::harness::ADMIN),
            Some(body),
            &key,
        )
        .await
        .expect_replayed_error(409, "CONFLICT");
    assert!(replayed(&second));
    let message = second.body["error"]["message"].as_str().unwrap_or_default();
    for id in [&first.body["workspace"]["id"], &first.body["keySet"]["id"]] {
        let id = id
            .as_str()
            .unwrap_or_else(|| panic!("an id in {}", first.body));
        assert!(message.contains(id), "{message} names {id}");
    }
    assert!(!second.body.to_string().contains("sk_"), "no key replayed");
    let listed = app
        .admin(Method::GET, "/admin/workspaces", None)
        .await
        .expect(200);
    let named = listed.body["data"]
        .as_array()
        .or_else(|| listed.body.as_array())
        .expect("workspaces")
        .iter()
        .filter(|w| w["name"] == "Replayed Inc")
        .count();
    assert_eq!(named, 1, "one workspace created: {}", listed.body);

    // Another body under the same key is refused; a workspace key does not collide.
    app.call(
        Method::POST,
        "/admin/workspaces",
        Some(crate::harness::ADMIN),
        Some(json!({"name": "Other"})),
        &key,
    )
    .await
    .expect_error(422, "IDEMPOTENCY_KEY_REUSED");
    let sk = app.sk.clone();
    app.call(
        Method::POST,
        "/contacts",
        Some(&sk),
        Some(json!({"email": "op@x.com"})),
        &key,
    )
    .await
    .expect(201);
}

/// Posts `MESSAGE` to `/inbound/raw?{query}` with the Idempotency-Key `key`.
async fn post_raw_keyed(app: &TestApp, query: &str, key: &str) -> crate::harness::Res {
    app.raw(
        Method::POST,
        &format!("/inbound/raw?{query}"),
        Some(&app.sk),
        Some(crate::inbound::MESSAGE),
        Some("message/rfc822"),
        &[("idempotency-key", key)],
    )
    .await
}

#[tokio::test]
async fn another_key_set_never_gets_the_first_answer() {
    // A key set limited to a domain may not mint keys (403); a replay must not hand it the
    // unscoped key set's answer, which holds a new secret key.
    let app = TestApp::new().await;
    let sk = app.sk.clone();
    let minted = app
        .call(
            Method::POST,
            "/keys",
            Some(&sk),
            Some(json!({"name": "ci"})),
            &[("idempotency-key", "mint")],
        )
        .await
        .expect(201);
    assert!(minted.body["secretKey"].as_str().is_some());
    let limited = app
        .call(
            Method::POST,
            "/keys",
            Some(&sk),
            Some(json!({"name": "limited", "domains": ["example.com"]})),
            &[],
        )
        .await
        .expect(201);
    let limited_sk = limited.body["secretKey"]
        .as_str()
        .expect("secret key")
        .to_string();
    let res = app
        .call(
            Method::POST,
            "/keys",
            Some(&limited_sk),
            Some(json!({"name": "ci"})),
            &[("idempotency-key", "mint")],
        )
        .await
        .expect_error(422, "IDEMPOTENCY_KEY_REUSED");
    assert!(res.body.get("secretKey").is_none());
    // The public key of the first key set is another credential too.
    let track = json!({"email": "pk@x.com", "event": "seen"});
    app.call(
        Method::POST,
        "/v1/track",
        Some(&sk),
        Some(track.clone()),
        &[("idempotency-key", "track-1")],
    )
    .await
    .expect(200);
    app.call(
        Method::POST,
        "/v1/track",
        Some(&app.pk),
        Some(track),
        &[("idempotency-key", "track-1")],
    )
    .await
    .expect_error(422, "IDEMPOTENCY_KEY_REUSED");
}

#[tokio::test]
async fn the_query_string_is_part_of_the_request() {
    // `/inbound/raw` names the recipients in the query: a message to another recipient under
    // the same key is another request, not a replay that would drop it.
    let app = TestApp::new().await;
    crate::inbound::enable_inbound(&app).await;
    post_raw_keyed(&app, "from=a%40sender.example&to=x%40example.com", "in-1")
        .await
        .expect(202);
    post_raw_keyed(&app, "from=a%40sender.example&to=y%40example.com", "in-1")
        .await
        .expect_error(422, "IDEMPOTENCY_KEY_REUSED");
    let again = post_raw_keyed(&app, "from=a%40sender.example&to=x%40example.com", "in-1")
        .await
        .expect(202);
    assert!(replayed(&again));
}

#[tokio::test]
async fn a_429_is_not_kept_so_the_retry_runs_again() {
    let mut settings = posthorn_core::Settings::default();
    settings.inbound.per_sender = posthorn_core::ports::Quota {
        limit: 1,
        window: Duration::from_secs(60),
    };
    let app = TestApp::with_settings(settings).await;
    crate::inbound::enable_inbound(&app).await;
    let query = "from=busy%40sender.example&to=x%40example.com";
    post_raw_keyed(&app, query, "first").await.expect(202);
    post_raw_keyed(&app, query, "second")
        .await
        .expect_error(429, "RATE_LIMIT_EXCEEDED");
    app.clock.advance(chrono::Duration::seconds(61));
    let retried = post_raw_keyed(&app, query, "second").await.expect(202);
    assert!(retried.headers.get("idempotent-replayed").is_none());
}

#[tokio::test]
async fn new_keys_are_never_kept_for_a_replay() {
    let app = TestApp::new().await;
    let sk = app.sk.clone();
    let mint = |key: &'static str| {
        let sk = sk.clone();
        let app = &app;
        async move {
            app.call(
                Method::POST,
                "/keys",
                Some(&sk),
                Some(json!({"name": "ci"})),
                &[("idempotency-key", key)],
            )
            .await
        }
    };
    let first = mint("mint-once").await.expect(201);
    let id = first.body["id"].as_str().expect("key set id").to_string();
    let secret = first.body["secretKey"]
        .as_str()
        .expect("secret")
        .to_string();
    let public = first.body["publicKey"]
        .as_str()
        .expect("public")
        .to_string();

    // Only hashes of keys are stored: the kept answer holds neither key.
    let kept = app
        .engine
        .idempotency_record(app.ws().as_str(), "mint-once")
        .await
        .expect("read")
        .expect("a record is kept for the key");
    let kept_text = String::from_utf8_lossy(&kept.answer.body).to_string();
    assert!(
        !kept_text.contains(&secret) && !kept_text.contains(&public),
        "clear keys kept: {kept_text}"
    );
    assert!(kept_text.contains(&id), "the kept answer names the key set");

    // The replay says what was created, once, without its keys.
    let again = mint("mint-once")
        .await
        .expect_replayed_error(409, "CONFLICT");
    assert!(replayed(&again));
    let message = again.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&id), "{message}");
    let sets = app.get("/keys").await.expect(200).body;
    let named = sets["data"]
        .as_array()
        .expect("key sets")
        .iter()
        .filter(|s| s["name"] == "ci")
        .count();
    assert_eq!(named, 1, "one key set created: {sets}");
}

#[tokio::test]
async fn an_answer_read_back_from_the_store_is_cached_for_what_is_left_of_its_day() {
    let app = TestApp::new().await;
    let sk = app.sk.clone();
    let post = || {
        app.call(
            Method::POST,
            "/contacts",
            Some(&sk),
            Some(json!({"email": "day@x.com"})),
            &[("idempotency-key", "day")],
        )
    };
    post().await.expect(201);
    // As after a restart, or with the cache's copy evicted: the store has the record.
    let cache_key = format!("idem:{}:day", app.ws());
    app.engine.cache.delete(&cache_key).await.expect("evicted");
    app.clock.advance(chrono::Duration::hours(23));
    let replay = post().await.expect(201);
    assert!(replayed(&replay), "replayed from the store within the day");
    // Past the day the key is free again, though the replay above cached the answer.
    app.clock.advance(chrono::Duration::hours(2));
    app.delete(&format!(
        "/contacts/{}",
        replay.body["id"].as_str().expect("contact id")
    ))
    .await
    .expect(204);
    let fresh = post().await.expect(201);
    assert!(!replayed(&fresh), "a key older than a day runs again");
}
