//! A key limited to some sender domains may not change, delete or put in a workflow step a
//! template sent from another domain (as it may not change such a campaign), while templates
//! of its own domains stay its to edit.

use axum::http::Method;
use serde_json::{json, Value};

use crate::harness::TestApp;

async fn template_from(app: &TestApp, from: &str) -> String {
    let res = app
        .post(
            "/templates",
            json!({"name": from, "subject": "Hi", "body": "<p>Hi</p>", "type": "TRANSACTIONAL", "from": from}),
        )
        .await
        .expect(201);
    res.body["id"].as_str().expect("template id").to_string()
}

#[tokio::test]
async fn a_limited_key_keeps_to_templates_of_its_domains() {
    let app = TestApp::new().await;
    app.admin(
        Method::POST,
        &format!("/admin/workspaces/{}/domains", app.workspace_id),
        Some(json!({"domain": "brand.test", "verified": true})),
    )
    .await
    .expect(201);
    let brand = template_from(&app, "news@brand.test").await;
    let own = template_from(&app, "hello@example.com").await;
    let sk = app.scoped_secret_key(&["example.com"]).await;
    let call = |method: Method, path: String, body: Option<Value>| {
        let sk = sk.clone();
        let app = &app;
        async move { app.call(method, &path, Some(&sk), body, &[]).await }
    };

    let edit = json!({"body": "<p>changed by another domain's key</p>"});
    call(
        Method::PATCH,
        format!("/templates/{brand}"),
        Some(edit.clone()),
    )
    .await
    .expect_error(403, "FORBIDDEN");
    call(Method::DELETE, format!("/templates/{brand}"), None)
        .await
        .expect_error(403, "FORBIDDEN");
    let wf = call(
        Method::POST,
        "/workflows".into(),
        Some(json!({"name": "Flow", "triggerType": "MANUAL"})),
    )
    .await
    .expect(201);
    let wf = wf.body["id"].as_str().expect("workflow id").to_string();
    call(
        Method::POST,
        format!("/workflows/{wf}/steps"),
        Some(json!({"type": "SEND_EMAIL", "name": "Mail", "templateId": brand})),
    )
    .await
    .expect_error(403, "FORBIDDEN");
    let step = call(
        Method::POST,
        format!("/workflows/{wf}/steps"),
        Some(json!({"type": "SEND_EMAIL", "name": "Mail", "templateId": own})),
    )
    .await
    .expect(201);
    let step = step.body["id"].as_str().expect("step id").to_string();
    call(
        Method::PATCH,
        format!("/workflows/{wf}/steps/{step}"),
        Some(json!({"templateId": brand})),
    )
    .await
    .expect_error(403, "FORBIDDEN");

    // Its own domain's template is its to change; the other is unchanged.
    call(Method::PATCH, format!("/templates/{own}"), Some(edit))
        .await
        .expect(200);
    let kept = app.get(&format!("/templates/{brand}")).await.expect(200);
    assert_eq!(kept.body["body"], json!("<p>Hi</p>"));
}
