//! The guard end to end: refusals open no connection; permitted names connect only to the
//! address that was checked.

use std::io;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use posthorn_core::ports::{WebhookError, WebhookRequest, WebhookSink};
use posthorn_webhook::{
    AllowHosts, HostResolver, HttpWebhookSink, StaticResolver, WebhookSettings,
};

use crate::server::{Reply, TestServer};

fn loopback() -> IpAddr {
    IpAddr::from([127, 0, 0, 1])
}

fn refused(result: Result<posthorn_core::ports::WebhookResponse, WebhookError>) -> String {
    match result {
        Err(WebhookError::Refused(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn loopback_is_refused_unless_allow_private_or_the_allow_list_permits_it() {
    let server = TestServer::start(|_, _| Reply::status(200, "should not be reached")).await;
    let by_name = format!("http://hooks.test:{}/", server.port());
    let resolver = Arc::new(
        StaticResolver::new()
            .with("hooks.test", &[loopback()])
            .with("localhost", &[loopback()]),
    );
    let listing = |hosts: &str| WebhookSettings {
        allow_hosts: Some(AllowHosts::parse(hosts).expect("valid")),
        ..WebhookSettings::default()
    };

    // The production default; an allow-list naming another host; an allow-list naming
    // hooks.test, which is not a loopback name though it resolves to loopback.
    for settings in [
        WebhookSettings::default(),
        listing("receiver.example"),
        listing("hooks.test"),
    ] {
        let sink = HttpWebhookSink::with_resolver(settings, resolver.clone());
        for url in [
            server.url("/"),
            by_name.clone(),
            format!("http://[::1]:{}/", server.port()),
        ] {
            refused(sink.deliver(&WebhookRequest::post(url, "{}")).await);
        }
    }
    let why = refused(
        HttpWebhookSink::with_resolver(WebhookSettings::default(), resolver.clone())
            .deliver(&WebhookRequest::post(by_name.clone(), "{}"))
            .await,
    );
    assert!(
        why.contains("127.0.0.1") && why.contains("loopback"),
        "{why}"
    );
    assert_eq!(server.connections(), 0, "a refusal must not connect");

    // Either setting lets the same requests through.
    let allow_private = HttpWebhookSink::with_resolver(
        WebhookSettings {
            allow_private: true,
            ..WebhookSettings::default()
        },
        resolver.clone(),
    );
    let listed_literal = HttpWebhookSink::with_resolver(listing("127.0.0.1"), resolver.clone());
    let listed_localhost = HttpWebhookSink::with_resolver(listing("localhost"), resolver);
    let permitted = [
        (&allow_private, by_name.clone()),
        (&listed_literal, server.url("/")),
        (
            &listed_localhost,
            format!("http://localhost:{}/", server.port()),
        ),
    ];
    for (sink, url) in permitted {
        let response = sink
            .deliver(&WebhookRequest::post(url.clone(), "{}"))
            .await
            .unwrap_or_else(|e| panic!("{url} should be permitted: {e}"));
        assert_eq!(response.status, 200);
    }
    assert_eq!(server.requests().len(), 3);
}

/// Answers loopback the first time, and another loopback address (where nothing listens)
/// afterwards: a client that resolved twice would connect to the second.
struct Rebinding {
    calls: AtomicUsize,
}

#[async_trait]
impl HostResolver for Rebinding {
    async fn resolve(&self, _host: &str) -> io::Result<Vec<IpAddr>> {
        let first = self.calls.fetch_add(1, Ordering::SeqCst) == 0;
        Ok(vec![if first {
            loopback()
        } else {
            IpAddr::from([127, 0, 0, 3])
        }])
    }
}

#[tokio::test]
async fn the_connection_goes_to_the_checked_address_after_a_single_lookup() {
    let server = TestServer::start(|_, _| Reply::status(200, "pinned")).await;
    let resolver = Arc::new(Rebinding {
        calls: AtomicUsize::new(0),
    });
    let sink = HttpWebhookSink::with_resolver(
        WebhookSettings {
            allow_private: true,
            ..WebhookSettings::default()
        },
        resolver.clone(),
    );
    let url = format!("http://rebind.test:{}/x", server.port());
    let response = sink
        .deliver(&WebhookRequest::post(url, "{}"))
        .await
        .expect("delivered to the checked address");
    assert_eq!(response.body_excerpt, "pinned");
    assert_eq!(resolver.calls.load(Ordering::SeqCst), 1);
    // The name in the URL is what the receiver sees, though the system never resolved it.
    let host = server.requests()[0].header("host").map(str::to_string);
    assert_eq!(host, Some(format!("rebind.test:{}", server.port())));
}

#[tokio::test]
async fn schemes_other_than_http_and_https_are_refused_by_deliver() {
    let sink = HttpWebhookSink::new(WebhookSettings {
        allow_private: true,
        ..WebhookSettings::default()
    });
    for url in ["ftp://127.0.0.1/x", "file:///etc/passwd", "ws://127.0.0.1/"] {
        refused(sink.deliver(&WebhookRequest::post(url, "{}")).await);
    }
}
