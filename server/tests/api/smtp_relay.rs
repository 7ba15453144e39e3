//! The submission relay over a real socket: lettre and Python's smtplib as clients, AUTH
//! PLAIN and LOGIN, STARTTLS and implicit TLS with a certificate made in the test, the key's
//! domain scope, attachments in the delivered .eml, and the rate limit as a 4xx.

use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use lettre::message::header::ContentType;
use lettre::message::{Attachment, Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use mail_parser::{MessageParser, MimeHeaders};
use posthorn_core::Engine;
use serde_json::json;

use crate::harness::TestApp;
use crate::smtp_support::{self, code, RawClient};

const LIMIT: usize = 1024 * 1024;

fn relay(port: u16, key: &str, mechanism: Mechanism) -> AsyncSmtpTransport<Tokio1Executor> {
    AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous("127.0.0.1")
        .port(port)
        .credentials(Credentials::new("anyone".into(), key.into()))
        .authentication(vec![mechanism])
        .build()
}

fn mailbox(s: &str) -> Mailbox {
    s.parse().expect("mailbox")
}

fn simple(from: &str, subject: &str) -> Message {
    Message::builder()
        .from(mailbox(from))
        .to(mailbox("Ada <ada@example.org>"))
        .bcc(mailbox("hidden@example.net"))
        .subject(subject)
        .header(ContentType::TEXT_HTML)
        .body("<p>Hello {{name}}</p>".to_string())
        .expect("message")
}

#[tokio::test]
async fn lettre_submits_with_plain_and_login_and_bcc_is_a_recipient() {
    let app = TestApp::new().await;
    let listener = smtp_support::submission(&app, smtp_support::session(LIMIT, true), None).await;
    for mechanism in [Mechanism::Plain, Mechanism::Login] {
        let relay = relay(listener.addr.port(), &app.sk, mechanism);
        let response = relay
            .send(simple(
                "Shop <hello@example.com>",
                &format!("Hi via {mechanism:?}"),
            ))
            .await
            .unwrap_or_else(|e| panic!("{mechanism:?}: {e}"));
        assert_eq!(response.code().to_string(), "250");
    }
    app.run_jobs().await;
    let to_ada = app.transport.messages_to("ada@example.org");
    let to_hidden = app.transport.messages_to("hidden@example.net");
    assert_eq!((to_ada.len(), to_hidden.len()), (2, 2));
    let first = &to_ada[0];
    assert_eq!(first.from.email, "hello@example.com");
    assert_eq!(first.from.name.as_deref(), Some("Shop"));
    assert_eq!(first.to.name.as_deref(), Some("Ada"));
    // Composed mail is sent as written: no template rendering.
    assert!(first.html.contains("Hello {{name}}"), "{}", first.html);
    let subjects: Vec<_> = to_ada.iter().map(|m| m.subject.clone()).collect();
    assert_eq!(subjects, ["Hi via Plain", "Hi via Login"]);
}

#[tokio::test]
async fn refusals_are_5xx_for_good_and_a_bad_key_fails_auth() {
    let app = TestApp::new().await;
    let listener = smtp_support::submission(&app, smtp_support::session(LIMIT, true), None).await;
    let port = listener.addr.port();
    let err = relay(port, "sk_wrong", Mechanism::Plain)
        .send(simple("hello@example.com", "x"))
        .await
        .expect_err("a wrong key is refused");
    assert!(err.is_permanent(), "{err}");
    // A sender domain that is not verified.
    let err = relay(port, &app.sk, Mechanism::Plain)
        .send(simple("hello@unverified.test", "x"))
        .await
        .expect_err("unverified domain");
    assert_eq!(
        err.status().map(|c| c.to_string()),
        Some("550".into()),
        "{err}"
    );
    assert!(err.to_string().contains("unverified.test"), "{err}");
    // A key scoped to another domain.
    let scoped = app
        .post("/keys", json!({"name": "scoped", "domains": ["other.com"]}))
        .await
        .expect(201);
    let scoped_sk = scoped.body["secretKey"]
        .as_str()
        .or_else(|| scoped.body["data"]["secretKey"].as_str())
        .expect("secret key")
        .to_string();
    let err = relay(port, &scoped_sk, Mechanism::Login)
        .send(simple("hello@example.com", "x"))
        .await
        .expect_err("outside the key's scope");
    assert_eq!(
        err.status().map(|c| c.to_string()),
        Some("550".into()),
        "{err}"
    );
    assert!(err.to_string().contains("other.com"), "{err}");
    // Nothing was accepted.
    app.run_jobs().await;
    assert!(app.transport.messages().is_empty());
}

#[tokio::test]
async fn the_workspace_rate_limit_is_a_4xx_the_client_retries() {
    let app = TestApp::new().await;
    app.set_workspace(&app.workspace_id, json!({"rateLimitPerMinute": 1}))
        .await;
    let listener = smtp_support::submission(&app, smtp_support::session(LIMIT, true), None).await;
    let relay = relay(listener.addr.port(), &app.sk, Mechanism::Plain);
    relay
        .send(simple("hello@example.com", "first"))
        .await
        .expect("the first message fits the budget");
    let err = relay
        .send(simple("hello@example.com", "second"))
        .await
        .expect_err("over the budget");
    assert!(err.is_transient(), "{err}");
    assert_eq!(
        err.status().map(|c| c.to_string()),
        Some("451".into()),
        "{err}"
    );
}

#[tokio::test]
async fn attachments_and_inline_parts_reach_the_delivered_eml() {
    let app = TestApp::new().await;
    let listener = smtp_support::submission(&app, smtp_support::session(LIMIT, true), None).await;
    let pdf = b"%PDF-1.4 test".to_vec();
    let png = vec![0x89, b'P', b'N', b'G', 0, 1, 2, 3];
    let message = Message::builder()
        .from(mailbox("hello@example.com"))
        .to(mailbox("ada@example.org"))
        .subject("Your invoice")
        .multipart(
            MultiPart::mixed()
                .multipart(
                    MultiPart::related()
                        .singlepart(SinglePart::html(
                            "<p>Invoice <img src=\"cid:logo\"></p>".to_string(),
                        ))
                        .singlepart(
                            Attachment::new_inline("logo".into())
                                .body(png.clone(), "image/png".parse().expect("type")),
                        ),
                )
                .singlepart(
                    Attachment::new("invoice.pdf".into())
                        .body(pdf.clone(), "application/pdf".parse().expect("type")),
                ),
        )
        .expect("message");
    relay(listener.addr.port(), &app.sk, Mechanism::Plain)
        .send(message)
        .await
        .expect("accepted");
    let outbox = tempfile::tempdir().expect("tempdir");
    let engine = Engine {
        transport: Arc::new(posthorn_smtp::FileTransport::new(
            outbox.path().to_path_buf(),
        )),
        ..app.engine.clone()
    };
    assert!(engine.run_due_jobs().await.expect("delivery") >= 1);
    let eml = std::fs::read_dir(outbox.path())
        .expect("outbox")
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "eml"))
        .map(|e| std::fs::read(e.path()).expect("read eml"))
        .expect("an .eml file");
    let parsed = MessageParser::default().parse(&eml).expect("parse eml");
    let parts: Vec<_> = parsed
        .attachments()
        .map(|p| {
            (
                p.attachment_name().map(str::to_string),
                p.content_id().map(str::to_string),
                p.contents().to_vec(),
            )
        })
        .collect();
    assert!(
        parts
            .iter()
            .any(|(name, _, body)| name.as_deref() == Some("invoice.pdf") && *body == pdf),
        "{parts:?}"
    );
    assert!(
        parts.iter().any(
            |(_, cid, body)| cid.as_deref().is_some_and(|c| c.contains("logo")) && *body == png
        ),
        "{parts:?}"
    );
    let html = parsed.body_html(0).expect("html").into_owned();
    assert!(html.contains("cid:logo"), "{html}");
}

#[tokio::test]
async fn starttls_with_a_generated_certificate_and_auth_only_after_it() {
    let app = TestApp::new().await;
    let (acceptor, pem) = smtp_support::test_certificate();
    let listener = smtp_support::submission(
        &app,
        smtp_support::session(LIMIT, false),
        Some((acceptor.clone(), false)),
    )
    .await;
    // In clear text: STARTTLS offered, AUTH neither offered nor taken.
    let (mut raw, greeting) = RawClient::connect(listener.addr).await;
    code(&greeting, "220");
    let ehlo = raw.cmd("EHLO me").await;
    assert!(
        ehlo.contains("STARTTLS") && !ehlo.contains("AUTH"),
        "{ehlo}"
    );
    let plain = STANDARD.encode(format!("\0x\0{}", app.sk));
    code(&raw.cmd(&format!("AUTH PLAIN {plain}")).await, "538");
    code(&raw.cmd("MAIL FROM:<hello@example.com>").await, "530");
    let tls = || {
        TlsParameters::builder("localhost".into())
            .add_root_certificate(Certificate::from_pem(pem.as_bytes()).expect("pem"))
            .build()
            .expect("tls parameters")
    };
    let relay = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous("127.0.0.1")
        .port(listener.addr.port())
        .tls(Tls::Required(tls()))
        .credentials(Credentials::new("me".into(), app.sk.clone()))
        .authentication(vec![Mechanism::Plain])
        .build();
    relay
        .send(simple("hello@example.com", "over STARTTLS"))
        .await
        .expect("sent over STARTTLS");
    // Implicit TLS (port 465 style).
    let implicit = smtp_support::submission(
        &app,
        smtp_support::session(LIMIT, false),
        Some((acceptor, true)),
    )
    .await;
    let relay = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous("127.0.0.1")
        .port(implicit.addr.port())
        .tls(Tls::Wrapper(tls()))
        .credentials(Credentials::new("me".into(), app.sk.clone()))
        .authentication(vec![Mechanism::Login])
        .build();
    relay
        .send(simple("hello@example.com", "over implicit TLS"))
        .await
        .expect("sent over implicit TLS");
    app.run_jobs().await;
    assert_eq!(app.transport.messages_to("ada@example.org").len(), 2);
}

#[tokio::test]
async fn a_message_over_the_size_limit_is_552() {
    let app = TestApp::new().await;
    let listener = smtp_support::submission(&app, smtp_support::session(4096, true), None).await;
    let (mut raw, _) = RawClient::connect(listener.addr).await;
    assert!(raw.cmd("EHLO me").await.contains("SIZE 4096"));
    let plain = STANDARD.encode(format!("\0x\0{}", app.sk));
    code(&raw.cmd(&format!("AUTH PLAIN {plain}")).await, "235");
    code(
        &raw.cmd("MAIL FROM:<hello@example.com> SIZE=9000").await,
        "552",
    );
    code(&raw.cmd("MAIL FROM:<hello@example.com>").await, "250");
    code(&raw.cmd("RCPT TO:<ada@example.org>").await, "250");
    code(&raw.cmd("RCPT TO:<not an address>").await, "5");
    code(&raw.cmd("DATA").await, "354");
    raw.send("From: hello@example.com\r\nSubject: big\r\n")
        .await;
    raw.send(&"x".repeat(5000)).await;
    code(&raw.cmd(".").await, "552");
    code(&raw.cmd("QUIT").await, "221");
    app.run_jobs().await;
    assert!(app.transport.messages().is_empty());
}

/// Python's smtplib, as most scripts and apps submit mail.
#[tokio::test]
async fn python_smtplib_submits_with_plain_and_login() {
    let app = TestApp::new().await;
    let listener = smtp_support::submission(&app, smtp_support::session(LIMIT, true), None).await;
    let script = r#"
import smtplib, sys, json
from email.message import EmailMessage
port, key = int(sys.argv[1]), sys.argv[2]
out = []
for mech in ("PLAIN", "LOGIN"):
    msg = EmailMessage()
    msg["From"] = "Shop <hello@example.com>"
    msg["To"] = "ada@example.org"
    msg["Subject"] = "smtplib " + mech
    msg.set_content("plain text body")
    msg.add_alternative("<p>html body</p>", subtype="html")
    msg.add_attachment(b"col1,col2\n", maintype="text", subtype="csv", filename="data.csv")
    with smtplib.SMTP("127.0.0.1", port, timeout=20) as s:
        s.ehlo()
        s.user, s.password = "anyone", key
        code, _ = s.auth(mech, getattr(s, "auth_" + mech.lower()), initial_response_ok=(mech == "PLAIN"))
        refused = s.send_message(msg, to_addrs=["ada@example.org", "bcc@example.net"])
        out.append([mech, code, len(refused)])
print(json.dumps(out))
"#;
    let port = listener.addr.port().to_string();
    let key = app.sk.clone();
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("python3")
            .args(["-c", script, &port, &key])
            .output()
    })
    .await
    .expect("join")
    .expect("python3 runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("the script prints JSON");
    assert_eq!(result, json!([["PLAIN", 235, 0], ["LOGIN", 235, 0]]));
    app.run_jobs().await;
    let to_ada = app.transport.messages_to("ada@example.org");
    assert_eq!(to_ada.len(), 2);
    assert_eq!(app.transport.messages_to("bcc@example.net").len(), 2);
    let first = &to_ada[0];
    assert_eq!(first.subject, "smtplib PLAIN");
    assert!(first.html.contains("<p>html body</p>"), "{}", first.html);
    assert_eq!(
        first.text.as_deref().map(str::trim),
        Some("plain text body")
    );
    assert_eq!(first.attachments.len(), 1);
    assert_eq!(first.attachments[0].filename, "data.csv");
    assert_eq!(first.attachments[0].content, b"col1,col2\n");
}
