//! The DNS records a domain owner publishes, and how one lookup is judged.

use crate::model::{Domain, DomainRecord, RecordStatus};
use crate::ports::{Dns, DnsError, RecordKind};

/// One record to publish, with what the last check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedRecord {
    /// Which record this is.
    pub record: DomainRecord,
    /// `TXT` or `MX`.
    pub kind: RecordKind,
    /// The fully qualified name.
    pub name: String,
    /// The value to publish.
    pub value: String,
    /// What the last check found.
    pub status: RecordStatus,
}

/// What one lookup said about a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finding {
    /// Published with the expected value.
    Present,
    /// DNS answered and the record is not there (or has another value).
    Absent,
    /// DNS gave no answer; nothing can be concluded.
    Unknown,
}

/// The records `domain` should publish: ownership and DKIM (required), SPF and DMARC
/// suggestions, and the MX while inbound is enabled and an MX host is configured. The DKIM
/// record is listed only once the domain has a key.
///
/// Names are in ASCII form ([`Domain::ascii_name`]): what DNS holds and lookups ask for.
pub fn published_records(domain: &Domain, mx_host: Option<&str>) -> Vec<PublishedRecord> {
    let name = domain.ascii_name();
    let mut out = Vec::new();
    let mut push = |record, kind, name: String, value: String| {
        out.push(PublishedRecord {
            record,
            kind,
            name,
            value,
            status: domain.checks.status(record),
        })
    };
    push(
        DomainRecord::Ownership,
        RecordKind::Txt,
        format!("_posthorn.{name}"),
        domain.verification_token.clone(),
    );
    if let Some(key) = &domain.dkim {
        push(
            DomainRecord::Dkim,
            RecordKind::Txt,
            dkim_name(domain),
            key.dns_value(),
        );
    }
    push(
        DomainRecord::Spf,
        RecordKind::Txt,
        name.to_string(),
        "v=spf1 a mx ~all".to_string(),
    );
    push(
        DomainRecord::Dmarc,
        RecordKind::Txt,
        format!("_dmarc.{name}"),
        format!("v=DMARC1; p=none; rua=mailto:dmarc@{name}"),
    );
    if let (true, Some(host)) = (domain.inbound_enabled, mx_host) {
        push(
            DomainRecord::Mx,
            RecordKind::Mx,
            name.to_string(),
            host.to_string(),
        );
    }
    out
}

/// Where the DKIM public key of `domain` is published (ASCII form).
pub fn dkim_name(domain: &Domain) -> String {
    format!(
        "{}._domainkey.{}",
        domain.dkim_selector,
        domain.ascii_name()
    )
}

/// Looks `record` up and judges the answer against the expected value.
pub(crate) async fn check(dns: &dyn Dns, record: &PublishedRecord) -> Finding {
    let answers = match dns.lookup(&record.name, record.kind).await {
        Ok(answers) => answers,
        Err(DnsError::NoSuchDomain) => return Finding::Absent,
        Err(DnsError::Unavailable(_)) => return Finding::Unknown,
    };
    let found = answers.iter().any(|a| matches(record, a));
    if found {
        Finding::Present
    } else {
        Finding::Absent
    }
}

/// Whether one answer is the published record.
fn matches(record: &PublishedRecord, answer: &str) -> bool {
    let answer = answer.trim();
    match record.record {
        DomainRecord::Ownership => answer == record.value,
        DomainRecord::Dkim => {
            tag(answer, "p") == tag(&record.value, "p") && tag(answer, "p").is_some()
        }
        DomainRecord::Spf => answer.to_ascii_lowercase().starts_with("v=spf1"),
        DomainRecord::Dmarc => answer.to_ascii_uppercase().starts_with("V=DMARC1"),
        DomainRecord::Mx => {
            let host = answer.rsplit(' ').next().unwrap_or(answer);
            host.trim_end_matches('.')
                .eq_ignore_ascii_case(record.value.trim_end_matches('.'))
        }
    }
}

/// The value of `name=` in a `tag=value; ...` list, whitespace removed.
fn tag(list: &str, name: &str) -> Option<String> {
    list.split(';').find_map(|part| {
        let (k, v) = part.split_once('=')?;
        (k.trim() == name).then(|| v.chars().filter(|c| !c.is_whitespace()).collect())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(record: DomainRecord, value: &str) -> PublishedRecord {
        PublishedRecord {
            record,
            kind: RecordKind::Txt,
            name: "x".into(),
            value: value.into(),
            status: RecordStatus::Pending,
        }
    }

    #[test]
    fn dkim_matches_by_key_whatever_the_spacing() {
        let r = rec(DomainRecord::Dkim, "v=DKIM1; k=rsa; p=ABC+/=");
        assert!(matches(&r, "v=DKIM1;k=rsa;  p=AB C+/="));
        assert!(!matches(&r, "v=DKIM1; k=rsa; p=ABD"));
        assert!(!matches(&r, "v=DKIM1; k=rsa"));
    }

    #[test]
    fn mx_matches_host_with_or_without_preference_and_dot() {
        let mut r = rec(DomainRecord::Mx, "mx.posthorn.test");
        r.kind = RecordKind::Mx;
        assert!(matches(&r, "10 MX.posthorn.test."));
        assert!(matches(&r, "mx.posthorn.test"));
        assert!(!matches(&r, "mx.other.test"));
    }

    #[test]
    fn ownership_needs_the_exact_token() {
        let r = rec(DomainRecord::Ownership, "posthorn-verification=ab");
        assert!(matches(&r, " posthorn-verification=ab "));
        assert!(!matches(&r, "posthorn-verification=abc"));
    }
}
