//! Column lists and row decoders: the one place that knows how a record maps to a row.

use chrono::{DateTime, Utc};
use posthorn_core::model::{
    Campaign, Contact, DkimKeyPair, Domain, DomainChecks, EmailAddress, EmailLifecycle,
    EmailRecord, Event, KeySet, Segment, Template, Workspace,
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
         send_rate_per_second, created_at, updated_at, track_opens, track_clicks"
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
        "workspace_id, id, domain, verified, inbound_enabled, created_at, updated_at, \
         verification_token, dkim_selector, dkim_private_key, dkim_public_key, \
         verified_by_operator, checks"
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

/// Columns of `emails`: the key, what the email was accepted with, then its state
/// (`email_state!`).
macro_rules! email_cols {
    () => {
        concat!(
            "workspace_id, id, contact_id, to_mailbox, from_mailbox, reply_to, subject, html, \
             text, headers, attachments, template_id, campaign_id, source_type, message_id, \
             created_at, ",
            crate::rows::email_state!()
        )
    };
}

/// [`email_cols`] with the content read as empty (`html` '', `text` NULL, no attachments),
/// for `Store::email_without_content`: [`email`] decodes both.
macro_rules! email_cols_without_content {
    () => {
        concat!(
            "workspace_id, id, contact_id, to_mailbox, from_mailbox, reply_to, subject, \
             ''::text AS html, NULL::text AS text, headers, '[]'::jsonb AS attachments, \
             template_id, campaign_id, source_type, message_id, created_at, ",
            crate::rows::email_state!()
        )
    };
}

/// The columns of an email's state, the part `Write::UpdateEmail` writes (the rest is what
/// it was accepted with, never rewritten).
macro_rules! email_state {
    () => {
        "status, provider_message_id, error, sent_at, updated_at, delivered_at, opened_at, \
         last_opened_at, opens, clicked_at, last_clicked_at, clicks, bounced_at, bounce_type, \
         bounce_detail, complained_at"
    };
}

/// The assignments of an `UPDATE emails AS e ... FROM (...) AS v (workspace_id, id,
/// email_state)`: the state from `v`.
macro_rules! email_state_sets {
    () => {
        "status = v.status, provider_message_id = v.provider_message_id, error = v.error, \
         sent_at = v.sent_at, updated_at = v.updated_at, delivered_at = v.delivered_at, \
         opened_at = v.opened_at, last_opened_at = v.last_opened_at, opens = v.opens, \
         clicked_at = v.clicked_at, last_clicked_at = v.last_clicked_at, clicks = v.clicks, \
         bounced_at = v.bounced_at, bounce_type = v.bounce_type, \
         bounce_detail = v.bounce_detail, complained_at = v.complained_at"
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
         created_at, updated_at, tracking_since, members_synced_for"
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
    campaign_cols, contact_cols, domain_cols, email_cols, email_cols_without_content, email_state,
    email_state_sets, event_cols, key_set_cols, segment_cols, template_cols, workspace_cols,
};

/// Reads one column of a row of `table`, mapping a decode failure to `Corrupt` naming the
/// table, the column and the row's id.
fn get<'r, T>(row: &'r PgRow, table: &str, column: &str) -> Result<T, StoreError>
where
    T: Decode<'r, Postgres> + Type<Postgres>,
{
    row.try_get(column).map_err(|e| {
        let id: String = row.try_get("id").unwrap_or_else(|_| "?".into());
        corrupt(&format!("{table}.{column} of {id}"), e)
    })
}

/// An identifier column, wrapped in its id type.
fn id_of<T: From<String>>(row: &PgRow, table: &str, column: &str) -> Result<T, StoreError> {
    get::<String>(row, table, column).map(T::from)
}

/// A nullable identifier column, wrapped in its id type.
fn opt_id_of<T: From<String>>(
    row: &PgRow,
    table: &str,
    column: &str,
) -> Result<Option<T>, StoreError> {
    get::<Option<String>>(row, table, column).map(|id| id.map(T::from))
}

/// An open or click counter as stored (an `integer` column; saturates, never wraps).
pub(crate) fn count_i32(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
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
    let limit: Option<i64> = get(row, "workspaces", "active_contact_limit")?;
    let per_minute: i64 = get(row, "workspaces", "rate_limit_per_minute")?;
    Ok(Workspace {
        id: id_of(row, "workspaces", "id")?,
        name: get(row, "workspaces", "name")?,
        disabled: get(row, "workspaces", "disabled")?,
        active_contact_limit: limit
            .map(|l| to_u64("active_contact_limit", l))
            .transpose()?,
        rate_limit_per_minute: u32::try_from(per_minute)
            .map_err(|e| corrupt("rate_limit_per_minute", e))?,
        send_rate_per_second: get(row, "workspaces", "send_rate_per_second")?,
        track_opens: get(row, "workspaces", "track_opens")?,
        track_clicks: get(row, "workspaces", "track_clicks")?,
        created_at: get(row, "workspaces", "created_at")?,
        updated_at: get(row, "workspaces", "updated_at")?,
    })
}

/// Decodes a `key_sets` row.
pub(crate) fn key_set(row: &PgRow) -> Result<KeySet, StoreError> {
    let domains: Json<Vec<String>> = get(row, "key_sets", "domains")?;
    Ok(KeySet {
        id: id_of(row, "key_sets", "id")?,
        workspace_id: id_of(row, "key_sets", "workspace_id")?,
        name: get(row, "key_sets", "name")?,
        domains: domains.0,
        public_key_hash: get(row, "key_sets", "public_key_hash")?,
        secret_key_hash: get(row, "key_sets", "secret_key_hash")?,
        public_key_preview: get(row, "key_sets", "public_key_preview")?,
        secret_key_preview: get(row, "key_sets", "secret_key_preview")?,
        created_at: get(row, "key_sets", "created_at")?,
    })
}

/// Decodes a `domains` row.
pub(crate) fn domain(row: &PgRow) -> Result<Domain, StoreError> {
    Ok(Domain {
        id: id_of(row, "domains", "id")?,
        workspace_id: id_of(row, "domains", "workspace_id")?,
        domain: get(row, "domains", "domain")?,
        verified: get(row, "domains", "verified")?,
        inbound_enabled: get(row, "domains", "inbound_enabled")?,
        created_at: get(row, "domains", "created_at")?,
        updated_at: get(row, "domains", "updated_at")?,
        verification_token: get(row, "domains", "verification_token")?,
        dkim_selector: get(row, "domains", "dkim_selector")?,
        dkim: dkim_key(row)?,
        verified_by_operator: get(row, "domains", "verified_by_operator")?,
        checks: get::<Json<DomainChecks>>(row, "domains", "checks")?.0,
    })
}

/// The DKIM key pair of a `domains` row, when it has one.
fn dkim_key(row: &PgRow) -> Result<Option<DkimKeyPair>, StoreError> {
    let private: Option<String> = get(row, "domains", "dkim_private_key")?;
    let public: Option<String> = get(row, "domains", "dkim_public_key")?;
    match (private, public) {
        (Some(private), Some(public)) => DkimKeyPair::from_stored(&private, public)
            .map(Some)
            .ok_or_else(|| StoreError::Corrupt("domains.dkim_private_key is not base64".into())),
        _ => Ok(None),
    }
}

/// Decodes a `contacts` row.
pub(crate) fn contact(row: &PgRow) -> Result<Contact, StoreError> {
    let email: String = get(row, "contacts", "email")?;
    let data: Json<Map<String, Value>> = get(row, "contacts", "data")?;
    let version: i64 = get(row, "contacts", "version")?;
    Ok(Contact {
        id: id_of(row, "contacts", "id")?,
        workspace_id: id_of(row, "contacts", "workspace_id")?,
        email: EmailAddress::from_stored(&email).map_err(|e| corrupt("email", e))?,
        subscribed: get(row, "contacts", "subscribed")?,
        data: data.0,
        status: text_enum("status", get(row, "contacts", "status")?)?,
        expires_at: get::<Option<DateTime<Utc>>>(row, "contacts", "expires_at")?,
        created_at: get(row, "contacts", "created_at")?,
        updated_at: get(row, "contacts", "updated_at")?,
        version: to_u64("version", version)?,
    })
}

/// Decodes a `templates` row.
pub(crate) fn template(row: &PgRow) -> Result<Template, StoreError> {
    Ok(Template {
        id: id_of(row, "templates", "id")?,
        workspace_id: id_of(row, "templates", "workspace_id")?,
        name: get(row, "templates", "name")?,
        description: get(row, "templates", "description")?,
        subject: get(row, "templates", "subject")?,
        body: get(row, "templates", "body")?,
        text: get(row, "templates", "text")?,
        from: get(row, "templates", "from_address")?,
        from_name: get(row, "templates", "from_name")?,
        reply_to: get(row, "templates", "reply_to")?,
        template_type: text_enum("template_type", get(row, "templates", "template_type")?)?,
        created_at: get(row, "templates", "created_at")?,
        updated_at: get(row, "templates", "updated_at")?,
    })
}

/// Decodes an `emails` row.
pub(crate) fn email(row: &PgRow) -> Result<EmailRecord, StoreError> {
    let to: Json<Mailbox> = get(row, "emails", "to_mailbox")?;
    let from: Json<Mailbox> = get(row, "emails", "from_mailbox")?;
    let headers: Json<Vec<(String, String)>> = get(row, "emails", "headers")?;
    let attachments: Json<Vec<Attachment>> = get(row, "emails", "attachments")?;
    Ok(EmailRecord {
        id: id_of(row, "emails", "id")?,
        workspace_id: id_of(row, "emails", "workspace_id")?,
        contact_id: id_of(row, "emails", "contact_id")?,
        to: to.0,
        from: from.0,
        reply_to: get(row, "emails", "reply_to")?,
        subject: get(row, "emails", "subject")?,
        html: get(row, "emails", "html")?,
        text: get(row, "emails", "text")?,
        headers: headers.0,
        attachments: attachments.0,
        template_id: opt_id_of(row, "emails", "template_id")?,
        campaign_id: opt_id_of(row, "emails", "campaign_id")?,
        source_type: text_enum("source_type", get(row, "emails", "source_type")?)?,
        status: text_enum("status", get(row, "emails", "status")?)?,
        message_id: get(row, "emails", "message_id")?,
        provider_message_id: get(row, "emails", "provider_message_id")?,
        error: get(row, "emails", "error")?,
        created_at: get(row, "emails", "created_at")?,
        sent_at: get(row, "emails", "sent_at")?,
        updated_at: get(row, "emails", "updated_at")?,
        lifecycle: lifecycle(row)?,
    })
}

/// Decodes the lifecycle columns of an `emails` row.
fn lifecycle(row: &PgRow) -> Result<EmailLifecycle, StoreError> {
    let count = |column: &str| -> Result<u32, StoreError> {
        let n: i32 = get(row, "emails", column)?;
        u32::try_from(n).map_err(|_| StoreError::Corrupt(format!("emails.{column} is {n}")))
    };
    let bounce_type: Option<String> = get(row, "emails", "bounce_type")?;
    Ok(EmailLifecycle {
        delivered_at: get(row, "emails", "delivered_at")?,
        opened_at: get(row, "emails", "opened_at")?,
        last_opened_at: get(row, "emails", "last_opened_at")?,
        opens: count("opens")?,
        clicked_at: get(row, "emails", "clicked_at")?,
        last_clicked_at: get(row, "emails", "last_clicked_at")?,
        clicks: count("clicks")?,
        bounced_at: get(row, "emails", "bounced_at")?,
        bounce_type: bounce_type
            .map(|t| text_enum("bounce_type", t))
            .transpose()?,
        bounce_detail: get(row, "emails", "bounce_detail")?,
        complained_at: get(row, "emails", "complained_at")?,
    })
}

/// Decodes an `events` row.
pub(crate) fn event(row: &PgRow) -> Result<Event, StoreError> {
    let data: Json<Value> = get(row, "events", "data")?;
    Ok(Event {
        id: id_of(row, "events", "id")?,
        workspace_id: id_of(row, "events", "workspace_id")?,
        name: get(row, "events", "name")?,
        data: data.0,
        contact_id: opt_id_of(row, "events", "contact_id")?,
        email_id: opt_id_of(row, "events", "email_id")?,
        created_at: get(row, "events", "created_at")?,
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
    let tracking_since: Option<DateTime<Utc>> = get(row, "segments", "tracking_since")?;
    let synced_for: Option<DateTime<Utc>> = get(row, "segments", "members_synced_for")?;
    Ok(Segment {
        id: id_of(row, "segments", "id")?,
        workspace_id: id_of(row, "segments", "workspace_id")?,
        name: get(row, "segments", "name")?,
        description: get(row, "segments", "description")?,
        segment_type: text_enum("segment_type", get(row, "segments", "segment_type")?)?,
        condition: stored_condition("condition", get(row, "segments", "condition")?)?,
        track_membership: get(row, "segments", "track_membership")?,
        created_at: get(row, "segments", "created_at")?,
        updated_at: get(row, "segments", "updated_at")?,
        tracking_since,
        members_synced: tracking_since.is_some() && synced_for == tracking_since,
    })
}

/// Decodes a `campaigns` row.
pub(crate) fn campaign(row: &PgRow) -> Result<Campaign, StoreError> {
    let total: i64 = get(row, "campaigns", "total_recipients")?;
    let version: i64 = get(row, "campaigns", "version")?;
    Ok(Campaign {
        id: id_of(row, "campaigns", "id")?,
        workspace_id: id_of(row, "campaigns", "workspace_id")?,
        name: get(row, "campaigns", "name")?,
        description: get(row, "campaigns", "description")?,
        subject: get(row, "campaigns", "subject")?,
        body: get(row, "campaigns", "body")?,
        from: get(row, "campaigns", "from_address")?,
        from_name: get(row, "campaigns", "from_name")?,
        reply_to: get(row, "campaigns", "reply_to")?,
        audience_type: text_enum("audience_type", get(row, "campaigns", "audience_type")?)?,
        segment_id: opt_id_of(row, "campaigns", "segment_id")?,
        audience_condition: stored_condition(
            "audience_condition",
            get(row, "campaigns", "audience_condition")?,
        )?,
        status: text_enum("status", get(row, "campaigns", "status")?)?,
        scheduled_for: get(row, "campaigns", "scheduled_for")?,
        sent_at: get(row, "campaigns", "sent_at")?,
        total_recipients: to_u64("total_recipients", total)?,
        audience_until_id: opt_id_of(row, "campaigns", "audience_until_id")?,
        expanded_through_id: opt_id_of(row, "campaigns", "expanded_through_id")?,
        expansion_done: get(row, "campaigns", "expansion_done")?,
        created_at: get(row, "campaigns", "created_at")?,
        updated_at: get(row, "campaigns", "updated_at")?,
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
