use axum::http::Method;
use posthorn_core::model::EmailId;
use posthorn_core::model::EmailStatus;
use posthorn_core::ports::{Clock, TransportError};
use posthorn_core::Settings;
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

async fn email_status(app: &TestApp, email_id: &str) -> (EmailStatus, Option<String>) {
    let email = app
        .engine
        .store
        .email(&app.ws(), &EmailId::from(email_id))
        .await
        .expect("store")
        .expect("email");
    (email.status, email.error)
}

#[tokio::test]
async fn dead_delivery_is_listed_and_revived_until_sent() {
    let settings = Settings {
        max_delivery_attempts: 2,
        ..Settings::default()
    };
    let app = TestApp::with_settings(settings).await;
    // Exactly the two attempts allowed fail: the job ends dead, the email FAILED.
    app.transport
        .fail_next(2, TransportError::Transient("timeout".into()));
    let email_id = app.send_one("dead@x.com").await;
    app.run_jobs().await;
    app.clock.advance(chrono::Duration::minutes(5));
    app.run_jobs().await;
    let (status, error) = email_status(&app, &email_id).await;
    assert_eq!(status, EmailStatus::Failed);
    assert!(error.is_some());
    assert!(app.transport.messages().is_empty());

    let listed = app
        .admin(Method::GET, "/admin/jobs/dead", None)
        .await
        .expect(200);
    let jobs = listed.body["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 1, "{}", listed.body);
    let job = &jobs[0];
    assert_eq!(job["kind"], json!("deliver_email"));
    assert_eq!(job["payload"]["kind"], json!("deliver_email"));
    assert_eq!(job["payload"]["email_id"], json!(email_id));
    assert_eq!(job["payload"]["workspace_id"], json!(app.workspace_id));
    assert_eq!(job["attempts"], json!(1));
    assert!(
        job["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("timeout")),
        "{job}"
    );
    let job_id = job["id"].as_str().expect("job id").to_string();

    let revive = format!("/admin/jobs/{job_id}/revive");
    let revived = app.admin(Method::POST, &revive, None).await.expect(200);
    assert_eq!(revived.body, json!({"revived": true, "id": job_id}));
    assert_eq!(
        email_status(&app, &email_id).await,
        (EmailStatus::Queued, None),
        "reviving a delivery puts its email back in the queue"
    );
    let stats = app.engine.jobs.stats(app.clock.now()).await.expect("stats");
    assert_eq!((stats.queued, stats.dead), (1, 0));

    // The transport works again: the next run delivers it.
    app.run_jobs().await;
    assert_eq!(email_status(&app, &email_id).await.0, EmailStatus::Sent);
    assert_eq!(app.transport.messages().len(), 1);
    let listed = app
        .admin(Method::GET, "/admin/jobs/dead", None)
        .await
        .expect(200);
    assert_eq!(listed.body, json!({"jobs": []}));

    app.admin(Method::POST, &revive, None)
        .await
        .expect_error(404, "NOT_FOUND");
    app.admin(Method::POST, "/admin/jobs/nope/revive", None)
        .await
        .expect_error(404, "NOT_FOUND");
}

#[tokio::test]
async fn dead_jobs_api_is_guarded_and_validated() {
    let app = TestApp::new().await;
    let sk = app.sk.clone();
    for (method, path) in [
        (Method::GET, "/admin/jobs/dead"),
        (Method::POST, "/admin/jobs/some-id/revive"),
    ] {
        app.call(method.clone(), path, None, None, &[])
            .await
            .expect_error(401, "INVALID_API_KEY");
        app.call(method.clone(), path, Some("wrong-token"), None, &[])
            .await
            .expect_error(401, "INVALID_API_KEY");
        app.call(method, path, Some(&sk), None, &[])
            .await
            .expect_error(401, "INVALID_API_KEY");
    }
    for bad in ["0", "501", "-1", "ten"] {
        let res = app
            .admin(Method::GET, &format!("/admin/jobs/dead?limit={bad}"), None)
            .await
            .expect_error(422, "VALIDATION_ERROR");
        assert_eq!(res.error_fields(), ["limit"]);
    }
    for good in ["1", "500"] {
        let res = app
            .admin(Method::GET, &format!("/admin/jobs/dead?limit={good}"), None)
            .await
            .expect(200);
        assert_eq!(res.body, json!({"jobs": []}));
    }
}
