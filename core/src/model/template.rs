//! Reusable email templates.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{TemplateId, WorkspaceId};

/// What a template is for; MARKETING mail is never sent to unsubscribed contacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TemplateType {
    /// Account mail, receipts: sent regardless of subscription.
    Transactional,
    /// Newsletters and promotions: subscribed contacts only.
    Marketing,
}

impl TemplateType {
    /// Parses `TRANSACTIONAL` or `MARKETING` (exact case).
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "TRANSACTIONAL" => Some(Self::Transactional),
            "MARKETING" => Some(Self::Marketing),
            _ => None,
        }
    }
}

/// A template with `{{variable}}` placeholders in subject and body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Template {
    /// Template id.
    pub id: TemplateId,
    /// Owning workspace.
    #[serde(rename = "projectId")]
    pub workspace_id: WorkspaceId,
    /// Name.
    pub name: String,
    /// Optional description.
    pub description: Option<String>,
    /// Subject with placeholders.
    pub subject: String,
    /// HTML body with placeholders.
    pub body: String,
    /// Optional plain-text version.
    pub text: Option<String>,
    /// Default sender address.
    pub from: Option<String>,
    /// Default sender name.
    pub from_name: Option<String>,
    /// Default reply-to address.
    pub reply_to: Option<String>,
    /// TRANSACTIONAL or MARKETING.
    #[serde(rename = "type")]
    pub template_type: TemplateType,
    /// Creation time.
    #[serde(with = "super::timestamp")]
    pub created_at: DateTime<Utc>,
    /// Last change.
    #[serde(with = "super::timestamp")]
    pub updated_at: DateTime<Utc>,
}
