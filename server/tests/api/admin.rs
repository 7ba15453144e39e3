use axum::http::Method;
use serde_json::json;

use crate::harness::{TestApp, ADMIN};

#[tokio::test]
async fn operator_creates_workspaces_with_keys_and_domains() {
    let app = TestApp::new().await;
    let res = app
        .admin(Method::POST, "/admin/workspaces", Some(json!({"name": "Beta", "activeContactLimit": 5, "rateLimitPerMinute": 50, "sendRatePerSecond": 2.5})))
        .await
        .expect(201);
    let ws = &res.body["workspace"];
    assert_eq!(ws["name"], json!("Beta"));
    assert_eq!(ws["disabled"], json!(false));
    assert_eq!(ws["activeContactLimit"], json!(5));
    assert_eq!(ws["rateLimitPerMinute"], json!(50));
    assert_eq!(ws["sendRatePerSecond"], json!(2.5));
    assert!(res.body["keySet"]["publicKey"]
        .as_str()
        .is_some_and(|k| k.starts_with("pk_")));
    assert_eq!(res.body["keySet"]["domains"], json!([]));
    let id = ws["id"].as_str().expect("id");

    let read = app
        .admin(Method::GET, &format!("/admin/workspaces/{id}"), None)
        .await
        .expect(200);
    assert_eq!(read.body["name"], json!("Beta"));
    let patched = app
        .admin(
            Method::PATCH,
            &format!("/admin/workspaces/{id}"),
            Some(json!({"activeContactLimit": null, "name": "Gamma"})),
        )
        .await
        .expect(200);
    assert_eq!(patched.body["activeContactLimit"], json!(null));
    assert_eq!(patched.body["name"], json!("Gamma"));

    let set = app
        .admin(
            Method::POST,
            &format!("/admin/workspaces/{id}/key-sets"),
            Some(json!({"domains": ["mail.example.com"]})),
        )
        .await
        .expect(201);
    assert_eq!(set.body["domains"], json!(["mail.example.com"]));
    assert!(set.body["secretKey"]
        .as_str()
        .is_some_and(|k| k.starts_with("sk_")));

    let domain = app
        .admin(
            Method::POST,
            &format!("/admin/workspaces/{id}/domains"),
            Some(json!({"domain": "Mail.Example.com", "verified": true, "inboundEnabled": true})),
        )
        .await
        .expect(201);
    assert_eq!(domain.body["domain"], json!("mail.example.com"));
    assert_eq!(domain.body["verified"], json!(true));
    assert_eq!(domain.body["inboundEnabled"], json!(true));
    app.admin(
        Method::POST,
        &format!("/admin/workspaces/{id}/domains"),
        Some(json!({"domain": "mail.example.com"})),
    )
    .await
    .expect_error(409, "CONFLICT");

    let list = app
        .admin(Method::GET, "/admin/workspaces", None)
        .await
        .expect(200);
    assert_eq!(list.body["data"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn operator_api_validates_and_guards() {
    let app = TestApp::new().await;
    app.call(Method::GET, "/admin/workspaces", None, None, &[])
        .await
        .expect_error(401, "INVALID_API_KEY");
    let sk = app.sk.clone();
    app.call(Method::GET, "/admin/workspaces", Some(&sk), None, &[])
        .await
        .expect_error(401, "INVALID_API_KEY");
    let bad = app
        .admin(
            Method::POST,
            "/admin/workspaces",
            Some(json!({"name": 3, "rateLimitPerMinute": 0, "sendRatePerSecond": -1})),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(
        bad.error_fields(),
        ["name", "rateLimitPerMinute", "sendRatePerSecond"]
    );
    app.admin(Method::GET, "/admin/workspaces/nope", None)
        .await
        .expect_error(404, "NOT_FOUND");
    app.admin(
        Method::POST,
        "/admin/workspaces/nope/domains",
        Some(json!({"domain": "x.com"})),
    )
    .await
    .expect_error(404, "NOT_FOUND");
    let id = app.workspace_id.clone();
    let bad = app
        .admin(
            Method::POST,
            &format!("/admin/workspaces/{id}/domains"),
            Some(json!({"domain": "not_a domain"})),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(bad.error_fields(), ["domain"]);
    assert!(!ADMIN.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_run_bootstrap_happens_once_even_when_racing() {
    let app = TestApp::new().await;
    // The harness already made workspaces, so bootstrap does nothing here.
    assert!(app
        .engine
        .bootstrap("example.com")
        .await
        .expect("bootstrap")
        .is_none());
    for _ in 0..20 {
        let store = std::sync::Arc::new(posthorn_memory::MemoryStore::new());
        let engine = posthorn_core::Engine {
            store: store.clone(),
            jobs: store.clone(),
            ..app.engine.clone()
        };
        let (a, b) = tokio::join!(
            tokio::spawn({
                let e = engine.clone();
                async move { e.bootstrap("example.com").await }
            }),
            tokio::spawn({
                let e = engine.clone();
                async move { e.bootstrap("example.com").await }
            }),
        );
        let created = [a.expect("join").expect("a"), b.expect("join").expect("b")];
        assert_eq!(
            created.iter().filter(|c| c.is_some()).count(),
            1,
            "exactly one first run wins"
        );
        let workspaces = engine.store.workspaces().await.expect("list");
        assert_eq!(workspaces.len(), 1);
        assert_eq!(
            engine
                .store
                .key_sets(&workspaces[0].id)
                .await
                .expect("keys")
                .len(),
            1
        );
        let domains = engine
            .store
            .domains(&workspaces[0].id)
            .await
            .expect("domains");
        assert!(domains.len() == 1 && domains[0].verified);
    }
}
