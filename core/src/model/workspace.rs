//! A workspace: the tenant that owns every other record.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::WorkspaceId;
use crate::ports::Clock;

/// A tenant of Posthorn (a "project" in the interface).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Workspace {
    /// Workspace id (`projectId` everywhere else).
    pub id: WorkspaceId,
    /// Display name.
    pub name: String,
    /// A disabled workspace gets 403 `PROJECT_DISABLED` on every request.
    pub disabled: bool,
    /// Maximum number of ACTIVE contacts; `None` means no limit.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub active_contact_limit: Option<u64>,
    /// API requests per minute for the whole workspace.
    pub rate_limit_per_minute: u32,
    /// Emails handed to the transport per second.
    pub send_rate_per_second: f64,
    /// Creation time.
    #[serde(with = "super::timestamp")]
    pub created_at: DateTime<Utc>,
    /// Last change.
    #[serde(with = "super::timestamp")]
    pub updated_at: DateTime<Utc>,
}

impl Workspace {
    /// Default API budget (requests per minute).
    pub const DEFAULT_RATE_LIMIT_PER_MINUTE: u32 = 1000;
    /// Default sending rate (emails per second).
    pub const DEFAULT_SEND_RATE_PER_SECOND: f64 = 14.0;

    /// A new, enabled workspace with the default limits, its id taken from `clock`.
    pub fn new(clock: &dyn Clock, name: String, now: DateTime<Utc>) -> Self {
        Self {
            id: WorkspaceId::generate(clock),
            name,
            disabled: false,
            active_contact_limit: None,
            rate_limit_per_minute: Self::DEFAULT_RATE_LIMIT_PER_MINUTE,
            send_rate_per_second: Self::DEFAULT_SEND_RATE_PER_SECOND,
            created_at: now,
            updated_at: now,
        }
    }
}
