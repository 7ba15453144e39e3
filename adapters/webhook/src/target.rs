//! The URL half of the SSRF guard: scheme, allow-list, one resolution, every address checked.

use std::net::{IpAddr, SocketAddr};

use posthorn_core::ports::WebhookError;
use url::{Host, Url};

use crate::guard::AddressPolicy;
use crate::resolver::HostResolver;
use crate::settings::WebhookSettings;

/// A target that passed the guard: the URL, and the only addresses the request may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedTarget {
    /// The parsed URL.
    pub url: Url,
    /// The host name the URL names, or `None` for an IP literal.
    pub domain: Option<String>,
    /// The checked addresses with the URL's port; the connection goes to one of these.
    pub addrs: Vec<SocketAddr>,
}

/// Checks `url` against the settings and resolves it once with `resolver`.
///
/// Opens no socket. Refuses (`WebhookError::Refused`) a scheme other than http(s), a host
/// outside the allow-list (before any lookup), and a host with ANY address in a forbidden
/// range; a malformed URL is `Invalid`; a host that does not resolve is `Connect`.
pub async fn check_target(
    url: &str,
    settings: &WebhookSettings,
    resolver: &dyn HostResolver,
) -> Result<CheckedTarget, WebhookError> {
    let url = Url::parse(url).map_err(|e| WebhookError::Invalid(format!("URL {url:?}: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(WebhookError::Refused(format!(
            "scheme {:?} is not allowed: use http or https",
            url.scheme()
        )));
    }
    let host = url
        .host()
        .ok_or_else(|| WebhookError::Invalid("the URL has no host".to_string()))?;
    let port = url
        .port_or_known_default()
        .ok_or_else(|| WebhookError::Invalid("the URL has no port".to_string()))?;

    let listed = match &settings.allow_hosts {
        None => false,
        Some(list) if list.permits(&host) => true,
        Some(_) => {
            return Err(WebhookError::Refused(format!(
                "host {host} is not in {}",
                crate::settings::ALLOW_HOSTS_ENV
            )))
        }
    };

    let (domain, ips) = match host.clone() {
        Host::Ipv4(ip) => (None, vec![IpAddr::V4(ip)]),
        Host::Ipv6(ip) => (None, vec![IpAddr::V6(ip)]),
        Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            let ips = resolver
                .resolve(&name)
                .await
                .map_err(|e| WebhookError::Connect(format!("cannot resolve {name}: {e}")))?;
            if ips.is_empty() {
                return Err(WebhookError::Connect(format!("{name} has no address")));
            }
            (Some(name), ips)
        }
    };

    let policy = AddressPolicy {
        allow_private: settings.allow_private,
        // Only a host that names loopback itself: a listed public name whose DNS answer
        // turns to 127.0.0.1 is as suspicious as any other.
        allow_loopback: listed && names_loopback(&host),
    };
    for ip in &ips {
        if let Err(range) = policy.check(*ip) {
            let what = domain.as_deref().map_or_else(
                || format!("{ip} is a {range} address"),
                |name| format!("{name} resolves to {ip}, a {range} address"),
            );
            return Err(WebhookError::Refused(what));
        }
    }
    let addrs = ips
        .into_iter()
        .map(|ip| SocketAddr::new(ip, port))
        .collect();
    Ok(CheckedTarget { url, domain, addrs })
}

/// Whether the URL's host is loopback by its very name: a loopback literal or `localhost`
/// (which RFC 6761 reserves for loopback, with its subdomains).
fn names_loopback(host: &Host<&str>) -> bool {
    match host {
        Host::Ipv4(ip) => ip.is_loopback(),
        Host::Ipv6(ip) => ip.is_loopback(),
        Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolver::StaticResolver;
    use crate::settings::AllowHosts;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or_else(|_| panic!("bad test address {s}"))
    }

    fn refused(result: Result<CheckedTarget, WebhookError>) -> String {
        match result {
            Err(WebhookError::Refused(why)) => why,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_name_resolving_to_an_internal_address_is_refused_after_one_lookup() {
        // Each name maps to addresses that must never be contacted: the guard refuses them
        // from the resolver's answer alone, and this test makes no connection at all.
        let cases = [
            ("private.test", "10.0.0.7", "private"),
            ("metadata.test", "169.254.169.254", "link-local"),
            ("cgnat.test", "100.64.1.1", "shared (carrier-grade NAT)"),
            ("ula.test", "fd00::1", "unique-local"),
            ("mapped.test", "::ffff:192.168.1.1", "private"),
            ("nat64.test", "64:ff9b::a00:1", "private"),
            ("compat.test", "::a00:1", "reserved"),
            ("loop.test", "127.0.0.1", "loopback"),
            ("v6loop.test", "::1", "loopback"),
            ("zero.test", "0.0.0.0", "unspecified"),
        ];
        for (name, addr, range) in cases {
            let resolver = StaticResolver::new().with(name, &[ip(addr)]);
            let why = refused(
                check_target(
                    &format!("https://{name}/hook"),
                    &WebhookSettings::default(),
                    &resolver,
                )
                .await,
            );
            assert!(why.contains(addr) && why.contains(range), "{name}: {why}");
            assert_eq!(resolver.lookups(), 1, "{name}");
        }
    }

    #[tokio::test]
    async fn one_bad_address_among_good_ones_refuses_the_host() {
        let resolver =
            StaticResolver::new().with("mixed.test", &[ip("93.184.215.14"), ip("10.1.1.1")]);
        let why = refused(
            check_target(
                "https://mixed.test/",
                &WebhookSettings::default(),
                &resolver,
            )
            .await,
        );
        assert!(why.contains("10.1.1.1"), "{why}");
    }

    #[tokio::test]
    async fn ip_literals_are_checked_without_a_lookup() {
        let resolver = StaticResolver::new();
        for url in [
            "http://127.0.0.1:8080/",
            "http://[::1]/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://[::ffff:10.0.0.1]/",
            "http://169.254.169.254/latest/meta-data/",
        ] {
            refused(check_target(url, &WebhookSettings::default(), &resolver).await);
        }
        assert_eq!(resolver.lookups(), 0);
    }

    #[tokio::test]
    async fn schemes_other_than_http_and_https_are_refused() {
        let resolver = StaticResolver::new();
        for url in [
            "ftp://example.com/",
            "file:///etc/passwd",
            "gopher://example.com/",
        ] {
            let why = refused(check_target(url, &WebhookSettings::default(), &resolver).await);
            assert!(why.contains("scheme"), "{why}");
        }
        let invalid = check_target("not a url", &WebhookSettings::default(), &resolver).await;
        assert!(
            matches!(invalid, Err(WebhookError::Invalid(_))),
            "{invalid:?}"
        );
        assert_eq!(resolver.lookups(), 0);
    }

    #[tokio::test]
    async fn a_host_outside_the_allow_list_is_refused_before_any_lookup() {
        let resolver = StaticResolver::new().with("other.test", &[ip("93.184.215.14")]);
        let settings = WebhookSettings {
            allow_hosts: Some(AllowHosts::parse("hooks.test").expect("valid")),
            ..WebhookSettings::default()
        };
        let why = refused(check_target("https://other.test/", &settings, &resolver).await);
        assert!(why.contains("POSTHORN_WEBHOOK_ALLOW_HOSTS"), "{why}");
        assert_eq!(resolver.lookups(), 0);
    }

    #[tokio::test]
    async fn a_listed_loopback_host_may_be_reached_but_nothing_else_internal() {
        let resolver = StaticResolver::new()
            .with("localhost", &[ip("127.0.0.1"), ip("::1")])
            .with("hooks.test", &[ip("127.0.0.1")])
            .with("inner.test", &[ip("10.0.0.1")]);
        let settings = WebhookSettings {
            allow_hosts: Some(
                AllowHosts::parse("localhost, 127.0.0.1, [::1], hooks.test, inner.test")
                    .expect("valid"),
            ),
            ..WebhookSettings::default()
        };
        for url in ["http://127.0.0.1:9000/", "http://[::1]:9000/"] {
            check_target(url, &settings, &resolver)
                .await
                .expect("a listed loopback literal");
        }
        let target = check_target("http://LocalHost.:9000/x", &settings, &resolver)
            .await
            .expect("listed localhost");
        assert_eq!(target.domain.as_deref(), Some("localhost"));
        assert_eq!(
            target.addrs,
            vec![
                "127.0.0.1:9000".parse().expect("addr"),
                "[::1]:9000".parse().expect("addr")
            ]
        );
        // Listed, but neither name says loopback: their answers are judged as usual.
        let why = refused(check_target("http://hooks.test/", &settings, &resolver).await);
        assert!(why.contains("loopback"), "{why}");
        refused(check_target("http://inner.test/", &settings, &resolver).await);
        // 127.0.0.2 is loopback too, but only the listed literal is permitted.
        let why = refused(check_target("http://127.0.0.2/", &settings, &resolver).await);
        assert!(why.contains("ALLOW_HOSTS"), "{why}");
    }

    #[tokio::test]
    async fn allow_private_permits_internal_but_never_unspecified_or_multicast() {
        let resolver = StaticResolver::new()
            .with("dev.test", &[ip("192.168.1.20")])
            .with("zero.test", &[ip("0.0.0.0")])
            .with("group.test", &[ip("ff02::1")]);
        let settings = WebhookSettings {
            allow_private: true,
            ..WebhookSettings::default()
        };
        let target = check_target("https://dev.test/", &settings, &resolver)
            .await
            .expect("private allowed");
        assert_eq!(
            target.addrs,
            vec!["192.168.1.20:443".parse().expect("addr")]
        );
        refused(check_target("http://zero.test/", &settings, &resolver).await);
        refused(check_target("http://group.test/", &settings, &resolver).await);
    }

    #[tokio::test]
    async fn a_name_that_does_not_resolve_is_a_retryable_connect_error() {
        let resolver = StaticResolver::new().with("empty.test", &[]);
        for url in ["https://missing.test/", "https://empty.test/"] {
            let err = check_target(url, &WebhookSettings::default(), &resolver)
                .await
                .expect_err("no address");
            assert!(matches!(err, WebhookError::Connect(_)), "{err:?}");
            assert!(err.is_retryable());
        }
    }
}
