//! The sink's settings: `POSTHORN_WEBHOOK_ALLOW_PRIVATE`, `POSTHORN_WEBHOOK_ALLOW_HOSTS` and
//! the default time-out.

use std::net::IpAddr;
use std::time::Duration;

use posthorn_core::ports::DEFAULT_WEBHOOK_TIMEOUT;
use url::Host;

/// Environment variable: `true` lets webhooks reach loopback, private, link-local, shared-NAT
/// and unique-local addresses (local development, internal receivers).
pub const ALLOW_PRIVATE_ENV: &str = "POSTHORN_WEBHOOK_ALLOW_PRIVATE";
/// Environment variable: comma-separated host names or IP addresses; when set, every webhook
/// must target one of them.
pub const ALLOW_HOSTS_ENV: &str = "POSTHORN_WEBHOOK_ALLOW_HOSTS";

/// A setting could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// A boolean variable held something other than true/false (1/0, yes/no, on/off).
    #[error("{name} must be true or false, got {value:?}")]
    NotABool {
        /// The variable.
        name: &'static str,
        /// What it held.
        value: String,
    },
    /// An allow-list entry is not a host name or an IP address.
    #[error("{ALLOW_HOSTS_ENV}: {0:?} is not a host name or an IP address")]
    BadHost(String),
}

/// One allow-list entry.
#[derive(Debug, Clone, PartialEq, Eq)]
enum AllowedHost {
    /// A domain, lower case, without a trailing dot.
    Domain(String),
    /// An IP address literal.
    Ip(IpAddr),
}

/// The hosts webhooks may target when an allow-list is configured. A loopback host on the
/// list (`127.0.0.1`, `[::1]`, `localhost`) may be reached: that is how tests confine webhooks
/// to this machine. Any other listed name that resolves to loopback, and every other internal
/// range, still needs `allow_private`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowHosts(Vec<AllowedHost>);

impl AllowHosts {
    /// Parses a comma-separated list such as `hooks.example.com, 127.0.0.1, [::1]`.
    /// Entries are host names or IP addresses (no scheme, port or path); empty entries are
    /// ignored.
    pub fn parse(list: &str) -> Result<Self, SettingsError> {
        let mut hosts = Vec::new();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let bare = entry
                .strip_prefix('[')
                .and_then(|e| e.strip_suffix(']'))
                .unwrap_or(entry);
            if let Ok(ip) = bare.parse::<IpAddr>() {
                hosts.push(AllowedHost::Ip(ip));
                continue;
            }
            // Let the URL parser normalise the name exactly as it will normalise targets.
            match Host::parse(entry.trim_end_matches('.')) {
                Ok(Host::Domain(name)) if !name.contains([':', '/', '@']) => {
                    hosts.push(AllowedHost::Domain(name.to_string()))
                }
                Ok(Host::Ipv4(ip)) => hosts.push(AllowedHost::Ip(ip.into())),
                Ok(Host::Ipv6(ip)) => hosts.push(AllowedHost::Ip(ip.into())),
                _ => return Err(SettingsError::BadHost(entry.to_string())),
            }
        }
        Ok(Self(hosts))
    }

    /// Whether `host` (as parsed from a target URL) is on the list.
    pub fn permits(&self, host: &Host<&str>) -> bool {
        self.0.iter().any(|allowed| match (allowed, host) {
            (AllowedHost::Domain(a), Host::Domain(h)) => {
                a.eq_ignore_ascii_case(h.trim_end_matches('.'))
            }
            (AllowedHost::Ip(a), Host::Ipv4(h)) => *a == IpAddr::V4(*h),
            (AllowedHost::Ip(a), Host::Ipv6(h)) => *a == IpAddr::V6(*h),
            _ => false,
        })
    }

    /// Whether the list names no host at all (every target is then refused).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// How the webhook sink guards and times its requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookSettings {
    /// Permit loopback, private, link-local, shared-NAT and unique-local targets.
    pub allow_private: bool,
    /// When set, the only hosts webhooks may target.
    pub allow_hosts: Option<AllowHosts>,
    /// Time-out of a request that does not carry its own.
    pub default_timeout: Duration,
}

impl Default for WebhookSettings {
    /// The production default: public addresses only, any host, 10 s.
    fn default() -> Self {
        Self {
            allow_private: false,
            allow_hosts: None,
            default_timeout: DEFAULT_WEBHOOK_TIMEOUT,
        }
    }
}

impl WebhookSettings {
    /// Reads [`ALLOW_PRIVATE_ENV`] and [`ALLOW_HOSTS_ENV`] from the environment.
    pub fn from_env() -> Result<Self, SettingsError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the settings through `lookup` (a variable's value, `None` when unset). An empty
    /// value counts as unset.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, SettingsError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let allow_private = match get(ALLOW_PRIVATE_ENV) {
            None => false,
            Some(value) => parse_bool(&value).ok_or(SettingsError::NotABool {
                name: ALLOW_PRIVATE_ENV,
                value,
            })?,
        };
        let allow_hosts = get(ALLOW_HOSTS_ENV)
            .map(|list| AllowHosts::parse(&list))
            .transpose()?;
        Ok(Self {
            allow_private,
            allow_hosts,
            ..Self::default()
        })
    }
}

fn parse_bool(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn settings(vars: &[(&str, &str)]) -> Result<WebhookSettings, SettingsError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        WebhookSettings::from_lookup(|name| vars.get(name).cloned())
    }

    fn host(url: &str) -> Host<String> {
        url::Url::parse(url)
            .expect("test url")
            .host()
            .expect("a host")
            .to_owned()
    }

    fn permits(list: &AllowHosts, url: &str) -> bool {
        let h = host(url);
        let borrowed = match &h {
            Host::Domain(d) => Host::Domain(d.as_str()),
            Host::Ipv4(ip) => Host::Ipv4(*ip),
            Host::Ipv6(ip) => Host::Ipv6(*ip),
        };
        list.permits(&borrowed)
    }

    #[test]
    fn unset_variables_give_the_production_default() {
        let s = settings(&[]).expect("valid");
        assert_eq!(s, WebhookSettings::default());
        assert!(!s.allow_private);
        assert_eq!(s.allow_hosts, None);
        assert_eq!(s.default_timeout, Duration::from_secs(10));
        assert_eq!(
            settings(&[(ALLOW_HOSTS_ENV, " ")])
                .expect("valid")
                .allow_hosts,
            None
        );
    }

    #[test]
    fn allow_private_reads_the_usual_spellings_and_refuses_others() {
        for v in ["true", "TRUE", "1", "yes", "on"] {
            assert!(
                settings(&[(ALLOW_PRIVATE_ENV, v)])
                    .expect("valid")
                    .allow_private
            );
        }
        for v in ["false", "0", "no", "off"] {
            assert!(
                !settings(&[(ALLOW_PRIVATE_ENV, v)])
                    .expect("valid")
                    .allow_private
            );
        }
        assert!(matches!(
            settings(&[(ALLOW_PRIVATE_ENV, "maybe")]),
            Err(SettingsError::NotABool { .. })
        ));
    }

    #[test]
    fn the_allow_list_matches_names_and_addresses_as_urls_spell_them() {
        let s = settings(&[(
            ALLOW_HOSTS_ENV,
            "Hooks.Example.com., 127.0.0.1, [::1], localhost",
        )])
        .expect("valid");
        let list = s.allow_hosts.expect("set");
        assert!(permits(&list, "https://hooks.example.com/x"));
        assert!(permits(&list, "https://HOOKS.example.COM./x"));
        assert!(permits(&list, "http://127.0.0.1:8080/"));
        assert!(permits(&list, "http://[::1]:8080/"));
        assert!(permits(&list, "http://localhost/"));
        // The URL parser reads these as 127.0.0.1 too: the list compares addresses.
        assert!(permits(&list, "http://2130706433/"));
        assert!(!permits(&list, "https://evil.example.com/"));
        assert!(!permits(&list, "https://hooks.example.com.evil.test/"));
        assert!(!permits(&list, "http://127.0.0.2/"));
        assert!(!permits(&list, "http://[::2]/"));
    }

    #[test]
    fn allow_list_entries_must_be_bare_hosts() {
        for bad in ["http://x.example", "x.example:80", "a b", "user@x.example"] {
            assert!(
                matches!(AllowHosts::parse(bad), Err(SettingsError::BadHost(_))),
                "{bad}"
            );
        }
        assert!(AllowHosts::parse(" , ").expect("valid").is_empty());
    }
}
