//! Multi-row inserts for the writes a commit makes in bulk (contacts, emails, jobs,
//! events): one statement per table and chunk instead of one per row. A campaign batch of 500 recipients
//! is 1,000 rows; one round trip each made the commit the slowest part of expansion.

use std::collections::HashSet;

use posthorn_core::model::{Contact, EmailRecord, Event};
use posthorn_core::ports::{NewJob, StoreError, Write};
use sqlx::query_builder::Separated;
use sqlx::types::Json;
use sqlx::{PgConnection, Postgres, QueryBuilder};

use crate::error;
use crate::rows::enum_text;

/// Rows per statement: far below PostgreSQL's 65,535 bind parameters for every table here.
const CHUNK: usize = 500;

/// Plain inserts, and replacements of emails, held back to be written together. Flushed
/// before any other write, so the change set's order is kept for every write that could
/// observe it (a replacement reads no other table; the inserts of emails go first).
#[derive(Default)]
pub(crate) struct Inserts<'a> {
    contacts: Vec<&'a Contact>,
    emails: Vec<&'a EmailRecord>,
    jobs: Vec<&'a NewJob>,
    events: Vec<&'a Event>,
    /// Emails replaced (`UpdateEmail`), written after the inserts by one `UPDATE ... FROM`
    /// per chunk. At most one per email: such a statement updates a row once, with any one
    /// of the rows that match it.
    email_updates: Vec<&'a EmailRecord>,
    /// The ids of `email_updates`.
    updated_emails: HashSet<&'a str>,
}

impl<'a> Inserts<'a> {
    /// Holds `write` back when it is a plain insert (contact, email, job, event) or an
    /// email's replacement; says whether it did. A write whose order against one held
    /// already matters (a second replacement of the same email, or its insert after its
    /// replacement) is not held: the caller writes everything held first.
    pub(crate) fn hold(&mut self, write: &'a Write) -> bool {
        match write {
            Write::InsertContact(c) => self.contacts.push(c),
            Write::InsertEmail(e) if !self.updated_emails.contains(e.id.as_str()) => {
                self.emails.push(e)
            }
            Write::UpdateEmail(e) if self.updated_emails.insert(e.id.as_str()) => {
                self.email_updates.push(e)
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
            // The new contacts are counted by the same statement (migrations 0016, 0017).
            let mut q: QueryBuilder<Postgres> = QueryBuilder::new(
                "WITH added AS (INSERT INTO contacts (workspace_id, id, email, subscribed, \
                 data, status, expires_at, created_at, updated_at, version) ",
            );
            q.push_values(chunk, |mut b, c| {
                b.push_bind(c.workspace_id.as_str())
                    .push_bind(c.id.as_str())
                    .push_bind(c.email.as_str())
                    .push_bind(c.subscribed)
                    .push_bind(Json(&c.data))
                    .push_bind(enum_text(&c.status))
                    .push_bind(c.expires_at)
                    .push_bind(c.created_at)
                    .push_bind(c.updated_at)
                    .push_bind(0_i64);
            });
            q.push(
                " RETURNING workspace_id, status, subscribed) \
                 INSERT INTO contact_counts (workspace_id, status, subscribed, n) \
                 SELECT workspace_id, status, subscribed, count(*) FROM added \
                 GROUP BY workspace_id, status, subscribed",
            );
            q.build().execute(&mut *conn).await.map_err(error::store)?;
        }
        for chunk in self.emails.chunks(CHUNK) {
            let mut q: QueryBuilder<Postgres> = QueryBuilder::new(concat!(
                "INSERT INTO emails (",
                crate::rows::email_cols!(),
                ") "
            ));
            q.push_values(chunk, |b, e| bind_email(b, e));
            q.build().execute(&mut *conn).await.map_err(error::store)?;
        }
        for chunk in self.jobs.chunks(CHUNK) {
            let mut q: QueryBuilder<Postgres> =
                QueryBuilder::new("INSERT INTO jobs (id, payload, run_at) ");
            q.push_values(chunk, |mut b, j| {
                b.push_bind(j.id.as_str())
                    .push_bind(Json(&j.payload))
                    .push_bind(j.run_at);
            });
            q.build().execute(&mut *conn).await.map_err(error::store)?;
        }
        for chunk in self.events.chunks(CHUNK) {
            let mut q: QueryBuilder<Postgres> = QueryBuilder::new(concat!(
                "INSERT INTO events (",
                crate::rows::event_cols!(),
                ") "
            ));
            q.push_values(chunk, |mut b, e| {
                b.push_bind(e.workspace_id.as_str())
                    .push_bind(e.id.as_str())
                    .push_bind(&e.name)
                    .push_bind(Json(&e.data))
                    .push_bind(e.contact_id.as_ref().map(|id| id.as_str()))
                    .push_bind(e.email_id.as_ref().map(|id| id.as_str()))
                    .push_bind(e.created_at);
            });
            q.build().execute(&mut *conn).await.map_err(error::store)?;
        }
        for chunk in self.email_updates.chunks(CHUNK) {
            update_emails(conn, chunk).await?;
        }
        self.contacts.clear();
        self.emails.clear();
        self.jobs.clear();
        self.events.clear();
        self.email_updates.clear();
        self.updated_emails.clear();
        Ok(())
    }
}

/// Binds the columns of `e` in the order of `email_cols!`.
fn bind_email(mut b: Separated<'_, Postgres, &'static str>, e: &EmailRecord) {
    b.push_bind(e.workspace_id.as_str())
        .push_bind(e.id.as_str())
        .push_bind(e.contact_id.as_str())
        .push_bind(Json(&e.to))
        .push_bind(Json(&e.from))
        .push_bind(&e.reply_to)
        .push_bind(&e.subject)
        .push_bind(&e.html)
        .push_bind(&e.text)
        .push_bind(Json(&e.headers))
        .push_bind(Json(&e.attachments))
        .push_bind(e.template_id.as_ref().map(|id| id.as_str()))
        .push_bind(e.campaign_id.as_ref().map(|id| id.as_str()))
        .push_bind(enum_text(&e.source_type))
        .push_bind(enum_text(&e.status))
        .push_bind(&e.message_id)
        .push_bind(&e.provider_message_id)
        .push_bind(&e.error)
        .push_bind(e.created_at)
        .push_bind(e.sent_at)
        .push_bind(e.updated_at)
        .push_bind(e.lifecycle.delivered_at)
        .push_bind(e.lifecycle.opened_at)
        .push_bind(e.lifecycle.last_opened_at)
        .push_bind(crate::rows::count_i32(e.lifecycle.opens))
        .push_bind(e.lifecycle.clicked_at)
        .push_bind(e.lifecycle.last_clicked_at)
        .push_bind(crate::rows::count_i32(e.lifecycle.clicks))
        .push_bind(e.lifecycle.bounced_at)
        .push_bind(e.lifecycle.bounce_type.as_ref().map(enum_text))
        .push_bind(&e.lifecycle.bounce_detail)
        .push_bind(e.lifecycle.complained_at);
}

/// Replaces the stored emails of `chunk` (distinct emails) in one statement; `Conflict`
/// when any of them is gone. One alone is the single-row statement, with its own message.
async fn update_emails(conn: &mut PgConnection, chunk: &[&EmailRecord]) -> Result<(), StoreError> {
    if let [one] = chunk {
        return crate::commit::update_email(conn, one).await;
    }
    let mut q: QueryBuilder<Postgres> = QueryBuilder::new(concat!(
        "UPDATE emails AS e SET ",
        crate::rows::email_sets!(),
        " FROM ("
    ));
    q.push_values(chunk, |b, e| bind_email(b, e));
    q.push(concat!(
        ") AS v (",
        crate::rows::email_cols!(),
        ") WHERE e.workspace_id = v.workspace_id AND e.id = v.id"
    ));
    let done = q.build().execute(&mut *conn).await.map_err(error::store)?;
    let gone = chunk.len() as u64 - done.rows_affected().min(chunk.len() as u64);
    if gone > 0 {
        return Err(StoreError::Conflict(format!(
            "{gone} of {} emails replaced together are gone",
            chunk.len()
        )));
    }
    Ok(())
}
