//! Column lists, value encodings and row decoders: the one place that knows how a record
//! maps to a row.
//!
//! Instants are stored as INTEGER microseconds since the Unix epoch (finer digits are cut,
//! as PostgreSQL does); JSON values as TEXT written by serde_json; enums as their API
//! text (`ACTIVE`, `MARKETING`, ...).

use chrono::{DateTime, Utc};
use posthorn_core::model::{
    Campaign, Contact, DkimKeyPair, Domain, EmailAddress, EmailLifecycle, EmailRecord, Event,
    KeySet, Segment, Template, Workspace,
};
use posthorn_core::ports::{Attachment, Mailbox, StoreError};
use posthorn_core::segment::Condition;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use sqlx::sqlite::SqliteRow;
use sqlx::{Decode, Row, Sqlite, Type};

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

/// Columns of `contacts` (qualified: queries alias the table `c`).
macro_rules! contact_cols {
    () => {
        "c.workspace_id, c.id, c.email, c.subscribed, c.data, c.status, c.expires_at, \
         c.created_at, c.updated_at, c.version"
    };
}

/// Columns of `templates`.
macro_rules! template_cols {
    () => {
        "workspace_id, id, name, description, subject, body, text, from_address, from_name, \
         reply_to, template_type, created_at, updated_at"
    };
}

/// Columns of `emails` (the envelope and the state; the content is in `email_contents`).
macro_rules! email_table_cols {
    () => {
        "workspace_id, id, contact_id, to_mailbox, from_mailbox, reply_to, subject, headers, \
         template_id, campaign_id, source_type, status, message_id, provider_message_id, \
         error, created_at, sent_at, updated_at, delivered_at, opened_at, last_opened_at, \
         opens, clicked_at, last_clicked_at, clicks, bounced_at, bounce_type, bounce_detail, \
         complained_at"
    };
}

/// Every column of an email, read from `emails` joined with `email_contents`
/// ([`emails_with_content`]).
macro_rules! email_cols {
    () => {
        concat!(
            crate::rows::email_table_cols!(),
            ", html, text, attachments"
        )
    };
}

/// [`email_cols`] with the content read as empty (`html` '', `text` NULL, no attachments),
/// from `emails` alone, for `Store::email_without_content`: [`email`] decodes both.
macro_rules! email_cols_without_content {
    () => {
        concat!(
            crate::rows::email_table_cols!(),
            ", '' AS html, NULL AS text, '[]' AS attachments"
        )
    };
}

/// The tables [`email_cols`] reads from.
macro_rules! emails_with_content {
    () => {
        "emails JOIN email_contents USING (workspace_id, id)"
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
    campaign_cols, contact_cols, domain_cols, email_cols, email_cols_without_content,
    email_table_cols, emails_with_content, event_cols, key_set_cols, segment_cols, template_cols,
    workspace_cols,
};

/// Reads one column, mapping a decode failure to `Unavailable`.
fn get<'r, T>(row: &'r SqliteRow, column: &str) -> Result<T, StoreError>
where
    T: Decode<'r, Sqlite> + Type<Sqlite>,
{
    row.try_get(column).map_err(|e| corrupt(column, e))
}

/// An identifier column, wrapped in its id type.
fn id_of<T: From<String>>(row: &SqliteRow, column: &str) -> Result<T, StoreError> {
    get::<String>(row, column).map(T::from)
}

/// A nullable identifier column, wrapped in its id type.
fn opt_id_of<T: From<String>>(row: &SqliteRow, column: &str) -> Result<Option<T>, StoreError> {
    get::<Option<String>>(row, column).map(|id| id.map(T::from))
}

/// An instant as stored: microseconds since the Unix epoch (rounded down).
pub(crate) fn micros(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros()
}

/// An optional instant as stored.
pub(crate) fn opt_micros(at: Option<DateTime<Utc>>) -> Option<i64> {
    at.map(micros)
}

/// A stored instant read back.
pub(crate) fn instant(what: &str, value: i64) -> Result<DateTime<Utc>, StoreError> {
    DateTime::from_timestamp_micros(value)
        .ok_or_else(|| corrupt(what, format!("{value} is out of range")))
}

/// Reads an instant column.
fn time(row: &SqliteRow, column: &str) -> Result<DateTime<Utc>, StoreError> {
    instant(column, get(row, column)?)
}

/// Reads an optional instant column.
fn opt_time(row: &SqliteRow, column: &str) -> Result<Option<DateTime<Utc>>, StoreError> {
    get::<Option<i64>>(row, column)?
        .map(|v| instant(column, v))
        .transpose()
}

/// A value as stored JSON text. The values stored this way (maps with string keys,
/// vectors, mailboxes) always serialize; were one not to, `null` is stored and its read
/// reports the row as corrupt rather than a commit failing here.
pub(crate) fn json_text<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| String::from("null"))
}

/// Reads a JSON text column.
fn json<T: DeserializeOwned>(row: &SqliteRow, column: &str) -> Result<T, StoreError> {
    let text: String = get(row, column)?;
    serde_json::from_str(&text).map_err(|e| corrupt(column, e))
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
pub(crate) fn text_enum<T: DeserializeOwned>(what: &str, text: String) -> Result<T, StoreError> {
    serde_json::from_value(Value::String(text)).map_err(|e| corrupt(what, e))
}

/// A `u64` count or limit as an INTEGER (saturating; real values are far below).
pub(crate) fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// An INTEGER read back as a `u64`.
pub(crate) fn to_u64(what: &str, value: i64) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|e| corrupt(what, e))
}

/// A `count(*)` as a `u64`.
pub(crate) fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// A page size or offset as a SQL `LIMIT`/`OFFSET` (saturating).
pub(crate) fn sql_limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Decodes a `workspaces` row.
pub(crate) fn workspace(row: &SqliteRow) -> Result<Workspace, StoreError> {
    let limit: Option<i64> = get(row, "active_contact_limit")?;
    let per_minute: i64 = get(row, "rate_limit_per_minute")?;
    Ok(Workspace {
        id: id_of(row, "id")?,
        name: get(row, "name")?,
        disabled: get(row, "disabled")?,
        active_contact_limit: limit
            .map(|l| to_u64("active_contact_limit", l))
            .transpose()?,
        rate_limit_per_minute: u32::try_from(per_minute)
            .map_err(|e| corrupt("rate_limit_per_minute", e))?,
        send_rate_per_second: get(row, "send_rate_per_second")?,
        track_opens: get(row, "track_opens")?,
        track_clicks: get(row, "track_clicks")?,
        created_at: time(row, "created_at")?,
        updated_at: time(row, "updated_at")?,
    })
}

/// Decodes a `key_sets` row.
pub(crate) fn key_set(row: &SqliteRow) -> Result<KeySet, StoreError> {
    Ok(KeySet {
        id: id_of(row, "id")?,
        workspace_id: id_of(row, "workspace_id")?,
        name: get(row, "name")?,
        domains: json(row, "domains")?,
        public_key_hash: get(row, "public_key_hash")?,
        secret_key_hash: get(row, "secret_key_hash")?,
        public_key_preview: get(row, "public_key_preview")?,
        secret_key_preview: get(row, "secret_key_preview")?,
        created_at: time(row, "created_at")?,
    })
}

/// Decodes a `domains` row.
pub(crate) fn domain(row: &SqliteRow) -> Result<Domain, StoreError> {
    Ok(Domain {
        id: id_of(row, "id")?,
        workspace_id: id_of(row, "workspace_id")?,
        domain: get(row, "domain")?,
        verified: get(row, "verified")?,
        inbound_enabled: get(row, "inbound_enabled")?,
        created_at: time(row, "created_at")?,
        updated_at: time(row, "updated_at")?,
        verification_token: get(row, "verification_token")?,
        dkim_selector: get(row, "dkim_selector")?,
        dkim: dkim_key(row)?,
        verified_by_operator: get(row, "verified_by_operator")?,
        checks: json(row, "checks")?,
    })
}

/// The DKIM key pair of a `domains` row, when it has one.
fn dkim_key(row: &SqliteRow) -> Result<Option<DkimKeyPair>, StoreError> {
    let private: Option<String> = get(row, "dkim_private_key")?;
    let public: Option<String> = get(row, "dkim_public_key")?;
    match (private, public) {
        (Some(private), Some(public)) => DkimKeyPair::from_stored(&private, public)
            .map(Some)
            .ok_or_else(|| StoreError::Corrupt("domains.dkim_private_key is not base64".into())),
        _ => Ok(None),
    }
}

/// The column reads a contact row needs, from sqlx's rows and from rusqlite's (the point
/// reads of [`crate::point`]), so that one decoder serves both.
pub(crate) trait ContactColumns {
    /// A TEXT column.
    fn text(&self, column: &str) -> Result<String, StoreError>;
    /// An INTEGER column.
    fn int(&self, column: &str) -> Result<i64, StoreError>;
    /// A nullable INTEGER column.
    fn opt_int(&self, column: &str) -> Result<Option<i64>, StoreError>;
}

impl ContactColumns for SqliteRow {
    fn text(&self, column: &str) -> Result<String, StoreError> {
        get(self, column)
    }

    fn int(&self, column: &str) -> Result<i64, StoreError> {
        get(self, column)
    }

    fn opt_int(&self, column: &str) -> Result<Option<i64>, StoreError> {
        get(self, column)
    }
}

impl ContactColumns for rusqlite::Row<'_> {
    fn text(&self, column: &str) -> Result<String, StoreError> {
        self.get(column).map_err(|e| corrupt(column, e))
    }

    fn int(&self, column: &str) -> Result<i64, StoreError> {
        self.get(column).map_err(|e| corrupt(column, e))
    }

    fn opt_int(&self, column: &str) -> Result<Option<i64>, StoreError> {
        self.get(column).map_err(|e| corrupt(column, e))
    }
}

/// Decodes a `contacts` row.
pub(crate) fn contact(row: &impl ContactColumns) -> Result<Contact, StoreError> {
    let email = row.text("email")?;
    let data: Map<String, Value> =
        serde_json::from_str(&row.text("data")?).map_err(|e| corrupt("data", e))?;
    let at = |column: &str| instant(column, row.int(column)?);
    Ok(Contact {
        id: row.text("id")?.into(),
        workspace_id: row.text("workspace_id")?.into(),
        email: EmailAddress::from_stored(&email).map_err(|e| corrupt("email", e))?,
        subscribed: row.int("subscribed")? != 0,
        data,
        status: text_enum("status", row.text("status")?)?,
        expires_at: row
            .opt_int("expires_at")?
            .map(|v| instant("expires_at", v))
            .transpose()?,
        created_at: at("created_at")?,
        updated_at: at("updated_at")?,
        version: to_u64("version", row.int("version")?)?,
    })
}

/// Decodes a `templates` row.
pub(crate) fn template(row: &SqliteRow) -> Result<Template, StoreError> {
    Ok(Template {
        id: id_of(row, "id")?,
        workspace_id: id_of(row, "workspace_id")?,
        name: get(row, "name")?,
        description: get(row, "description")?,
        subject: get(row, "subject")?,
        body: get(row, "body")?,
        text: get(row, "text")?,
        from: get(row, "from_address")?,
        from_name: get(row, "from_name")?,
        reply_to: get(row, "reply_to")?,
        template_type: text_enum("template_type", get(row, "template_type")?)?,
        created_at: time(row, "created_at")?,
        updated_at: time(row, "updated_at")?,
    })
}

/// Decodes an `emails` row.
pub(crate) fn email(row: &SqliteRow) -> Result<EmailRecord, StoreError> {
    let to: Mailbox = json(row, "to_mailbox")?;
    let from: Mailbox = json(row, "from_mailbox")?;
    let headers: Vec<(String, String)> = json(row, "headers")?;
    let attachments: Vec<Attachment> = json(row, "attachments")?;
    Ok(EmailRecord {
        id: id_of(row, "id")?,
        workspace_id: id_of(row, "workspace_id")?,
        contact_id: id_of(row, "contact_id")?,
        to,
        from,
        reply_to: get(row, "reply_to")?,
        subject: get(row, "subject")?,
        html: get(row, "html")?,
        text: get(row, "text")?,
        headers,
        attachments,
        template_id: opt_id_of(row, "template_id")?,
        campaign_id: opt_id_of(row, "campaign_id")?,
        source_type: text_enum("source_type", get(row, "source_type")?)?,
        status: text_enum("status", get(row, "status")?)?,
        message_id: get(row, "message_id")?,
        provider_message_id: get(row, "provider_message_id")?,
        error: get(row, "error")?,
        created_at: time(row, "created_at")?,
        sent_at: opt_time(row, "sent_at")?,
        updated_at: time(row, "updated_at")?,
        lifecycle: lifecycle(row)?,
    })
}

/// Decodes the lifecycle columns of an `emails` row.
fn lifecycle(row: &SqliteRow) -> Result<EmailLifecycle, StoreError> {
    let count = |column: &str| -> Result<u32, StoreError> {
        let n: i64 = get(row, column)?;
        u32::try_from(n).map_err(|_| StoreError::Corrupt(format!("emails.{column} is {n}")))
    };
    let bounce_type: Option<String> = get(row, "bounce_type")?;
    Ok(EmailLifecycle {
        delivered_at: opt_time(row, "delivered_at")?,
        opened_at: opt_time(row, "opened_at")?,
        last_opened_at: opt_time(row, "last_opened_at")?,
        opens: count("opens")?,
        clicked_at: opt_time(row, "clicked_at")?,
        last_clicked_at: opt_time(row, "last_clicked_at")?,
        clicks: count("clicks")?,
        bounced_at: opt_time(row, "bounced_at")?,
        bounce_type: bounce_type
            .map(|t| text_enum("bounce_type", t))
            .transpose()?,
        bounce_detail: get(row, "bounce_detail")?,
        complained_at: opt_time(row, "complained_at")?,
    })
}

/// Decodes an `events` row.
pub(crate) fn event(row: &SqliteRow) -> Result<Event, StoreError> {
    Ok(Event {
        id: id_of(row, "id")?,
        workspace_id: id_of(row, "workspace_id")?,
        name: get(row, "name")?,
        data: json(row, "data")?,
        contact_id: opt_id_of(row, "contact_id")?,
        email_id: opt_id_of(row, "email_id")?,
        created_at: time(row, "created_at")?,
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
pub(crate) fn segment(row: &SqliteRow) -> Result<Segment, StoreError> {
    let tracking_since = opt_time(row, "tracking_since")?;
    let synced_for = opt_time(row, "members_synced_for")?;
    Ok(Segment {
        id: id_of(row, "id")?,
        workspace_id: id_of(row, "workspace_id")?,
        name: get(row, "name")?,
        description: get(row, "description")?,
        segment_type: text_enum("segment_type", get(row, "segment_type")?)?,
        condition: stored_condition("condition", get(row, "condition")?)?,
        track_membership: get(row, "track_membership")?,
        created_at: time(row, "created_at")?,
        updated_at: time(row, "updated_at")?,
        tracking_since,
        members_synced: tracking_since.is_some() && synced_for == tracking_since,
    })
}

/// Decodes a `campaigns` row.
pub(crate) fn campaign(row: &SqliteRow) -> Result<Campaign, StoreError> {
    let total: i64 = get(row, "total_recipients")?;
    let version: i64 = get(row, "version")?;
    Ok(Campaign {
        id: id_of(row, "id")?,
        workspace_id: id_of(row, "workspace_id")?,
        name: get(row, "name")?,
        description: get(row, "description")?,
        subject: get(row, "subject")?,
        body: get(row, "body")?,
        from: get(row, "from_address")?,
        from_name: get(row, "from_name")?,
        reply_to: get(row, "reply_to")?,
        audience_type: text_enum("audience_type", get(row, "audience_type")?)?,
        segment_id: opt_id_of(row, "segment_id")?,
        audience_condition: stored_condition(
            "audience_condition",
            get(row, "audience_condition")?,
        )?,
        status: text_enum("status", get(row, "status")?)?,
        scheduled_for: opt_time(row, "scheduled_for")?,
        sent_at: opt_time(row, "sent_at")?,
        total_recipients: to_u64("total_recipients", total)?,
        audience_until_id: opt_id_of(row, "audience_until_id")?,
        expanded_through_id: opt_id_of(row, "expanded_through_id")?,
        expansion_done: get(row, "expansion_done")?,
        created_at: time(row, "created_at")?,
        updated_at: time(row, "updated_at")?,
        version: to_u64("version", version)?,
    })
}

/// Decodes every row with `decode`.
pub(crate) fn all<T>(
    rows: &[SqliteRow],
    decode: fn(&SqliteRow) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    rows.iter().map(decode).collect()
}
