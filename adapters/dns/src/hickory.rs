//! `HickoryDns`: the `Dns` port on hickory-resolver, with a time-out and an answer cache.

use std::net::SocketAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use hickory_resolver::config::{NameServerConfig, ResolveHosts, ResolverConfig, ResolverOpts};
use hickory_resolver::name_server::TokioConnectionProvider;
use hickory_resolver::proto::op::ResponseCode;
use hickory_resolver::proto::rr::{RData, RecordType};
use hickory_resolver::proto::xfer::Protocol;
use hickory_resolver::proto::ProtoErrorKind;
use hickory_resolver::{Name, ResolveError, TokioResolver};
use posthorn_core::ports::{Dns, DnsError, RecordKind};

use crate::cache::{Answer, AnswerCache};
use crate::normalise;

/// Longest time a positive answer is kept, whatever its TTL.
const MAX_POSITIVE_TTL: Duration = Duration::from_secs(3600);
/// Longest time an NXDOMAIN or "no records" answer is kept.
const MAX_NEGATIVE_TTL: Duration = Duration::from_secs(60);
/// How many answers the cache holds at most.
const CACHE_CAPACITY: usize = 4096;
/// Why every lookup fails when there is nobody to ask.
const NO_RESOLVER: &str = "no DNS resolver configured";

/// Resolves through hickory-resolver: one attempt per lookup, bounded by a time-out, answers
/// cached for their TTL (at most an hour; negative answers at most a minute; failures never).
pub struct HickoryDns {
    /// `None` when no name server is configured: every lookup is then unavailable at once.
    resolver: Option<TokioResolver>,
    timeout: Duration,
    cache: Mutex<AnswerCache>,
    /// Whether the resolver knows a name that must exist, and when that was last checked.
    canary: Mutex<Option<(Instant, bool)>>,
}

/// A name every honest resolver can answer; a resolver that calls it non-existent is
/// sandboxed or broken, and its NXDOMAIN answers say nothing.
const CANARY: &str = "com";
/// How long the canary's verdict is trusted.
const CANARY_TTL: Duration = Duration::from_secs(300);

impl HickoryDns {
    /// Uses the name servers of the system configuration (`/etc/resolv.conf`); when it cannot
    /// be read or lists none, every lookup answers `Unavailable` immediately.
    pub fn from_system_conf(timeout: Duration) -> Self {
        let resolver = match hickory_resolver::system_conf::read_system_conf() {
            Ok((config, opts)) if !config.name_servers().is_empty() => {
                Some(build(config, opts, timeout))
            }
            Ok(_) => {
                tracing::warn!("no name server in the system DNS configuration");
                None
            }
            Err(err) => {
                tracing::warn!(error = %err, "cannot read the system DNS configuration");
                None
            }
        };
        Self::from_resolver(resolver, timeout)
    }

    /// Asks only the name server at `addr` (UDP, TCP for long answers), with the given
    /// time-out per lookup.
    pub fn with_nameserver(addr: SocketAddr, timeout: Duration) -> Self {
        Self::with_nameservers(&[addr], timeout)
    }

    /// Asks only the name servers at `addrs` (in order; over UDP with EDNS, and over TCP
    /// when an answer is too long for UDP), never the system's and never `/etc/hosts`; with
    /// none, every lookup is unavailable. What `POSTHORN_DNS_SERVERS` configures.
    pub fn with_nameservers(addrs: &[SocketAddr], timeout: Duration) -> Self {
        if addrs.is_empty() {
            return Self::from_resolver(None, timeout);
        }
        let mut opts = ResolverOpts::default();
        // Long TXT records (DKIM keys) exceed plain DNS's 512 bytes over UDP.
        opts.edns0 = true;
        Self::from_resolver(Some(build(explicit_servers(addrs), opts, timeout)), timeout)
    }

    /// Whether a name server is configured at all; when not, every lookup is unavailable.
    pub fn is_configured(&self) -> bool {
        self.resolver.is_some()
    }

    fn from_resolver(resolver: Option<TokioResolver>, timeout: Duration) -> Self {
        Self {
            resolver,
            timeout,
            cache: Mutex::new(AnswerCache::new(CACHE_CAPACITY)),
            canary: Mutex::new(None),
        }
    }

    /// Whether NXDOMAIN answers of this resolver can be believed (cached for a while).
    async fn resolver_is_honest(&self, resolver: &TokioResolver) -> bool {
        let now = Instant::now();
        let known = *self.canary.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, honest)) = known {
            if now.duration_since(at) < CANARY_TTL {
                return honest;
            }
        }
        let probe =
            tokio::time::timeout(self.timeout, query(resolver, CANARY, RecordKind::Ns)).await;
        let honest = matches!(probe, Ok(Ok((Ok(ref records), _))) if !records.is_empty());
        if !honest {
            tracing::warn!(
                "the DNS resolver does not know `com`; its negative answers are ignored"
            );
        }
        *self.canary.lock().unwrap_or_else(PoisonError::into_inner) = Some((now, honest));
        honest
    }
}

/// A configuration of exactly `addrs`, each over UDP and TCP: hickory asks again over TCP
/// only when a truncated UDP answer comes from a pool that has TCP servers.
pub(crate) fn explicit_servers(addrs: &[SocketAddr]) -> ResolverConfig {
    let mut config = ResolverConfig::new();
    for addr in addrs {
        for protocol in [Protocol::Udp, Protocol::Tcp] {
            let mut server = NameServerConfig::new(*addr, protocol);
            server.trust_negative_responses = true;
            config.add_name_server(server);
        }
    }
    config
}

fn build(config: ResolverConfig, mut opts: ResolverOpts, timeout: Duration) -> TokioResolver {
    opts.timeout = timeout;
    opts.attempts = 1;
    opts.try_tcp_on_error = false;
    opts.use_hosts_file = ResolveHosts::Never;
    TokioResolver::builder_with_config(config, TokioConnectionProvider::default())
        .with_options(opts)
        .build()
}

impl std::fmt::Debug for HickoryDns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HickoryDns")
            .field("configured", &self.is_configured())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Dns for HickoryDns {
    async fn lookup(&self, name: &str, kind: RecordKind) -> Result<Vec<String>, DnsError> {
        let Some(resolver) = &self.resolver else {
            return Err(DnsError::Unavailable(NO_RESOLVER.to_string()));
        };
        let key = (normalise(name), kind);
        let cached = self
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key, Instant::now());
        if let Some(answer) = cached {
            return self.checked(resolver, answer).await;
        }
        // hickory's own time-out applies per name server; this one bounds the whole lookup.
        let outcome = tokio::time::timeout(self.timeout, query(resolver, &key.0, kind)).await;
        let (answer, ttl) = match outcome {
            Ok(Ok((answer, ttl))) => (answer, ttl),
            Ok(Err(reason)) => return Err(DnsError::Unavailable(reason)),
            Err(_) => {
                return Err(DnsError::Unavailable(format!(
                    "no answer within {} ms",
                    self.timeout.as_millis()
                )))
            }
        };
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, answer.clone(), ttl, Instant::now());
        self.checked(resolver, answer).await
    }
}

impl HickoryDns {
    /// Turns NXDOMAIN into `Unavailable` when the resolver denies names that must exist.
    async fn checked(&self, resolver: &TokioResolver, answer: Answer) -> Answer {
        match answer {
            Err(DnsError::NoSuchDomain) if !self.resolver_is_honest(resolver).await => {
                Err(DnsError::Unavailable(
                    "the DNS resolver answers that even well-known names do not exist, so it cannot be trusted".into(),
                ))
            }
            other => other,
        }
    }
}

/// A definite answer and how long it may be kept, or why there is none.
async fn query(
    resolver: &TokioResolver,
    name: &str,
    kind: RecordKind,
) -> Result<(Answer, Duration), String> {
    let mut fqdn = Name::from_utf8(name).map_err(|e| format!("invalid name: {e}"))?;
    fqdn.set_fqdn(true);
    match kind {
        RecordKind::Mx => query_type(resolver, &fqdn, RecordType::MX).await,
        RecordKind::Ns => query_type(resolver, &fqdn, RecordType::NS).await,
        RecordKind::Txt => query_type(resolver, &fqdn, RecordType::TXT).await,
        RecordKind::A => match query_type(resolver, &fqdn, RecordType::A).await? {
            // An IPv6-only host still has an address.
            (Ok(v4), _) if v4.is_empty() => query_type(resolver, &fqdn, RecordType::AAAA).await,
            found => Ok(found),
        },
    }
}

async fn query_type(
    resolver: &TokioResolver,
    name: &Name,
    record_type: RecordType,
) -> Result<(Answer, Duration), String> {
    match resolver.lookup(name.clone(), record_type).await {
        Ok(lookup) => {
            let mut ttl = MAX_POSITIVE_TTL;
            let mut records = Vec::new();
            for record in lookup.record_iter() {
                if let Some(text) = render(record.data()) {
                    ttl = ttl.min(Duration::from_secs(u64::from(record.ttl())));
                    records.push(text);
                }
            }
            if records.is_empty() {
                ttl = MAX_NEGATIVE_TTL;
            }
            Ok((Ok(records), ttl))
        }
        Err(err) => negative(&err).ok_or_else(|| err.to_string()),
    }
}

/// NXDOMAIN and "no records of that type" as answers with their TTL; `None` for failures.
fn negative(err: &ResolveError) -> Option<(Answer, Duration)> {
    let ProtoErrorKind::NoRecordsFound {
        response_code,
        negative_ttl,
        ..
    } = err.proto()?.kind()
    else {
        return None;
    };
    let ttl = negative_ttl
        .map(|secs| Duration::from_secs(u64::from(secs)))
        .unwrap_or(MAX_NEGATIVE_TTL)
        .min(MAX_NEGATIVE_TTL);
    match *response_code {
        ResponseCode::NXDomain => Some((Err(DnsError::NoSuchDomain), ttl)),
        ResponseCode::NoError => Some((Ok(Vec::new()), ttl)),
        // SERVFAIL, REFUSED and the like say nothing about the name.
        _ => None,
    }
}

/// The textual form the port promises: host names without the final dot, addresses,
/// joined TXT strings. Other record types (a CNAME on the way) are skipped.
fn render(data: &RData) -> Option<String> {
    let host = |name: &Name| name.to_utf8().trim_end_matches('.').to_string();
    match data {
        // A null MX (RFC 7505) renders as "", which callers read as "no mail".
        RData::MX(mx) => Some(host(mx.exchange())),
        RData::NS(ns) => Some(host(&ns.0)),
        RData::A(a) => Some(a.0.to_string()),
        RData::AAAA(aaaa) => Some(aaaa.0.to_string()),
        RData::TXT(txt) => Some(
            txt.txt_data()
                .iter()
                .map(|part| String::from_utf8_lossy(part))
                .collect(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn unreachable_name_server_is_unavailable() {
        let dns = HickoryDns::with_nameserver(
            "127.0.0.1:9".parse().expect("address"),
            Duration::from_millis(300),
        );
        assert!(dns.is_configured());
        for kind in [RecordKind::Mx, RecordKind::A, RecordKind::Ns] {
            let answer = dns.lookup("example.com", kind).await;
            assert!(
                matches!(answer, Err(DnsError::Unavailable(_))),
                "{kind:?}: {answer:?}"
            );
        }
        // Failures are not cached: asking again still goes to the (dead) server.
        let again = dns.lookup("example.com", RecordKind::Mx).await;
        assert!(matches!(again, Err(DnsError::Unavailable(_))));
    }

    /// A name server that answers NXDOMAIN to every question, as sandboxes do.
    async fn lying_name_server() -> SocketAddr {
        counting_name_server().await.0
    }

    #[tokio::test]
    async fn listed_name_servers_are_asked_in_turn_and_no_other() {
        let (addr, questions) = counting_name_server().await;
        let dead: SocketAddr = "127.0.0.1:9".parse().expect("address");
        let dns = HickoryDns::with_nameservers(&[dead, addr], Duration::from_millis(1500));
        assert!(dns.is_configured());
        let _ = dns.lookup("posthorn-listed.test", RecordKind::Txt).await;
        assert!(
            questions.load(std::sync::atomic::Ordering::SeqCst) >= 1,
            "the listed server was never asked"
        );
        assert!(!HickoryDns::with_nameservers(&[], Duration::from_millis(10)).is_configured());
    }

    /// A name server that answers NXDOMAIN and counts the questions it gets.
    async fn counting_name_server() -> (SocketAddr, std::sync::Arc<std::sync::atomic::AtomicUsize>)
    {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let socket = tokio::net::UdpSocket::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = socket.local_addr().expect("addr");
        let count = std::sync::Arc::new(AtomicUsize::new(0));
        let seen = count.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 512];
            while let Ok((n, peer)) = socket.recv_from(&mut buf).await {
                if n < 12 {
                    continue;
                }
                seen.fetch_add(1, Ordering::SeqCst);
                let mut reply = buf[..n].to_vec();
                reply[2] = 0x81;
                reply[3] = 0x83;
                let _ = socket.send_to(&reply, peer).await;
            }
        });
        (addr, count)
    }

    #[tokio::test]
    async fn a_resolver_that_denies_everything_is_unavailable_not_negative() {
        let dns =
            HickoryDns::with_nameserver(lying_name_server().await, Duration::from_millis(500));
        let answer = dns.lookup("gmail.com", RecordKind::Mx).await;
        assert!(
            matches!(answer, Err(DnsError::Unavailable(_))),
            "{answer:?}"
        );
    }

    #[tokio::test]
    async fn without_resolver_every_lookup_is_unavailable_at_once() {
        let dns = HickoryDns::from_resolver(None, Duration::from_secs(2));
        assert!(!dns.is_configured());
        assert_eq!(
            dns.lookup("example.com", RecordKind::Mx).await,
            Err(DnsError::Unavailable(NO_RESOLVER.to_string()))
        );
    }

    #[tokio::test]
    async fn system_configuration_never_panics() {
        let timeout = Duration::from_millis(300);
        // Whatever this machine's resolv.conf holds (unreadable, empty, remote servers),
        // building on it never panics and agrees with it. Building sends nothing.
        let system = hickory_resolver::system_conf::read_system_conf();
        let listed = system
            .as_ref()
            .is_ok_and(|(config, _)| !config.name_servers().is_empty());
        let dns = HickoryDns::from_system_conf(timeout);
        assert_eq!(dns.is_configured(), listed, "{system:?}");
        if !dns.is_configured() {
            let started = Instant::now();
            assert_eq!(
                dns.lookup("example.com", RecordKind::Mx).await,
                Err(DnsError::Unavailable(NO_RESOLVER.to_string()))
            );
            assert!(started.elapsed() < timeout, "answered at once");
        }
        // The system's options with loopback name servers only, so that no packet leaves
        // the machine: a dead server and one that denies everything both give a prompt
        // `Unavailable`, never a panic and never a false NXDOMAIN for a name that exists.
        let opts = system.map(|(_, opts)| opts).unwrap_or_default();
        for server in [
            "127.0.0.1:9".parse().expect("address"),
            lying_name_server().await,
        ] {
            let mut config = ResolverConfig::new();
            config.add_name_server(NameServerConfig::new(server, Protocol::Udp));
            let dns =
                HickoryDns::from_resolver(Some(build(config, opts.clone(), timeout)), timeout);
            assert!(dns.is_configured());
            let started = Instant::now();
            for kind in [RecordKind::Mx, RecordKind::A, RecordKind::Ns] {
                let answer = dns.lookup("example.com", kind).await;
                assert!(
                    matches!(answer, Err(DnsError::Unavailable(_))),
                    "{server} {kind:?}: {answer:?}"
                );
            }
            // Three lookups and at most one canary probe, each bounded by the time-out.
            assert!(
                started.elapsed() < timeout * 5,
                "{server}: {:?}",
                started.elapsed()
            );
        }
    }

    /// A TXT value of `len` bytes.
    fn long_value(len: usize) -> String {
        format!("v=test1; n={}", "x".repeat(len - 11))
    }

    #[tokio::test]
    async fn answers_too_long_for_plain_udp_are_read_whole() {
        let (medium, long) = (long_value(900), long_value(3000));
        let (addr, tcp_questions) = crate::testing::txt_server_counting_tcp(
            [
                ("medium.test".to_owned(), vec![medium.clone()]),
                ("long.test".to_owned(), vec![long.clone()]),
            ]
            .into(),
        )
        .await
        .expect("dns server");
        let dns = HickoryDns::with_nameservers(&[addr], Duration::from_secs(2));
        // Over 512 bytes, within EDNS's 1232: one UDP answer.
        let answer = dns.lookup("medium.test", RecordKind::Txt).await;
        assert_eq!(answer, Ok(vec![medium]));
        assert_eq!(tcp_questions.load(std::sync::atomic::Ordering::SeqCst), 0);
        // Over what EDNS takes: truncated over UDP, asked again over TCP.
        let answer = dns.lookup("long.test", RecordKind::Txt).await;
        assert_eq!(answer, Ok(vec![long]));
        assert_eq!(tcp_questions.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn configured_name_servers_are_asked_over_udp_and_tcp_and_nothing_else() {
        let addrs: [SocketAddr; 2] = [
            "127.0.0.1:5353".parse().expect("address"),
            "[::1]:53".parse().expect("address"),
        ];
        let dns = HickoryDns::with_nameservers(&addrs, Duration::from_secs(1));
        let resolver = dns.resolver.as_ref().expect("configured");
        let servers: Vec<_> = resolver
            .config()
            .name_servers()
            .iter()
            .map(|s| (s.socket_addr, s.protocol))
            .collect();
        assert_eq!(
            servers,
            [
                (addrs[0], Protocol::Udp),
                (addrs[0], Protocol::Tcp),
                (addrs[1], Protocol::Udp),
                (addrs[1], Protocol::Tcp),
            ]
        );
        assert!(resolver.options().edns0);
        assert_eq!(resolver.options().use_hosts_file, ResolveHosts::Never);
    }

    #[test]
    fn renders_records_as_the_port_promises() {
        use hickory_resolver::proto::rr::rdata::{A, MX, NS, TXT};
        let mx = RData::MX(MX::new(
            10,
            Name::from_ascii("mx1.example.com.").expect("name"),
        ));
        assert_eq!(render(&mx).as_deref(), Some("mx1.example.com"));
        let null_mx = RData::MX(MX::new(0, Name::root()));
        assert_eq!(render(&null_mx).as_deref(), Some(""));
        let ns = RData::NS(NS(Name::from_ascii("ns.example.com.").expect("name")));
        assert_eq!(render(&ns).as_deref(), Some("ns.example.com"));
        assert_eq!(
            render(&RData::A(A::new(192, 0, 2, 1))).as_deref(),
            Some("192.0.2.1")
        );
        let txt = RData::TXT(TXT::new(vec!["v=spf1 ".into(), "-all".into()]));
        assert_eq!(render(&txt).as_deref(), Some("v=spf1 -all"));
    }
}
