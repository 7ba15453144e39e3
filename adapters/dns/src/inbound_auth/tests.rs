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
    signed_by("sender.test", MESSAGE)
}

/// `message` signed by `domain` (selector `s1`), and the TXT record of its key.
fn signed_by(domain: &str, message: &str) -> (String, String) {
    let pkcs8 = Ed25519Key::generate_pkcs8().expect("key");
    let key = Ed25519Key::from_pkcs8_der(&pkcs8).expect("key");
    let public = base64::engine::general_purpose::STANDARD.encode(key.public_key());
    let signature = DkimSigner::from_key(key)
        .domain(domain)
        .selector("s1")
        .headers(["From", "To", "Subject", "Message-ID"])
        .sign(message.as_bytes())
        .expect("signs");
    (
        format!("{}{message}", signature.to_header()),
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
    judge_envelope(dns, raw, ip, "mx.sender.test", Some("ada@sender.test")).await
}

/// Judges `raw` as handed over by `ip` after `EHLO helo` and `MAIL FROM:<envelope_from>`.
async fn judge_envelope(
    dns: SocketAddr,
    raw: &str,
    ip: Option<&str>,
    helo: &str,
    envelope_from: Option<&str>,
) -> AuthVerdicts {
    let auth = MailAuthenticator::with_nameservers(&[dns], Duration::from_millis(800));
    let recipients = vec!["support@inbound.test".to_owned()];
    auth.authenticate(&InboundContext {
        raw: raw.as_bytes(),
        client_ip: ip.map(|ip| ip.parse().expect("ip")),
        helo: Some(helo),
        envelope_from,
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

/// `MESSAGE` from `ada@<from_domain>`, signed by `signer`; DMARC judged with the records
/// `dmarc` publishes at `_dmarc.<from_domain>` and no client address (SPF is GRAY).
async fn dkim_alignment(from_domain: &str, signer: &str, dmarc: &str) -> AuthVerdicts {
    let message = MESSAGE.replace("ada@sender.test", &format!("ada@{from_domain}"));
    let (raw, key) = signed_by(signer, &message);
    let dns = server(&[
        (&format!("s1._domainkey.{signer}"), &key),
        (&format!("_dmarc.{from_domain}"), dmarc),
    ])
    .await;
    judge_envelope(dns, &raw, None, "mx.sender.test", None).await
}

#[tokio::test]
async fn relaxed_dmarc_aligns_a_signature_of_a_subdomain() {
    // RFC 7489 §3.1: relaxed alignment compares organizational domains.
    let verdicts = dkim_alignment("sender.test", "mail.sender.test", "v=DMARC1; p=reject").await;
    assert_eq!(
        verdicts,
        AuthVerdicts {
            spf: Verdict::Gray,
            dkim: Verdict::Pass,
            dmarc: Verdict::Pass,
        }
    );
    // ... and the other way round: a From: at a subdomain, signed by the parent.
    let verdicts = dkim_alignment("news.sender.test", "sender.test", "v=DMARC1; p=reject").await;
    assert_eq!(verdicts.dmarc, Verdict::Pass, "{verdicts:?}");
}

#[tokio::test]
async fn strict_dmarc_or_another_organization_does_not_align() {
    let strict = "v=DMARC1; p=reject; adkim=s";
    let verdicts = dkim_alignment("sender.test", "mail.sender.test", strict).await;
    assert_eq!(
        (verdicts.dkim, verdicts.dmarc),
        (Verdict::Pass, Verdict::Fail)
    );
    let relaxed = "v=DMARC1; p=reject";
    let verdicts = dkim_alignment("sender.test", "sender-other.test", relaxed).await;
    assert_eq!(
        (verdicts.dkim, verdicts.dmarc),
        (Verdict::Pass, Verdict::Fail)
    );
    // Two registrants under the public suffix co.uk are two organizations, not one.
    let verdicts = dkim_alignment("sender.co.uk", "other.co.uk", relaxed).await;
    assert_eq!(
        (verdicts.dkim, verdicts.dmarc),
        (Verdict::Pass, Verdict::Fail)
    );
}

#[tokio::test]
async fn the_helo_name_of_a_null_sender_aligns_whatever_its_case() {
    let dns = server(&[
        ("sender.test", "v=spf1 ip4:127.0.0.1 -all"),
        ("mx.sender.test", "v=spf1 ip4:127.0.0.1 -all"),
        ("_dmarc.sender.test", "v=DMARC1; p=reject; aspf=s"),
    ])
    .await;
    // Strict: the HELO name is the From domain, in other letters.
    let verdicts = judge_envelope(dns, MESSAGE, Some("127.0.0.1"), "Sender.TEST", None).await;
    assert_eq!(
        verdicts,
        AuthVerdicts {
            spf: Verdict::Pass,
            dkim: Verdict::Gray,
            dmarc: Verdict::Pass,
        }
    );
    // Relaxed: the HELO name is a host of the From domain's organization.
    let dns = server(&[
        ("mx.sender.test", "v=spf1 ip4:127.0.0.1 -all"),
        ("_dmarc.sender.test", "v=DMARC1; p=reject"),
    ])
    .await;
    let verdicts = judge_envelope(dns, MESSAGE, Some("127.0.0.1"), "MX.Sender.Test", None).await;
    assert_eq!(
        (verdicts.spf, verdicts.dmarc),
        (Verdict::Pass, Verdict::Pass)
    );
}

#[test]
fn organizational_domains_come_from_the_public_suffix_list() {
    use super::organizational_domain;
    assert_eq!(organizational_domain("mail.example.com"), "example.com");
    assert_eq!(organizational_domain("example.com"), "example.com");
    assert_eq!(organizational_domain("a.b.example.co.uk"), "example.co.uk");
    // A public suffix or a single label has no registrable domain: it stands for itself.
    assert_eq!(organizational_domain("co.uk"), "co.uk");
    assert_eq!(organizational_domain("localhost"), "localhost");
}

#[tokio::test]
async fn a_dkim_key_record_too_long_for_udp_is_read_over_tcp() {
    let (raw, key) = signed();
    // Notes (`n=`) make the record longer than any UDP answer hickory takes (1232 bytes
    // with EDNS), as a 4096-bit RSA key with a few extra tags can be.
    let key = format!("{key}; n={}", "x".repeat(3000));
    let dns = server(&[
        ("s1._domainkey.sender.test", &key),
        ("_dmarc.sender.test", "v=DMARC1; p=reject"),
    ])
    .await;
    let verdicts = judge(dns, &raw, None).await;
    assert_eq!(
        (verdicts.dkim, verdicts.dmarc),
        (Verdict::Pass, Verdict::Pass)
    );
}

#[test]
fn configured_name_servers_are_asked_over_udp_and_tcp_and_hosts_file_never() {
    use hickory_resolver::config::ResolveHosts;
    use hickory_resolver::proto::xfer::Protocol;
    let addr: SocketAddr = "127.0.0.1:5353".parse().expect("address");
    let auth = MailAuthenticator::with_nameservers(&[addr], Duration::from_secs(1));
    let resolver = auth.auth.as_ref().expect("configured").resolver();
    let servers: Vec<_> = resolver
        .config()
        .name_servers()
        .iter()
        .map(|s| (s.socket_addr, s.protocol))
        .collect();
    assert_eq!(servers, [(addr, Protocol::Udp), (addr, Protocol::Tcp)]);
    assert!(resolver.options().edns0);
    // Not `/etc/hosts`: SPF's `a` and `mx` mechanisms ask the configured servers only.
    assert_eq!(resolver.options().use_hosts_file, ResolveHosts::Never);
}
