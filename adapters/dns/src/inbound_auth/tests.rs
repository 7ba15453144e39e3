//! Verdicts against a loopback name server publishing the records a test needs.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine as _;
use mail_auth::common::crypto::Ed25519Key;
use mail_auth::common::headers::HeaderWriter;
use mail_auth::dkim::DkimSigner;
use posthorn_core::model::Verdict;
use posthorn_core::ports::{AuthVerdicts, InboundAuthenticator, InboundContext};

use super::MailAuthenticator;
use crate::testing::{silent_server, txt_server};

const MESSAGE: &str = "From: Ada <ada@sender.test>\r\n\
To: support@inbound.test\r\n\
Subject: Signed\r\n\
Message-ID: <signed-1@sender.test>\r\n\
\r\n\
The body the signature covers.\r\n";

/// `MESSAGE` signed by sender.test (selector `s1`), and the TXT record of its key.
fn signed() -> (String, String) {
    let pkcs8 = Ed25519Key::generate_pkcs8().expect("key");
    let key = Ed25519Key::from_pkcs8_der(&pkcs8).expect("key");
    let public = base64::engine::general_purpose::STANDARD.encode(key.public_key());
    let signature = DkimSigner::from_key(key)
        .domain("sender.test")
        .selector("s1")
        .headers(["From", "To", "Subject", "Message-ID"])
        .sign(MESSAGE.as_bytes())
        .expect("signs");
    (
        format!("{}{MESSAGE}", signature.to_header()),
        format!("v=DKIM1; k=ed25519; p={public}"),
    )
}

async fn server(records: &[(&str, &str)]) -> SocketAddr {
    let mut table: HashMap<String, Vec<String>> = HashMap::new();
    for (name, value) in records {
        table
            .entry((*name).to_owned())
            .or_default()
            .push((*value).to_owned());
    }
    txt_server(table).await.expect("dns server")
}

async fn judge(dns: SocketAddr, raw: &str, ip: Option<&str>) -> AuthVerdicts {
    let auth = MailAuthenticator::with_nameservers(&[dns], Duration::from_millis(800));
    let recipients = vec!["support@inbound.test".to_owned()];
    auth.authenticate(&InboundContext {
        raw: raw.as_bytes(),
        client_ip: ip.map(|ip| ip.parse().expect("ip")),
        helo: Some("mx.sender.test"),
        envelope_from: Some("ada@sender.test"),
        recipients: &recipients,
    })
    .await
}

#[tokio::test]
async fn signed_aligned_mail_from_an_allowed_address_passes_everything() {
    let (raw, key) = signed();
    let dns = server(&[
        ("s1._domainkey.sender.test", &key),
        ("sender.test", "v=spf1 ip4:127.0.0.1 -all"),
        ("_dmarc.sender.test", "v=DMARC1; p=reject"),
    ])
    .await;
    let verdicts = judge(dns, &raw, Some("127.0.0.1")).await;
    assert_eq!(verdicts, AuthVerdicts::all(Verdict::Pass));
}

#[tokio::test]
async fn a_tampered_body_fails_dkim_and_an_unlisted_address_fails_spf() {
    let (raw, key) = signed();
    let tampered = raw.replace("The body", "A changed body");
    let dns = server(&[
        ("s1._domainkey.sender.test", &key),
        ("sender.test", "v=spf1 ip4:192.0.2.1 -all"),
        ("_dmarc.sender.test", "v=DMARC1; p=reject"),
    ])
    .await;
    let verdicts = judge(dns, &tampered, Some("127.0.0.2")).await;
    assert_eq!(
        verdicts,
        AuthVerdicts {
            spf: Verdict::Fail,
            dkim: Verdict::Fail,
            dmarc: Verdict::Fail,
        }
    );
}

#[tokio::test]
async fn unsigned_mail_without_policies_or_client_address_is_gray() {
    let dns = server(&[]).await;
    let verdicts = judge(dns, MESSAGE, None).await;
    assert_eq!(verdicts, AuthVerdicts::all(Verdict::Gray));
}

#[tokio::test]
async fn dns_that_does_not_answer_in_time_is_processing_failed() {
    let (raw, _) = signed();
    let dns = silent_server().await.expect("silent server");
    let started = std::time::Instant::now();
    let verdicts = judge(dns, &raw, Some("127.0.0.1")).await;
    assert_eq!(verdicts, AuthVerdicts::all(Verdict::ProcessingFailed));
    assert!(started.elapsed() < Duration::from_secs(10), "bounded");
}

#[tokio::test]
async fn no_name_server_is_processing_failed_at_once() {
    let auth = MailAuthenticator::with_nameservers(&[], Duration::from_millis(100));
    let recipients = Vec::new();
    let verdicts = auth
        .authenticate(&InboundContext {
            raw: MESSAGE.as_bytes(),
            client_ip: None,
            helo: None,
            envelope_from: None,
            recipients: &recipients,
        })
        .await;
    assert_eq!(verdicts, AuthVerdicts::all(Verdict::ProcessingFailed));
}
