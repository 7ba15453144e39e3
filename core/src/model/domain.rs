//! Sender domains of a workspace, their DNS checks and DKIM keys.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use rand::RngCore;
use serde::{Deserialize, Serialize};

use super::domain_name::{canonical_domain, same_domain, DomainNameError};
use super::{DomainId, WorkspaceId};
use crate::ports::Clock;

/// A domain a workspace may send from once verified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Domain {
    /// Domain id.
    pub id: DomainId,
    /// Owning workspace.
    #[serde(rename = "projectId")]
    pub workspace_id: WorkspaceId,
    /// The domain name in canonical form ([`canonical_domain`]: lower case, A-labels);
    /// a domain added before names were canonicalised may hold Unicode (see
    /// [`Domain::ascii_name`]).
    pub domain: String,
    /// Whether ownership was verified (or asserted by the operator).
    pub verified: bool,
    /// Whether inbound mail to this domain is accepted.
    pub inbound_enabled: bool,
    /// Creation time.
    #[serde(with = "super::timestamp")]
    pub created_at: DateTime<Utc>,
    /// Last change.
    #[serde(with = "super::timestamp")]
    pub updated_at: DateTime<Utc>,
    /// The token published at `_posthorn.<domain>` to prove ownership.
    #[serde(skip)]
    pub verification_token: String,
    /// The DKIM selector: the key is published at `<selector>._domainkey.<domain>`.
    #[serde(skip)]
    pub dkim_selector: String,
    /// The DKIM key pair, made when first needed; only `Write::SetDomainDkimKey` stores it.
    #[serde(skip)]
    pub dkim: Option<DkimKeyPair>,
    /// Verified by the operator's word: DNS re-checks report statuses but never un-verify.
    #[serde(skip)]
    pub verified_by_operator: bool,
    /// What the last DNS checks found.
    #[serde(skip)]
    pub checks: DomainChecks,
}

/// One DNS record Posthorn asks the domain owner to publish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DomainRecord {
    /// TXT `_posthorn.<domain>` with the verification token (required).
    Ownership,
    /// TXT `<selector>._domainkey.<domain>` with the DKIM public key (required).
    Dkim,
    /// TXT SPF suggestion at the domain (advisory).
    Spf,
    /// TXT `_dmarc.<domain>` suggestion (advisory).
    Dmarc,
    /// MX at `POSTHORN_MX_HOST`, only while inbound is enabled (advisory).
    Mx,
}

/// What the last lookup of one record found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "UPPERCASE")]
pub enum RecordStatus {
    /// Not checked yet.
    #[default]
    Pending,
    /// Found with the expected value.
    Verified,
    /// Looked up and not found (or another value).
    Failed,
}

/// The outcome of the DNS checks of a domain, kept between checks.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DomainChecks {
    /// Status per record; a record never checked is absent (PENDING).
    #[serde(default)]
    pub records: BTreeMap<DomainRecord, RecordStatus>,
    /// When DNS last gave a definite answer for the required records.
    #[serde(default)]
    pub checked_at: Option<DateTime<Utc>>,
    /// Since when the required records of a verified domain have been missing, while they
    /// still are; a domain is un-verified only once this is an hour old.
    #[serde(default)]
    pub failing_since: Option<DateTime<Utc>>,
}

impl DomainChecks {
    /// The status of `record` (PENDING when never checked).
    pub fn status(&self, record: DomainRecord) -> RecordStatus {
        self.records.get(&record).copied().unwrap_or_default()
    }
}

/// A DKIM RSA key pair; the private half never shows in `Debug` or any answer.
#[derive(Clone, PartialEq, Eq)]
pub struct DkimKeyPair {
    /// The private key, PKCS#1 DER.
    private_key_der: Vec<u8>,
    /// The public key, base64 of the SubjectPublicKeyInfo DER (the DKIM `p=` value).
    pub public_key: String,
}

impl DkimKeyPair {
    /// A key pair from its stored parts.
    pub fn from_parts(private_key_der: Vec<u8>, public_key: String) -> Self {
        Self {
            private_key_der,
            public_key,
        }
    }

    /// The private key, PKCS#1 DER: for the store and the signer only.
    pub fn private_key_der(&self) -> &[u8] {
        &self.private_key_der
    }

    /// The stored form: (base64 of the private key's DER, public key).
    pub fn to_stored(&self) -> (String, String) {
        use base64::Engine as _;
        (
            base64::engine::general_purpose::STANDARD.encode(&self.private_key_der),
            self.public_key.clone(),
        )
    }

    /// A key pair from its stored form; `None` when the private part is not base64.
    pub fn from_stored(private_b64: &str, public_key: String) -> Option<Self> {
        use base64::Engine as _;
        let der = base64::engine::general_purpose::STANDARD
            .decode(private_b64)
            .ok()?;
        Some(Self::from_parts(der, public_key))
    }

    /// The TXT value to publish: `v=DKIM1; k=rsa; p=...`.
    pub fn dns_value(&self) -> String {
        format!("v=DKIM1; k=rsa; p={}", self.public_key)
    }
}

impl fmt::Debug for DkimKeyPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DkimKeyPair")
            .field("private_key_der", &"<redacted>")
            .field("public_key", &self.public_key)
            .finish()
    }
}

impl Domain {
    /// A new, unverified domain with a fresh verification token and DKIM selector (its
    /// key pair is made when first needed). `name` must already be parsed.
    pub fn new(
        clock: &dyn Clock,
        workspace_id: WorkspaceId,
        name: String,
        now: DateTime<Utc>,
    ) -> Self {
        let mut token = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut token);
        let mut selector = [0u8; 4];
        rand::thread_rng().fill_bytes(&mut selector);
        Self {
            id: DomainId::generate(clock),
            workspace_id,
            domain: name,
            verified: false,
            inbound_enabled: false,
            created_at: now,
            updated_at: now,
            verification_token: format!("posthorn-verification={}", hex::encode(token)),
            dkim_selector: format!("ph{}", hex::encode(selector)),
            dkim: None,
            verified_by_operator: false,
            checks: DomainChecks::default(),
        }
    }

    /// Whether `other` (the domain of a from address, say) names this domain, in either
    /// form: `bücher.de` is `xn--bcher-kva.de` ([`same_domain`]).
    pub fn name_is(&self, other: &str) -> bool {
        same_domain(&self.domain, other)
    }

    /// The name as DNS, SMTP and DKIM's `d=` need it: the stored name, which is canonical,
    /// or for a domain stored with a Unicode name before names were canonicalised, its
    /// A-label form (the stored name when it has none).
    pub fn ascii_name(&self) -> Cow<'_, str> {
        if self.domain.is_ascii() {
            return Cow::Borrowed(&self.domain);
        }
        canonical_domain(&self.domain).map_or(Cow::Borrowed(&self.domain), Cow::Owned)
    }
}

/// Parses a domain name as given by a user: white space around and one or more final dots
/// dropped, then [`canonical_domain`] (lower case, A-labels, two labels or more).
pub fn parse_domain_name(raw: &str) -> Result<String, DomainNameError> {
    canonical_domain(raw.trim().trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_private_key() {
        let key = DkimKeyPair::from_parts(vec![0x30, 0x82, 0xAB, 0xCD], "PUB".into());
        let shown = format!("{key:?}");
        assert!(shown.contains("<redacted>") && shown.contains("PUB"));
        assert!(!shown.contains("171") && !shown.to_lowercase().contains("abcd"));
    }

    #[test]
    fn parsed_names_are_canonical() {
        assert_eq!(
            parse_domain_name(" Mail.Acme.test. ").as_deref(),
            Ok("mail.acme.test")
        );
        assert_eq!(
            parse_domain_name("Bücher.de").as_deref(),
            Ok("xn--bcher-kva.de")
        );
        assert_eq!(parse_domain_name("localhost"), Err(DomainNameError::Labels));
        assert_eq!(
            parse_domain_name("xn--zz.de"),
            Err(DomainNameError::Invalid)
        );
    }

    #[test]
    fn a_unicode_name_stored_before_canonical_names_still_matches_and_resolves() {
        let clock = crate::ports::SystemClock;
        let now = Utc::now();
        let legacy = Domain::new(&clock, WorkspaceId::from("w"), "bücher.de".into(), now);
        assert!(legacy.name_is("xn--bcher-kva.de") && legacy.name_is("BÜCHER.de"));
        assert_eq!(legacy.ascii_name(), "xn--bcher-kva.de");
        let current = Domain::new(
            &clock,
            WorkspaceId::from("w"),
            "xn--bcher-kva.de".into(),
            now,
        );
        assert!(current.name_is("bücher.de") && !current.name_is("bucher.de"));
        assert!(matches!(
            current.ascii_name(),
            Cow::Borrowed("xn--bcher-kva.de")
        ));
    }

    #[test]
    fn checks_round_trip_as_json() {
        let mut checks = DomainChecks::default();
        checks
            .records
            .insert(DomainRecord::Dkim, RecordStatus::Verified);
        checks
            .records
            .insert(DomainRecord::Spf, RecordStatus::Failed);
        let json = serde_json::to_string(&checks).unwrap();
        assert_eq!(serde_json::from_str::<DomainChecks>(&json).unwrap(), checks);
        assert_eq!(checks.status(DomainRecord::Mx), RecordStatus::Pending);
    }
}
