//! Typed configuration: one struct, every field from a `POSTHORN_*` variable with a default.
//! Settings that can hold credentials are [`SecretUrl`]s and [`Secret`]s: they never print
//! their passwords, and `--help` does not show their environment values.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use crate::secret::{Secret, SecretUrl};

/// Which parts of the server a process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Role {
    /// HTTP API and workers.
    All,
    /// HTTP API only.
    Api,
    /// Job workers only.
    Worker,
}

/// SQLite's `synchronous` setting for `POSTHORN_STORE=sqlite:…`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SqliteSynchronous {
    /// Every commit is on disk before the API answers (survives power loss).
    Full,
    /// Faster commits; a power loss or OS crash (not a process crash) can lose the last ones.
    Normal,
}

/// The delays between WEBHOOK attempts, read from whole seconds separated by commas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryDelays(pub Vec<Duration>);

impl FromStr for RetryDelays {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let mut delays = Vec::new();
        for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let secs: u64 = part.parse().map_err(|_| {
                format!("{part:?} is not a whole number of seconds (e.g. 5,300,1800)")
            })?;
            if secs == 0 || secs > 7 * 24 * 3600 {
                return Err(format!(
                    "{secs} s is out of range: each delay is 1 s to 7 days"
                ));
            }
            delays.push(Duration::from_secs(secs));
        }
        if delays.len() > 20 {
            return Err(format!("{} delays: at most 20 retries", delays.len()));
        }
        Ok(Self(delays))
    }
}

/// A name server of `POSTHORN_DNS_SERVERS`: `192.0.2.1`, `192.0.2.1:5353` or `[::1]:5353`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameServer(pub SocketAddr);

impl FromStr for NameServer {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let raw = raw.trim();
        if let Ok(addr) = raw.parse::<SocketAddr>() {
            return Ok(Self(addr));
        }
        raw.parse::<std::net::IpAddr>()
            .map(|ip| Self(SocketAddr::new(ip, 53)))
            .map_err(|_| format!("{raw:?} is not an IP address with an optional port"))
    }
}

/// What `posthorn` does.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Command {
    /// Run the server (the default).
    Serve,
    /// Apply the database migrations of `POSTHORN_STORE` and exit.
    Migrate,
    /// Write a consistent copy of the SQLite store to FILE (works while the server runs).
    Backup {
        /// Where to write the copy (must not exist).
        file: PathBuf,
    },
    /// Copy the SQLite store into an empty PostgreSQL database (works while the server runs).
    Export {
        /// The PostgreSQL database to fill: `postgres://user:pass@host:port/db`.
        #[arg(long)]
        to: SecretUrl,
    },
}

/// Server configuration.
#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "posthorn",
    version,
    about = "Posthorn: a self-hostable email messaging and automation engine"
)]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "POSTHORN_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// `sqlite:` (POSTHORN_DATA_DIR/posthorn.db; one server process), `sqlite:PATH`,
    /// `memory` (embedded, not durable) or a `postgres://` URL (several processes).
    #[arg(
        long,
        env = "POSTHORN_STORE",
        default_value = "sqlite:",
        hide_env_values = true
    )]
    pub store: SecretUrl,
    /// SQLite durability: `full` (every answered request survives power loss) or `normal`
    /// (faster; a power loss or OS crash can lose the last transactions, a process crash not).
    #[arg(
        long,
        env = "POSTHORN_SQLITE_SYNCHRONOUS",
        value_enum,
        default_value = "full"
    )]
    pub sqlite_synchronous: SqliteSynchronous,
    /// Redis URL (`redis://…`) for rate limits, the send throttle and Idempotency-Key
    /// records shared by every process; in-process when unset.
    #[arg(long, env = "POSTHORN_REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<SecretUrl>,
    /// Prefix of every Redis key Posthorn writes (deployments sharing a Redis differ here).
    #[arg(long, env = "POSTHORN_REDIS_PREFIX", default_value = posthorn_redis::DEFAULT_KEY_PREFIX)]
    pub redis_prefix: String,
    /// Mail transport: `file:DIR`, `smtp://…` or `smtps://…`.
    #[arg(
        long,
        env = "POSTHORN_TRANSPORT",
        default_value = "file:./posthorn-data/outbox",
        hide_env_values = true
    )]
    pub transport: SecretUrl,
    /// Bearer token of the operator API; the API is off when unset.
    #[arg(long, env = "POSTHORN_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<Secret>,
    /// Public base URL (tracking links, unsubscribe pages).
    #[arg(
        long,
        env = "POSTHORN_PUBLIC_URL",
        default_value = "http://127.0.0.1:8080"
    )]
    pub public_url: String,
    /// Host that inbound-enabled domains name in their MX record (listed among a domain's
    /// DNS records; no MX record is suggested while unset).
    #[arg(long, env = "POSTHORN_MX_HOST")]
    pub mx_host: Option<String>,
    /// Domain of the bounce addresses of mail whose sender domain has no inbound (its MX
    /// must point at this server). Unset: such mail carries the sender's own address as
    /// envelope sender and its bounces are not collected.
    #[arg(long, env = "POSTHORN_BOUNCE_DOMAIN")]
    pub bounce_domain: Option<String>,
    /// `all`, `api` or `worker`.
    #[arg(long, env = "POSTHORN_ROLE", value_enum, default_value = "all")]
    pub role: Role,
    /// Sender domain of the workspace created on first run.
    #[arg(long, env = "POSTHORN_BOOTSTRAP_DOMAIN", default_value = "example.com")]
    pub bootstrap_domain: String,
    /// Largest request body in bytes.
    #[arg(long, env = "POSTHORN_MAX_BODY_BYTES", default_value_t = 15 * 1024 * 1024)]
    pub max_body_bytes: usize,
    /// Concurrent jobs per worker process.
    #[arg(long, env = "POSTHORN_WORKER_CONCURRENCY", default_value_t = 16)]
    pub worker_concurrency: usize,
    /// Requests in flight from which the API counts as saturated: the job workers of the
    /// same process then run at most `POSTHORN_WORKER_BUSY_CONCURRENCY` jobs at once, so
    /// the cores go to accepting requests, and work the backlog off at full concurrency once
    /// the burst has passed. 0: never give way.
    #[arg(long, env = "POSTHORN_WORKER_GIVE_WAY_AT", default_value_t = 32)]
    pub worker_give_way_at: usize,
    /// Jobs run at once per worker process while the API is saturated (at least 1).
    #[arg(long, env = "POSTHORN_WORKER_BUSY_CONCURRENCY", default_value_t = 2)]
    pub worker_busy_concurrency: usize,
    /// How long a claimed job stays leased to its worker, in seconds; a crashed worker's
    /// jobs run again after this. Renewed every third of it while a job runs, so it bounds
    /// recovery after a crash, not how long a job may take.
    #[arg(long, env = "POSTHORN_JOB_LEASE_SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(5..=3600))]
    pub job_lease_secs: u64,
    /// Comma-separated name servers (`ip` or `ip:port`, port 53 by default) that every DNS
    /// lookup of the server asks instead of the system's resolver: `/v1/verify`, domain
    /// checks, inbound mail authentication and WEBHOOK targets. Empty: the system's.
    #[arg(long, env = "POSTHORN_DNS_SERVERS", value_delimiter = ',')]
    pub dns_servers: Vec<NameServer>,
    /// Time-out of DNS lookups, in milliseconds.
    #[arg(long, env = "POSTHORN_DNS_TIMEOUT_MS", default_value_t = 2000)]
    pub dns_timeout_ms: u64,
    /// Let WEBHOOK steps reach loopback, private, link-local, shared-NAT and unique-local
    /// addresses (local development, internal receivers); refused by default.
    #[arg(long, env = posthorn_webhook::ALLOW_PRIVATE_ENV, default_value_t = false)]
    pub webhook_allow_private: bool,
    /// Comma-separated host names or IP addresses: when set, WEBHOOK steps may target these
    /// hosts only (a listed loopback address such as `127.0.0.1` may then be reached).
    #[arg(long, env = posthorn_webhook::ALLOW_HOSTS_ENV)]
    pub webhook_allow_hosts: Option<String>,
    /// Seconds to wait before each retry of a failed WEBHOOK attempt, comma-separated (one
    /// value per retry, so N values mean N + 1 attempts; each varies by ±20 %, and a longer
    /// `Retry-After` of a 429 or 503 wins, up to a day). Empty: no retry.
    #[arg(
        long,
        env = "POSTHORN_WEBHOOK_RETRY_DELAYS",
        default_value = "5,300,1800,7200,18000,36000,36000"
    )]
    pub webhook_retry_delays: RetryDelays,
    /// Address of the inbound MX (port 25 in production): mail for verified domains with
    /// inbound enabled becomes `email.received`; off when unset.
    #[arg(long, env = "POSTHORN_SMTP_INBOUND_LISTEN")]
    pub smtp_inbound_listen: Option<SocketAddr>,
    /// Where the inbound MX delivers mail sent to the bare `Postmaster` recipient (RFC 5321
    /// §4.5.1: `RCPT TO:<Postmaster>`, no domain), e.g. `postmaster@example.com` at a domain
    /// with inbound enabled; that recipient is refused when unset.
    #[arg(long, env = "POSTHORN_POSTMASTER", value_parser = postmaster_address)]
    pub postmaster: Option<String>,
    /// Address of the SMTP submission relay (port 587 in production; AUTH with a secret
    /// key); off when unset.
    #[arg(long, env = "POSTHORN_SMTP_SUBMISSION_LISTEN")]
    pub smtp_submission_listen: Option<SocketAddr>,
    /// The submission relay speaks TLS from the first byte (port 465) instead of STARTTLS.
    #[arg(
        long,
        env = "POSTHORN_SMTP_SUBMISSION_IMPLICIT_TLS",
        default_value_t = false
    )]
    pub smtp_submission_implicit_tls: bool,
    /// PEM certificate chain of the SMTP listeners (STARTTLS, implicit TLS).
    #[arg(long, env = "POSTHORN_SMTP_TLS_CERT")]
    pub smtp_tls_cert: Option<PathBuf>,
    /// PEM private key of `POSTHORN_SMTP_TLS_CERT`.
    #[arg(long, env = "POSTHORN_SMTP_TLS_KEY")]
    pub smtp_tls_key: Option<PathBuf>,
    /// Name the SMTP listeners greet with; `POSTHORN_MX_HOST`, else `localhost`, when unset.
    #[arg(long, env = "POSTHORN_SMTP_HOSTNAME")]
    pub smtp_hostname: Option<String>,
    /// Most SMTP sessions at once per listener; more are answered 421.
    #[arg(long, env = "POSTHORN_SMTP_MAX_CONNECTIONS", default_value_t = 256)]
    pub smtp_max_connections: usize,
    /// Most SMTP sessions at once per listener from one client (an IPv4 address or an IPv6
    /// /64); more are answered 421, so one host cannot hold every session.
    #[arg(
        long,
        env = "POSTHORN_SMTP_MAX_CONNECTIONS_PER_CLIENT",
        default_value_t = 20
    )]
    pub smtp_max_connections_per_client: usize,
    /// Seconds an SMTP client has for a whole command line (from the previous reply), for any
    /// pause within a message and for taking in a reply; a whole message gets twice this, at
    /// least 600.
    #[arg(long, env = "POSTHORN_SMTP_TIMEOUT_SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub smtp_timeout_secs: u64,
    /// Base URL of rspamd's HTTP API (e.g. `http://127.0.0.1:11333`): received mail is
    /// scanned at `<url>/checkv2` for its spam verdict. Unset: spamVerdict is GRAY.
    #[arg(long, env = "POSTHORN_RSPAMD_URL")]
    pub rspamd_url: Option<String>,
    /// Days a received message's raw bytes are kept before a background job drops them.
    #[arg(long, env = "POSTHORN_INBOUND_RETENTION_DAYS", default_value_t = 30,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub inbound_retention_days: u32,
    /// Received messages one envelope sender may hand over per minute (429 / SMTP 451 above).
    #[arg(long, env = "POSTHORN_INBOUND_SENDER_RATE", default_value_t = 60,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub inbound_sender_rate: u32,
    /// Received messages one workspace may take in per minute (429 / SMTP 451 above).
    #[arg(long, env = "POSTHORN_INBOUND_WORKSPACE_RATE", default_value_t = 600,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub inbound_workspace_rate: u32,
    /// Comma-separated SNS topic ARNs whose messages `POST /webhooks/sns` confirms and
    /// processes (Amazon SES feedback); any other topic is answered 403 with nothing fetched.
    /// Unset: the endpoint refuses every message.
    #[arg(long, env = "POSTHORN_SNS_TOPIC_ARNS")]
    pub sns_topic_arns: Option<String>,
    /// Comma-separated `host[:port]` list of hosts besides `sns.<region>.amazonaws.com` that
    /// SNS signing certificates and subscribe URLs may come from (tests, proxies); plain http
    /// only for a loopback host listed here.
    #[arg(long, env = "POSTHORN_SNS_CERT_HOSTS")]
    pub sns_cert_hosts: Option<String>,
    /// Log as JSON lines instead of text.
    #[arg(long, env = "POSTHORN_LOG_JSON", default_value_t = false)]
    pub log_json: bool,
    /// Let the kernel back the server's heap with transparent huge pages, as the system's
    /// policy says; off by default (see `posthorn_server::huge_pages`).
    #[arg(long, env = "POSTHORN_TRANSPARENT_HUGE_PAGES", default_value_t = false)]
    pub transparent_huge_pages: bool,
    /// Data directory (the SQLite database of `POSTHORN_STORE=sqlite:`).
    #[arg(long, env = "POSTHORN_DATA_DIR", default_value = "./posthorn-data")]
    pub data_dir: PathBuf,
    /// Subcommand.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// `POSTHORN_POSTMASTER`: a mail address, kept as the MX will check it (lower-cased).
fn postmaster_address(raw: &str) -> Result<String, String> {
    posthorn_core::model::EmailAddress::parse(raw)
        .map(|a| a.as_str().to_string())
        .map_err(|e| format!("not a mail address: {e}"))
}

impl Config {
    /// The name the SMTP listeners greet with.
    pub fn smtp_hostname(&self) -> String {
        [&self.smtp_hostname, &self.mx_host]
            .into_iter()
            .flatten()
            .map(|h| h.trim())
            .find(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_graphic()))
            .unwrap_or("localhost")
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn retry_delays_read_seconds_separated_by_commas() {
        assert_eq!(
            "5, 60,600".parse::<RetryDelays>(),
            Ok(RetryDelays(vec![
                Duration::from_secs(5),
                Duration::from_secs(60),
                Duration::from_secs(600)
            ]))
        );
        assert_eq!("".parse::<RetryDelays>(), Ok(RetryDelays(Vec::new())));
        assert!("5,x".parse::<RetryDelays>().is_err());
        assert!("0".parse::<RetryDelays>().is_err());
        assert!("-1".parse::<RetryDelays>().is_err());
    }

    #[test]
    fn name_servers_read_addresses_with_optional_ports() {
        let config = Config::try_parse_from([
            "posthorn",
            "--dns-servers",
            "127.0.0.1, 127.0.0.2:5353,[::1]:53",
        ])
        .expect("parses");
        let servers: Vec<String> = config.dns_servers.iter().map(|s| s.0.to_string()).collect();
        assert_eq!(servers, ["127.0.0.1:53", "127.0.0.2:5353", "[::1]:53"]);
        assert!(Config::try_parse_from(["posthorn", "--dns-servers", "resolver.test"]).is_err());
        let default = Config::try_parse_from(["posthorn"]).expect("defaults parse");
        assert!(default.dns_servers.is_empty());
    }

    #[test]
    fn sns_settings_are_off_by_default() {
        let config = Config::try_parse_from(["posthorn"]).expect("defaults parse");
        assert_eq!(config.sns_topic_arns, None);
        assert_eq!(config.sns_cert_hosts, None);
        let config = Config::try_parse_from([
            "posthorn",
            "--sns-topic-arns",
            "arn:aws:sns:us-east-1:1:t",
            "--sns-cert-hosts",
            "127.0.0.1:9000",
        ])
        .expect("flags parse");
        assert_eq!(
            config.sns_topic_arns.as_deref(),
            Some("arn:aws:sns:us-east-1:1:t")
        );
        assert_eq!(config.sns_cert_hosts.as_deref(), Some("127.0.0.1:9000"));
    }

    #[test]
    fn webhook_settings_have_production_defaults() {
        let config = Config::try_parse_from(["posthorn"]).expect("defaults parse");
        assert!(!config.webhook_allow_private);
        assert_eq!(config.webhook_allow_hosts, None);
        assert_eq!(
            config.webhook_retry_delays.0,
            posthorn_core::ports::RetrySchedule::STANDARD_DELAYS.to_vec()
        );
        let config = Config::try_parse_from([
            "posthorn",
            "--webhook-allow-private",
            "--webhook-allow-hosts",
            "127.0.0.1",
            "--webhook-retry-delays",
            "1,2",
        ])
        .expect("flags parse");
        assert!(config.webhook_allow_private);
        assert_eq!(config.webhook_allow_hosts.as_deref(), Some("127.0.0.1"));
        assert_eq!(config.webhook_retry_delays.0.len(), 2);
    }

    #[test]
    fn the_postmaster_is_an_address_or_unset() {
        let config = Config::try_parse_from(["posthorn"]).expect("defaults parse");
        assert_eq!(config.postmaster, None);
        let config = Config::try_parse_from(["posthorn", "--postmaster", "PostMaster@Example.com"])
            .expect("an address parses");
        assert_eq!(config.postmaster.as_deref(), Some("postmaster@example.com"));
        assert!(Config::try_parse_from(["posthorn", "--postmaster", "postmaster"]).is_err());
    }
}
