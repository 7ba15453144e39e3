//! How the sink turns a host name into addresses: the system resolver in production, a table
//! in tests (so the guard is exercised on any address without real DNS or traffic).

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;

/// Resolves a host name to its addresses.
///
/// Contract: called once per request for a target given by name (never for an IP literal);
/// the sink checks every address returned and connects only to those. `Ok(vec![])` and
/// `Err` both mean the host cannot be reached now.
#[async_trait]
pub trait HostResolver: Send + Sync {
    /// The addresses of `host` (lower case, no trailing dot guaranteed by the caller).
    async fn resolve(&self, host: &str) -> io::Result<Vec<IpAddr>>;
}

/// The operating system's resolver (`getaddrinfo`: `/etc/hosts`, then DNS).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

#[async_trait]
impl HostResolver for SystemResolver {
    async fn resolve(&self, host: &str) -> io::Result<Vec<IpAddr>> {
        let addrs = tokio::net::lookup_host((host, 0)).await?;
        let mut ips: Vec<IpAddr> = addrs.map(|a| a.ip()).collect();
        ips.dedup();
        Ok(ips)
    }
}

/// A fixed table of answers, counting its lookups; unknown names fail to resolve.
#[derive(Debug, Default)]
pub struct StaticResolver {
    table: HashMap<String, Vec<IpAddr>>,
    lookups: AtomicUsize,
}

impl StaticResolver {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers `addrs` for `host` (builder style).
    pub fn with(mut self, host: &str, addrs: &[IpAddr]) -> Self {
        self.table.insert(host.to_ascii_lowercase(), addrs.to_vec());
        self
    }

    /// How many lookups were made so far.
    pub fn lookups(&self) -> usize {
        self.lookups.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl HostResolver for StaticResolver {
    async fn resolve(&self, host: &str) -> io::Result<Vec<IpAddr>> {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        self.table
            .get(host)
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no such host {host}")))
    }
}
