//! Segments: DYNAMIC (defined by a condition) or STATIC (explicit members).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{SegmentId, WorkspaceId};
use crate::segment::Condition;

/// How a segment's members are decided. A segment never changes type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SegmentType {
    /// Members are the contacts matching the condition, whenever asked.
    Dynamic,
    /// Members are added and removed explicitly.
    Static,
}

impl SegmentType {
    /// Parses `DYNAMIC` or `STATIC`.
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "DYNAMIC" => Some(Self::Dynamic),
            "STATIC" => Some(Self::Static),
            _ => None,
        }
    }
}

/// A named set of contacts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SegmentRecord))]
#[serde(rename_all = "camelCase")]
pub struct Segment {
    /// Segment id.
    pub id: SegmentId,
    /// Owning workspace.
    #[serde(rename = "projectId")]
    pub workspace_id: WorkspaceId,
    /// Name; its slug names the entry and exit events.
    pub name: String,
    /// Optional description.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub description: Option<String>,
    /// DYNAMIC or STATIC.
    #[serde(rename = "type")]
    pub segment_type: SegmentType,
    /// The condition (always present for DYNAMIC; optional for STATIC).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub condition: Option<Condition>,
    /// Whether entries and exits are tracked and emitted as events (DYNAMIC only).
    pub track_membership: bool,
    /// Creation time.
    #[serde(with = "super::timestamp")]
    pub created_at: DateTime<Utc>,
    /// Last change.
    #[serde(with = "super::timestamp")]
    pub updated_at: DateTime<Utc>,
    /// When membership tracking was last switched on (`None` while untracked). A store
    /// keeps the stored value when a `PutSegment` leaves `track_membership` as it was, so a
    /// write that read the segment earlier does not move it.
    #[serde(skip)]
    pub tracking_since: Option<DateTime<Utc>>,
    /// Whether the quiet first snapshot of stored members since `tracking_since` is complete
    /// (`Write::SegmentSynced`); until it is, entries and exits are stored without being
    /// announced, since nobody can tell a new member from one that was there before
    /// tracking began. Read only: `PutSegment` ignores it.
    #[serde(skip)]
    pub members_synced: bool,
}

impl Segment {
    /// Whether the store keeps this segment's members as rows (STATIC, or tracked DYNAMIC).
    pub fn has_stored_members(&self) -> bool {
        self.segment_type == SegmentType::Static || self.track_membership
    }
}
