//! `/campaigns` bodies and query strings into typed commands.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use posthorn_core::app::campaigns::{CampaignPatch, CreateCampaign, ListCampaigns, SendCampaign};
use posthorn_core::app::send::{MAX_NAME_CHARS, MAX_SUBJECT_CHARS};
use posthorn_core::app::Patch;
use posthorn_core::model::{AudienceType, CampaignStatus, EmailAddress};
use posthorn_core::render::validate as validate_syntax;
use posthorn_core::segment::Condition;
use posthorn_core::validate::Checker;
use posthorn_core::{Error, Result};
use serde_json::Value;

use super::page::page_request;
use super::segments::condition_at;

/// Fields read from a create or update body.
#[derive(Default)]
struct Fields {
    name: Option<String>,
    description: Option<Option<String>>,
    subject: Option<String>,
    body: Option<String>,
    from: Option<EmailAddress>,
    from_name: Option<Option<String>>,
    reply_to: Option<Option<EmailAddress>>,
    audience_type: Option<AudienceType>,
    segment_id: Option<Option<String>>,
    audience_condition: Option<Option<Condition>>,
}

fn read_fields(body: &Value, creating: bool) -> Result<Fields> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let mut f = Fields {
        name: c.line(obj, "name", "", creating, 255).map(str::to_string),
        description: c.nullable_line(obj, "description", 2000),
        subject: c
            .line(obj, "subject", "", creating, MAX_SUBJECT_CHARS)
            .map(str::to_string),
        body: c.string(obj, "body", "", creating).map(str::to_string),
        from: c.email(obj, "from", "", creating),
        from_name: c.nullable_line(obj, "fromName", MAX_NAME_CHARS),
        ..Fields::default()
    };
    f.reply_to = match obj.get("replyTo") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(_) => c.email(obj, "replyTo", "", false).map(Some),
    };
    f.audience_type = c.string(obj, "audienceType", "", creating).and_then(|raw| {
        let parsed = AudienceType::parse(raw);
        if parsed.is_none() {
            c.fail(
                "audienceType",
                "invalid_enum",
                "audienceType must be ALL, SEGMENT or FILTERED",
            );
        }
        parsed
    });
    f.segment_id = match obj.get("segmentId") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(_) => c
            .string(obj, "segmentId", "", false)
            .map(|s| Some(s.trim().to_string())),
    };
    f.audience_condition = match obj.get("audienceCondition") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(value) => condition_at(&mut c, value, "audienceCondition").map(Some),
    };
    for (key, source) in [("subject", &f.subject), ("body", &f.body)] {
        if let Some(Err(e)) = source.as_deref().map(validate_syntax) {
            c.fail(key, "invalid_template", e.to_string());
        }
    }
    c.finish()?;
    Ok(f)
}

/// `POST /campaigns`.
pub fn create(body: &Value) -> Result<CreateCampaign> {
    let f = read_fields(body, true)?;
    Ok(CreateCampaign {
        name: f.name.unwrap_or_default(),
        description: f.description.flatten(),
        subject: f.subject.unwrap_or_default(),
        body: f.body.unwrap_or_default(),
        from: f
            .from
            .ok_or_else(|| Error::Internal("from checked above".into()))?,
        from_name: f.from_name.flatten(),
        reply_to: f.reply_to.flatten(),
        audience_type: f.audience_type.unwrap_or(AudienceType::All),
        segment_id: f.segment_id.flatten(),
        audience_condition: f.audience_condition.flatten(),
    })
}

/// `PUT|PATCH /campaigns/{id}`.
pub fn patch(body: &Value) -> Result<CampaignPatch> {
    let f = read_fields(body, false)?;
    Ok(CampaignPatch {
        name: f.name,
        description: Patch::from(f.description),
        subject: f.subject,
        body: f.body,
        from: f.from,
        from_name: Patch::from(f.from_name),
        reply_to: Patch::from(f.reply_to),
        audience_type: f.audience_type,
        segment_id: Patch::from(f.segment_id),
        audience_condition: Patch::from(f.audience_condition),
    })
}

/// `GET /campaigns?page&pageSize|limit&status`.
pub fn list(query: &HashMap<String, String>) -> Result<ListCampaigns> {
    let mut c = Checker::new();
    let page = page_request(&mut c, query);
    let status = c.query_enum(
        query,
        "status",
        CampaignStatus::parse,
        "status must be DRAFT, SCHEDULED, SENDING, SENT or CANCELLED",
    );
    c.finish()?;
    Ok(ListCampaigns { page, status })
}

/// `POST /campaigns/{id}/send {scheduledFor?}` (an empty body sends now).
pub fn send(body: &Value) -> Result<SendCampaign> {
    let obj = Checker::body(body)?;
    let scheduled_for = match obj.get("scheduledFor") {
        None | Some(Value::Null) => None,
        Some(Value::String(raw)) => Some(
            DateTime::parse_from_rfc3339(raw.trim())
                .map(|t| t.with_timezone(&Utc))
                .map_err(|_| {
                    Error::field(
                        "scheduledFor",
                        "invalid_date",
                        "scheduledFor must be an ISO 8601 date-time",
                    )
                })?,
        ),
        Some(_) => {
            return Err(Error::field(
                "scheduledFor",
                "invalid_type",
                "scheduledFor must be a date-time string or null",
            ))
        }
    };
    Ok(SendCampaign { scheduled_for })
}
