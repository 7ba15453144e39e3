//! Multi-row writes for what a commit writes in bulk (new contacts, emails, jobs and
//! events, and the updates of contacts and of emails' states): one statement per table and
//! chunk instead of one per row. A campaign batch of 500 recipients is 1,000 rows; one round
//! trip each made the commit the slowest part of expansion.
//!
//! Each statement takes one array parameter per column (`unnest`), so its text is the same
//! for any number of rows: it stays prepared on its connection. A multi-row `VALUES` list
//! was a new statement for every group size, parsed and planned again each time.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use posthorn_core::model::{Contact, EmailRecord, Event};
use posthorn_core::ports::{NewJob, StoreError, Write};
use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::types::Json;
use sqlx::{PgConnection, Postgres};

use crate::error;
use crate::rows::{enum_text, to_i64};

/// A statement with its parameters bound so far.
type PgQuery<'q> = Query<'q, Postgres, PgArguments>;

/// Rows per statement: bounds the size of one statement's arrays.
const CHUNK: usize = 500;

/// Contacts, counted by workspace, status and subscription in the same statement.
const INSERT_CONTACTS: &str = "\
    WITH added AS ( \
        INSERT INTO contacts (workspace_id, id, email, subscribed, data, status, expires_at, \
            created_at, updated_at, version) \
        SELECT w, i, e, s, d, st, x, c, u, 0 FROM unnest($1::text[], $2::text[], \
            $3::text[], $4::bool[], $5::jsonb[], $6::text[], $7::timestamptz[], \
            $8::timestamptz[], $9::timestamptz[]) AS t(w, i, e, s, d, st, x, c, u) \
        RETURNING workspace_id, status, subscribed) \
    INSERT INTO contact_counts (workspace_id, status, subscribed, n) \
    SELECT workspace_id, status, subscribed, count(*) FROM added \
    GROUP BY workspace_id, status, subscribed";

/// Jobs.
const INSERT_JOBS: &str = "\
    INSERT INTO jobs (id, payload, run_at) \
    SELECT * FROM unnest($1::text[], $2::jsonb[], $3::timestamptz[])";

/// The arrays of an email's state columns (`email_state!`), numbered from `$3` (after the
/// key: an update) or from `$17` (after the key and the 14 columns of what the email was
/// accepted with: an insert).
macro_rules! email_state_arrays {
    (3) => {
        "$3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[], \
         $8::timestamptz[], $9::timestamptz[], $10::timestamptz[], $11::int4[], \
         $12::timestamptz[], $13::timestamptz[], $14::int4[], $15::timestamptz[], $16::text[], \
         $17::text[], $18::timestamptz[]"
    };
    (17) => {
        "$17::text[], $18::text[], $19::text[], $20::timestamptz[], $21::timestamptz[], \
         $22::timestamptz[], $23::timestamptz[], $24::timestamptz[], $25::int4[], \
         $26::timestamptz[], $27::timestamptz[], $28::int4[], $29::timestamptz[], $30::text[], \
         $31::text[], $32::timestamptz[]"
    };
}

/// Emails.
const INSERT_EMAILS: &str = concat!(
    "INSERT INTO emails (",
    crate::rows::email_cols!(),
    ") SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::jsonb[], \
     $6::text[], $7::text[], $8::text[], $9::text[], $10::jsonb[], $11::jsonb[], $12::text[], \
     $13::text[], $14::text[], $15::text[], $16::timestamptz[], ",
    email_state_arrays!(17),
    ")"
);

/// New states of distinct emails (`Write::UpdateEmail`: the state only), each one whose
/// change set guarded it (`Write::GuardEmail`) only while its `updated_at` is the one read.
const UPDATE_EMAILS: &str = concat!(
    "UPDATE emails AS e SET ",
    crate::rows::email_state_sets!(),
    " FROM unnest($1::text[], $2::text[], ",
    email_state_arrays!(3),
    ", $19::timestamptz[]) AS v (workspace_id, id, ",
    crate::rows::email_state!(),
    ", guard) WHERE e.workspace_id = v.workspace_id AND e.id = v.id \
     AND (v.guard IS NULL OR e.updated_at = v.guard)"
);

/// `Write::GuardEmail` on its own; `FOR UPDATE`, so a concurrent guard of the same email
/// waits for this transaction, then finds the row changed.
const GUARD_EMAIL: &str = "SELECT 1 FROM emails WHERE workspace_id = $1 AND id = $2 \
     AND updated_at = $3 FOR UPDATE";

/// Updates of distinct contacts (`Write::UpdateContact`), each guarded by its version.
const UPDATE_CONTACTS: &str = "\
    UPDATE contacts AS c SET email = v.email, subscribed = v.subscribed, data = v.data, \
        status = v.status, expires_at = v.expires_at, created_at = v.created_at, \
        updated_at = v.updated_at, version = c.version + 1 \
    FROM unnest($1::text[], $2::text[], $3::text[], $4::bool[], $5::jsonb[], $6::text[], \
        $7::timestamptz[], $8::timestamptz[], $9::timestamptz[], $10::int8[]) \
        AS v (workspace_id, id, email, subscribed, data, status, expires_at, created_at, \
            updated_at, version) \
    WHERE c.workspace_id = v.workspace_id AND c.id = v.id AND c.version = v.version";

/// Events.
const INSERT_EVENTS: &str = concat!(
    "INSERT INTO events (",
    crate::rows::event_cols!(),
    ") SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::text[], \
     $6::text[], $7::timestamptz[])"
);

/// Plain inserts, the updates of contacts and the new states of emails, held back to be
/// written together. Flushed before any other write, so the change set's order is kept for
/// every write that could observe it (the inserts go first, so an update finds a row
/// inserted before it; an update reads no other table).
///
/// A contact's update held here used to be a round trip of its own: a group of `/v1/track`s
/// for contacts that exist made two per change set (the update, then the inserts held
/// before it), on a connection held for the whole transaction.
#[derive(Default)]
pub(crate) struct Inserts<'a> {
    contacts: Vec<&'a Contact>,
    emails: Vec<&'a EmailRecord>,
    jobs: Vec<&'a NewJob>,
    events: Vec<&'a Event>,
    /// Emails updated (`UpdateEmail`), written after the inserts by one `UPDATE ... FROM`
    /// per chunk. At most one per email: such a statement updates a row once, with any one
    /// of the rows that match it.
    email_updates: Vec<&'a EmailRecord>,
    /// The ids of `email_updates`.
    updated_emails: HashSet<&'a str>,
    /// Guards (`GuardEmail`) by email id, as (workspace, `updated_at` read): checked by the
    /// email's held update, or on their own when no update of it follows.
    email_guards: HashMap<&'a str, (&'a str, DateTime<Utc>)>,
    /// Contacts updated (`UpdateContact`), written last by one `UPDATE ... FROM` per chunk;
    /// at most one per contact, as for emails.
    contact_updates: Vec<&'a Contact>,
    /// The ids of `contact_updates`.
    updated_contacts: HashSet<&'a str>,
}

impl<'a> Inserts<'a> {
    /// Holds `write` back when it is a plain insert (contact, email, job, event) or the
    /// update of a contact or an email; says whether it did. A write whose order against
    /// one held already matters (a second update of the same contact or email, or an
    /// insert after its update) is not held: the caller writes everything held first.
    pub(crate) fn hold(&mut self, write: &'a Write) -> bool {
        match write {
            Write::InsertContact(c) if !self.updated_contacts.contains(c.id.as_str()) => {
                self.contacts.push(c)
            }
            Write::UpdateContact(c) if self.updated_contacts.insert(c.id.as_str()) => {
                self.contact_updates.push(c)
            }
            Write::InsertEmail(e) if !self.updated_emails.contains(e.id.as_str()) => {
                self.emails.push(e)
            }
            Write::UpdateEmail(e) if self.updated_emails.insert(e.id.as_str()) => {
                self.email_updates.push(e)
            }
            // A guard after a held update of its email must see that update: not held.
            Write::GuardEmail {
                workspace_id,
                id,
                updated_at,
            } if !self.updated_emails.contains(id.as_str())
                && !self.email_guards.contains_key(id.as_str()) =>
            {
                self.email_guards
                    .insert(id.as_str(), (workspace_id.as_str(), *updated_at));
            }
            Write::EnqueueJob(j) => self.jobs.push(j),
            Write::AppendEvent(e) => self.events.push(e),
            _ => return false,
        }
        true
    }

    /// Writes everything held back (unique violations become `Conflict`).
    pub(crate) async fn flush(&mut self, conn: &mut PgConnection) -> Result<(), StoreError> {
        for chunk in self.contacts.chunks(CHUNK) {
            insert_contacts(conn, chunk).await?;
        }
        for chunk in self.emails.chunks(CHUNK) {
            let query = sqlx::query(INSERT_EMAILS);
            bind_email_columns(query, chunk)
                .execute(&mut *conn)
                .await
                .map_err(error::store)?;
        }
        for chunk in self.jobs.chunks(CHUNK) {
            insert_jobs(conn, chunk).await?;
        }
        for chunk in self.events.chunks(CHUNK) {
            insert_events(conn, chunk).await?;
        }
        let mut guards = std::mem::take(&mut self.email_guards);
        for (id, (workspace_id, updated_at)) in &guards {
            if !self.updated_emails.contains(id) {
                guard_email(conn, workspace_id, id, *updated_at).await?;
            }
        }
        guards.retain(|id, _| self.updated_emails.contains(id));
        for chunk in self.email_updates.chunks(CHUNK) {
            update_emails(conn, chunk, &guards).await?;
        }
        for chunk in self.contact_updates.chunks(CHUNK) {
            update_contacts(conn, chunk).await?;
        }
        self.contacts.clear();
        self.emails.clear();
        self.jobs.clear();
        self.events.clear();
        self.email_updates.clear();
        self.updated_emails.clear();
        self.contact_updates.clear();
        self.updated_contacts.clear();
        Ok(())
    }
}

/// Binds one array per column of `chunk` ($1 to $9): the key, then what a contact holds.
fn bind_contact_columns<'q>(query: PgQuery<'q>, chunk: &[&'q Contact]) -> PgQuery<'q> {
    query
        .bind(column(chunk, |c| c.workspace_id.as_str()))
        .bind(column(chunk, |c| c.id.as_str()))
        .bind(column(chunk, |c| c.email.as_str()))
        .bind(column(chunk, |c| c.subscribed))
        .bind(column(chunk, |c| Json(&c.data)))
        .bind(column(chunk, |c| enum_text(&c.status)))
        .bind(column(chunk, |c| c.expires_at))
        .bind(column(chunk, |c| c.created_at))
        .bind(column(chunk, |c| c.updated_at))
}

/// Inserts the contacts of `chunk`, counted by the same statement (migrations 0016, 0017).
async fn insert_contacts(conn: &mut PgConnection, chunk: &[&Contact]) -> Result<(), StoreError> {
    bind_contact_columns(sqlx::query(INSERT_CONTACTS), chunk)
        .execute(conn)
        .await
        .map_err(error::store)?;
    Ok(())
}

/// Inserts the jobs of `chunk`.
async fn insert_jobs(conn: &mut PgConnection, chunk: &[&NewJob]) -> Result<(), StoreError> {
    sqlx::query(INSERT_JOBS)
        .bind(column(chunk, |j| j.id.as_str()))
        .bind(column(chunk, |j| Json(&j.payload)))
        .bind(column(chunk, |j| j.run_at))
        .execute(conn)
        .await
        .map_err(error::store)?;
    Ok(())
}

/// Inserts the events of `chunk`.
async fn insert_events(conn: &mut PgConnection, chunk: &[&Event]) -> Result<(), StoreError> {
    sqlx::query(INSERT_EVENTS)
        .bind(column(chunk, |e| e.workspace_id.as_str()))
        .bind(column(chunk, |e| e.id.as_str()))
        .bind(column(chunk, |e| e.name.as_str()))
        .bind(column(chunk, |e| Json(&e.data)))
        .bind(column(chunk, |e| {
            e.contact_id.as_ref().map(|id| id.as_str())
        }))
        .bind(column(chunk, |e| e.email_id.as_ref().map(|id| id.as_str())))
        .bind(column(chunk, |e| e.created_at))
        .execute(conn)
        .await
        .map_err(error::store)?;
    Ok(())
}

/// One column of `rows`, bound as one array parameter.
fn column<'r, R, T>(rows: &[&'r R], value: impl Fn(&'r R) -> T) -> Vec<T> {
    rows.iter().map(|r| value(r)).collect()
}

/// Binds one array per column of `chunk`, in the order of `email_cols!` ($1 to $32).
fn bind_email_columns<'q>(query: PgQuery<'q>, chunk: &[&'q EmailRecord]) -> PgQuery<'q> {
    let text = |value: fn(&'q EmailRecord) -> Option<&'q str>| column(chunk, value);
    let query = query
        .bind(column(chunk, |e| e.workspace_id.as_str()))
        .bind(column(chunk, |e| e.id.as_str()))
        .bind(column(chunk, |e| e.contact_id.as_str()))
        .bind(column(chunk, |e| Json(&e.to)))
        .bind(column(chunk, |e| Json(&e.from)))
        .bind(text(|e| e.reply_to.as_deref()))
        .bind(column(chunk, |e| e.subject.as_str()))
        .bind(column(chunk, |e| e.html.as_str()))
        .bind(text(|e| e.text.as_deref()))
        .bind(column(chunk, |e| Json(&e.headers)))
        .bind(column(chunk, |e| Json(&e.attachments)))
        .bind(text(|e| e.template_id.as_ref().map(|id| id.as_str())))
        .bind(text(|e| e.campaign_id.as_ref().map(|id| id.as_str())))
        .bind(column(chunk, |e| enum_text(&e.source_type)))
        .bind(column(chunk, |e| e.message_id.as_str()))
        .bind(column(chunk, |e| e.created_at));
    bind_email_state(query, chunk)
}

/// Binds one array per state column of `chunk`, in the order of `email_state!`.
fn bind_email_state<'q>(query: PgQuery<'q>, chunk: &[&'q EmailRecord]) -> PgQuery<'q> {
    let text = |value: fn(&'q EmailRecord) -> Option<&'q str>| column(chunk, value);
    let time = |value: fn(&'q EmailRecord) -> Option<DateTime<Utc>>| column(chunk, value);
    query
        .bind(column(chunk, |e| enum_text(&e.status)))
        .bind(text(|e| e.provider_message_id.as_deref()))
        .bind(text(|e| e.error.as_deref()))
        .bind(time(|e| e.sent_at))
        .bind(column(chunk, |e| e.updated_at))
        .bind(time(|e| e.lifecycle.delivered_at))
        .bind(time(|e| e.lifecycle.opened_at))
        .bind(time(|e| e.lifecycle.last_opened_at))
        .bind(column(chunk, |e| crate::rows::count_i32(e.lifecycle.opens)))
        .bind(time(|e| e.lifecycle.clicked_at))
        .bind(time(|e| e.lifecycle.last_clicked_at))
        .bind(column(chunk, |e| {
            crate::rows::count_i32(e.lifecycle.clicks)
        }))
        .bind(time(|e| e.lifecycle.bounced_at))
        .bind(column(chunk, |e| {
            e.lifecycle.bounce_type.as_ref().map(enum_text)
        }))
        .bind(text(|e| e.lifecycle.bounce_detail.as_deref()))
        .bind(time(|e| e.lifecycle.complained_at))
}

/// Writes the states of `chunk` (distinct emails) in one statement; `Conflict` when any of
/// them is gone.
pub(crate) async fn update_emails(
    conn: &mut PgConnection,
    chunk: &[&EmailRecord],
    guards: &HashMap<&str, (&str, DateTime<Utc>)>,
) -> Result<(), StoreError> {
    let keys = sqlx::query(UPDATE_EMAILS)
        .bind(column(chunk, |e| e.workspace_id.as_str()))
        .bind(column(chunk, |e| e.id.as_str()));
    let done = bind_email_state(keys, chunk)
        .bind(column(chunk, |e| {
            guards.get(e.id.as_str()).map(|(_, updated_at)| *updated_at)
        }))
        .execute(&mut *conn)
        .await
        .map_err(error::store)?;
    all_updated(
        done.rows_affected(),
        chunk,
        |one| format!("email {} is gone or changed since it was read", one.id),
        |missed, of| {
            format!("{missed} of {of} emails updated together are gone or changed since read")
        },
    )
}

/// `Write::GuardEmail` checked on its own (no update of the email held after it).
pub(crate) async fn guard_email(
    conn: &mut PgConnection,
    workspace_id: &str,
    id: &str,
    updated_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    crate::commit::guard_row(conn, GUARD_EMAIL, (workspace_id, id, updated_at), "email").await
}

/// Updates the contacts of `chunk` (distinct contacts) in one statement; `Conflict` when any
/// of them is gone or not at the version it was read at (the group then goes again, each
/// change set in a savepoint, which tells whose update it was).
async fn update_contacts(conn: &mut PgConnection, chunk: &[&Contact]) -> Result<(), StoreError> {
    let done = bind_contact_columns(sqlx::query(UPDATE_CONTACTS), chunk)
        .bind(column(chunk, |c| to_i64(c.version)))
        .execute(&mut *conn)
        .await
        .map_err(error::store)?;
    all_updated(
        done.rows_affected(),
        chunk,
        |one| {
            format!(
                "contact {} is gone or not at version {}",
                one.id, one.version
            )
        },
        |missed, of| {
            format!("{missed} of {of} contacts updated together are gone or at another version")
        },
    )
}

/// `Ok` when a statement updating the rows of `chunk` updated `updated` of them, all;
/// otherwise `Conflict`, saying which row when there was one (`alone`), or how many of how
/// many were missed (`together`).
fn all_updated<R>(
    updated: u64,
    chunk: &[&R],
    alone: impl FnOnce(&R) -> String,
    together: impl FnOnce(u64, usize) -> String,
) -> Result<(), StoreError> {
    let missed = chunk.len() as u64 - updated.min(chunk.len() as u64);
    match (missed, chunk) {
        (0, _) => Ok(()),
        (_, [one]) => Err(StoreError::Conflict(alone(one))),
        _ => Err(StoreError::Conflict(together(missed, chunk.len()))),
    }
}
