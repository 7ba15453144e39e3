//! The one place that turns configuration into adapters.

use std::sync::Arc;
use std::time::Duration;

use posthorn_core::app::inbound::InboundSettings;
use posthorn_core::app::sns::SnsReceiver;
use posthorn_core::model::parse_domain_name;
use posthorn_core::ports::{
    Cache, Dns, InboundCheckers, Jobs, Quota, RateLimiter, RetrySchedule, Store, SystemClock,
};
use posthorn_core::sns::{SnsHostRules, TopicAllowList};
use posthorn_core::{Engine, Settings};
use posthorn_memory::{MemoryCache, MemoryRateLimiter, MemoryStore};
use posthorn_webhook::{
    AllowHosts, HostResolver, HttpWebhookSink, SnsFetchSettings, SnsHttpFetcher, SystemResolver,
    WebhookSettings,
};

use crate::config::Config;
use crate::dns_hosts::DnsHostResolver;
use crate::store_spec::{StoreSpec, UnknownStore};

/// Why the configuration cannot be composed.
#[derive(Debug, thiserror::Error)]
pub enum ComposeError {
    /// `POSTHORN_STORE` names no known store.
    #[error(transparent)]
    UnknownStore(#[from] UnknownStore),
    /// A role other than `all` on SQLite, which serves one process.
    #[error("POSTHORN_ROLE={0} needs a store shared by several processes: SQLite serves one server process, so run POSTHORN_ROLE=all on it, or move to PostgreSQL (`posthorn export --to postgres://…`) with Redis to run api and worker processes apart")]
    SqliteRole(&'static str),
    /// `POSTHORN_TRANSPORT` is invalid.
    #[error("POSTHORN_TRANSPORT: {0}")]
    Transport(String),
    /// An adapter could not start.
    #[error("{0}")]
    Adapter(String),
}

/// Builds the engine the configuration describes.
pub async fn build_engine(config: &Config) -> Result<Engine, ComposeError> {
    // Errors are scrubbed of the URLs' credentials: drivers may echo what they were given.
    let store_url = &config.store;
    let (store, jobs): (Arc<dyn Store>, Arc<dyn Jobs>) =
        match StoreSpec::parse(store_url, &config.data_dir)? {
            StoreSpec::Memory => {
                let store = Arc::new(MemoryStore::new());
                (store.clone(), store)
            }
            StoreSpec::Postgres => {
                let store = Arc::new(
                    posthorn_postgres::PgStore::connect(store_url.expose())
                        .await
                        .map_err(|e| {
                            ComposeError::Adapter(store_url.scrub(&format!("PostgreSQL: {e}")))
                        })?,
                );
                (store.clone(), store)
            }
            StoreSpec::Sqlite(path) => {
                let store = Arc::new(crate::sqlite_tools::open_for_server(config, &path).await?);
                (store.clone(), store)
            }
        };
    let (rate_limiter, cache): (Arc<dyn RateLimiter>, Arc<dyn Cache>) = match &config.redis_url {
        None => (
            Arc::new(MemoryRateLimiter::new()),
            Arc::new(MemoryCache::new()),
        ),
        Some(url) => {
            let redis =
                posthorn_redis::RedisConnection::connect(url.expose(), &config.redis_prefix)
                    .await
                    .map_err(|e| ComposeError::Adapter(url.scrub(&format!("Redis: {e}"))))?;
            (Arc::new(redis.rate_limiter()), Arc::new(redis.cache()))
        }
    };
    let transport = posthorn_smtp::transport_from_spec(config.transport.expose())
        .map_err(|e| ComposeError::Transport(config.transport.scrub(&e.to_string())))?;
    let dns_timeout = Duration::from_millis(config.dns_timeout_ms);
    let (dns, webhook_hosts): (Arc<dyn Dns>, Arc<dyn HostResolver>) =
        if config.dns_servers.is_empty() {
            let dns = Arc::new(posthorn_dns::HickoryDns::from_system_conf(dns_timeout));
            (dns, Arc::new(SystemResolver))
        } else {
            let servers: Vec<_> = config.dns_servers.iter().map(|s| s.0).collect();
            let dns: Arc<dyn Dns> = Arc::new(posthorn_dns::HickoryDns::with_nameservers(
                &servers,
                dns_timeout,
            ));
            (dns.clone(), Arc::new(DnsHostResolver(dns)))
        };
    Ok(Engine {
        store,
        jobs,
        transport,
        clock: Arc::new(SystemClock),
        dns,
        rate_limiter,
        cache,
        webhooks: Arc::new(HttpWebhookSink::with_resolver(
            webhook_settings(config)?,
            webhook_hosts,
        )),
        inbound: inbound_checkers(config)?,
        settings: Settings {
            job_lease: Duration::from_secs(config.job_lease_secs),
            mx_host: config.mx_host.as_deref().and_then(host_name),
            bounce_domain: config.bounce_domain.as_deref().and_then(host_name),
            public_url: config.public_url.clone(),
            webhook_retry: RetrySchedule::new(
                config.webhook_retry_delays.0.clone(),
                RetrySchedule::STANDARD_JITTER,
            )
            .map_err(|e| ComposeError::Adapter(format!("POSTHORN_WEBHOOK_RETRY_DELAYS: {e}")))?,
            inbound: inbound_settings(config),
            ..Settings::default()
        },
    })
}

/// A host or domain name from the configuration as DNS and SMTP take it: trimmed, without
/// a final dot, lower case, internationalised labels as A-labels (`parse_domain_name`); a
/// name that is not a domain of two labels (`localhost`) only trimmed and lower-cased.
/// `None` when empty.
fn host_name(raw: &str) -> Option<String> {
    let trimmed = raw.trim().trim_end_matches('.');
    if trimmed.is_empty() {
        return None;
    }
    Some(parse_domain_name(trimmed).unwrap_or_else(|_| trimmed.to_lowercase()))
}

/// How long rspamd may take to scan one message.
const RSPAMD_TIMEOUT: Duration = Duration::from_secs(10);

/// The checks of received mail: SPF, DKIM and DMARC through the configured name servers,
/// spam through rspamd when `POSTHORN_RSPAMD_URL` is set; no virus scanner (GRAY).
fn inbound_checkers(config: &Config) -> Result<InboundCheckers, ComposeError> {
    let timeout = Duration::from_millis(config.dns_timeout_ms);
    let authenticator = if config.dns_servers.is_empty() {
        posthorn_dns::MailAuthenticator::from_system_conf(timeout)
    } else {
        let servers: Vec<_> = config.dns_servers.iter().map(|s| s.0).collect();
        posthorn_dns::MailAuthenticator::with_nameservers(&servers, timeout)
    };
    let mut checkers = InboundCheckers {
        authenticator: Arc::new(authenticator),
        ..InboundCheckers::default()
    };
    if let Some(url) = config
        .rspamd_url
        .as_deref()
        .filter(|u| !u.trim().is_empty())
    {
        let scanner = posthorn_webhook::RspamdScanner::new(url, RSPAMD_TIMEOUT)
            .map_err(|e| ComposeError::Adapter(e.to_string()))?;
        checkers.spam = Arc::new(scanner);
    }
    Ok(checkers)
}

/// Limits and retention of received mail; messages as large as the API's bodies.
pub fn inbound_settings(config: &Config) -> InboundSettings {
    let per_minute = |limit| Quota {
        limit,
        window: Duration::from_secs(60),
    };
    InboundSettings {
        retention_days: config.inbound_retention_days,
        per_sender: per_minute(config.inbound_sender_rate),
        per_workspace: per_minute(config.inbound_workspace_rate),
        max_message_bytes: config.max_body_bytes,
        ..InboundSettings::default()
    }
}

/// How WEBHOOK steps reach their targets: the SSRF guard's allowances and the time-out.
pub fn webhook_settings(config: &Config) -> Result<WebhookSettings, ComposeError> {
    let allow_hosts = match config.webhook_allow_hosts.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(list) => {
            Some(AllowHosts::parse(list).map_err(|e| ComposeError::Adapter(e.to_string()))?)
        }
    };
    Ok(WebhookSettings {
        allow_private: config.webhook_allow_private,
        allow_hosts,
        ..WebhookSettings::default()
    })
}

/// The receiver of `POST /webhooks/sns`: the listed topics (none: every message refused),
/// the certificate hosts, and the HTTP fetcher.
pub fn sns_receiver(config: &Config) -> Result<SnsReceiver, ComposeError> {
    let topics = TopicAllowList::parse(config.sns_topic_arns.as_deref().unwrap_or(""))
        .map_err(|e| ComposeError::Adapter(e.to_string()))?;
    let hosts = SnsHostRules::parse(config.sns_cert_hosts.as_deref().unwrap_or(""))
        .map_err(|e| ComposeError::Adapter(e.to_string()))?;
    let fetcher = SnsHttpFetcher::new(hosts.clone(), SnsFetchSettings::default())
        .map_err(|e| ComposeError::Adapter(format!("SNS: {e}")))?;
    Ok(SnsReceiver::new(Arc::new(fetcher), topics, hosts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use posthorn_core::ports::RecordKind;

    /// A loopback UDP socket that never answers and returns how many datagrams it received.
    async fn silent_name_server() -> (std::net::SocketAddr, tokio::task::JoinHandle<usize>) {
        let socket = tokio::net::UdpSocket::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = socket.local_addr().expect("addr");
        let counter = tokio::spawn(async move {
            let mut buf = [0u8; 512];
            let mut seen = 0;
            while let Ok(Ok(_)) =
                tokio::time::timeout(Duration::from_millis(600), socket.recv_from(&mut buf)).await
            {
                seen += 1;
            }
            seen
        });
        (addr, counter)
    }

    #[tokio::test]
    async fn configured_name_servers_get_every_lookup() {
        let (addr, counter) = silent_name_server().await;
        let config = Config::try_parse_from([
            "posthorn",
            "--store",
            "memory",
            "--dns-servers",
            &addr.to_string(),
            "--dns-timeout-ms",
            "200",
        ])
        .expect("parses");
        let engine = build_engine(&config).await.expect("composes");
        let answer = engine.dns.lookup("verify.test", RecordKind::Mx).await;
        assert!(answer.is_err(), "a silent server cannot answer: {answer:?}");
        let hosts = DnsHostResolver(engine.dns.clone());
        assert!(hosts.resolve("hook.test").await.is_err());
        assert!(counter.await.expect("counter") >= 2);
    }

    #[test]
    fn configured_host_names_are_in_ascii_form() {
        assert_eq!(
            host_name(" Bounces.Bücher.de. ").as_deref(),
            Some("bounces.xn--bcher-kva.de")
        );
        assert_eq!(
            host_name("MX.Example.com").as_deref(),
            Some("mx.example.com")
        );
        assert_eq!(host_name("LocalHost").as_deref(), Some("localhost"));
        assert_eq!(host_name("  "), None);
    }

    #[test]
    fn malformed_sns_settings_are_refused() {
        let parse = |args: &[&str]| {
            let mut all = vec!["posthorn"];
            all.extend_from_slice(args);
            Config::try_parse_from(all).expect("flags parse")
        };
        assert!(sns_receiver(&parse(&[])).is_ok());
        assert!(sns_receiver(&parse(&[
            "--sns-topic-arns",
            "arn:aws:sns:us-east-1:123456789012:ses",
            "--sns-cert-hosts",
            "127.0.0.1:9000"
        ]))
        .is_ok());
        assert!(sns_receiver(&parse(&["--sns-topic-arns", "ses-feedback"])).is_err());
        assert!(sns_receiver(&parse(&["--sns-cert-hosts", "a.example/path"])).is_err());
    }
}
