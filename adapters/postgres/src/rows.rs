//! Column lists and row decoders: the one place that knows how a record maps to a row.

use chrono::{DateTime, Utc};
use posthorn_core::model::{
    Campaign, Contact, Domain, EmailAddress, EmailRecord, Event, KeySet, Segment, Template,
    Workspace,
};
use posthorn_core::ports::{Attachment, Mailbox, StoreError};
use posthorn_core::segment::Condition;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use sqlx::postgres::PgRow;
use sqlx::types::Json;
use sqlx::{Decode, Postgres, Row, Type};

use crate::error::corrupt;

/// Columns of `workspaces`, in the order [`workspace`] reads them.
macro_rules! workspace_cols {
    () => {
        "id, name, disabled, active_contact_limit, rate_limit_per_minute, \
         send_rate_per_second, created_at, updated_at"
    };
}

/// Columns of `key_sets`.
macro_rules! key_set_cols {
    () => {
        "workspace_id, id, name, domains, public_key_hash, secret_key_hash, \
         public_key_preview, secret_key_preview, created_at"
    };
}

/// Columns of `domains`.
macro_rules! domain_cols {
    () => {
        "workspace_id, id, domain, verified, inbound_enabled, created_at, updated_at"
    };
}

/// Columns of `contacts`.
macro_rules! contact_cols {
    () => {
        "workspace_id, id, email, subscribed, data, status, expires_at, created_at, \
         updated_at, version"
    };
}

/// Columns of `templates`.
macro_rules! template_cols {
    () => {
        "workspace_id, id, name, description, subject, body, text, from_address, from_name, \
         reply_to, template_type, created_at, updated_at"
    };
}

/// Columns of `emails`.
macro_rules! email_cols {
    () => {
        "workspace_id, id, contact_id, to_mailbox, from_mailbox, reply_to, subject, html, \
         text, headers, attachments, template_id, campaign_id, source_type, status, \
         message_id, provider_message_id, error, created_at, sent_at, updated_at"
    };
}

/// Columns of `events`.
macro_rules! event_cols {
    () => {
        "workspace_id, id, name, data, contact_id, email_id, created_at"
    };
}

/// Columns of `segments`.
macro_rules! segment_cols {
    () => {
        "workspace_id, id, name, description, segment_type, condition, track_membership, \
         created_at, updated_at"
    };
}

/// Columns of `campaigns`.
macro_rules! campaign_cols {
    () => {
        "workspace_id, id, name, description, subject, body, from_address, from_name, \
         reply_to, audience_type, segment_id, audience_condition, status, scheduled_for, \
         sent_at, total_recipients, audience_until_id, expanded_through_id, expansion_done, \
         created_at, updated_at, version"
    };
}

pub(crate) use {
    campaign_cols, contact_cols, domain_cols, email_cols, event_cols, key_set_cols, segment_cols,
    template_cols, workspace_cols,
};

/// Reads one column, mapping a decode failure to `Unavailable`.
fn get<'r, T>(row: &'r PgRow, column: &str) -> Result<T, StoreError>
where
    T: Decode<'r, Postgres> + Type<Postgres>,
{
    row.try_get(column).map_err(|e| corrupt(column, e))
}

/// The text form of a serde enum (`ACTIVE`, `MARKETING`, ...), as stored.
pub(crate) fn enum_text<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(text)) => text,
        // Unit variants always serialize to strings; anything else is a programming error
        // that a read will report as corrupt.
        other => format!("{other:?}"),
    }
}

/// Parses a stored enum text back into the enum.
fn text_enum<T: DeserializeOwned>(what: &str, text: String) -> Result<T, StoreError> {
    serde_json::from_value(Value::String(text)).map_err(|e| corrupt(what, e))
}

/// A `u64` count or limit as a `bigint` (saturating; real values are far below).
pub(crate) fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// A `bigint` read back as a `u64`.
fn to_u64(what: &str, value: i64) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|e| corrupt(what, e))
}

/// Decodes a `workspaces` row.
pub(crate) fn workspace(row: &PgRow) -> Result<Workspace, StoreError> {
    let limit: Option<i64> = get(row, "active_contact_limit")?;
    let per_minute: i64 = get(row, "rate_limit_per_minute")?;
    Ok(Workspace {
        id: get(row, "id")?,
        name: get(row, "name")?,
        disabled: get(row, "disabled")?,
        active_contact_limit: limit
            .map(|l| to_u64("active_contact_limit", l))
            .transpose()?,
        rate_limit_per_minute: u32::try_from(per_minute)
            .map_err(|e| corrupt("rate_limit_per_minute", e))?,
        send_rate_per_second: get(row, "send_rate_per_second")?,
        created_at: get(row, "created_at")?,
        updated_at: get(row, "updated_at")?,
    })
}

/// Decodes a `key_sets` row.
pub(crate) fn key_set(row: &PgRow) -> Result<KeySet, StoreError> {
    let domains: Json<Vec<String>> = get(row, "domains")?;
    Ok(KeySet {
        id: get(row, "id")?,
        workspace_id: get(row, "workspace_id")?,
        name: get(row, "name")?,
        domains: domains.0,
        public_key_hash: get(row, "public_key_hash")?,
        secret_key_hash: get(row, "secret_key_hash")?,
        public_key_preview: get(row, "public_key_preview")?,
        secret_key_preview: get(row, "secret_key_preview")?,
        created_at: get(row, "created_at")?,
    })
}

/// Decodes a `domains` row.
pub(crate) fn domain(row: &PgRow) -> Result<Domain, StoreError> {
    Ok(Domain {
        id: get(row, "id")?,
        workspace_id: get(row, "workspace_id")?,
        domain: get(row, "domain")?,
        verified: get(row, "verified")?,
        inbound_enabled: get(row, "inbound_enabled")?,
        created_at: get(row, "created_at")?,
        updated_at: get(row, "updated_at")?,
    })
}

/// Decodes a `contacts` row.
pub(crate) fn contact(row: &PgRow) -> Result<Contact, StoreError> {
    let email: String = get(row, "email")?;
    let data: Json<Map<String, Value>> = get(row, "data")?;
    let version: i64 = get(row, "version")?;
    Ok(Contact {
        id: get(row, "id")?,
        workspace_id: get(row, "workspace_id")?,
        email: EmailAddress::parse(&email).map_err(|e| corrupt("email", e))?,
        subscribed: get(row, "subscribed")?,
        data: data.0,
        status: text_enum("status", get(row, "status")?)?,
        expires_at: get::<Option<DateTime<Utc>>>(row, "expires_at")?,
        created_at: get(row, "created_at")?,
        updated_at: get(row, "updated_at")?,
        version: to_u64("version", version)?,
    })
}

/// Decodes a `templates` row.
pub(crate) fn template(row: &PgRow) -> Result<Template, StoreError> {
    Ok(Template {
        id: get(row, "id")?,
        workspace_id: get(row, "workspace_id")?,
        name: get(row, "name")?,
        description: get(row, "description")?,
        subject: get(row, "subject")?,
        body: get(row, "body")?,
        text: get(row, "text")?,
        from: get(row, "from_address")?,
        from_name: get(row, "from_name")?,
        reply_to: get(row, "reply_to")?,
        template_type: text_enum("template_type", get(row, "template_type")?)?,
        created_at: get(row, "created_at")?,
        updated_at: get(row, "updated_at")?,
    })
}

/// Decodes an `emails` row.
pub(crate) fn email(row: &PgRow) -> Result<EmailRecord, StoreError> {
    let to: Json<Mailbox> = get(row, "to_mailbox")?;
    let from: Json<Mailbox> = get(row, "from_mailbox")?;
    let headers: Json<Vec<(String, String)>> = get(row, "headers")?;
    let attachments: Json<Vec<Attachment>> = get(row, "attachments")?;
    Ok(EmailRecord {
        id: get(row, "id")?,
        workspace_id: get(row, "workspace_id")?,
        contact_id: get(row, "contact_id")?,
        to: to.0,
        from: from.0,
        reply_to: get(row, "reply_to")?,
        subject: get(row, "subject")?,
        html: get(row, "html")?,
        text: get(row, "text")?,
        headers: headers.0,
        attachments: attachments.0,
        template_id: get(row, "template_id")?,
        campaign_id: get(row, "campaign_id")?,
        source_type: text_enum("source_type", get(row, "source_type")?)?,
        status: text_enum("status", get(row, "status")?)?,
        message_id: get(row, "message_id")?,
        provider_message_id: get(row, "provider_message_id")?,
        error: get(row, "error")?,
        created_at: get(row, "created_at")?,
        sent_at: get(row, "sent_at")?,
        updated_at: get(row, "updated_at")?,
    })
}

/// Decodes an `events` row.
pub(crate) fn event(row: &PgRow) -> Result<Event, StoreError> {
    let data: Json<Value> = get(row, "data")?;
    Ok(Event {
        id: get(row, "id")?,
        workspace_id: get(row, "workspace_id")?,
        name: get(row, "name")?,
        data: data.0,
        contact_id: get(row, "contact_id")?,
        email_id: get(row, "email_id")?,
        created_at: get(row, "created_at")?,
    })
}

/// A condition as stored: its API JSON, verbatim.
pub(crate) fn condition_text(condition: &Condition) -> String {
    condition.to_json().to_string()
}

/// Reads a stored condition back (through `parse_condition`, like any API input).
fn stored_condition(what: &str, text: Option<String>) -> Result<Option<Condition>, StoreError> {
    text.map(|t| serde_json::from_str(&t).map_err(|e| corrupt(what, e)))
        .transpose()
}

/// Decodes a `segments` row.
pub(crate) fn segment(row: &PgRow) -> Result<Segment, StoreError> {
    Ok(Segment {
        id: get(row, "id")?,
        workspace_id: get(row, "workspace_id")?,
        name: get(row, "name")?,
        description: get(row, "description")?,
        segment_type: text_enum("segment_type", get(row, "segment_type")?)?,
        condition: stored_condition("condition", get(row, "condition")?)?,
        track_membership: get(row, "track_membership")?,
        created_at: get(row, "created_at")?,
        updated_at: get(row, "updated_at")?,
    })
}

/// Decodes a `campaigns` row.
pub(crate) fn campaign(row: &PgRow) -> Result<Campaign, StoreError> {
    let total: i64 = get(row, "total_recipients")?;
    let version: i64 = get(row, "version")?;
    Ok(Campaign {
        id: get(row, "id")?,
        workspace_id: get(row, "workspace_id")?,
        name: get(row, "name")?,
        description: get(row, "description")?,
        subject: get(row, "subject")?,
        body: get(row, "body")?,
        from: get(row, "from_address")?,
        from_name: get(row, "from_name")?,
        reply_to: get(row, "reply_to")?,
        audience_type: text_enum("audience_type", get(row, "audience_type")?)?,
        segment_id: get(row, "segment_id")?,
        audience_condition: stored_condition(
            "audience_condition",
            get(row, "audience_condition")?,
        )?,
        status: text_enum("status", get(row, "status")?)?,
        scheduled_for: get(row, "scheduled_for")?,
        sent_at: get(row, "sent_at")?,
        total_recipients: to_u64("total_recipients", total)?,
        audience_until_id: get(row, "audience_until_id")?,
        expanded_through_id: get(row, "expanded_through_id")?,
        expansion_done: get(row, "expansion_done")?,
        created_at: get(row, "created_at")?,
        updated_at: get(row, "updated_at")?,
        version: to_u64("version", version)?,
    })
}

/// Decodes every row with `decode`.
pub(crate) fn all<T>(
    rows: &[PgRow],
    decode: fn(&PgRow) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    rows.iter().map(decode).collect()
}
