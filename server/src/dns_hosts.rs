//! WEBHOOK targets resolved through the engine's `Dns` port, so that with
//! `POSTHORN_DNS_SERVERS` set no lookup of the server goes to the system's resolver.

use std::io;
use std::net::IpAddr;
use std::sync::Arc;

use async_trait::async_trait;
use posthorn_core::ports::{Dns, DnsError, RecordKind};
use posthorn_webhook::HostResolver;

/// Resolves host names with the `Dns` port (A records, AAAA when there is no A).
pub struct DnsHostResolver(pub Arc<dyn Dns>);

#[async_trait]
impl HostResolver for DnsHostResolver {
    async fn resolve(&self, host: &str) -> io::Result<Vec<IpAddr>> {
        match self.0.lookup(host, RecordKind::A).await {
            Ok(records) => Ok(records.iter().filter_map(|r| r.parse().ok()).collect()),
            Err(DnsError::NoSuchDomain) => Ok(Vec::new()),
            Err(err) => Err(io::Error::other(err.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use posthorn_dns::StaticDns;

    #[tokio::test]
    async fn addresses_come_from_the_dns_port() {
        let dns = StaticDns::new().with("hooks.test", RecordKind::A, ["127.0.0.7"]);
        let resolver = DnsHostResolver(Arc::new(dns));
        let ips = resolver.resolve("hooks.test").await.expect("resolves");
        assert_eq!(ips, vec!["127.0.0.7".parse::<IpAddr>().expect("ip")]);
        assert!(resolver
            .resolve("unknown.test")
            .await
            .map_or(true, |ips| ips.is_empty()));
    }
}
