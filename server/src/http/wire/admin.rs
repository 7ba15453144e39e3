//! Operator (`/admin`) and key-set bodies into typed commands, and their answers.

use deserr::{Deserr, IntoValue, Value as DValue, ValueKind, ValuePointerRef};
use posthorn_core::app::keys::CreateKeySet;
use posthorn_core::app::workspaces::{AddDomain, CreateWorkspace, WorkspacePatch};
use posthorn_core::model::{parse_domain_name, timestamp, KeySet, NewKeySet, Workspace};
use posthorn_core::ports::DeadJob;
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{IntoParams, PartialSchema, ToSchema};

use super::de::{Filled, Line, Nullable, QueryInt, WireErrors};

/// Longest workspace or key-set name, in characters.
const MAX_LABEL_CHARS: usize = 255;
/// Highest API budget, in requests per minute.
const MAX_RATE_LIMIT_PER_MINUTE: i64 = 10_000_000;
/// Highest sending rate, in emails per second.
const MAX_SEND_RATE_PER_SECOND: f64 = 100_000.0;

type Label = Line<MAX_LABEL_CHARS>;
type ContactLimit = Integer<0, { i64::MAX }>;
type RatePerMinute = Integer<1, MAX_RATE_LIMIT_PER_MINUTE>;

/// A JSON integer within `MIN..=MAX`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Integer<const MIN: i64, const MAX: i64>(pub i64);

impl<const MIN: i64, const MAX: i64> Deserr<WireErrors> for Integer<MIN, MAX> {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let n = match value {
            DValue::Integer(n) => i64::try_from(n).ok(),
            DValue::NegativeInteger(n) => Some(n),
            // JSON has one number type: `65.0` is the integer 65 (as JSON Schema says).
            DValue::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(f as i64),
            DValue::Float(_) => None,
            other => {
                return Err(WireErrors::wrong_kind(
                    location,
                    other.kind(),
                    &[ValueKind::Integer],
                ))
            }
        };
        let key = key_name(location);
        match n {
            Some(n) if (MIN..=MAX).contains(&n) => Ok(Integer(n)),
            Some(_) => Err(WireErrors::at(
                location,
                "out_of_range",
                format!("{key} must be between {MIN} and {MAX}"),
            )),
            None => Err(WireErrors::at(
                location,
                "invalid_type",
                format!("{key} must be an integer, got number"),
            )),
        }
    }
}

impl<const MIN: i64, const MAX: i64> PartialSchema for Integer<MIN, MAX> {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(MIN as f64))
            .maximum(Some(MAX as f64))
            .into()
    }
}

impl<const MIN: i64, const MAX: i64> ToSchema for Integer<MIN, MAX> {}

fn key_name(location: ValuePointerRef) -> String {
    match location {
        ValuePointerRef::Key { key, .. } => key.to_string(),
        ValuePointerRef::Index { index, .. } => index.to_string(),
        ValuePointerRef::Origin => "body".to_string(),
    }
}

/// Emails per second: above 0 and at most `MAX_SEND_RATE_PER_SECOND`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SendRate(pub f64);

impl Deserr<WireErrors> for SendRate {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let n = match value {
            DValue::Integer(n) => n as f64,
            DValue::NegativeInteger(n) => n as f64,
            DValue::Float(n) => n,
            other => {
                let key = key_name(location);
                return Err(WireErrors::at(
                    location,
                    "invalid_type",
                    format!(
                        "{key} must be a number, got {}",
                        match other.kind() {
                            ValueKind::Boolean => "boolean",
                            ValueKind::String => "string",
                            ValueKind::Sequence => "array",
                            ValueKind::Map => "object",
                            _ => "null",
                        }
                    ),
                ));
            }
        };
        if n > 0.0 && n <= MAX_SEND_RATE_PER_SECOND {
            Ok(SendRate(n))
        } else {
            let key = key_name(location);
            Err(WireErrors::at(
                location,
                "out_of_range",
                format!("{key} must be above 0 and at most {MAX_SEND_RATE_PER_SECOND}"),
            ))
        }
    }
}

impl PartialSchema for SendRate {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Number)
            .exclusive_minimum(Some(0.0))
            .maximum(Some(MAX_SEND_RATE_PER_SECOND))
            .into()
    }
}

impl ToSchema for SendRate {}

/// The pattern of the ASCII domain names [`parse_domain_name`] accepts (it also trims,
/// lower-cases and drops a final dot, and takes internationalised names, kept as A-labels).
const DOMAIN_PATTERN: &str = r"^\s*([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?\s*$";

fn domain_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(DOMAIN_PATTERN))
        .max_length(Some(253))
        .description(Some(
            "A domain name of two labels or more. Trimmed and lower-cased; an \
             internationalised name (`bücher.de`) is kept in its ASCII form \
             (`xn--bcher-kva.de`), which the pattern describes.",
        ))
}

/// A domain name, parsed by [`parse_domain_name`].
#[derive(Debug, Clone, PartialEq)]
pub struct DomainName(pub String);

impl Deserr<WireErrors> for DomainName {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = String::deserialize_from_value(value, location)?;
        parse_domain_name(&raw).map(DomainName).map_err(|_| {
            WireErrors::at(
                location,
                "invalid_domain",
                format!("'{raw}' is not a domain name"),
            )
        })
    }
}

impl PartialSchema for DomainName {
    fn schema() -> RefOr<Schema> {
        domain_schema().into()
    }
}

impl ToSchema for DomainName {}

/// A sender-domain allowlist: domain names, duplicates dropped.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DomainList(pub Vec<String>);

impl Deserr<WireErrors> for DomainList {
    fn deserialize_from_value<V: IntoValue>(
        value: DValue<V>,
        location: ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let DValue::Sequence(items) = value else {
            return Err(WireErrors::wrong_kind(
                location,
                value.kind(),
                &[ValueKind::Sequence],
            ));
        };
        let mut out = Vec::new();
        let mut errors: Option<WireErrors> = None;
        for (i, item) in deserr::Sequence::into_iter(items).enumerate() {
            let parsed = match item.into_value() {
                DValue::String(s) => parse_domain_name(&s).ok(),
                _ => None,
            };
            match parsed {
                Some(d) if !out.contains(&d) => out.push(d),
                Some(_) => {}
                None => {
                    let e = WireErrors::at(
                        location.push_index(i),
                        "invalid_domain",
                        "not a domain name",
                    );
                    let mut all = errors.take().unwrap_or_default();
                    all.0.extend(e.0);
                    errors = Some(all);
                }
            }
        }
        match errors {
            Some(e) => Err(e),
            None => Ok(DomainList(out)),
        }
    }
}

impl PartialSchema for DomainList {
    fn schema() -> RefOr<Schema> {
        ArrayBuilder::new().items(domain_schema()).into()
    }
}

impl ToSchema for DomainList {}

/// Body of `POST /keys` and `POST /admin/workspaces/{id}/key-sets`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors)]
#[schema(as = KeySetCreate)]
pub struct KeySetBody {
    /// Label.
    #[deserr(default)]
    #[schema(inline)]
    pub name: Option<Label>,
    /// Sender-domain allowlist (domain names); empty or omitted means any verified domain
    /// of the workspace.
    #[deserr(default)]
    #[schema(inline)]
    pub domains: Option<DomainList>,
}

impl From<KeySetBody> for CreateKeySet {
    fn from(b: KeySetBody) -> Self {
        CreateKeySet {
            name: b.name.map(|n| n.0),
            domains: b.domains.map(|d| d.0).unwrap_or_default(),
        }
    }
}

/// Body of `POST /admin/workspaces`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = WorkspaceCreate)]
pub struct WorkspaceCreateBody {
    /// Display name.
    #[schema(inline)]
    pub name: Filled<Label>,
    /// Maximum number of ACTIVE contacts; null or omitted means no limit.
    #[deserr(default)]
    #[schema(inline)]
    pub active_contact_limit: Option<ContactLimit>,
    /// API requests per minute (default 1000).
    #[deserr(default)]
    #[schema(inline)]
    pub rate_limit_per_minute: Option<RatePerMinute>,
    /// Emails per second (default 14).
    #[deserr(default)]
    #[schema(inline)]
    pub send_rate_per_second: Option<SendRate>,
}

impl From<WorkspaceCreateBody> for CreateWorkspace {
    fn from(b: WorkspaceCreateBody) -> Self {
        CreateWorkspace {
            name: b.name.0 .0,
            active_contact_limit: b.active_contact_limit.map(|n| n.0 as u64),
            rate_limit_per_minute: b.rate_limit_per_minute.map(|n| n.0 as u32),
            send_rate_per_second: b.send_rate_per_second.map(|r| r.0),
        }
    }
}

/// Body of `PATCH /admin/workspaces/{id}`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = WorkspacePatch)]
pub struct WorkspacePatchBody {
    /// Display name.
    #[deserr(default)]
    #[schema(inline)]
    pub name: Option<Label>,
    /// Disables or enables every request of the workspace.
    #[deserr(default)]
    pub disabled: Option<bool>,
    /// Maximum number of ACTIVE contacts; null removes the limit.
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub active_contact_limit: Nullable<ContactLimit>,
    /// API requests per minute.
    #[deserr(default)]
    #[schema(inline)]
    pub rate_limit_per_minute: Option<RatePerMinute>,
    /// Emails per second.
    #[deserr(default)]
    #[schema(inline)]
    pub send_rate_per_second: Option<SendRate>,
    /// Open pixel in HTML mail (on by default).
    #[deserr(default)]
    pub track_opens: Option<bool>,
    /// Click redirects for links in HTML mail (on by default).
    #[deserr(default)]
    pub track_clicks: Option<bool>,
}

impl From<WorkspacePatchBody> for WorkspacePatch {
    fn from(b: WorkspacePatchBody) -> Self {
        WorkspacePatch {
            name: b.name.map(|n| n.0),
            disabled: b.disabled,
            active_contact_limit: b.active_contact_limit.into_patch().map(|n| n.0 as u64),
            rate_limit_per_minute: b.rate_limit_per_minute.map(|n| n.0 as u32),
            send_rate_per_second: b.send_rate_per_second.map(|r| r.0),
            track_opens: b.track_opens,
            track_clicks: b.track_clicks,
        }
    }
}

/// Body of `POST /admin/workspaces/{id}/domains`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors, rename_all = camelCase)]
#[serde(rename_all = "camelCase")]
#[schema(as = DomainCreate)]
pub struct DomainBody {
    /// Domain name.
    #[schema(inline)]
    pub domain: Filled<DomainName>,
    /// `true` marks the domain verified without a DNS check (default false).
    #[deserr(default)]
    pub verified: Option<bool>,
    /// Accept inbound mail (default false).
    #[deserr(default)]
    pub inbound_enabled: Option<bool>,
}

impl From<DomainBody> for AddDomain {
    fn from(b: DomainBody) -> Self {
        AddDomain {
            domain: b.domain.0 .0,
            verified: b.verified.unwrap_or(false),
            inbound_enabled: b.inbound_enabled.unwrap_or(false),
        }
    }
}

/// Query of `GET /admin/jobs/dead`.
#[derive(Debug, Deserr, IntoParams)]
#[deserr(error = WireErrors)]
#[into_params(parameter_in = Query)]
pub struct DeadJobsQuery {
    /// Number of jobs (default 100).
    #[deserr(default = QueryInt(100))]
    #[param(inline, required = false)]
    pub limit: QueryInt<1, 500>,
}

/// A key set just created, with its clear keys (shown this once).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = NewKeySet)]
pub struct NewKeySetBody {
    /// Key set id.
    pub id: String,
    /// Label.
    #[schema(required = true)]
    pub name: Option<String>,
    /// Public key (`pk_` + 64 hex characters): only `/v1/track`.
    #[schema(pattern = "^pk_[0-9a-f]{64}$")]
    pub public_key: String,
    /// Secret key (`sk_` + 64 hex characters): every workspace endpoint.
    #[schema(pattern = "^sk_[0-9a-f]{64}$")]
    pub secret_key: String,
    /// Sender-domain allowlist; empty means any verified domain of the workspace.
    pub domains: Vec<String>,
    /// Creation time.
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl From<&NewKeySet> for NewKeySetBody {
    fn from(set: &NewKeySet) -> Self {
        NewKeySetBody {
            id: set.record.id.to_string(),
            name: set.record.name.clone(),
            public_key: set.public_key.clone(),
            secret_key: set.secret_key.clone(),
            domains: set.record.domains.clone(),
            created_at: timestamp::format(&set.record.created_at),
        }
    }
}

/// Answer of `GET /keys`.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeySetList {
    /// The workspace's key sets.
    pub data: Vec<KeySet>,
}

/// Answer of `POST /admin/workspaces`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedWorkspace {
    /// The new workspace.
    pub workspace: Workspace,
    /// Its first key set, with the clear keys.
    pub key_set: NewKeySetBody,
}

/// Answer of `GET /admin/workspaces`.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkspaceList {
    /// Every workspace.
    pub data: Vec<Workspace>,
}

/// A dead-lettered job.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = DeadJob)]
pub struct DeadJobBody {
    /// Job id.
    pub id: String,
    /// What kind of job it is (the payload's `kind`: `deliver_email`, ...).
    #[schema(value_type = String)]
    pub kind: Value,
    /// What the job was to do: its `kind` and the ids it acts on.
    #[schema(value_type = Object)]
    pub payload: Map<String, Value>,
    /// Failed attempts counted before it was given up.
    pub attempts: u32,
    /// Why it was given up; null when no error was recorded.
    #[schema(required = true)]
    pub last_error: Option<String>,
}

impl DeadJobBody {
    /// The job as answered; `None` when its payload does not serialize as an object.
    pub fn new(job: &DeadJob) -> Option<Self> {
        let Ok(Value::Object(payload)) = serde_json::to_value(&job.payload) else {
            return None;
        };
        Some(DeadJobBody {
            id: job.id.to_string(),
            kind: payload.get("kind").cloned().unwrap_or(Value::Null),
            payload,
            attempts: job.attempts,
            last_error: job.last_error.clone(),
        })
    }
}

/// Answer of `GET /admin/jobs/dead`.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeadJobList {
    /// Dead jobs, oldest first by id.
    pub jobs: Vec<DeadJobBody>,
}

/// Answer of `POST /admin/jobs/{id}/revive`.
#[derive(Debug, Serialize, ToSchema)]
pub struct RevivedJob {
    /// Always `true`.
    pub revived: bool,
    /// The job's id.
    pub id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create_body(text: &str) -> Result<WorkspaceCreateBody, WireErrors> {
        let value: Value = serde_json::from_str(text).expect("test JSON parses");
        deserr::deserialize::<WorkspaceCreateBody, Value, WireErrors>(value)
    }

    #[test]
    fn a_whole_float_is_the_integer_it_names_even_past_two_to_the_fifty_one() {
        // A fast float parser reads this number a half off; the exact one does not.
        let body = create_body(r#"{"name":"x","activeContactLimit":3752449908438922.0}"#)
            .expect("whole number accepted");
        assert_eq!(
            body.active_contact_limit,
            Some(Integer(3_752_449_908_438_922))
        );
        let body = create_body(r#"{"name":"x","rateLimitPerMinute":211.0}"#).expect("accepted");
        assert_eq!(body.rate_limit_per_minute, Some(Integer(211)));
    }

    #[test]
    fn a_fraction_is_not_an_integer() {
        assert!(create_body(r#"{"name":"x","activeContactLimit":2.5}"#).is_err());
    }
}
