//! Contacts: the people a workspace mails.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ContactId, EmailAddress, WorkspaceId};
use crate::ports::Clock;

/// Whether a contact counts against the workspace's active contact limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ContactStatus {
    /// A normal contact.
    Active,
    /// Created while the workspace was at its limit; receives no campaign mail.
    Pending,
}

/// A contact of a workspace, unique on (workspace, email).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Contact {
    /// Contact id.
    pub id: ContactId,
    /// Owning workspace.
    #[serde(rename = "projectId")]
    pub workspace_id: WorkspaceId,
    /// Address, unique within the workspace.
    pub email: EmailAddress,
    /// Whether the contact accepts marketing mail.
    pub subscribed: bool,
    /// Free-form custom fields.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub data: Map<String, Value>,
    /// ACTIVE or PENDING.
    pub status: ContactStatus,
    /// When a PENDING contact is removed if it is still pending.
    #[serde(with = "super::timestamp::option")]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub expires_at: Option<DateTime<Utc>>,
    /// Creation time.
    #[serde(with = "super::timestamp")]
    pub created_at: DateTime<Utc>,
    /// Last change.
    #[serde(with = "super::timestamp")]
    pub updated_at: DateTime<Utc>,
    /// Optimistic-concurrency version, bumped by every stored update.
    #[serde(skip_serializing, default)]
    pub version: u64,
}

impl Contact {
    /// How long a PENDING contact waits for room before it is removed.
    pub const PENDING_TTL_DAYS: i64 = 30;

    /// A new contact; PENDING with an expiry when `at_limit`.
    pub fn new(
        clock: &dyn Clock,
        workspace_id: &WorkspaceId,
        email: EmailAddress,
        subscribed: bool,
        data: Map<String, Value>,
        at_limit: bool,
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            id: ContactId::generate_at(clock, now),
            workspace_id: workspace_id.clone(),
            email,
            subscribed,
            data,
            status: if at_limit {
                ContactStatus::Pending
            } else {
                ContactStatus::Active
            },
            expires_at: at_limit.then(|| now + chrono::Duration::days(Self::PENDING_TTL_DAYS)),
            created_at: now,
            updated_at: now,
            version: 0,
        }
    }
}

/// Merges `patch` into `data` shallowly: a `null` value removes that key. Returns whether
/// `data` changed (a value equal to the stored one is not copied again).
pub fn merge_data(data: &mut Map<String, Value>, patch: &Map<String, Value>) -> bool {
    let mut changed = false;
    for (key, value) in patch {
        if value.is_null() {
            changed |= data.remove(key).is_some();
        } else if data.get(key) != Some(value) {
            data.insert(key.clone(), value.clone());
            changed = true;
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::ManualClock;
    use serde_json::json;

    #[test]
    fn a_later_contact_has_a_greater_id_under_a_manual_clock_within_one_millisecond() {
        let clock = ManualClock::new(chrono::Utc::now());
        let ws = WorkspaceId::from("ws");
        let make = |n: usize| {
            let email = EmailAddress::parse(&format!("c{n}@example.com")).expect("valid");
            Contact::new(&clock, &ws, email, true, Map::new(), false, clock.now())
        };
        let first = make(0);
        let second = make(1);
        assert_eq!(
            first.created_at, second.created_at,
            "the clock did not move"
        );
        assert!(first.id < second.id, "{} !< {}", first.id, second.id);
        // Moving the clock back keeps the order: a campaign's snapshot id taken later
        // still covers every contact created before it.
        clock.set(first.created_at - chrono::Duration::seconds(5));
        let third = make(2);
        assert!(second.id < third.id, "{} !< {}", second.id, third.id);
    }

    #[test]
    fn merge_is_shallow_and_null_removes() {
        let mut data = json!({"a": 1, "b": {"x": 1}, "c": 3})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let patch = json!({"b": {"y": 2}, "c": null, "d": "new"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        merge_data(&mut data, &patch);
        assert_eq!(
            Value::Object(data),
            json!({"a": 1, "b": {"y": 2}, "d": "new"})
        );
    }

    fn small_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (0u8..3).prop_map(Value::from),
            "[ab]{0,2}".prop_map(Value::from),
        ]
    }

    fn small_map() -> impl proptest::strategy::Strategy<Value = Map<String, Value>> {
        use proptest::prelude::*;
        prop::collection::btree_map("[a-d]", small_value(), 0..4)
            .prop_map(|m| m.into_iter().collect())
    }

    proptest::proptest! {
        #[test]
        fn merging_reports_a_change_exactly_when_the_data_changed(
            data in small_map(),
            patch in small_map(),
        ) {
            let mut merged = data.clone();
            let changed = merge_data(&mut merged, &patch);
            proptest::prop_assert_eq!(changed, merged != data);
            for (key, value) in &patch {
                if value.is_null() {
                    proptest::prop_assert!(!merged.contains_key(key));
                } else {
                    proptest::prop_assert_eq!(merged.get(key), Some(value));
                }
            }
            for (key, value) in &data {
                if !patch.contains_key(key) {
                    proptest::prop_assert_eq!(merged.get(key), Some(value));
                }
            }
        }
    }
}
