use axum::http::Method;
use base64::Engine as _;
use serde_json::{json, Value};

use crate::harness::{send_body, TestApp};

#[tokio::test]
async fn send_answers_with_the_spec_shape_and_creates_contacts() {
    let app = TestApp::new().await;
    let res = app
        .post(
            "/v1/send",
            send_body(json!(["a@x.com", {"name": "Bee", "email": "B@x.com"}])),
        )
        .await
        .expect(200);
    assert_eq!(res.body["success"], json!(true));
    let emails = res.body["data"]["emails"].as_array().expect("emails");
    assert_eq!(emails.len(), 2);
    assert_eq!(emails[1]["contact"]["email"], json!("b@x.com"));
    assert!(emails[0]["contact"]["id"].as_str().is_some());
    assert!(emails[0]["email"].as_str().is_some());
    assert!(res.body["data"]["timestamp"].as_str().is_some());
    let id = emails[0]["contact"]["id"].as_str().expect("id");
    let contact = app.get(&format!("/contacts/{id}")).await.expect(200);
    assert_eq!(
        contact.body["subscribed"],
        json!(false),
        "contacts created by a send default to unsubscribed"
    );
}

#[tokio::test]
async fn delivery_renders_and_emits_email_sent() {
    let app = TestApp::new().await;
    let res = app
        .post(
            "/v1/send",
            json!({
                "to": {"name": "Ada", "email": "ada@x.com"},
                "from": {"name": "Acme", "email": "hello@example.com"},
                "subject": "Hi {{name}}", "body": "<p>Hello <b>{{name}}</b> {{evil}}</p>",
                "data": {"name": "Ada", "evil": "<script>x</script>"},
                "headers": {"X-Campaign": "autumn"}, "reply": "support@example.com"
            }),
        )
        .await
        .expect(200);
    let email_id = res.body["data"]["emails"][0]["email"]
        .as_str()
        .expect("id")
        .to_string();
    assert_eq!(
        app.transport.messages().len(),
        0,
        "nothing is sent before the job runs"
    );
    app.run_jobs().await;
    let sent = app.transport.messages();
    assert_eq!(sent.len(), 1);
    let m = &sent[0];
    assert_eq!(m.email_id.as_str(), email_id);
    assert_eq!(m.subject, "Hi Ada");
    assert!(m.html.contains("Hello <b>Ada</b>"));
    assert!(
        m.html.contains("&lt;script&gt;"),
        "values are escaped: {}",
        m.html
    );
    assert!(m
        .text
        .as_deref()
        .is_some_and(|t| t.contains("Hello") && !t.contains("<b>")));
    assert_eq!(m.from.name.as_deref(), Some("Acme"));
    assert_eq!(m.to.name.as_deref(), Some("Ada"));
    assert_eq!(m.reply_to.as_deref(), Some("support@example.com"));
    assert_eq!(
        m.headers,
        vec![("X-Campaign".to_string(), "autumn".to_string())]
    );

    let events = app.get("/events?eventName=email.sent").await.expect(200);
    let e = &events.body["events"][0];
    assert_eq!(e["emailId"], json!(email_id));
    let d = &e["data"];
    for key in [
        "subject",
        "from",
        "fromName",
        "messageId",
        "emailId",
        "templateId",
        "campaignId",
        "sourceType",
        "sentAt",
    ] {
        assert!(d.get(key).is_some(), "email.sent lacks {key}: {d}");
    }
    assert_eq!(d["subject"], json!("Hi Ada"));
    assert_eq!(d["from"], json!("hello@example.com"));
    assert_eq!(d["fromName"], json!("Acme"));
    assert_eq!(d["sourceType"], json!("TRANSACTIONAL"));
    assert_eq!(d["emailId"], json!(email_id));
    assert_eq!(d["templateId"], json!(null));
    // Running the jobs again sends nothing twice.
    app.run_jobs().await;
    assert_eq!(app.transport.messages().len(), 1);
}

#[tokio::test]
async fn text_part_can_be_given_or_turned_off() {
    let app = TestApp::new().await;
    let mut body = send_body(json!("t1@x.com"));
    body["text"] = json!("");
    app.post("/v1/send", body).await.expect(200);
    let mut body = send_body(json!("t2@x.com"));
    body["text"] = json!("Plain {{name}}");
    body["data"] = json!({"name": "Bo"});
    app.post("/v1/send", body).await.expect(200);
    app.run_jobs().await;
    let sent = app.transport.messages();
    let by = |to: &str| {
        sent.iter()
            .find(|m| m.to.email == to)
            .cloned()
            .expect("sent")
    };
    assert_eq!(by("t1@x.com").text, None);
    assert_eq!(by("t2@x.com").text.as_deref(), Some("Plain Bo"));
}

#[tokio::test]
async fn templates_supply_content_and_requests_override() {
    let app = TestApp::new().await;
    let t = app
        .post("/templates", json!({
            "name": "welcome", "subject": "Welcome {{name ?? \"friend\"}}", "body": "<h1>Hi {{ data.name }}</h1>",
            "type": "TRANSACTIONAL", "from": "team@example.com", "fromName": "Team", "replyTo": "help@example.com"
        }))
        .await
        .expect(201);
    let tid = t.body["id"].as_str().expect("id").to_string();
    app.post("/v1/send", json!({"to": "w1@x.com", "template": tid}))
        .await
        .expect(200);
    app.post("/v1/send", json!({"to": "w2@x.com", "template": tid, "data": {"name": "Zoe"}, "subject": "Custom", "from": "Other <other@example.com>"}))
        .await
        .expect(200);
    app.run_jobs().await;
    let sent = app.transport.messages();
    let w1 = sent.iter().find(|m| m.to.email == "w1@x.com").expect("w1");
    assert_eq!(w1.subject, "Welcome friend");
    assert_eq!(w1.from.email, "team@example.com");
    assert_eq!(w1.from.name.as_deref(), Some("Team"));
    assert_eq!(w1.reply_to.as_deref(), Some("help@example.com"));
    let w2 = sent.iter().find(|m| m.to.email == "w2@x.com").expect("w2");
    assert_eq!(w2.subject, "Custom");
    assert!(w2.html.contains("Hi Zoe"));
    assert_eq!(w2.from.email, "other@example.com");
    assert_eq!(w2.from.name.as_deref(), Some("Other"));
    let events = app
        .get("/events?eventName=email.sent&limit=10")
        .await
        .expect(200);
    assert!(events.body["events"]
        .as_array()
        .expect("events")
        .iter()
        .all(|e| e["data"]["templateId"] == json!(tid)));
}

#[tokio::test]
async fn marketing_templates_refuse_unsubscribed_recipients() {
    let app = TestApp::new().await;
    let t = app
        .post("/templates", json!({"name": "news", "subject": "News", "body": "b", "type": "MARKETING", "from": "news@example.com"}))
        .await
        .expect(201);
    let tid = t.body["id"].as_str().expect("id");
    app.post(
        "/contacts",
        json!({"email": "in@x.com", "subscribed": true}),
    )
    .await
    .expect(201);
    app.post(
        "/contacts",
        json!({"email": "out@x.com", "subscribed": false}),
    )
    .await
    .expect(201);
    let res = app
        .post(
            "/v1/send",
            json!({"to": ["in@x.com", "out@x.com"], "template": tid}),
        )
        .await
        .expect_error(400, "BAD_REQUEST");
    assert!(res.body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("out@x.com") && !m.contains("in@x.com")));
    app.run_jobs().await;
    assert!(app.transport.messages().is_empty(), "all or nothing");
    app.post("/v1/send", json!({"to": "in@x.com", "template": tid}))
        .await
        .expect(200);
}

#[tokio::test]
async fn sender_must_be_verified_and_in_the_key_scope() {
    let app = TestApp::new().await;
    let mut body = send_body(json!("a@x.com"));
    body["from"] = json!("me@unverified.io");
    let res = app
        .post("/v1/send", body)
        .await
        .expect_error(403, "DOMAIN_NOT_VERIFIED");
    assert!(res.body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("unverified.io")));
    let id = app.workspace_id.clone();
    app.admin(
        Method::POST,
        &format!("/admin/workspaces/{id}/domains"),
        Some(json!({"domain": "pending.io"})),
    )
    .await
    .expect(201);
    let mut body = send_body(json!("a@x.com"));
    body["from"] = json!("me@pending.io");
    app.post("/v1/send", body)
        .await
        .expect_error(403, "DOMAIN_NOT_VERIFIED");
    app.admin(
        Method::POST,
        &format!("/admin/workspaces/{id}/domains"),
        Some(json!({"domain": "other.io", "verified": true})),
    )
    .await
    .expect(201);
    let scoped = app
        .post("/keys", json!({"domains": ["example.com"]}))
        .await
        .expect(201);
    let scoped_sk = scoped.body["secretKey"].as_str().expect("sk").to_string();
    let mut body = send_body(json!("a@x.com"));
    body["from"] = json!("me@other.io");
    app.call(
        Method::POST,
        "/v1/send",
        Some(&scoped_sk),
        Some(body.clone()),
        &[],
    )
    .await
    .expect_error(403, "FORBIDDEN");
    app.post("/v1/send", body).await.expect(200);
    app.call(
        Method::POST,
        "/v1/send",
        Some(&scoped_sk),
        Some(send_body(json!("b@x.com"))),
        &[],
    )
    .await
    .expect(200);
}

#[tokio::test]
async fn every_bad_field_is_reported_and_nothing_is_written() {
    let app = TestApp::new().await;
    let res = app
        .post("/v1/send", json!({}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["to", "subject", "body"]);
    // `null` is no subject or body either (it used to send an empty message).
    let res = app
        .post(
            "/v1/send",
            json!({"to": "n@x.com", "subject": null, "body": null}),
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["subject", "body"]);
    let res = app
        .post("/v1/send", json!({
            "to": ["ok@x.com", "bad", {"email": 3}], "from": "Broken <nope>", "subject": "a\r\nBcc: x@y.com",
            "body": 5, "subscribed": "y", "data": 1, "headers": {"X-Ok": "1", "Bad Name": "v", "X-Inj": "a\nb", "From": "x", "DKIM-Signature": "v=1"},
            "reply": "not-email", "attachments": [{"filename": "a.txt"}, {"content": "QQ=="}, {"filename": "i.png", "content": "QQ==", "disposition": "inline"}],
            "template": 5
        }))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    let fields = res.error_fields();
    for f in [
        "to.1",
        "to.2.email",
        "from",
        "subject",
        "body",
        "subscribed",
        "data",
        "headers.Bad Name",
        "headers.X-Inj",
        "headers.From",
        "headers.DKIM-Signature",
        "reply",
        "attachments.0.content",
        "attachments.1.filename",
        "attachments.2.contentId",
        "template",
    ] {
        assert!(fields.iter().any(|x| x == f), "{f} missing from {fields:?}");
    }
    let list = app.get("/contacts").await.expect(200);
    assert_eq!(
        list.body["total"],
        json!(0),
        "no contact from refused sends"
    );
}

#[tokio::test]
async fn limits_one_past_the_edge() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"sendRatePerSecond": 1000}))
        .await;
    let many: Vec<Value> = (0..51).map(|i| json!(format!("u{i}@x.com"))).collect();
    let res = app
        .post("/v1/send", send_body(json!(many)))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["to"]);
    let fifty: Vec<Value> = (0..50).map(|i| json!(format!("u{i}@x.com"))).collect();
    let ok = app
        .post("/v1/send", send_body(json!(fifty)))
        .await
        .expect(200);
    assert_eq!(ok.body["data"]["emails"].as_array().map(Vec::len), Some(50));

    let small = base64::engine::general_purpose::STANDARD.encode(b"hello");
    let eleven: Vec<Value> = (0..11)
        .map(|i| json!({"filename": format!("f{i}.txt"), "content": small}))
        .collect();
    let mut body = send_body(json!("a@x.com"));
    body["attachments"] = json!(eleven);
    app.post("/v1/send", body)
        .await
        .expect_error(422, "VALIDATION_ERROR");

    let big = base64::engine::general_purpose::STANDARD.encode(vec![b'x'; 5 * 1024 * 1024 + 1]);
    let mut body = send_body(json!("a@x.com"));
    body["attachments"] =
        json!([{"filename": "a.bin", "content": big}, {"filename": "b.bin", "content": big}]);
    let res = app
        .post("/v1/send", body)
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["attachments"]);

    let ten: Vec<Value> = (0..10).map(|i| json!({"filename": format!("f{i}.txt"), "content": small, "contentType": "text/plain"})).collect();
    let mut body = send_body(json!("att@x.com"));
    body["attachments"] = json!(ten);
    app.post("/v1/send", body).await.expect(200);
    app.run_jobs().await;
    let sent = app.transport.messages();
    let m = sent
        .iter()
        .find(|m| m.to.email == "att@x.com")
        .expect("sent");
    assert_eq!(m.attachments.len(), 10);
    assert_eq!(m.attachments[0].content, b"hello");

    // Headers: fifty pass; past that one error for the lot, however bad each one is (a
    // flood of bad headers used to become one error each).
    let headers = |n: usize, bad: bool| -> Value {
        (0..n)
            .map(|i| {
                let name = if bad {
                    format!("Bad Name {i}")
                } else {
                    format!("X-H{i}")
                };
                (name, json!("v"))
            })
            .collect::<serde_json::Map<String, Value>>()
            .into()
    };
    let mut body = send_body(json!("hdr@x.com"));
    body["headers"] = headers(50, false);
    app.post("/v1/send", body).await.expect(200);
    let mut body = send_body(json!("hdr@x.com"));
    body["headers"] = headers(5_000, true);
    let res = app
        .post("/v1/send", body)
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["headers"]);
}

#[tokio::test]
async fn unknown_template_is_404_and_template_from_is_optional_when_given() {
    let app = TestApp::new().await;
    app.post(
        "/v1/send",
        json!({"to": "a@x.com", "template": "00000000-0000-7000-8000-000000000000"}),
    )
    .await
    .expect_error(404, "TEMPLATE_NOT_FOUND");
    let t = app
        .post(
            "/templates",
            json!({"name": "n", "subject": "s", "body": "b", "type": "TRANSACTIONAL"}),
        )
        .await
        .expect(201);
    let tid = t.body["id"].as_str().expect("id");
    let res = app
        .post("/v1/send", json!({"to": "a@x.com", "template": tid}))
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["from"]);
}

#[tokio::test]
async fn subscribed_flag_on_send_updates_existing_contacts() {
    let app = TestApp::new().await;
    app.post(
        "/contacts",
        json!({"email": "sub@x.com", "subscribed": false}),
    )
    .await
    .expect(201);
    let mut body = send_body(json!("sub@x.com"));
    body["subscribed"] = json!(true);
    let res = app.post("/v1/send", body).await.expect(200);
    let id = res.body["data"]["emails"][0]["contact"]["id"]
        .as_str()
        .expect("id");
    assert_eq!(
        app.get(&format!("/contacts/{id}")).await.body["subscribed"],
        json!(true)
    );
    // Without the flag an existing subscription is left alone.
    app.post("/v1/send", send_body(json!("sub@x.com")))
        .await
        .expect(200);
    assert_eq!(
        app.get(&format!("/contacts/{id}")).await.body["subscribed"],
        json!(true)
    );
}

#[tokio::test]
async fn top_level_name_is_the_sender_name() {
    let app = TestApp::new().await;
    let t = app
        .post(
            "/templates",
            json!({
                "name": "t", "subject": "s", "body": "b", "type": "TRANSACTIONAL",
                "from": "team@example.com", "fromName": "Template Team"
            }),
        )
        .await
        .expect(201);
    let tid = t.body["id"].as_str().expect("id").to_string();
    let cases = [
        // A plain address gets its name from `name`.
        (
            "n1@x.com",
            json!({"from": "hello@example.com", "name": "Acme Support"}),
        ),
        // `name` wins over the name inside `from`, in both of its forms.
        (
            "n2@x.com",
            json!({"from": "Inner <hello@example.com>", "name": "Acme Support"}),
        ),
        (
            "n3@x.com",
            json!({"from": {"name": "Inner", "email": "hello@example.com"}, "name": "Acme Support"}),
        ),
        // And over the template's fromName, keeping the template's address.
        ("n4@x.com", json!({"template": tid, "name": "Acme Support"})),
    ];
    for (to, extra) in &cases {
        let mut body = if extra.get("template").is_some() {
            json!({"to": to})
        } else {
            send_body(json!(to))
        };
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        app.post("/v1/send", body).await.expect(200);
    }
    // Without `name`, the name in `from` stays.
    app.post(
        "/v1/send",
        json!({"to": "n5@x.com", "from": "Inner <hello@example.com>", "subject": "s", "body": "b"}),
    )
    .await
    .expect(200);
    app.run_jobs().await;
    let sent = app.transport.messages();
    let from_of = |to: &str| {
        sent.iter()
            .find(|m| m.to.email == to)
            .map(|m| m.from.clone())
            .unwrap_or_else(|| panic!("nothing sent to {to}"))
    };
    for (to, _) in &cases[..3] {
        let from = from_of(to);
        assert_eq!(from.name.as_deref(), Some("Acme Support"), "{to}");
        assert_eq!(from.email, "hello@example.com", "{to}");
    }
    let templated = from_of("n4@x.com");
    assert_eq!(templated.name.as_deref(), Some("Acme Support"));
    assert_eq!(templated.email, "team@example.com");
    assert_eq!(from_of("n5@x.com").name.as_deref(), Some("Inner"));
    // The name is what `email.sent` reports as fromName.
    let events = app
        .get("/events?eventName=email.sent&limit=10")
        .await
        .expect(200);
    let named = events.body["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["data"]["fromName"] == json!("Acme Support"))
        .count();
    assert_eq!(named, 4);

    // `name` is a string on one line.
    for bad in [json!(5), json!("Evil\r\nBcc: x@y.com")] {
        let mut body = send_body(json!("n6@x.com"));
        body["name"] = bad;
        let res = app
            .post("/v1/send", body)
            .await
            .expect_error(422, "VALIDATION_ERROR");
        assert_eq!(res.error_fields(), ["name"]);
    }
}
