//! `StaticDns`: a `Dns` answering from a fixed table, for tests across the workspace.

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use posthorn_core::ports::{Dns, DnsError, RecordKind};

use crate::normalise;

/// A fake `Dns` built from a table.
///
/// A name with records of some kind exists: kinds not given answer `Ok(vec![])`. Names
/// marked with [`StaticDns::nxdomain`] and names never mentioned answer `NoSuchDomain`.
/// After [`StaticDns::unavailable`] every lookup answers `Unavailable`. Names compare
/// case-insensitively, with or without the final dot.
#[derive(Debug, Clone, Default)]
pub struct StaticDns {
    records: HashMap<(String, RecordKind), Vec<String>>,
    nxdomains: HashSet<String>,
    unavailable: bool,
}

impl StaticDns {
    /// An empty table: every name is NXDOMAIN.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `records` of `kind` for `name` (an empty list makes the name exist without them).
    pub fn with<I, S>(mut self, name: &str, kind: RecordKind, records: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let name = normalise(name);
        self.nxdomains.remove(&name);
        self.records
            .entry((name, kind))
            .or_default()
            .extend(records.into_iter().map(Into::into));
        self
    }

    /// A domain that receives mail: one MX, one address and one name server.
    pub fn with_mail_domain(self, name: &str) -> Self {
        let mx = format!("mx.{}", normalise(name));
        let ns = format!("ns.{}", normalise(name));
        self.with(name, RecordKind::Mx, [mx])
            .with(name, RecordKind::A, ["192.0.2.1"])
            .with(name, RecordKind::Ns, [ns])
    }

    /// Makes `name` answer NXDOMAIN for every kind, dropping any records given for it.
    pub fn nxdomain(mut self, name: &str) -> Self {
        let name = normalise(name);
        self.records.retain(|(n, _), _| *n != name);
        self.nxdomains.insert(name);
        self
    }

    /// Makes every lookup answer `Unavailable`, as when no resolver answers.
    pub fn unavailable(mut self) -> Self {
        self.unavailable = true;
        self
    }
}

#[async_trait]
impl Dns for StaticDns {
    async fn lookup(&self, name: &str, kind: RecordKind) -> Result<Vec<String>, DnsError> {
        if self.unavailable {
            return Err(DnsError::Unavailable(
                "static DNS set to unavailable".to_string(),
            ));
        }
        let name = normalise(name);
        if self.nxdomains.contains(&name) {
            return Err(DnsError::NoSuchDomain);
        }
        if let Some(records) = self.records.get(&(name.clone(), kind)) {
            return Ok(records.clone());
        }
        if self.records.keys().any(|(n, _)| *n == name) {
            Ok(Vec::new())
        } else {
            Err(DnsError::NoSuchDomain)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn answers_from_the_table() {
        let dns = StaticDns::new()
            .with(
                "Example.com.",
                RecordKind::Mx,
                ["mx1.example.com", "mx2.example.com"],
            )
            .with("example.com", RecordKind::A, ["192.0.2.1"]);
        assert_eq!(
            dns.lookup("example.com", RecordKind::Mx).await,
            Ok(vec![
                "mx1.example.com".to_string(),
                "mx2.example.com".to_string()
            ])
        );
        assert_eq!(
            dns.lookup("EXAMPLE.COM.", RecordKind::A).await,
            Ok(vec!["192.0.2.1".to_string()])
        );
        assert_eq!(dns.lookup("example.com", RecordKind::Ns).await, Ok(vec![]));
        assert_eq!(
            dns.lookup("other.example", RecordKind::Mx).await,
            Err(DnsError::NoSuchDomain)
        );
    }

    #[tokio::test]
    async fn nxdomain_overrides_records() {
        let dns = StaticDns::new()
            .with_mail_domain("gone.example")
            .nxdomain("gone.example");
        for kind in [
            RecordKind::Mx,
            RecordKind::A,
            RecordKind::Ns,
            RecordKind::Txt,
        ] {
            assert_eq!(
                dns.lookup("gone.example", kind).await,
                Err(DnsError::NoSuchDomain)
            );
        }
    }

    #[tokio::test]
    async fn mail_domain_has_mx_a_and_ns() {
        let dns = StaticDns::new().with_mail_domain("example.org");
        assert_eq!(
            dns.lookup("example.org", RecordKind::Mx).await,
            Ok(vec!["mx.example.org".to_string()])
        );
        assert!(!dns
            .lookup("example.org", RecordKind::A)
            .await
            .expect("a")
            .is_empty());
        assert!(!dns
            .lookup("example.org", RecordKind::Ns)
            .await
            .expect("ns")
            .is_empty());
        assert_eq!(dns.lookup("example.org", RecordKind::Txt).await, Ok(vec![]));
    }

    #[tokio::test]
    async fn unavailable_answers_nothing() {
        let dns = StaticDns::new()
            .with_mail_domain("example.org")
            .unavailable();
        assert!(matches!(
            dns.lookup("example.org", RecordKind::Mx).await,
            Err(DnsError::Unavailable(_))
        ));
    }
}
