//! `POST /inbound/raw` and the `email.received` events its messages become.

use std::sync::Arc;

use axum::http::Method;
use posthorn_core::model::{EmailId, Verdict};
use posthorn_core::ports::{
    AuthVerdicts, ChangeSet, InboundCheckers, JobPayload, NewJob, Quota, StaticVerdicts, Write,
};
use posthorn_core::Settings;
use serde_json::{json, Value};

use crate::harness::TestApp;

/// A plain message with an HTML and a text part.
pub const MESSAGE: &str = "From: \"Ada Lovelace\" <Ada@Sender.example>\r\n\
To: support@example.com\r\n\
Subject: Help with my order\r\n\
Message-ID: <order-42@sender.example>\r\n\
Date: Sat, 21 Nov 2026 09:59:00 +0000\r\n\
MIME-Version: 1.0\r\n\
Content-Type: multipart/alternative; boundary=\"b1\"\r\n\
\r\n\
--b1\r\n\
Content-Type: text/plain; charset=utf-8\r\n\
\r\n\
Where is my order?\r\n\
--b1\r\n\
Content-Type: text/html; charset=utf-8\r\n\
\r\n\
<p>Where is my order?</p>\r\n\
--b1--\r\n";

/// Turns inbound mail on for the app's example.com.
pub async fn enable_inbound(app: &TestApp) {
    let domains = app.get("/domains").await.expect(200).body;
    let id = domains["data"]
        .as_array()
        .and_then(|all| all.iter().find(|d| d["domain"] == "example.com"))
        .and_then(|d| d["id"].as_str())
        .expect("example.com")
        .to_string();
    app.patch(&format!("/domains/{id}"), json!({"inboundEnabled": true}))
        .await
        .expect(200);
}

/// Posts `raw` to `/inbound/raw` with the query `query`.
pub async fn post_raw(app: &TestApp, query: &str, raw: &str) -> crate::harness::Res {
    app.raw(
        Method::POST,
        &format!("/inbound/raw?{query}"),
        Some(&app.sk),
        Some(raw),
        Some("message/rfc822"),
        &[],
    )
    .await
}

/// The workspace's `email.received` events, newest first.
pub async fn received(app: &TestApp) -> Vec<Value> {
    app.get("/events?eventName=email.received")
        .await
        .expect(200)
        .body["events"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The contact of ada@sender.example, if any.
async fn sender_contact(app: &TestApp) -> Option<Value> {
    app.get("/contacts?search=ada%40sender.example")
        .await
        .expect(200)
        .body["data"]
        .as_array()
        .and_then(|c| c.first().cloned())
}

#[tokio::test]
async fn a_relayed_message_becomes_one_event_per_recipient_with_every_field() {
    let app = TestApp::new().await;
    enable_inbound(&app).await;
    let res = post_raw(
        &app,
        "from=bounce%40sender.example&to=support%40example.com&to=Sales@Example.com",
        MESSAGE,
    )
    .await
    .expect(202);
    assert_eq!(res.body["success"], json!(true));
    let emails = res.body["data"]["emails"].as_array().expect("emails");
    assert_eq!(emails.len(), 1);
    let id = emails[0]["id"].as_str().expect("id").to_string();
    assert_eq!(
        emails[0]["recipients"],
        json!(["support@example.com", "sales@example.com"])
    );
    assert!(received(&app).await.is_empty(), "events come from the job");

    app.run_jobs().await;
    let events = received(&app).await;
    assert_eq!(events.len(), 2);
    let mut to: Vec<&str> = events
        .iter()
        .map(|e| e["data"]["to"].as_str().expect("to"))
        .collect();
    to.sort_unstable();
    assert_eq!(to, ["sales@example.com", "support@example.com"]);
    let event = events
        .iter()
        .find(|e| e["data"]["to"] == "support@example.com")
        .expect("support event");
    let data = &event["data"];
    assert_eq!(data["messageId"], "order-42@sender.example");
    assert_eq!(data["from"], "bounce@sender.example");
    assert_eq!(data["fromHeader"], "Ada Lovelace <Ada@Sender.example>");
    assert_eq!(data["subject"], "Help with my order");
    assert_eq!(data["timestamp"], "2026-11-21T10:00:00.000Z");
    assert_eq!(
        data["recipients"],
        json!(["support@example.com", "sales@example.com"])
    );
    assert_eq!(data["hasContent"], json!(true));
    assert_eq!(
        data["body"].as_str().map(str::trim),
        Some("<p>Where is my order?</p>")
    );
    for verdict in [
        "spamVerdict",
        "virusVerdict",
        "spfVerdict",
        "dkimVerdict",
        "dmarcVerdict",
    ] {
        assert_eq!(data[verdict], "GRAY", "{verdict}");
    }
    assert!(data["processingTimeMillis"].as_u64().is_some(), "{data}");
    assert_eq!(data["emailId"], json!(id));
    assert_eq!(data["sourceType"], "INBOUND");
    assert_eq!(event["emailId"], json!(id));

    // The sender (the From address) is a new, unsubscribed contact the events belong to.
    let contact = sender_contact(&app).await.expect("sender contact");
    assert_eq!(contact["subscribed"], json!(false));
    assert_eq!(event["contactId"], contact["id"]);

    // A second run of the job (a redelivery) emits nothing twice.
    let mut again = ChangeSet::new();
    again.push(Write::EnqueueJob(NewJob::at(
        &*app.engine.clock,
        JobPayload::ProcessInboundEmail {
            workspace_id: app.ws(),
            email_id: EmailId::from(id.as_str()),
        },
        app.engine.clock.now(),
    )));
    app.engine.store.commit(again).await.expect("enqueue");
    app.run_jobs().await;
    assert_eq!(received(&app).await.len(), 2);
}

/// An inbound domain added with a Unicode name receives mail for its A-label spelling
/// (what mail servers without SMTPUTF8 send) and its Unicode one, as one address.
#[tokio::test]
async fn mail_for_an_internationalised_domain_is_routed_in_either_spelling() {
    let app = TestApp::new().await;
    app.admin(
        Method::POST,
        &format!("/admin/workspaces/{}/domains", app.workspace_id),
        Some(json!({"domain": "Bücher.example", "verified": true, "inboundEnabled": true})),
    )
    .await
    .expect(201);
    let res = post_raw(
        &app,
        "to=info%40xn--bcher-kva.example&to=Info%40B%C3%BCcher.example&to=sales%40b%C3%BCcher.example",
        MESSAGE,
    )
    .await
    .expect(202);
    let emails = res.body["data"]["emails"].as_array().expect("emails");
    assert_eq!(emails.len(), 1, "{}", res.body);
    assert_eq!(
        emails[0]["recipients"],
        json!(["info@xn--bcher-kva.example", "sales@xn--bcher-kva.example"])
    );
    app.run_jobs().await;
    let mut to: Vec<String> = received(&app)
        .await
        .iter()
        .map(|e| e["data"]["to"].as_str().expect("to").to_string())
        .collect();
    to.sort_unstable();
    assert_eq!(
        to,
        ["info@xn--bcher-kva.example", "sales@xn--bcher-kva.example"]
    );
    // The MX's recipient check takes either spelling too.
    for rcpt in [
        "postmaster@xn--bcher-kva.example",
        "postmaster@bücher.example",
    ] {
        let check = app
            .engine
            .check_inbound_recipient(rcpt)
            .await
            .expect("checked");
        assert_eq!(
            check,
            posthorn_core::app::inbound::RecipientCheck::Accept,
            "{rcpt}"
        );
    }
}

#[tokio::test]
async fn recipients_outside_the_workspaces_inbound_domains_are_field_errors() {
    let app = TestApp::new().await;
    // example.com is verified but inbound is not enabled yet.
    let res = post_raw(&app, "from=a%40b.example&to=x%40example.com", MESSAGE)
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["to.0"]);
    enable_inbound(&app).await;
    let res = post_raw(
        &app,
        "from=not-an-address&to=x%40example.com&to=y%40elsewhere.example",
        MESSAGE,
    )
    .await
    .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["from", "to.1"]);
    post_raw(&app, "from=a%40b.example", MESSAGE)
        .await
        .expect_error(422, "VALIDATION_ERROR");
    // Another workspace cannot relay mail for this one's domain.
    let (_, _, other_sk) = app.new_workspace("Other").await;
    let res = app
        .raw(
            Method::POST,
            "/inbound/raw?to=x%40example.com",
            Some(&other_sk),
            Some(MESSAGE),
            Some("message/rfc822"),
            &[],
        )
        .await
        .expect_error(422, "VALIDATION_ERROR");
    assert_eq!(res.error_fields(), ["to.0"]);
    // Not a raw message.
    app.raw(
        Method::POST,
        "/inbound/raw?to=x%40example.com",
        Some(&app.sk),
        Some("{}"),
        Some("application/json"),
        &[],
    )
    .await
    .expect_error(400, "BAD_REQUEST");
    // The public key may not relay mail.
    app.raw(
        Method::POST,
        "/inbound/raw?to=x%40example.com",
        Some(&app.pk),
        Some(MESSAGE),
        Some("message/rfc822"),
        &[],
    )
    .await
    .expect_error(403, "FORBIDDEN");
    assert!(received(&app).await.is_empty());
}

#[tokio::test]
async fn a_sender_over_its_budget_gets_429_with_retry_after() {
    let mut settings = Settings::default();
    settings.inbound.per_sender = Quota {
        limit: 2,
        window: std::time::Duration::from_secs(60),
    };
    let app = TestApp::with_settings(settings).await;
    enable_inbound(&app).await;
    for _ in 0..2 {
        post_raw(
            &app,
            "from=flood%40sender.example&to=x%40example.com",
            MESSAGE,
        )
        .await
        .expect(202);
    }
    let res = post_raw(
        &app,
        "from=flood%40sender.example&to=x%40example.com",
        MESSAGE,
    )
    .await
    .expect_error(429, "RATE_LIMIT_EXCEEDED");
    assert!(res.headers.get("retry-after").is_some());
    // Another sender still gets through; the limited one again in the next window.
    post_raw(
        &app,
        "from=calm%40sender.example&to=x%40example.com",
        MESSAGE,
    )
    .await
    .expect(202);
    app.clock.advance(chrono::Duration::seconds(61));
    post_raw(
        &app,
        "from=flood%40sender.example&to=x%40example.com",
        MESSAGE,
    )
    .await
    .expect(202);
}

#[tokio::test]
async fn spam_does_not_create_the_sender_contact() {
    let mut app = TestApp::new().await;
    app.set_inbound(InboundCheckers {
        spam: Arc::new(StaticVerdicts {
            auth: AuthVerdicts::all(Verdict::Gray),
            content: Verdict::Fail,
        }),
        ..InboundCheckers::default()
    });
    enable_inbound(&app).await;
    post_raw(&app, "from=a%40sender.example&to=x%40example.com", MESSAGE)
        .await
        .expect(202);
    app.run_jobs().await;
    let events = received(&app).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["data"]["spamVerdict"], "FAIL");
    assert_eq!(events[0]["contactId"], Value::Null);
    assert_eq!(sender_contact(&app).await, None);
}

#[tokio::test]
async fn raw_messages_are_dropped_after_the_retention_period() {
    let app = TestApp::new().await;
    enable_inbound(&app).await;
    let res = post_raw(&app, "from=a%40sender.example&to=x%40example.com", MESSAGE)
        .await
        .expect(202);
    let id = EmailId::from(res.body["data"]["emails"][0]["id"].as_str().expect("id"));
    app.run_jobs().await;
    let stored = |app: &TestApp| {
        let (store, ws, id) = (app.engine.store.clone(), app.ws(), id.clone());
        async move {
            store
                .inbound_email(&ws, &id)
                .await
                .expect("read")
                .expect("record")
        }
    };
    assert_eq!(stored(&app).await.raw.as_deref(), Some(MESSAGE.as_bytes()));
    app.clock.advance(chrono::Duration::days(29));
    app.run_jobs().await;
    assert!(stored(&app).await.raw.is_some(), "kept within 30 days");
    app.clock
        .advance(chrono::Duration::days(1) + chrono::Duration::hours(2));
    app.run_jobs().await;
    let record = stored(&app).await;
    assert_eq!(record.raw, None, "dropped after 30 days");
    assert!(record.processed_at.is_some());
    assert_eq!(received(&app).await.len(), 1, "the events stay");
}

/// `MESSAGE`, signed by example.org with an Ed25519 key (selector `s1`), and the TXT value
/// that publishes the key.
fn signed_message() -> (String, String) {
    use base64::Engine as _;
    use mail_auth::common::crypto::Ed25519Key;
    use mail_auth::common::headers::HeaderWriter;
    let message = MESSAGE.replace("Sender.example", "example.org");
    let pkcs8 = Ed25519Key::generate_pkcs8().expect("key");
    let key = Ed25519Key::from_pkcs8_der(&pkcs8).expect("key");
    let public = base64::engine::general_purpose::STANDARD.encode(key.public_key());
    let signature = mail_auth::dkim::DkimSigner::from_key(key)
        .domain("example.org")
        .selector("s1")
        .headers(["From", "To", "Subject", "Message-ID"])
        .sign(message.as_bytes())
        .expect("signs");
    (
        format!("{}{message}", signature.to_header()),
        format!("v=DKIM1; k=ed25519; p={public}"),
    )
}

#[tokio::test]
async fn dkim_signed_mail_passes_and_a_tampered_copy_fails_against_a_loopback_dns() {
    let (signed, key) = signed_message();
    let records = std::collections::HashMap::from([
        ("s1._domainkey.example.org".to_owned(), vec![key]),
        (
            "_dmarc.example.org".to_owned(),
            vec!["v=DMARC1; p=reject".to_owned()],
        ),
    ]);
    let dns = posthorn_dns::testing::txt_server(records)
        .await
        .expect("dns");
    let mut app = TestApp::new().await;
    app.set_inbound(InboundCheckers {
        authenticator: Arc::new(posthorn_dns::MailAuthenticator::with_nameservers(
            &[dns],
            std::time::Duration::from_secs(2),
        )),
        ..InboundCheckers::default()
    });
    enable_inbound(&app).await;
    post_raw(&app, "from=ada%40example.org&to=x%40example.com", &signed)
        .await
        .expect(202);
    app.run_jobs().await;
    let tampered = signed.replace("Where is my order?", "Where is my refund?");
    post_raw(&app, "from=ada%40example.org&to=y%40example.com", &tampered)
        .await
        .expect(202);
    app.run_jobs().await;
    let events = received(&app).await;
    let verdicts = |to: &str| {
        let data = &events
            .iter()
            .find(|e| e["data"]["to"] == to)
            .expect("event")["data"];
        (
            data["dkimVerdict"].clone(),
            data["dmarcVerdict"].clone(),
            data["spfVerdict"].clone(),
        )
    };
    // Relayed over HTTP there is no client address: SPF cannot be judged.
    assert_eq!(
        verdicts("x@example.com"),
        (json!("PASS"), json!("PASS"), json!("GRAY"))
    );
    assert_eq!(
        verdicts("y@example.com"),
        (json!("FAIL"), json!("FAIL"), json!("GRAY"))
    );
}

/// A stand-in rspamd on loopback: `/checkv2` answers `action` and counts the scans.
async fn rspamd_stand_in(action: &'static str) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use axum::routing::post;
    let scans = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = scans.clone();
    let app = axum::Router::new().route(
        "/checkv2",
        post(move |body: axum::body::Bytes| {
            let seen = seen.clone();
            async move {
                assert!(!body.is_empty(), "the raw message is posted");
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                axum::Json(json!({"action": action, "score": 1.0, "required_score": 15.0}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}"), scans)
}

#[tokio::test]
async fn rspamd_gives_the_spam_verdict_and_spam_keeps_the_sender_out() {
    for (action, verdict, contact) in [("no action", "PASS", true), ("reject", "FAIL", false)] {
        let (url, scans) = rspamd_stand_in(action).await;
        let mut app = TestApp::new().await;
        app.set_inbound(InboundCheckers {
            spam: Arc::new(
                posthorn_webhook::RspamdScanner::new(&url, std::time::Duration::from_secs(5))
                    .expect("url"),
            ),
            ..InboundCheckers::default()
        });
        enable_inbound(&app).await;
        post_raw(&app, "from=a%40sender.example&to=x%40example.com", MESSAGE)
            .await
            .expect(202);
        app.run_jobs().await;
        assert_eq!(scans.load(std::sync::atomic::Ordering::SeqCst), 1);
        let events = received(&app).await;
        assert_eq!(events[0]["data"]["spamVerdict"], verdict, "{action}");
        assert_eq!(sender_contact(&app).await.is_some(), contact, "{action}");
    }
}

/// The Postfix DSN fixture about email `id`, addressed to `to`.
async fn dsn_about(app: &TestApp, id: &str, to: &str) -> String {
    let email = app
        .engine
        .store
        .email(&app.ws(), &EmailId::from(id))
        .await
        .expect("store")
        .expect("email");
    let path = format!(
        "{}/../core/tests/fixtures/bounces/postfix.eml",
        env!("CARGO_MANIFEST_DIR")
    );
    let recipient = email.to.email.as_str().to_owned();
    std::fs::read_to_string(path)
        .expect("fixture")
        .replace("{{RECIPIENT}}", &recipient)
        .replace(
            "{{RECIPIENT_LOCAL}}",
            recipient.split('@').next().unwrap_or_default(),
        )
        .replace("{{MESSAGE_ID}}", &email.message_id)
        .replace("{{EMAIL_ID}}", email.id.as_str())
        .replace("{{SENDER}}", &email.from.email)
        .replace("{{BOUNCE_ADDRESS}}", to)
        .replace('\n', "\r\n")
}

#[tokio::test]
async fn bounce_reports_become_bounces_not_received_mail() {
    let app = TestApp::new().await;
    enable_inbound(&app).await;
    // To the bounce address the sent email carried as its envelope sender.
    let id = app.send_one("gone@x.com").await;
    app.run_jobs().await;
    let envelope = app
        .transport
        .messages()
        .into_iter()
        .find(|m| m.email_id.as_str() == id)
        .expect("sent")
        .envelope_from;
    assert!(envelope.starts_with("bounces+"), "{envelope}");
    assert_eq!(
        app.engine.check_inbound_recipient(&envelope).await.ok(),
        Some(posthorn_core::app::inbound::RecipientCheck::Accept)
    );
    let query = format!("to={}", envelope.replace('+', "%2B").replace('@', "%40"));
    let res = post_raw(&app, &query, &dsn_about(&app, &id, &envelope).await)
        .await
        .expect(202);
    assert_eq!(res.body["data"]["emails"], json!([]));
    // A report to an ordinary inbound address is matched by the Message-ID it quotes.
    let other = app.send_one("also-gone@x.com").await;
    app.run_jobs().await;
    post_raw(
        &app,
        "to=support%40example.com",
        &dsn_about(&app, &other, "support@example.com").await,
    )
    .await
    .expect(202);
    app.run_jobs().await;
    let bounces = app
        .get("/events?eventName=email.bounce")
        .await
        .expect(200)
        .body["events"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(bounces, 2);
    assert!(received(&app).await.is_empty());
}

/// A spam scanner that holds each message until `parties` are being scanned at once (or a
/// few seconds passed), so that their handlers plan their changes side by side.
struct MeetingScanner {
    barrier: tokio::sync::Barrier,
}

#[async_trait::async_trait]
impl posthorn_core::ports::ContentScanner for MeetingScanner {
    async fn scan(&self, _ctx: &posthorn_core::ports::InboundContext<'_>) -> Verdict {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), self.barrier.wait()).await;
        Verdict::Pass
    }
}

#[tokio::test]
async fn two_messages_from_a_new_sender_processed_at_once_both_become_events() {
    // Both handlers plan the sender as a new contact; the second commit conflicts on the
    // address. Its events used to be dropped as if another run had processed the message.
    // (The memory store reads and commits without yielding, so there one handler finishes
    // before the other plans; on SQLite and PostgreSQL, where the suite also runs, the two
    // plans interleave and the second commit conflicts.)
    let mut app = TestApp::new().await;
    app.set_inbound(InboundCheckers {
        spam: Arc::new(MeetingScanner {
            barrier: tokio::sync::Barrier::new(2),
        }),
        ..InboundCheckers::default()
    });
    enable_inbound(&app).await;
    for _ in 0..2 {
        post_raw(&app, "from=a%40sender.example&to=x%40example.com", MESSAGE)
            .await
            .expect(202);
    }
    let engine = &app.engine;
    let now = engine.clock.now();
    let lease = engine.settings.job_lease;
    let first = engine.jobs.claim(now, lease, 1).await.expect("claim");
    let second = engine.jobs.claim(now, lease, 1).await.expect("claim");
    assert_eq!(
        (first.len(), second.len()),
        (1, 1),
        "the two messages' jobs"
    );
    let started = std::time::Instant::now();
    let (a, b) = tokio::join!(engine.run_job(&first[0]), engine.run_job(&second[0]));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "the two handlers met at the scanner"
    );
    a.expect("first job runs");
    // The second either re-planned at once or was put back to run again: both end done.
    let _ = b;
    app.clock.advance(chrono::Duration::minutes(5));
    app.run_jobs().await;
    assert_eq!(received(&app).await.len(), 2);
    assert!(sender_contact(&app).await.is_some());
}
