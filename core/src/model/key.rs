//! API keys: a key set holds one public (`pk_`) and one secret (`sk_`) key.

use chrono::{DateTime, Utc};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::domain_name::same_domain;
use super::{KeySetId, WorkspaceId};
use crate::ports::Clock;

/// Which of the two keys of a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum KeyKind {
    /// `pk_`: only `/v1/track`.
    Public,
    /// `sk_`: every endpoint.
    Secret,
}

impl KeyKind {
    /// The clear-text prefix of keys of this kind.
    pub fn prefix(self) -> &'static str {
        match self {
            KeyKind::Public => "pk_",
            KeyKind::Secret => "sk_",
        }
    }
}

/// A stored key set. Only hashes of the keys are kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct KeySet {
    /// Key set id.
    pub id: KeySetId,
    /// Owning workspace.
    #[serde(rename = "projectId")]
    pub workspace_id: WorkspaceId,
    /// Optional label.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub name: Option<String>,
    /// Sender-domain allowlist; empty means any verified domain of the workspace.
    pub domains: Vec<String>,
    /// SHA-256 (hex) of the public key.
    #[serde(skip_serializing)]
    pub public_key_hash: String,
    /// SHA-256 (hex) of the secret key.
    #[serde(skip_serializing)]
    pub secret_key_hash: String,
    /// First characters of the public key, to recognise it in listings.
    pub public_key_preview: String,
    /// First characters of the secret key, to recognise it in listings.
    pub secret_key_preview: String,
    /// Creation time.
    #[serde(with = "super::timestamp")]
    pub created_at: DateTime<Utc>,
}

/// A key set just generated, with its clear keys (shown once, never stored).
#[derive(Debug, Clone)]
pub struct NewKeySet {
    /// The record to store.
    pub record: KeySet,
    /// The clear public key.
    pub public_key: String,
    /// The clear secret key.
    pub secret_key: String,
}

impl NewKeySet {
    /// Generates a key set with 32 random bytes per key.
    pub fn generate(
        clock: &dyn Clock,
        workspace_id: &WorkspaceId,
        name: Option<String>,
        domains: Vec<String>,
        now: DateTime<Utc>,
    ) -> Self {
        let public_key = generate_key(KeyKind::Public);
        let secret_key = generate_key(KeyKind::Secret);
        let record = KeySet {
            id: KeySetId::generate(clock),
            workspace_id: workspace_id.clone(),
            name,
            domains,
            public_key_hash: hash_key(&public_key),
            secret_key_hash: hash_key(&secret_key),
            public_key_preview: preview(&public_key),
            secret_key_preview: preview(&secret_key),
            created_at: now,
        };
        Self {
            record,
            public_key,
            secret_key,
        }
    }
}

/// A key found by its hash: which set, which kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    /// The key set it belongs to.
    pub key_set: KeySet,
    /// Public or secret.
    pub kind: KeyKind,
}

impl ApiKey {
    /// Whether this key may send from `domain` (scope check), in either form
    /// (`bücher.de` is `xn--bcher-kva.de`, see [`same_domain`]).
    pub fn may_send_from(&self, domain: &str) -> bool {
        self.key_set.domains.is_empty()
            || self.key_set.domains.iter().any(|d| same_domain(d, domain))
    }
}

/// The stored form of a clear key: lower-case hex SHA-256.
pub fn hash_key(clear: &str) -> String {
    hex::encode(Sha256::digest(clear.as_bytes()))
}

fn generate_key(kind: KeyKind) -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("{}{}", kind.prefix(), hex::encode(bytes))
}

fn preview(key: &str) -> String {
    format!("{}…", &key[..key.len().min(10)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::SystemClock;

    #[test]
    fn generated_keys_have_the_documented_shape() {
        let set = NewKeySet::generate(
            &SystemClock,
            &WorkspaceId::from("w"),
            None,
            vec![],
            Utc::now(),
        );
        assert!(set.public_key.starts_with("pk_") && set.public_key.len() == 67);
        assert!(set.secret_key.starts_with("sk_") && set.secret_key.len() == 67);
        assert_eq!(set.record.secret_key_hash, hash_key(&set.secret_key));
        assert_ne!(set.public_key[3..], set.secret_key[3..]);
    }

    #[test]
    fn scope_is_case_insensitive_and_empty_means_any() {
        let mut set = NewKeySet::generate(
            &SystemClock,
            &WorkspaceId::from("w"),
            None,
            vec![],
            Utc::now(),
        )
        .record;
        let key = |s: &KeySet| ApiKey {
            key_set: s.clone(),
            kind: KeyKind::Secret,
        };
        assert!(key(&set).may_send_from("anything.io"));
        set.domains = vec!["example.com".into()];
        assert!(key(&set).may_send_from("EXAMPLE.com"));
        assert!(!key(&set).may_send_from("other.com"));
    }
}
