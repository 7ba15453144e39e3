use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use proptest::prelude::*;

use super::*;

/// A `Dns` answering from a table; names not in it get `fallback`.
struct FakeDns {
    answers: HashMap<(String, RecordKind), Result<Vec<String>, DnsError>>,
    fallback: Result<Vec<String>, DnsError>,
    calls: AtomicUsize,
}

impl FakeDns {
    fn new(fallback: Result<Vec<String>, DnsError>) -> Self {
        Self {
            answers: HashMap::new(),
            fallback,
            calls: AtomicUsize::new(0),
        }
    }

    /// Every name is NXDOMAIN except those added with `with`.
    fn empty() -> Self {
        Self::new(Err(DnsError::NoSuchDomain))
    }

    fn down() -> Self {
        Self::new(Err(DnsError::Unavailable("no resolver".to_string())))
    }

    fn with(mut self, name: &str, kind: RecordKind, answer: Result<&[&str], DnsError>) -> Self {
        let answer = answer.map(|records| records.iter().map(|r| r.to_string()).collect());
        self.answers.insert((name.to_string(), kind), answer);
        self
    }

    /// A domain with mail servers, a website and name servers.
    fn healthy(self, domain: &str) -> Self {
        self.with(domain, RecordKind::Mx, Ok(&["mx1.example.net"]))
            .with(domain, RecordKind::A, Ok(&["192.0.2.1"]))
            .with(domain, RecordKind::Ns, Ok(&["ns1.example.net"]))
    }
}

#[async_trait]
impl Dns for FakeDns {
    async fn lookup(&self, name: &str, kind: RecordKind) -> Result<Vec<String>, DnsError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.answers
            .get(&(name.to_string(), kind))
            .cloned()
            .unwrap_or_else(|| self.fallback.clone())
    }
}

fn mentions(result: &VerificationResult, word: &str) -> bool {
    result.reasons.iter().any(|r| r.contains(word))
}

#[tokio::test]
async fn ordinary_personal_address_is_valid() {
    let dns = FakeDns::empty().healthy("gmail.com");
    let r = verify_email(&dns, "  Ada.Lovelace@GMail.com ").await;
    assert_eq!(r.email, "ada.lovelace@gmail.com");
    assert!(r.valid && r.domain_exists && r.has_mx_records && r.has_website);
    assert!(r.is_personal_email);
    assert!(!r.is_disposable && !r.is_alias && !r.is_typo && !r.is_plus_addressed);
    assert!(!r.is_random_input);
    assert_eq!(r.suggested_email, None);
    assert!(dns.calls.load(Ordering::SeqCst) <= 3);
}

#[tokio::test]
async fn serialises_with_the_spec_field_names() {
    let dns = FakeDns::empty().healthy("example.com");
    let json = serde_json::to_value(verify_email(&dns, "ada@example.com").await).expect("json");
    for key in [
        "email",
        "valid",
        "isDisposable",
        "isAlias",
        "isTypo",
        "isPlusAddressed",
        "isRandomInput",
        "isPersonalEmail",
        "domainExists",
        "hasWebsite",
        "hasMxRecords",
        "reasons",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(json["suggestedEmail"], serde_json::Value::Null);
    assert_eq!(json["isPersonalEmail"], false);
}

#[tokio::test]
async fn bad_syntax_is_invalid_without_dns() {
    let dns = FakeDns::empty();
    let r = verify_email(&dns, "  not an address ").await;
    assert_eq!(r.email, "not an address");
    assert!(!r.valid && !r.domain_exists && !r.has_mx_records);
    assert!(!r.reasons.is_empty());
    assert_eq!(dns.calls.load(Ordering::SeqCst), 0);

    let r = verify_email(&dns, "   ").await;
    assert!(!r.valid && mentions(&r, "empty"));
}

#[tokio::test]
async fn missing_domain_is_invalid() {
    let r = verify_email(&FakeDns::empty(), "ada@no-such-domain.example").await;
    assert!(!r.valid && !r.domain_exists && !r.has_mx_records && !r.has_website);
    assert!(mentions(&r, "does not exist"));
}

#[tokio::test]
async fn domain_without_mx_is_invalid() {
    let dns = FakeDns::empty()
        .with("example.org", RecordKind::Mx, Ok(&[]))
        .with("example.org", RecordKind::A, Ok(&["192.0.2.7"]))
        .with("example.org", RecordKind::Ns, Ok(&["ns.example.org"]));
    let r = verify_email(&dns, "ada@example.org").await;
    assert!(!r.valid && r.domain_exists && r.has_website && !r.has_mx_records);
    assert!(mentions(&r, "MX"));
}

#[tokio::test]
async fn null_mx_means_no_mail() {
    let dns =
        FakeDns::empty()
            .healthy("example.org")
            .with("example.org", RecordKind::Mx, Ok(&["."]));
    let r = verify_email(&dns, "ada@example.org").await;
    assert!(!r.valid && !r.has_mx_records && r.domain_exists);
}

#[tokio::test]
async fn unavailable_dns_is_not_a_negative_answer() {
    let r = verify_email(&FakeDns::down(), "ada@example.com").await;
    assert!(r.valid, "syntax alone decides when DNS is down");
    assert!(!r.domain_exists && !r.has_mx_records && !r.has_website);
    assert!(mentions(&r, "could not be checked"));
    assert!(!mentions(&r, "does not exist"));
}

#[tokio::test]
async fn partly_unavailable_dns_says_what_was_not_checked() {
    let dns = FakeDns::down()
        .with("example.com", RecordKind::A, Ok(&["192.0.2.1"]))
        .with("example.com", RecordKind::Ns, Ok(&["ns.example.com"]));
    let r = verify_email(&dns, "ada@example.com").await;
    assert!(r.valid && r.domain_exists && r.has_website && !r.has_mx_records);
    assert!(mentions(&r, "mail servers"));
}

#[tokio::test]
async fn disposable_is_valid_but_flagged() {
    let dns = FakeDns::empty().healthy("mailinator.com");
    let r = verify_email(&dns, "ada@mailinator.com").await;
    assert!(r.valid && r.is_disposable && !r.is_alias);
    assert!(mentions(&r, "disposable"));
}

#[tokio::test]
async fn alias_services_are_flagged() {
    let dns = FakeDns::empty().healthy("duck.com");
    let r = verify_email(&dns, "quiet-owl@duck.com").await;
    assert!(r.valid && r.is_alias && !r.is_disposable && !r.is_personal_email);
    assert!(mentions(&r, "alias"));
}

#[tokio::test]
async fn typos_get_a_suggestion() {
    let dns = FakeDns::empty().healthy("gmial.com");
    let r = verify_email(&dns, "ada@gmial.com").await;
    assert!(r.is_typo);
    assert_eq!(r.suggested_email.as_deref(), Some("ada@gmail.com"));
    assert!(mentions(&r, "ada@gmail.com"));

    let r = verify_email(&FakeDns::down(), "ada@example.con").await;
    assert_eq!(r.suggested_email.as_deref(), Some("ada@example.com"));
}

#[tokio::test]
async fn plus_and_random_local_parts_are_flagged() {
    let dns = FakeDns::empty().healthy("example.com");
    let r = verify_email(&dns, "ada+news@example.com").await;
    assert!(r.valid && r.is_plus_addressed && !r.is_random_input);

    let r = verify_email(&dns, "xkcdqzvbt@example.com").await;
    assert!(r.valid && r.is_random_input && !r.is_plus_addressed);
    assert!(mentions(&r, "random"));
}

#[test]
fn verification_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let dns = FakeDns::down();
    let future = verify_email(&dns, "ada@example.com");
    assert_send(&future);
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
}

proptest! {
    #[test]
    fn never_panics(raw in "\\PC{0,300}") {
        let dns = FakeDns::down();
        let r = runtime().block_on(verify_email(&dns, &raw));
        prop_assert!(dns.calls.load(Ordering::SeqCst) <= 3);
        if r.valid {
            prop_assert!(EmailAddress::parse(&r.email).is_ok());
        }
    }

    #[test]
    fn never_suggests_the_same_address(
        local in "[a-z0-9.+_-]{1,20}",
        domain in "[a-z0-9-]{1,12}\\.[a-z]{2,5}",
    ) {
        let raw = format!("{local}@{domain}");
        let r = runtime().block_on(verify_email(&FakeDns::down(), &raw));
        prop_assert_eq!(r.is_typo, r.suggested_email.is_some());
        prop_assert_ne!(r.suggested_email.as_deref(), Some(r.email.as_str()));
    }
}
