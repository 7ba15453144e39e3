//! Posthorn's records: one file per aggregate, plus the validated value types.

mod campaign;
mod contact;
mod domain;
mod domain_name;
mod email;
mod email_address;
mod event;
mod event_name;
mod idempotency;
mod ids;
mod inbound;
mod key;
mod segment;
mod template;
mod workspace;

pub use campaign::{AudienceType, Campaign, CampaignStatus, EmailCounts};
pub use contact::{merge_data, Contact, ContactStatus};
pub use domain::{
    parse_domain_name, DkimKeyPair, Domain, DomainChecks, DomainRecord, RecordStatus,
};
pub use domain_name::{
    ascii_domain_address, canonical_domain, same_domain, DomainNameError, MAX_DOMAIN_LEN,
};
pub use email::{BounceType, EmailLifecycle, EmailRecord, EmailStats, EmailStatus, SourceType};
#[cfg(feature = "openapi")]
pub use email_address::EMAIL_PATTERN;
pub use email_address::{EmailAddress, EmailAddressError};
pub use event::{Event, INTERNAL_EVENT_NAMES};
pub use event_name::{EventName, EventNameError};
pub use idempotency::{IdempotencyRecord, IdempotencyTicket, StoredAnswer};
pub use ids::{
    CampaignId, ContactId, DomainId, EmailId, EventId, ExecutionId, JobId, KeySetId, SegmentId,
    StepId, TemplateId, TransitionId, WorkflowId, WorkspaceId,
};
pub use inbound::{InboundEmail, ProviderVerdicts, Verdict};
pub use key::{hash_key, ApiKey, KeyKind, KeySet, NewKeySet};
pub use segment::{Segment, SegmentType};
pub use template::{Template, TemplateType};
pub use workspace::Workspace;

/// The `updated_at` for a change decided from a read of a record stamped `read_at`: `now`,
/// but always after `read_at` (by a microsecond, what the durable stores keep), so that the
/// `updated_at` guard of a concurrent change made from the same read (`Write::GuardEmail`,
/// `GuardTemplate`, `GuardDomain`) conflicts even when the clock has not moved on.
pub fn updated_after(
    read_at: chrono::DateTime<chrono::Utc>,
    now: chrono::DateTime<chrono::Utc>,
) -> chrono::DateTime<chrono::Utc> {
    now.max(read_at + chrono::TimeDelta::microseconds(1))
}

/// Serde for timestamps: RFC 3339, UTC, milliseconds (`2026-11-21T10:00:00.000Z`).
pub mod timestamp {
    use chrono::{DateTime, SecondsFormat, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    /// Formats `at` the way every Posthorn response does.
    pub fn format(at: &DateTime<Utc>) -> String {
        at.to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    /// Serializes a timestamp.
    pub fn serialize<S: Serializer>(at: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format(at))
    }

    /// Deserializes any RFC 3339 timestamp.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let raw = String::deserialize(d)?;
        DateTime::parse_from_rfc3339(&raw)
            .map(|t| t.with_timezone(&Utc))
            .map_err(serde::de::Error::custom)
    }

    /// The same for optional timestamps.
    pub mod option {
        use super::*;

        /// Serializes an optional timestamp (`null` when absent).
        pub fn serialize<S: Serializer>(
            at: &Option<DateTime<Utc>>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match at {
                Some(at) => s.serialize_str(&format(at)),
                None => s.serialize_none(),
            }
        }

        /// Deserializes an optional RFC 3339 timestamp.
        pub fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<DateTime<Utc>>, D::Error> {
            let raw = Option::<String>::deserialize(d)?;
            raw.map(|raw| {
                DateTime::parse_from_rfc3339(&raw)
                    .map(|t| t.with_timezone(&Utc))
                    .map_err(serde::de::Error::custom)
            })
            .transpose()
        }
    }
}

/// Serde for byte vectors as standard base64 strings.
pub mod base64_bytes {
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Serializes bytes as base64.
    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    /// Deserializes base64 into bytes.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let raw = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(raw)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::updated_after;
    use chrono::{TimeDelta, TimeZone, Utc};

    #[test]
    fn a_change_is_stamped_after_what_it_read_even_on_a_clock_that_stood_still() {
        let read_at = Utc
            .timestamp_opt(1_790_000_000, 0)
            .single()
            .unwrap_or_default();
        assert!(updated_after(read_at, read_at) > read_at);
        assert!(updated_after(read_at, read_at - TimeDelta::seconds(1)) > read_at);
        let later = read_at + TimeDelta::milliseconds(5);
        assert_eq!(updated_after(read_at, later), later);
    }
}
