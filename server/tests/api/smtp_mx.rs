//! The inbound MX over a real socket: accepted and refused recipients, the message becoming
//! `email.received`, and the size limit.

use posthorn_core::model::EmailId;
use posthorn_core::ports::Clock;

use crate::harness::TestApp;
use crate::inbound::{enable_inbound, received, MESSAGE};
use crate::smtp_support::{self, code, RawClient};

#[tokio::test]
async fn accepted_mail_becomes_email_received_and_others_are_refused_at_rcpt() {
    let app = TestApp::new().await;
    enable_inbound(&app).await;
    let listener = smtp_support::mx(&app, 1024 * 1024).await;
    let (mut smtp, greeting) = RawClient::connect(listener.addr).await;
    code(&greeting, "220");
    let ehlo = smtp.cmd("EHLO mail.sender.example").await;
    assert!(!ehlo.contains("AUTH"), "{ehlo}");
    code(&smtp.cmd("MAIL FROM:<ada@sender.example>").await, "250");
    code(&smtp.cmd("RCPT TO:<support@example.com>").await, "250");
    let refused = smtp.cmd("RCPT TO:<someone@not-ours.test>").await;
    code(&refused, "550");
    code(&smtp.cmd("DATA").await, "354");
    smtp.send(MESSAGE.trim_end_matches("\r\n")).await;
    let queued = smtp.cmd(".").await;
    code(&queued, "250");
    code(&smtp.cmd("QUIT").await, "221");
    app.run_jobs().await;
    let events = received(&app).await;
    assert_eq!(events.len(), 1, "{events:?}");
    let data = &events[0]["data"];
    assert_eq!(data["from"], "ada@sender.example", "{data}");
    assert_eq!(data["to"], "support@example.com", "{data}");
    assert_eq!(data["subject"], "Help with my order", "{data}");
    assert_eq!(
        data["recipients"],
        serde_json::json!(["support@example.com"]),
        "{data}"
    );
}

#[tokio::test]
async fn a_message_over_the_size_limit_is_552_and_nothing_is_received() {
    let app = TestApp::new().await;
    enable_inbound(&app).await;
    let listener = smtp_support::mx(&app, 2000).await;
    let (mut smtp, _) = RawClient::connect(listener.addr).await;
    assert!(smtp.cmd("EHLO c").await.contains("SIZE 2000"));
    code(&smtp.cmd("MAIL FROM:<ada@sender.example>").await, "250");
    code(&smtp.cmd("RCPT TO:<support@example.com>").await, "250");
    code(&smtp.cmd("DATA").await, "354");
    smtp.send(MESSAGE).await;
    smtp.send(&"y".repeat(3000)).await;
    code(&smtp.cmd(".").await, "552");
    // The session goes on: a small message still gets through.
    code(&smtp.cmd("MAIL FROM:<ada@sender.example>").await, "250");
    code(&smtp.cmd("RCPT TO:<support@example.com>").await, "250");
    code(&smtp.cmd("DATA").await, "354");
    smtp.send(MESSAGE.trim_end_matches("\r\n")).await;
    code(&smtp.cmd(".").await, "250");
    app.run_jobs().await;
    assert_eq!(received(&app).await.len(), 1);
}

#[tokio::test]
async fn the_bare_postmaster_goes_to_the_configured_postmaster() {
    let app = TestApp::new().await;
    enable_inbound(&app).await;
    let unset = smtp_support::mx(&app, 1024 * 1024).await;
    let (mut smtp, _) = RawClient::connect(unset.addr).await;
    smtp.cmd("EHLO c").await;
    code(&smtp.cmd("MAIL FROM:<ada@sender.example>").await, "250");
    let refused = smtp.cmd("RCPT TO:<Postmaster>").await;
    code(&refused, "550");
    assert!(
        refused.contains("no postmaster without a domain"),
        "{refused}"
    );

    let elsewhere =
        smtp_support::mx_with_postmaster(&app, 1024 * 1024, Some("postmaster@not-ours.test")).await;
    let (mut smtp, _) = RawClient::connect(elsewhere.addr).await;
    smtp.cmd("EHLO c").await;
    code(&smtp.cmd("MAIL FROM:<ada@sender.example>").await, "250");
    // Checked as the address it stands for: not a domain with inbound enabled.
    let refused = smtp.cmd("RCPT TO:<Postmaster>").await;
    code(&refused, "550");
    assert!(refused.contains("not-ours.test"), "{refused}");

    let listener =
        smtp_support::mx_with_postmaster(&app, 1024 * 1024, Some("postmaster@example.com")).await;
    let (mut smtp, _) = RawClient::connect(listener.addr).await;
    smtp.cmd("EHLO c").await;
    code(&smtp.cmd("MAIL FROM:<ada@sender.example>").await, "250");
    code(&smtp.cmd("RCPT TO:<POSTMASTER>").await, "250");
    code(&smtp.cmd("DATA").await, "354");
    smtp.send(MESSAGE.trim_end_matches("\r\n")).await;
    code(&smtp.cmd(".").await, "250");
    // Named both ways in one message: one recipient.
    code(&smtp.cmd("MAIL FROM:<ada@sender.example>").await, "250");
    code(&smtp.cmd("RCPT TO:<Postmaster>").await, "250");
    code(&smtp.cmd("RCPT TO:<postmaster@example.com>").await, "250");
    code(&smtp.cmd("DATA").await, "354");
    smtp.send(MESSAGE.trim_end_matches("\r\n")).await;
    code(&smtp.cmd(".").await, "250");
    app.run_jobs().await;
    let events = received(&app).await;
    assert_eq!(events.len(), 2, "{events:?}");
    for event in &events {
        assert_eq!(
            event["data"]["recipients"],
            serde_json::json!(["postmaster@example.com"]),
            "{event}"
        );
    }
}

#[tokio::test]
async fn one_client_cannot_hold_more_than_its_share_of_sessions() {
    let app = TestApp::new().await;
    enable_inbound(&app).await;
    let mut options = smtp_support::mx_options(1024 * 1024);
    options.max_connections_per_client = 2;
    let listener = smtp_support::mx_with(&app, options, None).await;
    let (mut first, greeting) = RawClient::connect(listener.addr).await;
    code(&greeting, "220");
    let (_second, greeting) = RawClient::connect(listener.addr).await;
    code(&greeting, "220");
    // The third from 127.0.0.1, with 14 of the listener's 16 sessions still free.
    let (mut third, greeting) = RawClient::connect(listener.addr).await;
    assert!(
        greeting.starts_with("421 4.7.0 Too many connections from your address"),
        "{greeting}"
    );
    assert!(third.closed().await);
    // A session that ends gives its place back.
    code(&first.cmd("QUIT").await, "221");
    let mut greeting = String::new();
    for _ in 0..50 {
        greeting = RawClient::connect(listener.addr).await.1;
        if greeting.starts_with("220") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    code(&greeting, "220");
}

#[tokio::test]
async fn a_session_of_commands_that_move_no_mail_is_closed_past_the_limit() {
    let app = TestApp::new().await;
    let listener = smtp_support::mx(&app, 1024 * 1024).await;
    let (mut smtp, _) = RawClient::connect(listener.addr).await;
    code(&smtp.cmd("EHLO c").await, "250");
    for _ in 0..posthorn_server::smtp::MAX_JUNK_COMMANDS {
        code(&smtp.cmd("NOOP").await, "250");
    }
    let closing = smtp.cmd("NOOP").await;
    assert!(closing.starts_with("421 4.7.0 "), "{closing}");
    assert!(smtp.closed().await);
}

#[tokio::test]
async fn a_received_message_starts_with_return_path_and_received() {
    let app = TestApp::new().await;
    enable_inbound(&app).await;
    let listener = smtp_support::mx(&app, 1024 * 1024).await;
    let (mut smtp, _) = RawClient::connect(listener.addr).await;
    code(&smtp.cmd("EHLO mail.sender.example").await, "250");
    // A sender with a control character could break the Return-Path line: refused.
    code(
        &smtp.cmd("MAIL FROM:<\"a\u{1}b\"@sender.example>").await,
        "553",
    );
    code(&smtp.cmd("MAIL FROM:<ada@sender.example>").await, "250");
    code(&smtp.cmd("RCPT TO:<support@example.com>").await, "250");
    code(&smtp.cmd("DATA").await, "354");
    smtp.send(MESSAGE.trim_end_matches("\r\n")).await;
    let queued = smtp.cmd(".").await;
    code(&queued, "250");
    let id = queued
        .trim_end()
        .rsplit(' ')
        .next()
        .expect("Queued as <id>");
    let record = app
        .engine
        .store
        .inbound_email(&app.ws(), &EmailId::from(id))
        .await
        .expect("read")
        .expect("record");
    let raw = String::from_utf8(record.raw.expect("raw kept")).expect("utf-8");
    let trace = format!(
        "Return-Path: <ada@sender.example>\r\n\
         Received: from mail.sender.example ([127.0.0.1])\r\n\
         \tby posthorn.test with ESMTP;\r\n\
         \t{}\r\n",
        app.clock.now().to_rfc2822()
    );
    assert_eq!(raw, format!("{trace}{MESSAGE}"));
    // The fields do not change what the message is read as.
    app.run_jobs().await;
    let events = received(&app).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["data"]["subject"], "Help with my order");
}
