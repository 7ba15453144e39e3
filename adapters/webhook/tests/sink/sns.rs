//! `SnsHttpFetcher` against a real server on 127.0.0.1 (the one listed host): certificates
//! cached, failures not cached, sizes, statuses and redirects refused, the rules re-checked.

use std::time::Duration;

use posthorn_core::ports::{SnsFetchError, SnsFetcher};
use posthorn_core::sns::SnsHostRules;
use posthorn_webhook::{SnsFetchSettings, SnsHttpFetcher};

use crate::server::{Reply, TestServer};

fn fetcher(server: &TestServer, settings: SnsFetchSettings) -> (SnsHttpFetcher, SnsHostRules) {
    let rules = SnsHostRules::parse(&format!("127.0.0.1:{}", server.port())).expect("rules");
    (
        SnsHttpFetcher::new(rules.clone(), settings).expect("fetcher"),
        rules,
    )
}

#[tokio::test]
async fn certificates_are_fetched_once_and_cached_per_url() {
    let server = TestServer::start(|_, _| Reply::status(200, "-----BEGIN CERTIFICATE-----")).await;
    let (fetcher, rules) = fetcher(&server, SnsFetchSettings::default());
    let a = rules.check(&server.url("/a.pem")).expect("allowed");
    let b = rules.check(&server.url("/b.pem")).expect("allowed");
    for _ in 0..3 {
        assert_eq!(
            fetcher.certificate(&a).await,
            Ok(b"-----BEGIN CERTIFICATE-----".to_vec())
        );
    }
    fetcher.certificate(&b).await.expect("b");
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, vec!["/a.pem".to_string(), "/b.pem".to_string()]);
}

#[tokio::test]
async fn an_expired_cache_entry_is_fetched_again() {
    let server = TestServer::start(|_, _| Reply::status(200, "pem")).await;
    let settings = SnsFetchSettings {
        certificate_ttl: Duration::ZERO,
        ..SnsFetchSettings::default()
    };
    let (fetcher, rules) = fetcher(&server, settings);
    let url = rules.check(&server.url("/c.pem")).expect("allowed");
    fetcher.certificate(&url).await.expect("first");
    fetcher.certificate(&url).await.expect("second");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn failures_sizes_and_redirects_are_errors_and_not_cached() {
    let server = TestServer::start(|n, _| match n {
        0 => Reply::status(404, "no"),
        1 => Reply::status(302, "").with_header("location", "http://127.0.0.1:1/elsewhere.pem"),
        2 => Reply::status(200, &"x".repeat(100)),
        _ => Reply::status(200, "pem"),
    })
    .await;
    let settings = SnsFetchSettings {
        max_certificate_bytes: 50,
        ..SnsFetchSettings::default()
    };
    let (fetcher, rules) = fetcher(&server, settings);
    let url = rules.check(&server.url("/c.pem")).expect("allowed");
    for _ in 0..3 {
        assert!(matches!(
            fetcher.certificate(&url).await,
            Err(SnsFetchError::Failed(_))
        ));
    }
    assert_eq!(fetcher.certificate(&url).await, Ok(b"pem".to_vec()));
    assert_eq!(server.requests().len(), 4, "the redirect was not followed");
}

#[tokio::test]
async fn a_hanging_server_times_out() {
    let server = TestServer::start(|_, _| Reply::Hang).await;
    let settings = SnsFetchSettings {
        timeout: Duration::from_millis(200),
        ..SnsFetchSettings::default()
    };
    let (fetcher, rules) = fetcher(&server, settings);
    let url = rules.check(&server.url("/confirm")).expect("allowed");
    assert!(matches!(
        fetcher.confirm_subscription(&url).await,
        Err(SnsFetchError::Failed(_))
    ));
}

#[tokio::test]
async fn urls_outside_the_fetchers_own_rules_are_refused_without_traffic() {
    let server = TestServer::start(|_, _| Reply::status(200, "pem")).await;
    // A fetcher whose rules list no host, handed a URL another rule set allowed.
    let strict =
        SnsHttpFetcher::new(SnsHostRules::default(), SnsFetchSettings::default()).expect("fetcher");
    let (_, rules) = fetcher(&server, SnsFetchSettings::default());
    let url = rules
        .check(&server.url("/c.pem"))
        .expect("allowed by the loose rules");
    assert!(matches!(
        strict.certificate(&url).await,
        Err(SnsFetchError::Refused(_))
    ));
    assert!(matches!(
        strict.confirm_subscription(&url).await,
        Err(SnsFetchError::Refused(_))
    ));
    assert!(server.requests().is_empty());
}
