//! Identifier types: one per record kind, so a `(workspace, segment, contact)` triple cannot
//! be passed in the wrong order.
//!
//! Every identifier is an opaque string. The ones Posthorn makes are UUIDv7 strings taken
//! from the [`Clock`] port ([`Clock::new_uuid`]), so they order like `createdAt`; ids read
//! from a request are kept as given (an unknown id simply finds nothing).
//!
//! The text is shared (`Arc<str>`): an id is copied into every record and index that names
//! it, and a copy is then a count, not a new allocation of the same 36 bytes.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

use crate::ports::Clock;

macro_rules! define_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[cfg_attr(feature = "openapi", schema(value_type = String))]
        pub struct $name(Arc<str>);

        impl $name {
            /// A new identifier, ordered after every id `clock` made before.
            pub fn generate(clock: &dyn Clock) -> Self {
                Self::of_uuid(clock.new_uuid())
            }

            /// A new identifier taken at `at`, an instant `clock` gave
            /// ([`Clock::new_uuid_at`]): for a record created at `at`.
            pub fn generate_at(clock: &dyn Clock, at: chrono::DateTime<chrono::Utc>) -> Self {
                Self::of_uuid(clock.new_uuid_at(at))
            }

            fn of_uuid(uuid: uuid::Uuid) -> Self {
                // Straight into a stack buffer: `to_string` would go through `fmt`.
                let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
                Self::from(&*uuid.hyphenated().encode_lower(&mut text))
            }

            /// The identifier as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The identifier as an owned string.
            pub fn into_string(self) -> String {
                self.0.to_string()
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                String::deserialize(deserializer).map(Self::from)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                Self(Arc::from(id))
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                Self(Arc::from(id))
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> Self {
                id.0.to_string()
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                &*self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                &*self.0 == *other
            }
        }
    };
}

define_id!(
    /// Identifies a workspace.
    WorkspaceId
);
define_id!(
    /// Identifies a key set of a workspace.
    KeySetId
);
define_id!(
    /// Identifies a sending domain of a workspace.
    DomainId
);
define_id!(
    /// Identifies a contact.
    ContactId
);
define_id!(
    /// Identifies a template.
    TemplateId
);
define_id!(
    /// Identifies a segment.
    SegmentId
);
define_id!(
    /// Identifies a campaign.
    CampaignId
);
define_id!(
    /// Identifies an email record (the id `POST /v1/send` answers).
    EmailId
);
define_id!(
    /// Identifies a stored event.
    EventId
);
define_id!(
    /// Identifies a background job.
    JobId
);
define_id!(
    /// Identifies a workflow.
    WorkflowId
);
define_id!(
    /// Identifies a step of a workflow.
    StepId
);
define_id!(
    /// Identifies a transition between two steps of a workflow.
    TransitionId
);
define_id!(
    /// Identifies one run of a workflow for one contact.
    ExecutionId
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::ManualClock;

    #[test]
    fn generated_ids_order_like_their_creation() {
        let clock = ManualClock::new(chrono::Utc::now());
        let ids: Vec<ContactId> = (0..100).map(|_| ContactId::generate(&clock)).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn ids_serialize_as_plain_strings() {
        let id = SegmentId::from("seg-1");
        assert_eq!(
            serde_json::to_string(&id).ok().as_deref(),
            Some("\"seg-1\"")
        );
        assert_eq!(id, "seg-1");
    }
}
