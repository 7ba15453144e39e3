//! Stored events: custom (from `/v1/track`) and internal (emitted by Posthorn).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ContactId, EmailId, EventId, WorkspaceId};
use crate::ports::Clock;

/// One event in a workspace's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Event id (time ordered).
    pub id: EventId,
    /// Owning workspace.
    #[serde(rename = "projectId")]
    pub workspace_id: WorkspaceId,
    /// Event name, e.g. `signup` or `email.sent`.
    pub name: String,
    /// Event data (an object).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub data: Value,
    /// The contact the event is about, if any.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub contact_id: Option<ContactId>,
    /// The email the event is about, if any.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub email_id: Option<EmailId>,
    /// When it happened.
    #[serde(with = "super::timestamp")]
    pub created_at: DateTime<Utc>,
}

impl Event {
    /// A new event with a fresh id from `clock`.
    pub fn new(
        clock: &dyn Clock,
        workspace_id: &WorkspaceId,
        name: impl Into<String>,
        data: Value,
        contact_id: Option<ContactId>,
        email_id: Option<EmailId>,
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            id: EventId::generate_at(clock, now),
            workspace_id: workspace_id.clone(),
            name: name.into(),
            data,
            contact_id,
            email_id,
            created_at: now,
        }
    }
}

/// Names of the events Posthorn emits itself (listed by `GET /events/names`).
pub const INTERNAL_EVENT_NAMES: &[&str] = &[
    "email.sent",
    "email.delivery",
    "email.open",
    "email.click",
    "email.bounce",
    "email.complaint",
    "email.received",
    "contact.subscribed",
    "contact.unsubscribed",
];
