use serde_json::json;

use crate::harness::TestApp;

fn tpl(name: &str, kind: &str) -> serde_json::Value {
    json!({"name": name, "subject": "S {{x}}", "body": "<p>{{x}}</p>", "type": kind})
}

#[tokio::test]
async fn crud_round_trip() {
    let app = TestApp::new().await;
    let created = app
        .post("/templates", tpl("Welcome", "TRANSACTIONAL"))
        .await
        .expect(201);
    let t = &created.body;
    assert_eq!(t["name"], json!("Welcome"));
    assert_eq!(t["type"], json!("TRANSACTIONAL"));
    assert_eq!(t["description"], json!(null));
    assert_eq!(t["text"], json!(null));
    assert_eq!(t["projectId"], json!(app.workspace_id));
    let id = t["id"].as_str().expect("id");
    assert_eq!(
        app.get(&format!("/templates/{id}")).await.expect(200).body["name"],
        json!("Welcome")
    );
    let patched = app
        .patch(
            &format!("/templates/{id}"),
            json!({"subject": "New", "description": "d", "type": "MARKETING"}),
        )
        .await
        .expect(200);
    assert_eq!(patched.body["subject"], json!("New"));
    assert_eq!(patched.body["description"], json!("d"));
    assert_eq!(patched.body["type"], json!("MARKETING"));
    assert_eq!(patched.body["body"], json!("<p>{{x}}</p>"));
    let cleared = app
        .patch(&format!("/templates/{id}"), json!({"description": null}))
        .await
        .expect(200);
    assert_eq!(cleared.body["description"], json!(null));
    app.delete(&format!("/templates/{id}")).await.expect(204);
    app.get(&format!("/templates/{id}"))
        .await
        .expect_error(404, "TEMPLATE_NOT_FOUND");
    app.patch(&format!("/templates/{id}"), json!({}))
        .await
        .expect_error(404, "TEMPLATE_NOT_FOUND");
    app.delete(&format!("/templates/{id}"))
        .await
        .expect_error(404, "TEMPLATE_NOT_FOUND");
}

#[tokio::test]
async fn create_validates_required_fields_and_syntax() {
    let app = TestApp::new().await;
    let res = app
        .post("/templates", json!({}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["name", "subject", "body", "type"]);
    let res = app
        .post(
            "/templates",
            json!({"name": "n", "subject": "s", "body": "{% if %}", "type": "NEWSLETTER"}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["type", "body"]);
    let res = app
        .post("/templates", json!({"name": "n", "subject": "s", "body": "b", "type": "MARKETING", "from": "x@unverified.io"}))
        .await
        .expect_error(403, "DOMAIN_NOT_VERIFIED");
    assert!(res.body["error"]["message"].is_string());
    app.post(
        "/templates",
        json!({"name": "n", "subject": "a\nb", "body": "b", "type": "MARKETING"}),
    )
    .await
    .expect_error(422, "VALIDATION_ERROR");
    // The plain-text body is a template too: checked when written, not only when sent.
    let res = app
        .post(
            "/templates",
            json!({"name": "n", "subject": "s", "body": "{% if %}", "text": "hello {% if %}", "type": "TRANSACTIONAL"}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["body", "text"]);
    // A filter that does not exist would fail every send: refused when written.
    let res = app
        .post(
            "/templates",
            json!({"name": "n", "subject": "{{ name | shout }}", "body": "Hi {{ name | uppercase }}", "type": "TRANSACTIONAL"}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["subject", "body"]);
    assert_eq!(
        res.body["error"]["errors"][1]["code"],
        json!("invalid_template")
    );
    let made = app
        .post(
            "/templates",
            json!({"name": "n", "subject": "s", "body": "b", "text": "Hi {{name}}", "type": "TRANSACTIONAL"}),
        )
        .await
        .expect(201);
    let id = made.body["id"].as_str().expect("id");
    let res = app
        .patch(&format!("/templates/{id}"), json!({"text": "{{ oops"}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["text"]);
}

#[tokio::test]
async fn list_pages_filters_and_searches() {
    let app = TestApp::new().await;
    for i in 0..5 {
        app.post("/templates", tpl(&format!("Promo {i}"), "MARKETING"))
            .await
            .expect(201);
    }
    for i in 0..3 {
        app.post("/templates", tpl(&format!("Receipt {i}"), "TRANSACTIONAL"))
            .await
            .expect(201);
    }
    let all = app.get("/templates").await.expect(200);
    assert_eq!(all.body["total"], json!(8));
    assert_eq!(all.body["page"], json!(1));
    assert_eq!(all.body["pageSize"], json!(20));
    assert_eq!(all.body["totalPages"], json!(1));
    let marketing = app
        .get("/templates?type=MARKETING&pageSize=2&page=2")
        .await
        .expect(200);
    assert_eq!(marketing.body["total"], json!(5));
    assert_eq!(marketing.body["totalPages"], json!(3));
    assert_eq!(marketing.body["data"].as_array().map(Vec::len), Some(2));
    let search = app.get("/templates?search=receipt").await.expect(200);
    assert_eq!(search.body["total"], json!(3));
    // limit + cursor walk every template exactly once.
    let mut seen = Vec::new();
    let mut path = "/templates?limit=3".to_string();
    loop {
        let page = app.get(&path).await.expect(200);
        for t in page.body["data"].as_array().expect("data") {
            seen.push(t["id"].as_str().expect("id").to_string());
        }
        match page.body["cursor"].as_str() {
            Some(c) => path = format!("/templates?limit=3&cursor={c}"),
            None => break,
        }
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 8);
    for bad in [
        "type=OTHER",
        "limit=101",
        "pageSize=0",
        "page=0",
        "cursor=zzz",
        // `page:1000001` and `page:4611686018427387905`: pages past the last one, the
        // second one whose offset would wrap to 0 (page 1 under another number).
        "cursor=cGFnZToxMDAwMDAx",
        "cursor=cGFnZTo0NjExNjg2MDE4NDI3Mzg3OTA1",
    ] {
        app.get(&format!("/templates?{bad}"))
            .await
            .expect_error(422, "VALIDATION_ERROR");
    }
}
