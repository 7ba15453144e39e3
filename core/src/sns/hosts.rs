//! Which URLs of an SNS message Posthorn may fetch (`SigningCertURL`, `SubscribeURL`): https
//! on `sns.<region>.amazonaws.com`, or a host the operator listed (`POSTHORN_SNS_CERT_HOSTS`),
//! over plain http only when that listed host is a loopback address.

use std::net::IpAddr;

use url::{Host, Url};

/// Whether `host` is `sns.<region>.amazonaws.com`, the region as AWS names them
/// (`us-east-1`, `us-gov-west-1`: two letters, words, a number).
fn is_sns_host(host: &str) -> bool {
    let Some(region) = host
        .strip_prefix("sns.")
        .and_then(|h| h.strip_suffix(".amazonaws.com"))
    else {
        return false;
    };
    let parts: Vec<&str> = region.split('-').collect();
    let lower = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase());
    match parts.as_slice() {
        [country, words @ .., number] if !words.is_empty() => {
            country.len() == 2
                && lower(country)
                && words.iter().all(lower)
                && !number.is_empty()
                && number.bytes().all(|b| b.is_ascii_digit())
        }
        _ => false,
    }
}

/// A URL the rules allow, ready to fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedUrl(Url);

impl AllowedUrl {
    /// The URL as text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The parsed URL.
    pub fn url(&self) -> &Url {
        &self.0
    }
}

/// Why a URL may not be fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UrlRefused(pub String);

/// One `host[:port]` entry of `POSTHORN_SNS_CERT_HOSTS`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ListedHost {
    host: String,
    port: Option<u16>,
}

/// The host rules; [`SnsHostRules::default`] allows only the AWS hosts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnsHostRules {
    listed: Vec<ListedHost>,
}

/// A `POSTHORN_SNS_CERT_HOSTS` entry that is not `host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("POSTHORN_SNS_CERT_HOSTS: {0:?} is not host[:port]")]
pub struct BadHostList(pub String);

impl SnsHostRules {
    /// Parses a comma-separated `host[:port]` list (`[::1]:8443` for IPv6); empty entries
    /// are skipped.
    pub fn parse(list: &str) -> Result<Self, BadHostList> {
        let mut listed = Vec::new();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            // Parsed as the authority of a URL, so hosts compare as `Url` prints them.
            let url = Url::parse(&format!("http://{entry}/"))
                .map_err(|_| BadHostList(entry.to_owned()))?;
            let host = url
                .host_str()
                .filter(|h| !h.is_empty())
                .ok_or_else(|| BadHostList(entry.to_owned()))?;
            if url.path() != "/" || !url.username().is_empty() || url.password().is_some() {
                return Err(BadHostList(entry.to_owned()));
            }
            // `Url` drops an explicit default port (80): keep what the entry said.
            let port = match url.port() {
                Some(p) => Some(p),
                None if entry.ends_with(":80") => Some(80),
                None => None,
            };
            listed.push(ListedHost {
                host: host.to_ascii_lowercase(),
                port,
            });
        }
        Ok(Self { listed })
    }

    /// Checks `raw`: https on an SNS host (default port), or a listed host (on its listed
    /// port when one was given), plain http only for a listed loopback host; never with
    /// credentials in the URL.
    pub fn check(&self, raw: &str) -> Result<AllowedUrl, UrlRefused> {
        let url = Url::parse(raw).map_err(|_| UrlRefused(format!("{raw:?} is not a URL")))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlRefused("a URL with credentials is never fetched".into()));
        }
        let https = match url.scheme() {
            "https" => true,
            "http" => false,
            other => return Err(UrlRefused(format!("scheme {other} is not https"))),
        };
        let host = url
            .host_str()
            .map(str::to_ascii_lowercase)
            .ok_or_else(|| UrlRefused("the URL has no host".into()))?;
        if https && url.port().is_none() && is_sns_host(&host) {
            return Ok(AllowedUrl(url));
        }
        let listed = self.listed.iter().any(|l| {
            l.host == host
                && match l.port {
                    Some(p) => url.port_or_known_default() == Some(p),
                    None => url.port().is_none(),
                }
        });
        if !listed {
            return Err(UrlRefused(format!(
                "{host} is not an SNS host (sns.<region>.amazonaws.com) nor listed in POSTHORN_SNS_CERT_HOSTS"
            )));
        }
        if !https && !is_loopback(url.host()) {
            return Err(UrlRefused(format!(
                "plain http is accepted only for a loopback host, not {host}"
            )));
        }
        Ok(AllowedUrl(url))
    }
}

impl SnsHostRules {
    /// [`SnsHostRules::check`] for a `SigningCertURL`; on an AWS host the path must also be
    /// SNS's certificate file (`/SimpleNotificationService-….pem`), so a forged message
    /// cannot make Posthorn fetch arbitrary documents from AWS or flush the certificate cache.
    pub fn check_certificate(&self, raw: &str) -> Result<AllowedUrl, UrlRefused> {
        let url = self.check(raw)?;
        let aws = url
            .url()
            .host_str()
            .is_some_and(|h| is_sns_host(&h.to_ascii_lowercase()));
        let path = url.url().path();
        let file = path
            .strip_prefix("/SimpleNotificationService-")
            .and_then(|rest| rest.strip_suffix(".pem"));
        let well_formed =
            file.is_some_and(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_alphanumeric()));
        if aws && (!well_formed || url.url().query().is_some()) {
            return Err(UrlRefused(format!(
                "{path} is not an SNS signing certificate (/SimpleNotificationService-….pem)"
            )));
        }
        Ok(url)
    }
}

fn is_loopback(host: Option<Host<&str>>) -> bool {
    match host {
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn aws_sns_hosts_are_allowed_over_https_only() {
        let rules = SnsHostRules::default();
        for ok in [
            "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem",
            "https://sns.us-gov-west-1.amazonaws.com/x.pem",
            "https://SNS.eu-central-1.amazonaws.com/x.pem",
        ] {
            assert!(rules.check(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://sns.us-east-1.amazonaws.com/x.pem",
            "https://sns.us-east-1.amazonaws.com:8443/x.pem",
            "https://sns.us-east-1.amazonaws.com.evil.example/x.pem",
            "https://evil.example/sns.us-east-1.amazonaws.com/x.pem",
            "https://bucket.s3.amazonaws.com/x.pem",
            "https://sns.evil.amazonaws.com/x.pem",
            "https://user:pw@sns.us-east-1.amazonaws.com/x.pem",
            "ftp://sns.us-east-1.amazonaws.com/x.pem",
            "https://127.0.0.1/x.pem",
            "not a url",
        ] {
            assert!(rules.check(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn certificates_on_aws_hosts_are_sns_certificate_files() {
        let rules = SnsHostRules::parse("127.0.0.1:9000").expect("list parses");
        let ok = "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem";
        assert!(rules.check_certificate(ok).is_ok());
        for bad in [
            "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription",
            "https://sns.us-east-1.amazonaws.com/other.pem",
            "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-.pem",
            "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-a/b.pem",
            "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem?x=1",
        ] {
            assert!(rules.check_certificate(bad).is_err(), "{bad}");
        }
        // Listed hosts serve certificates at any path.
        assert!(rules
            .check_certificate("http://127.0.0.1:9000/c.pem")
            .is_ok());
    }

    #[test]
    fn listed_hosts_need_https_unless_loopback() {
        let rules = SnsHostRules::parse("127.0.0.1:9000, localhost, certs.example.org, [::1]:7000")
            .expect("list parses");
        assert!(rules.check("http://127.0.0.1:9000/c.pem").is_ok());
        assert!(rules.check("http://127.0.0.1:9001/c.pem").is_err());
        assert!(rules.check("http://localhost/c.pem").is_ok());
        assert!(rules.check("http://[::1]:7000/c.pem").is_ok());
        assert!(rules.check("https://certs.example.org/c.pem").is_ok());
        assert!(rules.check("http://certs.example.org/c.pem").is_err());
        assert!(rules.check("https://certs.example.org:444/c.pem").is_err());
        assert!(rules.check("http://127.0.0.2:9000/c.pem").is_err());
    }

    #[test]
    fn host_lists_reject_what_is_not_host_and_port() {
        assert!(SnsHostRules::parse("").is_ok());
        assert!(SnsHostRules::parse("a.example/path").is_err());
        assert!(SnsHostRules::parse("u@a.example").is_err());
        assert!(SnsHostRules::parse("a.example:notaport").is_err());
    }

    proptest! {
        #[test]
        fn without_a_list_only_sns_hosts_pass(raw in "(https?|ftp)://[a-z0-9.:@-]{0,40}/[a-z.]{0,10}") {
            if let Ok(url) = SnsHostRules::default().check(&raw) {
                let host = url.url().host_str().unwrap_or_default().to_owned();
                prop_assert!(is_sns_host(&host), "{}", raw);
                prop_assert_eq!(url.url().scheme(), "https");
            }
        }
    }
}
