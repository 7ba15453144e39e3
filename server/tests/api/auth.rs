use axum::http::Method;
use serde_json::json;

use crate::harness::TestApp;

#[tokio::test]
async fn missing_or_malformed_auth_is_401_missing_auth() {
    let app = TestApp::new().await;
    app.call(Method::GET, "/contacts", None, None, &[])
        .await
        .expect_error(401, "MISSING_AUTH");
    app.call(
        Method::GET,
        "/contacts",
        None,
        None,
        &[("authorization", "Basic abc")],
    )
    .await
    .expect_error(401, "MISSING_AUTH");
    app.call(
        Method::GET,
        "/contacts",
        None,
        None,
        &[("authorization", "Bearer ")],
    )
    .await
    .expect_error(401, "MISSING_AUTH");
}

#[tokio::test]
async fn unknown_keys_are_401_invalid_api_key() {
    let app = TestApp::new().await;
    let fake = format!("sk_{}", "0".repeat(64));
    app.call(Method::GET, "/contacts", Some(&fake), None, &[])
        .await
        .expect_error(401, "INVALID_API_KEY");
    app.call(Method::GET, "/contacts", Some("nonsense"), None, &[])
        .await
        .expect_error(401, "INVALID_API_KEY");
}

#[tokio::test]
async fn public_key_only_tracks() {
    let app = TestApp::new().await;
    let pk = app.pk.clone();
    app.call(
        Method::POST,
        "/v1/track",
        Some(&pk),
        Some(json!({"email": "a@x.com", "event": "e"})),
        &[],
    )
    .await
    .expect(200);
    app.call(Method::GET, "/contacts", Some(&pk), None, &[])
        .await
        .expect_error(403, "FORBIDDEN");
    app.call(Method::GET, "/events", Some(&pk), None, &[])
        .await
        .expect_error(403, "FORBIDDEN");
    app.call(Method::POST, "/v1/send", Some(&pk), Some(json!({})), &[])
        .await
        .expect_error(403, "FORBIDDEN");
    // The secret key tracks too (as the official client does).
    app.post("/v1/track", json!({"email": "a@x.com", "event": "e"}))
        .await
        .expect(200);
}

#[tokio::test]
async fn disabled_workspace_is_403_for_every_request() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"disabled": true}))
        .await;
    app.get("/contacts")
        .await
        .expect_error(403, "PROJECT_DISABLED");
    let pk = app.pk.clone();
    app.call(
        Method::POST,
        "/v1/track",
        Some(&pk),
        Some(json!({"email": "a@x.com", "event": "e"})),
        &[],
    )
    .await
    .expect_error(403, "PROJECT_DISABLED");
    app.set_workspace(&app.workspace_id, json!({"disabled": false}))
        .await;
    app.get("/contacts").await.expect(200);
}

#[tokio::test]
async fn workspaces_never_see_each_other() {
    let app = TestApp::new().await;
    let (_, _, other_sk) = app.new_workspace("Other").await;
    let created = app
        .post("/contacts", json!({"email": "secret@x.com"}))
        .await
        .expect(201);
    let id = created.body["id"].as_str().expect("id").to_string();
    let tpl = app
        .post(
            "/templates",
            json!({"name": "t", "subject": "s", "body": "b", "type": "TRANSACTIONAL"}),
        )
        .await
        .expect(201);
    let tpl_id = tpl.body["id"].as_str().expect("id").to_string();
    let other = |m: Method, p: String, b| {
        let sk = other_sk.clone();
        let app = &app;
        async move { app.call(m, &p, Some(&sk), b, &[]).await }
    };
    other(Method::GET, format!("/contacts/{id}"), None)
        .await
        .expect_error(404, "CONTACT_NOT_FOUND");
    other(
        Method::PATCH,
        format!("/contacts/{id}"),
        Some(json!({"subscribed": false})),
    )
    .await
    .expect_error(404, "CONTACT_NOT_FOUND");
    other(Method::DELETE, format!("/contacts/{id}"), None)
        .await
        .expect_error(404, "CONTACT_NOT_FOUND");
    other(Method::GET, format!("/templates/{tpl_id}"), None)
        .await
        .expect_error(404, "TEMPLATE_NOT_FOUND");
    let list = other(Method::GET, "/contacts".into(), None)
        .await
        .expect(200);
    assert_eq!(list.body["data"], json!([]));
    assert_eq!(list.body["total"], json!(0));
    let events = other(Method::GET, "/events".into(), None).await.expect(200);
    assert_eq!(events.body["events"], json!([]));
    // Sending with the other workspace's template id is a 404, not a leak.
    other(
        Method::POST,
        "/v1/send".into(),
        Some(json!({"to": "a@x.com", "template": tpl_id, "from": "a@example.com"})),
    )
    .await
    .expect_error(404, "TEMPLATE_NOT_FOUND");
    // The first workspace still has its contact untouched.
    app.get(&format!("/contacts/{id}")).await.expect(200);
}

#[tokio::test]
async fn key_sets_can_be_created_listed_and_revoked() {
    let app = TestApp::new().await;
    let created = app
        .post("/keys", json!({"name": "ci", "domains": ["example.com"]}))
        .await
        .expect(201);
    let new_sk = created.body["secretKey"].as_str().expect("sk").to_string();
    assert!(new_sk.starts_with("sk_") && new_sk.len() == 67);
    assert_eq!(created.body["domains"], json!(["example.com"]));
    let list = app.get("/keys").await.expect(200);
    let sets = list.body["data"].as_array().expect("array");
    assert_eq!(sets.len(), 2);
    assert!(sets
        .iter()
        .all(|s| s.get("secretKeyHash").is_none() && s.get("secretKey").is_none()));
    // The new key works, then stops working once revoked.
    app.call(Method::GET, "/contacts", Some(&new_sk), None, &[])
        .await
        .expect(200);
    let id = created.body["id"].as_str().expect("id");
    app.delete(&format!("/keys/{id}")).await.expect(204);
    app.call(Method::GET, "/contacts", Some(&new_sk), None, &[])
        .await
        .expect_error(401, "INVALID_API_KEY");
    // The last key set cannot be revoked.
    let list = app.get("/keys").await.expect(200);
    let last = list.body["data"][0]["id"].as_str().expect("id").to_string();
    app.delete(&format!("/keys/{last}"))
        .await
        .expect_error(409, "CONFLICT");
    app.delete("/keys/00000000-0000-0000-0000-000000000000")
        .await
        .expect_error(404, "NOT_FOUND");
    app.post("/keys", json!({"domains": ["not a domain"]}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
}

#[tokio::test]
async fn segments_campaigns_and_key_sets_of_another_workspace_are_404() {
    let app = TestApp::new().await;
    // The second workspace, made through the operator API, owns one of each.
    let (_, _, their_sk) = app.new_workspace("Other").await;
    let theirs = |m: Method, p: &str, b| {
        let sk = their_sk.clone();
        let p = p.to_string();
        let app = &app;
        async move { app.call(m, &p, Some(&sk), b, &[]).await }
    };
    theirs(
        Method::POST,
        "/contacts",
        Some(json!({"email": "member@x.com", "data": {"plan": "pro"}})),
    )
    .await
    .expect(201);
    let seg = theirs(
        Method::POST,
        "/segments",
        Some(json!({"name": "Theirs", "type": "STATIC"})),
    )
    .await
    .expect(201);
    let seg = seg.body["id"].as_str().expect("id").to_string();
    theirs(
        Method::POST,
        &format!("/segments/{seg}/members"),
        Some(json!({"emails": ["member@x.com"]})),
    )
    .await
    .expect(200);
    let camp = theirs(
        Method::POST,
        "/campaigns",
        Some(json!({"name": "c", "subject": "s", "body": "b", "from": "a@example.com", "audienceType": "ALL"})),
    )
    .await
    .expect(201);
    let camp = camp.body["data"]["id"].as_str().expect("id").to_string();
    let keys = theirs(Method::POST, "/keys", Some(json!({"name": "second"})))
        .await
        .expect(201);
    let key_set = keys.body["id"].as_str().expect("id").to_string();

    // With our key, each is as unknown as an id that never existed.
    let sk = app.sk.clone();
    let ours = |m: Method, p: String, b| {
        let sk = sk.clone();
        let app = &app;
        async move { app.call(m, &p, Some(&sk), b, &[]).await }
    };
    let segment_calls = [
        (Method::GET, format!("/segments/{seg}"), None),
        (
            Method::PATCH,
            format!("/segments/{seg}"),
            Some(json!({"name": "Mine now"})),
        ),
        (
            Method::PUT,
            format!("/segments/{seg}"),
            Some(json!({"name": "Mine now"})),
        ),
        (Method::GET, format!("/segments/{seg}/contacts"), None),
        (
            Method::POST,
            format!("/segments/{seg}/members"),
            Some(json!({"emails": ["member@x.com"]})),
        ),
        (
            Method::DELETE,
            format!("/segments/{seg}/members"),
            Some(json!({"emails": ["member@x.com"]})),
        ),
        (Method::DELETE, format!("/segments/{seg}"), None),
    ];
    for (m, p, b) in segment_calls {
        let res = ours(m.clone(), p.clone(), b).await;
        assert!(
            !res.body.to_string().contains("Theirs"),
            "{m} {p} leaked: {}",
            res.body
        );
        res.expect_error(404, "SEGMENT_NOT_FOUND");
    }
    let campaign_calls = [
        (Method::GET, format!("/campaigns/{camp}"), None),
        (
            Method::PUT,
            format!("/campaigns/{camp}"),
            Some(json!({"name": "Mine now"})),
        ),
        (
            Method::PATCH,
            format!("/campaigns/{camp}"),
            Some(json!({"name": "Mine now"})),
        ),
        (Method::GET, format!("/campaigns/{camp}/stats"), None),
        (
            Method::POST,
            format!("/campaigns/{camp}/send"),
            Some(json!({})),
        ),
        (
            Method::POST,
            format!("/campaigns/{camp}/cancel"),
            Some(json!({})),
        ),
        (Method::DELETE, format!("/campaigns/{camp}"), None),
    ];
    for (m, p, b) in campaign_calls {
        ours(m, p, b).await.expect_error(404, "CAMPAIGN_NOT_FOUND");
    }
    ours(Method::DELETE, format!("/keys/{key_set}"), None)
        .await
        .expect_error(404, "NOT_FOUND");
    // Their segment cannot be our campaign's audience either.
    ours(
        Method::POST,
        "/campaigns".into(),
        Some(
            json!({"name": "c", "subject": "s", "body": "b", "from": "a@example.com",
                    "audienceType": "SEGMENT", "segmentId": seg}),
        ),
    )
    .await
    .expect_error(404, "SEGMENT_NOT_FOUND");
    // Lists show none of them.
    let lists = [("/segments", "data"), ("/campaigns", "data")];
    for (path, field) in lists {
        let res = ours(Method::GET, path.into(), None).await.expect(200);
        assert_eq!(res.body[field], json!([]), "{path}");
        assert_eq!(res.body["total"], json!(0), "{path}");
    }
    let our_keys = ours(Method::GET, "/keys".into(), None).await.expect(200);
    assert!(our_keys.body["data"]
        .as_array()
        .expect("keys")
        .iter()
        .all(|k| k["id"] != json!(key_set) && k["projectId"] == json!(app.workspace_id)));

    // Nothing of theirs changed.
    let seg_now = theirs(Method::GET, &format!("/segments/{seg}"), None)
        .await
        .expect(200);
    assert_eq!(seg_now.body["name"], json!("Theirs"));
    assert_eq!(seg_now.body["memberCount"], json!(1));
    let camp_now = theirs(Method::GET, &format!("/campaigns/{camp}"), None)
        .await
        .expect(200);
    assert_eq!(camp_now.body["data"]["name"], json!("c"));
    assert_eq!(camp_now.body["data"]["status"], json!("DRAFT"));
    let their_keys = theirs(Method::GET, "/keys", None).await.expect(200);
    assert!(their_keys.body["data"]
        .as_array()
        .expect("keys")
        .iter()
        .any(|k| k["id"] == json!(key_set)));
}

#[tokio::test]
async fn a_domain_scoped_key_cannot_manage_keys() {
    let app = TestApp::new().await;
    let scoped = app
        .post(
            "/keys",
            json!({"name": "scoped", "domains": ["example.com"]}),
        )
        .await
        .expect(201);
    let scoped_sk = scoped.body["secretKey"].as_str().expect("sk").to_string();
    let scoped_pk = scoped.body["publicKey"].as_str().expect("pk").to_string();
    let own_id = scoped.body["id"].as_str().expect("id").to_string();
    let list = app.get("/keys").await.expect(200);
    let first_id = list.body["data"]
        .as_array()
        .expect("key sets")
        .iter()
        .filter_map(|s| s["id"].as_str())
        .find(|id| *id != own_id)
        .expect("the first key set")
        .to_string();

    // Every /keys route refuses it: it could otherwise mint an unscoped key for itself.
    let as_scoped = |method: Method, path: String, body| {
        let sk = scoped_sk.clone();
        let app = &app;
        async move { app.call(method, &path, Some(&sk), body, &[]).await }
    };
    as_scoped(Method::GET, "/keys".into(), None)
        .await
        .expect_error(403, "FORBIDDEN");
    let refused = as_scoped(
        Method::POST,
        "/keys".into(),
        Some(json!({"name": "escape"})),
    )
    .await
    .expect_error(403, "FORBIDDEN");
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("example.com")),
        "the refusal names the key's scope: {}",
        refused.body
    );
    as_scoped(Method::DELETE, format!("/keys/{first_id}"), None)
        .await
        .expect_error(403, "FORBIDDEN");
    as_scoped(Method::DELETE, format!("/keys/{own_id}"), None)
        .await
        .expect_error(403, "FORBIDDEN");
    // A public key is refused as before.
    app.call(Method::GET, "/keys", Some(&scoped_pk), None, &[])
        .await
        .expect_error(403, "FORBIDDEN");

    // Nothing was created or revoked; the scoped key still works where it may.
    let after = app.get("/keys").await.expect(200);
    assert_eq!(after.body["data"].as_array().map(Vec::len), Some(2));
    app.call(Method::GET, "/contacts", Some(&scoped_sk), None, &[])
        .await
        .expect(200);
    // The unscoped key still manages keys.
    app.delete(&format!("/keys/{own_id}")).await.expect(204);
}
