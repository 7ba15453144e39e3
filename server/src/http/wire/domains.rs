//! `/domains`: the workspace's sender and inbound domains and the DNS records to publish.

use deserr::Deserr;
use posthorn_core::app::domains::{CreateDomain, DomainPatch, DomainView, PublishedRecord};
use posthorn_core::model::{timestamp, RecordStatus};
use posthorn_core::ports::RecordKind;
use serde::Serialize;
use utoipa::ToSchema;

use super::admin::DomainName;
use super::de::{Filled, WireErrors};

/// Body of `POST /domains`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[schema(as = WorkspaceDomainCreate)]
pub struct DomainCreateBody {
    /// Domain name.
    #[schema(inline)]
    pub domain: Filled<DomainName>,
}

impl From<DomainCreateBody> for CreateDomain {
    fn from(b: DomainCreateBody) -> Self {
        CreateDomain {
            domain: b.domain.0 .0,
        }
    }
}

/// Body of `PATCH /domains/{id}`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = DomainPatch)]
pub struct DomainPatchBody {
    /// Accept inbound mail for the domain (one workspace per domain name).
    #[deserr(default)]
    pub inbound_enabled: Option<bool>,
}

impl From<DomainPatchBody> for DomainPatch {
    fn from(b: DomainPatchBody) -> Self {
        DomainPatch {
            inbound_enabled: b.inbound_enabled,
        }
    }
}

/// A DNS record to publish, and what the last check found.
#[derive(Debug, Serialize, ToSchema)]
pub struct DnsRecordBody {
    /// `TXT` or `MX`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Fully qualified name.
    pub name: String,
    /// Value to publish.
    pub value: String,
    /// `PENDING` (not checked yet), `VERIFIED` or `FAILED`.
    pub status: RecordStatus,
}

impl From<&PublishedRecord> for DnsRecordBody {
    fn from(r: &PublishedRecord) -> Self {
        DnsRecordBody {
            kind: match r.kind {
                RecordKind::Mx => "MX",
                RecordKind::A => "A",
                RecordKind::Ns => "NS",
                RecordKind::Txt => "TXT",
            },
            name: r.name.clone(),
            value: r.value.clone(),
            status: r.status,
        }
    }
}

/// A domain of the workspace. The DKIM private key is never shown.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = WorkspaceDomain)]
pub struct DomainBody {
    /// Domain id.
    pub id: String,
    /// Workspace id.
    pub project_id: String,
    /// The domain name.
    pub domain: String,
    /// Whether mail may be sent from it.
    pub verified: bool,
    /// Whether inbound mail for it is accepted.
    pub inbound_enabled: bool,
    /// The DKIM selector.
    pub dkim_selector: String,
    /// The DNS records to publish.
    pub records: Vec<DnsRecordBody>,
    /// When DNS last answered for its required records (null: never).
    pub checked_at: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// Last change.
    pub updated_at: String,
}

impl From<&DomainView> for DomainBody {
    fn from(v: &DomainView) -> Self {
        let d = &v.domain;
        DomainBody {
            id: d.id.to_string(),
            project_id: d.workspace_id.to_string(),
            domain: d.domain.clone(),
            verified: d.verified,
            inbound_enabled: d.inbound_enabled,
            dkim_selector: d.dkim_selector.clone(),
            records: v.records.iter().map(Into::into).collect(),
            checked_at: d.checks.checked_at.as_ref().map(timestamp::format),
            created_at: timestamp::format(&d.created_at),
            updated_at: timestamp::format(&d.updated_at),
        }
    }
}

/// `GET /domains`.
#[derive(Debug, Serialize, ToSchema)]
pub struct DomainList {
    /// The workspace's domains, oldest first.
    pub data: Vec<DomainBody>,
}
