//! Open and click tracking, one-click unsubscribe and `GET /stats`, over HTTP.

use axum::http::Method;
use posthorn_core::model::{BounceType, EmailId, EmailRecord};
use posthorn_core::ports::{Clock, OutgoingMessage};
use serde_json::{json, Value};

use crate::campaigns::{create, drain, seed};
use crate::harness::{send_body, Res, TestApp};

const BASE: &str = "http://127.0.0.1:8080";

/// A send whose body has a tracked link, a mailto link and an untracked link.
fn linked_body(to: &str) -> Value {
    let mut body = send_body(json!(to));
    body["body"] = json!(
        "<html><body><p>Hi <a href=\"https://shop.example/a?x=1&amp;y=2\">shop</a> \
         <a href=\"mailto:help@example.com\">help</a> \
         <a data-posthorn-no-track href=\"https://plain.example/\">plain</a></p></body></html>"
    );
    body
}

async fn sent_message(app: &TestApp, body: Value) -> (String, OutgoingMessage) {
    let res = app.post("/v1/send", body).await.expect(200);
    let id = res.body["data"]["emails"][0]["email"]
        .as_str()
        .expect("id")
        .to_string();
    app.run_jobs().await;
    let message = app
        .transport
        .messages()
        .into_iter()
        .find(|m| m.email_id.as_str() == id)
        .expect("delivered");
    (id, message)
}

/// Every link path (after the public base URL) of `prefix` in `html`, in order.
fn link_paths(html: &str, prefix: &str) -> Vec<String> {
    let needle = format!("{BASE}{prefix}");
    html.match_indices(&needle)
        .map(|(at, _)| {
            let rest = &html[at + BASE.len()..];
            let end = rest.find(['"', '\'', '>', ' ']).unwrap_or(rest.len());
            rest[..end].to_string()
        })
        .collect()
}

async fn anonymous(app: &TestApp, method: Method, path: &str) -> Res {
    app.raw(method, path, None, None, None, &[]).await
}

async fn email(app: &TestApp, id: &str) -> EmailRecord {
    app.engine
        .store
        .email(&app.ws(), &EmailId::from(id))
        .await
        .expect("store")
        .expect("email")
}

async fn events(app: &TestApp, name: &str) -> Vec<Value> {
    let res = app
        .get(&format!("/events?eventName={name}&limit=1000"))
        .await
        .expect(200);
    res.body["events"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn pixel_and_redirect_count_flag_first_and_refuse_tampering() {
    let app = TestApp::new().await;
    let (id, message) = sent_message(&app, linked_body("reader@x.com")).await;
    let html = &message.html;
    let pixels = link_paths(html, "/t/o/");
    let clicks = link_paths(html, "/t/c/");
    assert_eq!((pixels.len(), clicks.len()), (1, 1), "{html}");
    assert!(html.contains("href=\"mailto:help@example.com\""), "{html}");
    assert!(html.contains("href=\"https://plain.example/\""), "{html}");
    assert!(
        !html.contains("reader@x.com"),
        "no address in links: {html}"
    );

    let res = anonymous(&app, Method::GET, &pixels[0]).await.expect(200);
    assert_eq!(res.headers["content-type"], "image/gif");
    assert_eq!(res.headers["cache-control"], "no-store");
    // A repeat within a second collapses; a later one counts.
    anonymous(&app, Method::GET, &pixels[0]).await.expect(200);
    assert_eq!(email(&app, &id).await.lifecycle.opens, 1);
    app.clock.advance(chrono::Duration::seconds(2));
    anonymous(&app, Method::GET, &pixels[0]).await.expect(200);
    let record = email(&app, &id).await;
    assert_eq!(record.lifecycle.opens, 2);
    let opens = events(&app, "email.open").await;
    assert_eq!(opens.len(), 2);
    // Newest first.
    assert_eq!(opens[0]["data"]["isFirstOpen"], json!(false));
    assert_eq!(opens[1]["data"]["isFirstOpen"], json!(true));
    assert_eq!(opens[1]["data"]["opens"], json!(1));
    assert_eq!(opens[1]["data"]["emailId"], json!(id));

    let res = anonymous(&app, Method::GET, &clicks[0]).await.expect(302);
    assert_eq!(res.headers["location"], "https://shop.example/a?x=1&y=2");
    let click = events(&app, "email.click").await;
    assert_eq!(click.len(), 1);
    assert_eq!(
        click[0]["data"]["link"],
        json!("https://shop.example/a?x=1&y=2")
    );
    assert_eq!(click[0]["data"]["isFirstClick"], json!(true));
    assert_eq!(click[0]["data"]["clicks"], json!(1));

    // Tampered, truncated or foreign tokens: 404, never a redirect.
    let token = clicks[0].trim_start_matches("/t/c/");
    let (payload, tag) = token.split_once('.').expect("signed token");
    let mut flipped = payload.to_string();
    let last = flipped.pop().expect("payload");
    flipped.push(if last == 'A' { 'B' } else { 'A' });
    for bad in [
        format!("/t/c/{flipped}.{tag}"),
        format!("/t/c/{payload}"),
        "/t/c/aHR0cHM6Ly9ldmlsLmV4YW1wbGU.AAAAAAAAAAAAAAAAAAAAAA".to_string(),
        // An open token is no click token.
        format!("/t/c/{}", pixels[0].trim_start_matches("/t/o/")),
    ] {
        let res = anonymous(&app, Method::GET, &bad).await;
        assert_eq!(res.status.as_u16(), 404, "{bad}: {:?}", res.body);
        assert!(res.headers.get("location").is_none());
    }
    anonymous(&app, Method::GET, "/t/o/nope").await.expect(404);
    assert_eq!(email(&app, &id).await.lifecycle.clicks, 1);
}

#[tokio::test]
async fn only_the_first_twenty_opens_store_events() {
    let app = TestApp::new().await;
    let (id, message) = sent_message(&app, linked_body("many@x.com")).await;
    let pixel = link_paths(&message.html, "/t/o/").remove(0);
    for _ in 0..25 {
        anonymous(&app, Method::GET, &pixel).await.expect(200);
        app.clock.advance(chrono::Duration::seconds(2));
    }
    assert_eq!(email(&app, &id).await.lifecycle.opens, 25);
    assert_eq!(events(&app, "email.open").await.len(), 20);
}

#[tokio::test]
async fn tracking_can_be_switched_off_per_send() {
    let app = TestApp::new().await;
    let mut body = linked_body("quiet@x.com");
    body["tracking"] = json!(false);
    let (_, message) = sent_message(&app, body).await;
    assert!(
        link_paths(&message.html, "/t/").is_empty(),
        "{}",
        message.html
    );
    assert!(message
        .html
        .contains("href=\"https://shop.example/a?x=1&amp;y=2\""));
    // Transactional mail carries no unsubscribe headers.
    assert!(!message
        .headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("List-Unsubscribe")));
}

/// Sends a campaign to one new subscribed contact (its address tagged `tag`) and returns the
/// message delivered.
async fn one_campaign_message(app: &TestApp, tag: &str) -> OutgoingMessage {
    app.set_workspace(&app.workspace_id, json!({"sendRatePerSecond": 1000}))
        .await;
    seed(app, tag, 1, true, json!({})).await;
    let id = create(app, json!({"audienceType": "ALL"})).await;
    app.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .expect(200);
    drain(app).await;
    app.transport.messages().remove(0)
}

/// One-click unsubscribe, as a mail provider posts it.
async fn post_unsubscribe(app: &TestApp, path: &str) {
    app.raw(
        Method::POST,
        path,
        None,
        Some("List-Unsubscribe=One-Click"),
        Some("application/x-www-form-urlencoded"),
        &[],
    )
    .await
    .expect(200);
}

#[tokio::test]
async fn campaign_mail_unsubscribes_in_one_click_once() {
    let app = TestApp::new().await;
    let message = one_campaign_message(&app, "un").await;
    let header = |name: &str| {
        message
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("no {name} header: {:?}", message.headers))
    };
    assert_eq!(
        header("List-Unsubscribe-Post"),
        "List-Unsubscribe=One-Click"
    );
    let list = header("List-Unsubscribe");
    let url = list.trim_start_matches('<').trim_end_matches('>');
    let path = url.strip_prefix(BASE).expect("public URL").to_string();
    assert!(path.starts_with("/unsubscribe/"), "{path}");
    // The footer link (the body does not use {{unsubscribeUrl}}), never click-tracked.
    assert!(
        message.html.contains(&format!("href=\"{url}\"")),
        "{}",
        message.html
    );

    let page = anonymous(&app, Method::GET, &path).await.expect(200);
    let html = page.body.as_str().unwrap_or_default();
    assert!(html.contains("<form method=\"post\""), "{html}");
    for _ in 0..3 {
        post_unsubscribe(&app, &path).await;
    }
    let contacts = app.get("/contacts").await.expect(200);
    assert_eq!(contacts.body["data"][0]["subscribed"], json!(false));
    assert_eq!(events(&app, "contact.unsubscribed").await.len(), 1);
    let tampered = format!("{path}x");
    anonymous(&app, Method::POST, &tampered).await.expect(404);
}

#[tokio::test]
async fn unsubscribe_url_is_available_in_templates() {
    let app = TestApp::new().await;
    let mut body = send_body(json!("tpl@x.com"));
    body["body"] = json!("<p><a href=\"{{unsubscribeUrl}}\">leave</a></p>");
    let (_, message) = sent_message(&app, body).await;
    assert!(
        message
            .html
            .contains(&format!("href=\"{BASE}/unsubscribe/")),
        "{}",
        message.html
    );
}

#[tokio::test]
async fn stats_count_and_rate_per_window() {
    let app = TestApp::new().await;
    let mut ids = Vec::new();
    for to in ["s1@x.com", "s2@x.com", "s3@x.com", "s4@x.com"] {
        ids.push(app.send_one(to).await);
    }
    app.run_jobs().await;
    let (ws, now, e) = (app.ws(), app.clock.now(), &app.engine);
    let id = |i: usize| EmailId::from(ids[i].as_str());
    e.record_delivery(&ws, &id(0), now).await.expect("delivery");
    e.record_open(&ws, &id(1), now).await.expect("open");
    e.record_click(&ws, &id(1), "https://a.example/", now)
        .await
        .expect("click");
    e.record_bounce(&ws, &id(2), BounceType::Permanent, None, now)
        .await
        .expect("bounce");
    e.record_bounce(&ws, &id(3), BounceType::Transient, None, now)
        .await
        .expect("transient");
    e.record_complaint(&ws, &id(3), now)
        .await
        .expect("complaint");

    let res = app.get("/stats").await.expect(200);
    let day = &res.body["last24h"];
    let expected = json!({
        "sent": 4, "delivered": 3, "opened": 1, "clicked": 1, "bounced": 1, "complained": 1,
        "deliveryRate": 0.75, "openRate": 0.25, "clickRate": 0.25, "bounceRate": 0.25,
        "complaintRate": 0.25,
    });
    assert_eq!(day, &expected, "{}", res.body);
    assert_eq!(res.body["last30d"], expected);

    // Two days later the day window is empty, the week still counts them.
    app.clock.advance(chrono::Duration::days(2));
    let res = app.get("/stats").await.expect(200);
    assert_eq!(res.body["last24h"]["sent"], json!(0));
    assert_eq!(res.body["last24h"]["openRate"], json!(0.0));
    assert_eq!(res.body["last7d"]["sent"], json!(4));
    // Public keys may not read it.
    app.call(Method::GET, "/stats", Some(&app.pk), None, &[])
        .await
        .expect_error(403, "FORBIDDEN");
}

#[tokio::test]
async fn a_permanent_bounce_unsubscribes_once_and_a_transient_one_never() {
    let app = TestApp::new().await;
    app.post(
        "/contacts",
        json!({"email": "b1@x.com", "subscribed": true}),
    )
    .await
    .expect(201);
    app.post(
        "/contacts",
        json!({"email": "b2@x.com", "subscribed": true}),
    )
    .await
    .expect(201);
    let hard = app.send_one("b1@x.com").await;
    let soft = app.send_one("b2@x.com").await;
    app.run_jobs().await;
    let (ws, now, e) = (app.ws(), app.clock.now(), &app.engine);
    for _ in 0..2 {
        e.record_bounce(
            &ws,
            &EmailId::from(hard.as_str()),
            BounceType::Permanent,
            None,
            now,
        )
        .await
        .expect("bounce");
        e.record_bounce(
            &ws,
            &EmailId::from(soft.as_str()),
            BounceType::Transient,
            None,
            now,
        )
        .await
        .expect("bounce");
    }
    let unsubscribed = events(&app, "contact.unsubscribed").await;
    assert_eq!(unsubscribed.len(), 1);
    assert_eq!(unsubscribed[0]["data"], json!({"reason": "bounce"}));
    // A late delivery report never undoes the bounce.
    e.record_delivery(&ws, &EmailId::from(hard.as_str()), now)
        .await
        .expect("delivery");
    let record = email(&app, &hard).await;
    assert_eq!(record.status, posthorn_core::model::EmailStatus::Bounced);
    assert_eq!(record.lifecycle.delivered_at, None);
    let bounces = events(&app, "email.bounce").await;
    assert_eq!(bounces.len(), 3, "one permanent, two transient");
}

#[tokio::test]
async fn tracking_can_be_switched_off_per_workspace() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"trackOpens": false}))
        .await;
    let (_, message) = sent_message(&app, linked_body("noopen@x.com")).await;
    assert!(
        link_paths(&message.html, "/t/o/").is_empty(),
        "{}",
        message.html
    );
    assert_eq!(link_paths(&message.html, "/t/c/").len(), 1);

    app.set_workspace(
        &app.workspace_id,
        json!({"trackOpens": true, "trackClicks": false}),
    )
    .await;
    let (_, message) = sent_message(&app, linked_body("noclick@x.com")).await;
    assert_eq!(link_paths(&message.html, "/t/o/").len(), 1);
    assert!(
        link_paths(&message.html, "/t/c/").is_empty(),
        "{}",
        message.html
    );
    let ws = app
        .admin(
            Method::GET,
            &format!("/admin/workspaces/{}", app.workspace_id),
            None,
        )
        .await
        .expect(200);
    let shown = if ws.body["trackClicks"].is_null() {
        &ws.body["workspace"]
    } else {
        &ws.body
    };
    assert_eq!(shown["trackClicks"], json!(false), "{}", ws.body);
    assert_eq!(shown["trackOpens"], json!(true));
}

#[tokio::test]
async fn the_written_message_carries_the_one_click_headers() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"sendRatePerSecond": 1000}))
        .await;
    seed(&app, "eml", 1, true, json!({})).await;
    let id = create(&app, json!({"audienceType": "ALL"})).await;
    app.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .expect(200);
    // Deliver through the file transport instead of the capturing one.
    let dir = tempfile::tempdir().expect("tempdir");
    let files = posthorn_smtp::FileTransport::new(dir.path().to_path_buf());
    let engine = posthorn_core::Engine {
        transport: std::sync::Arc::new(files.clone()),
        ..app.engine.clone()
    };
    for _ in 0..20 {
        if engine.run_due_jobs().await.expect("jobs") == 0 {
            break;
        }
    }
    let written: Vec<_> = std::fs::read_dir(dir.path())
        .expect("outbox")
        .filter_map(|e| e.ok())
        .collect();
    assert_eq!(written.len(), 1);
    let eml = std::fs::read_to_string(written[0].path()).expect("eml");
    let unfolded = eml.replace("\r\n ", " ").replace("\r\n\t", " ");
    assert!(
        unfolded.contains(&format!("List-Unsubscribe: <{BASE}/unsubscribe/")),
        "{eml}"
    );
    assert!(
        unfolded.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click"),
        "{eml}"
    );
}

/// The executions of workflow `wf`, as listed.
async fn executions(app: &TestApp, wf: &str) -> Vec<Value> {
    let res = app
        .get(&format!("/workflows/{wf}/executions"))
        .await
        .expect(200);
    res.body["executions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn an_open_and_a_click_start_the_workflows_they_trigger() {
    let app = TestApp::new().await;
    let mut workflows = Vec::new();
    for event in ["email.open", "email.click"] {
        let wf = app
            .post(
                "/workflows",
                json!({"name": event, "triggerType": "EVENT", "triggerConfig": {"eventName": event}, "enabled": true}),
            )
            .await
            .expect(201);
        workflows.push(wf.body["id"].as_str().expect("id").to_string());
    }
    let (id, message) = sent_message(&app, linked_body("engaged@x.com")).await;
    let contact = email(&app, &id).await.contact_id;
    let pixel = link_paths(&message.html, "/t/o/").remove(0);
    let click = link_paths(&message.html, "/t/c/").remove(0);

    anonymous(&app, Method::GET, &pixel).await.expect(200);
    app.run_jobs().await;
    let opened = executions(&app, &workflows[0]).await;
    assert_eq!(opened.len(), 1, "{opened:?}");
    assert_eq!(opened[0]["contactId"], json!(contact.as_str()));
    assert!(executions(&app, &workflows[1]).await.is_empty());

    anonymous(&app, Method::GET, &click).await.expect(302);
    app.run_jobs().await;
    let clicked = executions(&app, &workflows[1]).await;
    assert_eq!(clicked.len(), 1, "{clicked:?}");
    assert_eq!(clicked[0]["contactId"], json!(contact.as_str()));
    assert_eq!(executions(&app, &workflows[0]).await.len(), 1);
}

#[tokio::test]
async fn an_open_moves_its_contact_into_a_tracked_segment_of_openers() {
    let app = TestApp::new().await;
    let cond =
        json!({"groups": [{"filters": [{"field": "email.opened", "operator": "triggered"}]}]});
    app.post(
        "/segments",
        json!({"name": "Openers", "condition": cond, "trackMembership": true}),
    )
    .await
    .expect(201);
    app.run_jobs().await;
    let (id, message) = sent_message(&app, linked_body("opener@x.com")).await;
    app.run_jobs().await;
    assert!(events(&app, "segment.openers.entry").await.is_empty());

    let pixel = link_paths(&message.html, "/t/o/").remove(0);
    anonymous(&app, Method::GET, &pixel).await.expect(200);
    app.run_jobs().await;
    app.run_jobs().await;
    let entered = events(&app, "segment.openers.entry").await;
    assert_eq!(entered.len(), 1, "{entered:?}");
    let contact = email(&app, &id).await.contact_id;
    assert_eq!(entered[0]["contactId"], json!(contact.as_str()));
}

#[tokio::test]
async fn concurrent_clicks_on_one_email_both_count_and_one_is_first() {
    // A link scanner clicks every link at once. Each click reads the email, decides and
    // writes its state; unguarded, the second write overwrote the first (one click counted,
    // two `isFirstClick: true` events). The memory store runs the two one after the other;
    // on SQLite and PostgreSQL, where the suite also runs, they interleave.
    let app = TestApp::new().await;
    let id = app.send_one("scanned@x.com").await;
    app.run_jobs().await;
    let ws = app.ws();
    let email_id = posthorn_core::model::EmailId::from(id.as_str());
    let at = app.clock.now();
    let (a, b) = tokio::join!(
        app.engine
            .record_click(&ws, &email_id, "https://example.com/a", at),
        app.engine.record_click(
            &ws,
            &email_id,
            "https://example.com/b",
            at + chrono::Duration::seconds(5)
        ),
    );
    a.expect("first click");
    b.expect("second click");
    let stored = app
        .engine
        .store
        .email_without_content(&ws, &email_id)
        .await
        .expect("store")
        .expect("email");
    assert_eq!(stored.lifecycle.clicks, 2);
    let events = app.get("/events?eventName=email.click").await.expect(200);
    let clicks: Vec<&serde_json::Value> = events.body["events"]
        .as_array()
        .map(|all| all.iter().filter(|e| e["emailId"] == id.as_str()).collect())
        .unwrap_or_default();
    assert_eq!(clicks.len(), 2);
    let first = clicks
        .iter()
        .filter(|e| e["data"]["isFirstClick"] == serde_json::json!(true))
        .count();
    assert_eq!(first, 1, "{clicks:?}");
}

#[tokio::test]
async fn a_caller_s_unsubscribe_headers_give_way_to_posthorn_s_on_marketing_mail() {
    let app = TestApp::new().await;
    let template = app
        .post(
            "/templates",
            json!({"name": "news", "subject": "News", "body": "<p>b</p>", "type": "MARKETING", "from": "news@example.com"}),
        )
        .await
        .expect(201);
    let own =
        json!({"List-Unsubscribe": "<https://elsewhere.test/u>", "List-Unsubscribe-Post": "x"});
    let (_, marketing) = sent_message(
        &app,
        json!({"to": "m@x.com", "subscribed": true, "template": template.body["id"], "headers": own}),
    )
    .await;
    let values = |message: &OutgoingMessage, name: &str| -> Vec<String> {
        message
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
            .collect()
    };
    let list = values(&marketing, "List-Unsubscribe");
    assert_eq!(list.len(), 1, "{list:?}");
    assert!(
        list[0].starts_with(&format!("<{BASE}/unsubscribe/")),
        "{list:?}"
    );
    assert_eq!(
        values(&marketing, "List-Unsubscribe-Post"),
        ["List-Unsubscribe=One-Click"]
    );
    // Transactional mail has none of Posthorn's: the caller's own are sent as given.
    let mut body = linked_body("t@x.com");
    body["headers"] = own;
    let (_, transactional) = sent_message(&app, body).await;
    assert_eq!(
        values(&transactional, "List-Unsubscribe"),
        ["<https://elsewhere.test/u>"]
    );
}

#[tokio::test]
async fn a_bounce_unsubscribes_whoever_holds_the_address_now() {
    let app = TestApp::new().await;
    let moved = app
        .post(
            "/contacts",
            json!({"email": "old@x.com", "subscribed": true}),
        )
        .await
        .expect(201);
    let moved_id = moved.body["id"].as_str().expect("id").to_string();
    let bounced = app.send_one("old@x.com").await;
    app.run_jobs().await;
    // The contact moves to a working address; another contact takes the old one.
    app.patch(
        &format!("/contacts/{moved_id}"),
        json!({"email": "new@x.com"}),
    )
    .await
    .expect(200);
    let taker = app
        .post(
            "/contacts",
            json!({"email": "old@x.com", "subscribed": true}),
        )
        .await
        .expect(201);
    app.engine
        .record_bounce(
            &app.ws(),
            &EmailId::from(bounced.as_str()),
            BounceType::Permanent,
            None,
            app.clock.now(),
        )
        .await
        .expect("bounce");
    let read = |id: String| {
        let app = &app;
        async move { app.get(&format!("/contacts/{id}")).await.expect(200).body }
    };
    assert_eq!(
        read(moved_id).await["subscribed"],
        json!(true),
        "its new address works"
    );
    let taker_id = taker.body["id"].as_str().expect("id").to_string();
    assert_eq!(
        read(taker_id).await["subscribed"],
        json!(false),
        "the dead address's holder"
    );
}

#[tokio::test]
async fn an_unsubscribe_link_reaches_the_address_after_its_contact_was_deleted_and_imported_again()
{
    let app = TestApp::new().await;
    let message = one_campaign_message(&app, "again").await;
    let list = message
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("List-Unsubscribe"))
        .map(|(_, v)| v.clone())
        .expect("List-Unsubscribe");
    let url = list.trim_start_matches('<').trim_end_matches('>');
    let path = url.strip_prefix(BASE).expect("public URL").to_string();
    let address = message.to.email.clone();
    // The contact is deleted, then imported again (a new id, subscribed).
    let contacts = app.get("/contacts").await.expect(200);
    let old_id = contacts.body["data"][0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    app.delete(&format!("/contacts/{old_id}")).await.expect(204);
    app.post("/contacts", json!({"email": address, "subscribed": true}))
        .await
        .expect(201);
    post_unsubscribe(&app, &path).await;
    let contacts = app.get("/contacts").await.expect(200);
    assert_eq!(contacts.body["data"][0]["email"], json!(address));
    assert_ne!(contacts.body["data"][0]["id"], json!(old_id));
    assert_eq!(contacts.body["data"][0]["subscribed"], json!(false));
    assert_eq!(events(&app, "contact.unsubscribed").await.len(), 1);
}
