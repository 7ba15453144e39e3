//! Sender domains of a workspace.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{DomainId, WorkspaceId};

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
    /// The domain name, lower-case.
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
}

/// Parses a domain name: lower-case labels of letters, digits and hyphens, at least two.
pub fn parse_domain_name(raw: &str) -> Option<String> {
    let domain = raw.trim().trim_end_matches('.').to_lowercase();
    let labels: Vec<&str> = domain.split('.').collect();
    let ok = domain.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_alphanumeric() || c == '-')
        });
    ok.then_some(domain)
}
