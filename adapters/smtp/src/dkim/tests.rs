//! A message written by the file transport verifies, with mail-auth's verifier parsing the
//! written `.eml`, against the TXT value the Domains API publishes for the key.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use mail_auth::common::parse::TxtRecordParser;
use mail_auth::common::verify::DomainKey;
use mail_auth::hickory_resolver::config::{ResolverConfig, ResolverOpts};
use mail_auth::{
    AuthenticatedMessage, DkimResult, MessageAuthenticator, Parameters, ResolverCache, Txt,
};
use posthorn_core::app::domains::generate_dkim_key;
use posthorn_core::model::DkimKeyPair;
use posthorn_core::ports::{DkimSigning, MailTransport, Mailbox, OutgoingMessage};

use crate::FileTransport;

/// TXT answers from a fixed table: the verifier never reaches a network resolver.
#[derive(Default)]
struct StaticTxt(Mutex<HashMap<String, Txt>>);

impl ResolverCache<String, Txt> for StaticTxt {
    fn get<Q>(&self, name: &Q) -> Option<Txt>
    where
        String: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.0.lock().ok()?.get(name).cloned()
    }

    fn remove<Q>(&self, name: &Q) -> Option<Txt>
    where
        String: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.0.lock().ok()?.remove(name)
    }

    fn insert(&self, key: String, value: Txt, _valid_until: Instant) {
        if let Ok(mut map) = self.0.lock() {
            map.insert(key, value);
        }
    }
}

fn message(signing: Option<DkimSigning>) -> OutgoingMessage {
    OutgoingMessage {
        email_id: "em_dkim".into(),
        message_id: "em_dkim@signed.example.test".into(),
        from: Mailbox {
            name: Some("Ann Sender".into()),
            email: "ann@signed.example.test".into(),
        },
        envelope_from: "ann@signed.example.test".into(),
        to: Mailbox {
            name: None,
            email: "bob@example.org".into(),
        },
        reply_to: Some("help@signed.example.test".into()),
        subject: "Signed and sealed, délivré".into(),
        html: "<p>Hello <b>Bob</b></p>".into(),
        text: Some("Hello Bob".into()),
        headers: vec![("List-Unsubscribe".into(), "<https://x.test/u/1>".into())],
        attachments: vec![],
        dkim: signing,
    }
}

fn signing(key: DkimKeyPair) -> DkimSigning {
    DkimSigning {
        domain: "signed.example.test".into(),
        selector: "ph0a1b2c3d".into(),
        key,
    }
}

/// Verifies the `.eml` at `path` with `published` (a TXT value) at the selector's name.
async fn verify(path: &PathBuf, published: &str) -> Vec<DkimResult> {
    let raw = std::fs::read(path).expect("eml written");
    let message = AuthenticatedMessage::parse(&raw).expect("the eml parses");
    let record = Arc::new(DomainKey::parse(published.as_bytes()).expect("published record parses"));
    let cache = StaticTxt::default();
    let name = "ph0a1b2c3d._domainkey.signed.example.test";
    for key in [name.to_string(), format!("{name}.")] {
        cache.insert(key, Txt::DomainKey(record.clone()), Instant::now());
    }
    let authenticator = MessageAuthenticator::new(ResolverConfig::new(), ResolverOpts::default())
        .expect("resolver without name servers");
    authenticator
        .verify_dkim(Parameters::new(&message).with_txt_cache(&cache))
        .await
        .iter()
        .map(|out| out.result().clone())
        .collect()
}

fn temp_dir() -> PathBuf {
    std::env::temp_dir().join(format!("posthorn-dkim-{}", uuid::Uuid::new_v4().simple()))
}

#[tokio::test]
async fn a_written_eml_verifies_against_the_published_key() {
    let key = generate_dkim_key().expect("key");
    let published = key.dns_value();
    let dir = temp_dir();
    let transport = FileTransport::new(dir.clone());
    transport
        .send(&message(Some(signing(key))))
        .await
        .expect("sent");
    let path = transport.path_for("em_dkim");
    let raw = std::fs::read_to_string(&path).expect("eml");
    // Return-Path, written as a final MTA would, sits above the signature it is not part of.
    let signed = raw
        .strip_prefix("Return-Path: <ann@signed.example.test>\r\n")
        .expect("return path first");
    assert!(
        signed.starts_with("DKIM-Signature:"),
        "signature header next"
    );
    assert!(raw.contains("d=signed.example.test") && raw.contains("s=ph0a1b2c3d"));
    assert_eq!(verify(&path, &published).await, vec![DkimResult::Pass]);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn another_key_or_a_changed_body_fails() {
    let key = generate_dkim_key().expect("key");
    let published = key.dns_value();
    let other = generate_dkim_key().expect("key");
    let dir = temp_dir();
    let transport = FileTransport::new(dir.clone());
    transport
        .send(&message(Some(signing(key))))
        .await
        .expect("sent");
    let path = transport.path_for("em_dkim");
    let results = verify(&path, &other.dns_value()).await;
    assert!(
        matches!(results.as_slice(), [DkimResult::Fail(_)]),
        "another published key fails: {results:?}"
    );

    let tampered = std::fs::read_to_string(&path)
        .expect("eml")
        .replace("Hello Bob", "Hello Eve");
    let tampered_path = dir.join("tampered.eml");
    std::fs::write(&tampered_path, tampered).expect("write");
    assert_eq!(verify(&path, &published).await, vec![DkimResult::Pass]);
    let key_results = verify(&tampered_path, &published).await;
    assert!(
        matches!(
            key_results.as_slice(),
            [DkimResult::Neutral(_) | DkimResult::Fail(_)]
        ),
        "a changed body does not verify: {key_results:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// An unsigned message carries no DKIM-Signature.
#[tokio::test]
async fn without_a_key_the_message_is_unsigned() {
    let dir = temp_dir();
    let transport = FileTransport::new(dir.clone());
    transport.send(&message(None)).await.expect("sent");
    let raw = std::fs::read_to_string(transport.path_for("em_dkim")).expect("eml");
    assert!(!raw.contains("DKIM-Signature"));
    let _ = std::fs::remove_dir_all(dir);
}
