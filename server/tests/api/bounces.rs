//! Bounce collection: the envelope sender outgoing mail carries (a per-email bounce address
//! on an inbound domain, at POSTHORN_BOUNCE_DOMAIN, or the sender's own address), and the
//! DSN and ARF reports that come back to it, matched to their email and recorded.

use std::path::PathBuf;
use std::sync::Arc;

use posthorn_core::bounce::token;
use posthorn_core::model::{BounceType, EmailId, EmailRecord};
use posthorn_core::{Engine, Settings};
use posthorn_smtp::FileTransport;
use serde_json::{json, Value};

use crate::harness::TestApp;

/// A bounce fixture (core/tests/fixtures/bounces) about `email`, sent to `to`.
fn fixture(name: &str, email: &EmailRecord, to: &str) -> Vec<u8> {
    let path = format!(
        "{}/../core/tests/fixtures/bounces/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("fixture");
    let recipient = email.to.email.as_str();
    text.replace("{{RECIPIENT}}", recipient)
        .replace(
            "{{RECIPIENT_LOCAL}}",
            recipient.split('@').next().unwrap_or_default(),
        )
        .replace("{{MESSAGE_ID}}", &email.message_id)
        .replace("{{EMAIL_ID}}", email.id.as_str())
        .replace("{{SENDER}}", &email.from.email)
        .replace("{{BOUNCE_ADDRESS}}", to)
        .replace('\n', "\r\n")
        .into_bytes()
}

/// Offers the report fixture `name` about `email`, sent to `to`, to the engine.
async fn offer(
    app: &TestApp,
    name: &str,
    email: &EmailRecord,
    to: &str,
) -> posthorn_core::Result<bool> {
    let raw = fixture(name, email, to);
    app.engine.receive_bounce_message(to, &raw).await
}

async fn email(app: &TestApp, id: &str) -> EmailRecord {
    app.engine
        .store
        .email(&app.ws(), &EmailId::from(id))
        .await
        .expect("store")
        .expect("email")
}

async fn subscribed(app: &TestApp, email: &EmailRecord) -> bool {
    app.engine
        .store
        .contact(&app.ws(), &email.contact_id)
        .await
        .expect("store")
        .expect("contact")
        .subscribed
}

async fn events(app: &TestApp, name: &str) -> Vec<Value> {
    let res = app
        .get(&format!("/events?eventName={name}&limit=1000"))
        .await
        .expect(200);
    res.body["events"].as_array().cloned().unwrap_or_default()
}

/// Turns inbound on for the workspace's example.com.
async fn enable_inbound(app: &TestApp) {
    let domains = app.get("/domains").await.expect(200).body;
    let list = domains["data"]
        .as_array()
        .or_else(|| domains["domains"].as_array())
        .cloned()
        .unwrap_or_default();
    let id = list
        .iter()
        .find(|d| d["domain"] == "example.com")
        .and_then(|d| d["id"].as_str())
        .unwrap_or_else(|| panic!("example.com in {domains}"))
        .to_owned();
    app.patch(&format!("/domains/{id}"), json!({"inboundEnabled": true}))
        .await
        .expect(200);
}

/// A subscribed contact at `to`, one email sent to it; the email and its envelope sender.
async fn sent(app: &TestApp, to: &str) -> (EmailRecord, String) {
    app.post("/contacts", json!({"email": to, "subscribed": true}))
        .await
        .expect(201);
    let id = app.send_one(to).await;
    app.run_jobs().await;
    let envelope = app
        .transport
        .messages()
        .into_iter()
        .find(|m| m.email_id.as_str() == id)
        .expect("sent")
        .envelope_from;
    (email(app, &id).await, envelope)
}

fn temp_dir() -> PathBuf {
    std::env::temp_dir().join(format!(
        "posthorn-bounces-{}",
        uuid::Uuid::new_v4().simple()
    ))
}

/// Sends one email through the file transport; the first line of its `.eml`.
async fn return_path_line(app: &TestApp) -> (String, String) {
    let dir = temp_dir();
    let engine = Engine {
        transport: Arc::new(FileTransport::new(dir.clone())),
        ..app.engine.clone()
    };
    let res = app
        .post("/v1/send", crate::harness::send_body(json!("ret@x.com")))
        .await
        .expect(200);
    let id = res.body["data"]["emails"][0]["email"]
        .as_str()
        .expect("id")
        .to_owned();
    engine.run_due_jobs().await.expect("jobs");
    let raw = std::fs::read_to_string(dir.join(format!("{id}.eml"))).expect("eml");
    let _ = std::fs::remove_dir_all(&dir);
    let first = raw.lines().next().unwrap_or_default().to_owned();
    (id, first)
}

#[tokio::test]
async fn the_eml_return_path_is_a_bounce_address_on_an_inbound_domain() {
    let app = TestApp::new().await;
    enable_inbound(&app).await;
    let (id, line) = return_path_line(&app).await;
    let address = line
        .strip_prefix("Return-Path: <")
        .and_then(|l| l.strip_suffix('>'))
        .unwrap_or_else(|| panic!("{line}"));
    let (text, domain) = token::split_address(address).unwrap_or_else(|| panic!("{address}"));
    assert_eq!(domain, "example.com");
    let key = app.engine.bounce_key().await.expect("key");
    assert_eq!(token::verify(&key, text), Some(EmailId::from(id)));
    assert!(address.split('@').next().unwrap_or_default().len() <= 64);
    assert!(app.engine.is_bounce_address(address));
}

#[tokio::test]
async fn the_eml_return_path_falls_back_to_the_bounce_domain_then_the_sender() {
    let app = TestApp::with_settings(Settings {
        bounce_domain: Some("bounces.example.net".into()),
        ..Settings::default()
    })
    .await;
    let (_, line) = return_path_line(&app).await;
    assert!(
        line.starts_with("Return-Path: <bounces+") && line.ends_with("@bounces.example.net>"),
        "{line}"
    );

    let app = TestApp::new().await;
    let (_, line) = return_path_line(&app).await;
    assert_eq!(line, "Return-Path: <hello@example.com>");
}

#[tokio::test]
async fn a_permanent_dsn_to_the_bounce_address_unsubscribes_once() {
    let app = TestApp::new().await;
    enable_inbound(&app).await;
    let (record, envelope) = sent(&app, "gone@x.com").await;
    assert!(envelope.starts_with("bounces+"), "{envelope}");
    for name in ["postfix.eml", "gmail.eml", "postfix.eml"] {
        let raw = fixture(name, &record, &envelope);
        let recorded = app
            .engine
            .receive_bounce_message(&envelope, &raw)
            .await
            .expect("received");
        assert!(recorded, "{name}");
    }
    let bounced = email(&app, record.id.as_str()).await;
    assert_eq!(bounced.lifecycle.bounce_type, Some(BounceType::Permanent));
    assert!(bounced
        .lifecycle
        .bounce_detail
        .as_deref()
        .is_some_and(|d| d.contains("5.1.1")));
    assert!(!subscribed(&app, &bounced).await);
    let unsubscribed = events(&app, "contact.unsubscribed").await;
    assert_eq!(unsubscribed.len(), 1);
    assert_eq!(unsubscribed[0]["data"], json!({"reason": "bounce"}));
    let bounces = events(&app, "email.bounce").await;
    assert_eq!(bounces.len(), 1);
    assert_eq!(bounces[0]["data"]["bounceType"], "Permanent");
}

#[tokio::test]
async fn a_transient_dsn_is_recorded_once_and_unsubscribes_nobody() {
    let app = TestApp::new().await;
    enable_inbound(&app).await;
    let (record, envelope) = sent(&app, "full@x.com").await;
    for _ in 0..2 {
        let raw = fixture("postfix-mailbox-full.eml", &record, &envelope);
        let recorded = app.engine.receive_bounce_message(&envelope, &raw).await;
        assert_eq!(recorded, Ok(true));
    }
    let bounced = email(&app, record.id.as_str()).await;
    assert_eq!(bounced.lifecycle.bounce_type, Some(BounceType::Transient));
    assert!(subscribed(&app, &bounced).await);
    assert!(events(&app, "contact.unsubscribed").await.is_empty());
    let bounces = events(&app, "email.bounce").await;
    assert_eq!(bounces.len(), 1, "a redelivered report counts once");
    assert_eq!(bounces[0]["data"]["transientBounce"], json!(true));
}

#[tokio::test]
async fn an_arf_report_is_a_complaint_that_unsubscribes() {
    let app = TestApp::new().await;
    enable_inbound(&app).await;
    let (record, envelope) = sent(&app, "angry@x.com").await;
    let raw = fixture("arf.eml", &record, &envelope);
    for _ in 0..2 {
        assert_eq!(
            app.engine.receive_bounce_message(&envelope, &raw).await,
            Ok(true)
        );
    }
    let complained = email(&app, record.id.as_str()).await;
    assert!(complained.lifecycle.complained_at.is_some());
    assert!(!subscribed(&app, &complained).await);
    assert_eq!(events(&app, "email.complaint").await.len(), 1);
    let unsubscribed = events(&app, "contact.unsubscribed").await;
    assert_eq!(unsubscribed.len(), 1);
    assert_eq!(unsubscribed[0]["data"], json!({"reason": "complaint"}));
}

#[tokio::test]
async fn a_forged_token_is_refused() {
    let app = TestApp::new().await;
    enable_inbound(&app).await;
    let (record, envelope) = sent(&app, "victim@x.com").await;
    // Same shape, signed with another key: names the email, but not with our signature.
    let forged =
        token::address(b"not the deployment key", &record.id, "example.com").expect("uuid id");
    assert_ne!(forged, envelope);
    assert!(!app.engine.is_bounce_address(&forged));
    assert!(app.engine.is_bounce_address(&envelope));
    assert!(!app.engine.is_bounce_address("victim@x.com"));
    let raw = fixture("postfix.eml", &record, &forged);
    assert_eq!(
        app.engine.receive_bounce_message(&forged, &raw).await,
        Ok(false)
    );
    let untouched = email(&app, record.id.as_str()).await;
    assert_eq!(untouched.lifecycle.bounce_type, None);
    assert!(subscribed(&app, &untouched).await);
}

#[tokio::test]
async fn reports_without_a_token_match_by_message_id_and_non_reports_are_ignored() {
    let app = TestApp::new().await;
    let (record, envelope) = sent(&app, "olduser@x.com").await;
    assert_eq!(envelope, "hello@example.com", "bounces not collected");
    // Offered because it is multipart/report, to an ordinary address of the workspace's
    // inbound domain (turned on after the send, so the send had no bounce address).
    enable_inbound(&app).await;
    let raw = fixture("outlook.eml", &record, "hello@example.com");
    assert_eq!(
        app.engine
            .receive_bounce_message("hello@example.com", &raw)
            .await,
        Ok(true)
    );
    let bounced = email(&app, record.id.as_str()).await;
    assert_eq!(bounced.lifecycle.bounce_type, Some(BounceType::Permanent));

    let (other, _) = sent(&app, "away@x.com").await;
    let reply = fixture("out-of-office.eml", &other, "hello@example.com");
    assert_eq!(
        app.engine
            .receive_bounce_message("hello@example.com", &reply)
            .await,
        Ok(false)
    );
    let mut unknown = other.clone();
    unknown.message_id = "nobody@nowhere.test".into();
    unknown.id = EmailId::from("01937a4e-0000-7000-8000-000000000000");
    let raw = fixture("postfix.eml", &unknown, "hello@example.com");
    assert_eq!(
        app.engine
            .receive_bounce_message("hello@example.com", &raw)
            .await,
        Ok(false)
    );
}

#[tokio::test]
async fn before_the_key_is_loaded_only_the_token_shape_is_checked() {
    let app = TestApp::new().await;
    let id = EmailId::from("01937a4e-8c2b-7d3e-9f10-5a6b7c8d9e0f");
    let foreign = token::address(b"another deployment", &id, "example.com").expect("address");
    // Cold: the shape passes at RCPT, and the report itself is verified on receipt.
    assert!(app.engine.is_bounce_address(&foreign));
    assert!(!app.engine.is_bounce_address("bounces+tooshort@example.com"));
    let record = EmailRecord {
        id: id.clone(),
        ..sent(&app, "cold@x.com").await.0
    };
    let raw = fixture("postfix.eml", &record, &foreign);
    assert_eq!(
        app.engine.receive_bounce_message(&foreign, &raw).await,
        Ok(false)
    );
    // Loaded (the server does it at start-up): the signature decides.
    app.engine.bounce_key().await.expect("key");
    assert!(!app.engine.is_bounce_address(&foreign));
}

#[tokio::test]
async fn any_address_at_the_bounce_domain_is_a_bounce_address() {
    let app = TestApp::with_settings(Settings {
        bounce_domain: Some("Bounces.Example.net".into()),
        ..Settings::default()
    })
    .await;
    assert!(app
        .engine
        .is_bounce_address("postmaster@bounces.example.net"));
    assert!(app.engine.is_bounce_address("<x@BOUNCES.example.net>"));
    assert!(!app.engine.is_bounce_address("x@example.net"));
    assert!(!app.engine.is_bounce_address("bounces+short@example.com"));
    assert!(!app.engine.is_bounce_address("not an address"));
}

#[tokio::test]
async fn a_report_without_a_token_never_reaches_another_workspaces_email() {
    // Anyone who saw an email's headers can quote them in a report: without a bounce token,
    // a report sent to workspace B's inbound address must not bounce workspace A's email.
    let app = TestApp::new().await;
    let (record, _) = sent(&app, "victim@x.com").await;
    let (b_id, _, b_sk) = app.new_workspace("B").await;
    let domain = app
        .admin(
            axum::http::Method::POST,
            &format!("/admin/workspaces/{b_id}/domains"),
            Some(json!({"domain": "b-inbound.example", "verified": true})),
        )
        .await
        .expect(201);
    let domain_id = domain.body["id"].as_str().expect("domain id").to_string();
    app.call(
        axum::http::Method::PATCH,
        &format!("/domains/{domain_id}"),
        Some(&b_sk),
        Some(json!({"inboundEnabled": true})),
        &[],
    )
    .await
    .expect(200);
    for name in ["outlook.eml", "postfix.eml"] {
        let offered = offer(&app, name, &record, "support@b-inbound.example").await;
        assert_eq!(offered, Ok(false), "{name}");
    }
    // Nor at an address no workspace receives.
    let offered = offer(&app, "outlook.eml", &record, "someone@nowhere.example").await;
    assert_eq!(offered, Ok(false));
    let untouched = email(&app, record.id.as_str()).await;
    assert_eq!(untouched.lifecycle.bounce_type, None);
    assert!(subscribed(&app, &record).await);
    // The same report sent to the sender's own workspace is recorded.
    enable_inbound(&app).await;
    let offered = offer(&app, "outlook.eml", &record, "hello@example.com").await;
    assert_eq!(offered, Ok(true));
}

#[tokio::test]
async fn a_bounce_relayed_over_http_to_the_bounce_domain_is_recorded() {
    let app = TestApp::with_settings(Settings {
        bounce_domain: Some("bounces.example.net".into()),
        ..Settings::default()
    })
    .await;
    let (record, envelope) = sent(&app, "relayed@x.com").await;
    assert!(envelope.ends_with("@bounces.example.net"), "{envelope}");
    let raw = String::from_utf8(fixture("postfix.eml", &record, &envelope)).expect("utf-8");
    let to: String = envelope
        .bytes()
        .map(|b| match b {
            b'+' => "%2B".to_string(),
            b'@' => "%40".to_string(),
            b => (b as char).to_string(),
        })
        .collect();
    let res = crate::inbound::post_raw(&app, &format!("to={to}"), &raw).await;
    assert!(res.status.is_success(), "{:?}", res.body);
    let bounced = email(&app, record.id.as_str()).await;
    assert_eq!(bounced.lifecycle.bounce_type, Some(BounceType::Permanent));
    assert!(!subscribed(&app, &bounced).await);
}
