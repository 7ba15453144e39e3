//! Multi-row inserts for the writes a commit makes in bulk (contacts, emails, jobs,
//! events): one statement per table and chunk instead of one per row.

use posthorn_core::model::{Contact, EmailRecord, Event};
use posthorn_core::ports::{ChangeSet, NewJob, StoreError, Write};
use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use crate::error;
use crate::rows::{enum_text, json_text, micros, opt_micros, to_i64};

/// Rows per statement: an email's 29 columns × 400 rows stays far below SQLite's 32,766
/// bound parameters.
const CHUNK: usize = 400;

/// Plain inserts held back to be written together. Flushed before any other write, so the
/// change set's order is kept for every write that could observe it.
#[derive(Default)]
pub(crate) struct Inserts<'a> {
    contacts: Vec<&'a Contact>,
    emails: Vec<&'a EmailRecord>,
    jobs: Vec<&'a NewJob>,
    events: Vec<&'a Event>,
}

impl<'a> Inserts<'a> {
    /// Holds `write` back when it is a plain insert (contact, email, job, event); says whether
    /// it did.
    pub(crate) fn hold(&mut self, write: &'a Write) -> bool {
        match write {
            Write::InsertContact(c) => self.contacts.push(c),
            Write::InsertEmail(e) => self.emails.push(e),
            Write::EnqueueJob(j) => self.jobs.push(j),
            Write::AppendEvent(e) => self.events.push(e),
            _ => return false,
        }
        true
    }

    /// Whether nothing is held back.
    pub(crate) fn is_empty(&self) -> bool {
        self.rows() == 0
    }

    /// Rows held back, over every table.
    pub(crate) fn rows(&self) -> usize {
        self.contacts.len() + self.emails.len() + self.jobs.len() + self.events.len()
    }

    /// Writes everything held back in one trip to the writer's thread (constraint
    /// violations become `Conflict`).
    pub(crate) async fn flush(&mut self, conn: &mut SqliteConnection) -> Result<(), StoreError> {
        if self.is_empty() {
            return Ok(());
        }
        let mut q = QueryBuilder::new("");
        self.push_statements(&mut q, OnConflict::Abort);
        *self = Self::default();
        // Each group's statement text differs (its row counts): not worth a cache slot.
        q.build()
            .persistent(false)
            .execute(&mut *conn)
            .await
            .map_err(error::store)?;
        Ok(())
    }

    /// Appends the multi-row `INSERT` statements of everything held back to `q`, each ended
    /// with `;`, so that several go to SQLite in one query: a trip to the connection's
    /// thread costs more than the statements themselves when the machine is busy.
    pub(crate) fn push_statements(&self, q: &mut QueryBuilder<Sqlite>, on_conflict: OnConflict) {
        let insert = on_conflict.insert();
        for chunk in self.contacts.chunks(CHUNK) {
            q.push(insert);
            q.push(
                " INTO contacts (workspace_id, id, email, subscribed, data, status, \
                 expires_at, created_at, updated_at, version) ",
            );
            q.push_values(chunk, |mut b, c| {
                b.push_bind(c.workspace_id.as_str())
                    .push_bind(c.id.as_str())
                    .push_bind(c.email.as_str())
                    .push_bind(c.subscribed)
                    .push_bind(json_text(&c.data))
                    .push_bind(enum_text(&c.status))
                    .push_bind(opt_micros(c.expires_at))
                    .push_bind(micros(c.created_at))
                    .push_bind(micros(c.updated_at))
                    .push_bind(0_i64);
            });
            q.push("; ");
        }
        for chunk in self.emails.chunks(CHUNK) {
            q.push(insert);
            q.push(concat!(
                " INTO emails (",
                crate::rows::email_table_cols!(),
                ") "
            ));
            q.push_values(chunk, |mut b, e| {
                b.push_bind(e.workspace_id.as_str())
                    .push_bind(e.id.as_str())
                    .push_bind(e.contact_id.as_str())
                    .push_bind(json_text(&e.to))
                    .push_bind(json_text(&e.from))
                    .push_bind(e.reply_to.clone())
                    .push_bind(e.subject.clone())
                    .push_bind(json_text(&e.headers))
                    .push_bind(e.template_id.as_ref().map(|id| id.as_str()))
                    .push_bind(e.campaign_id.as_ref().map(|id| id.as_str()))
                    .push_bind(enum_text(&e.source_type))
                    .push_bind(enum_text(&e.status))
                    .push_bind(e.message_id.clone())
                    .push_bind(e.provider_message_id.clone())
                    .push_bind(e.error.clone())
                    .push_bind(micros(e.created_at))
                    .push_bind(opt_micros(e.sent_at))
                    .push_bind(micros(e.updated_at))
                    .push_bind(opt_micros(e.lifecycle.delivered_at))
                    .push_bind(opt_micros(e.lifecycle.opened_at))
                    .push_bind(opt_micros(e.lifecycle.last_opened_at))
                    .push_bind(i64::from(e.lifecycle.opens))
                    .push_bind(opt_micros(e.lifecycle.clicked_at))
                    .push_bind(opt_micros(e.lifecycle.last_clicked_at))
                    .push_bind(i64::from(e.lifecycle.clicks))
                    .push_bind(opt_micros(e.lifecycle.bounced_at))
                    .push_bind(e.lifecycle.bounce_type.as_ref().map(enum_text))
                    .push_bind(e.lifecycle.bounce_detail.clone())
                    .push_bind(opt_micros(e.lifecycle.complained_at));
            });
            q.push("; ");
            // The content beside, under the same key (an insert that conflicts above fails
            // the statement group before this one runs).
            q.push(insert);
            q.push(" INTO email_contents (workspace_id, id, html, text, attachments) ");
            q.push_values(chunk, |mut b, e| {
                b.push_bind(e.workspace_id.as_str())
                    .push_bind(e.id.as_str())
                    .push_bind(e.html.clone())
                    .push_bind(e.text.clone())
                    .push_bind(json_text(&e.attachments));
            });
            q.push("; ");
        }
        for chunk in self.jobs.chunks(CHUNK) {
            q.push(insert);
            q.push(" INTO jobs (id, payload, run_at) ");
            q.push_values(chunk, |mut b, j| {
                b.push_bind(j.id.as_str())
                    .push_bind(json_text(&j.payload))
                    .push_bind(micros(j.run_at));
            });
            q.push("; ");
        }
        for chunk in self.events.chunks(CHUNK) {
            q.push(insert);
            q.push(concat!(" INTO events (", crate::rows::event_cols!(), ") "));
            q.push_values(chunk, |mut b, e| {
                b.push_bind(e.workspace_id.as_str())
                    .push_bind(e.id.as_str())
                    .push_bind(e.name.clone())
                    .push_bind(json_text(&e.data))
                    .push_bind(e.contact_id.as_ref().map(|id| id.as_str()))
                    .push_bind(e.email_id.as_ref().map(|id| id.as_str()))
                    .push_bind(micros(e.created_at));
            });
            q.push("; ");
        }
    }
}

/// A group whose writes are all plain inserts or updates of contacts and emails: what
/// `/v1/track` and `/v1/send` write (for new contacts and for ones that exist), and what a
/// delivery or a delivery report writes. It goes to the writer as one query (see
/// `group::transaction`): the updates first, each checked in SQL (migration 0016), then the
/// inserts.
///
/// Putting the updates first gives the same result as applying the writes in order
/// whenever the query succeeds: an update could only observe an insert of the same group
/// by hitting a row inserted in it, and then it finds no row, which fails the query.
/// Any failure sends the group the long way, in order, each change set in a savepoint.
#[derive(Default)]
pub(crate) struct OneTrip<'a> {
    updates: Vec<Update<'a>>,
    inserts: Inserts<'a>,
}

/// An update [`OneTrip`] makes.
enum Update<'a> {
    /// `Write::UpdateContact`: guarded by the contact's version.
    Contact(&'a Contact),
    /// `Write::UpdateEmail`: the email's state only.
    Email(&'a EmailRecord),
    /// `Write::GuardEmail`: an update that changes nothing and finds its row only while
    /// the email's `updated_at` is the one read.
    EmailGuard {
        workspace_id: &'a str,
        id: &'a str,
        updated_at: chrono::DateTime<chrono::Utc>,
    },
}

impl<'a> OneTrip<'a> {
    /// The writes of `group` when every one of them is a plain insert or an update of a
    /// contact or an email; `None` when one is not.
    pub(crate) fn only(group: &[&'a ChangeSet]) -> Option<Self> {
        let mut trip = Self::default();
        group
            .iter()
            .flat_map(|c| c.writes.iter())
            .all(|w| match w {
                Write::UpdateContact(c) => {
                    trip.updates.push(Update::Contact(c));
                    true
                }
                Write::UpdateEmail(e) => {
                    trip.updates.push(Update::Email(e));
                    true
                }
                Write::GuardEmail {
                    workspace_id,
                    id,
                    updated_at,
                } => {
                    trip.updates.push(Update::EmailGuard {
                        workspace_id: workspace_id.as_str(),
                        id: id.as_str(),
                        updated_at: *updated_at,
                    });
                    true
                }
                other => trip.inserts.hold(other),
            })
            .then_some(trip)
    }

    /// Rows written, over every table.
    pub(crate) fn rows(&self) -> usize {
        self.updates.len() + self.inserts.rows()
    }

    /// Appends the statements of every write to `q`, each ended with `;`. Each one ends
    /// the whole transaction when it fails (`OR ROLLBACK`, so SQLite keeps no statement
    /// journal), as does an update that finds no row (a contact gone or at another
    /// version, an email gone).
    pub(crate) fn push_statements(&self, q: &mut QueryBuilder<Sqlite>) {
        for update in &self.updates {
            match update {
                Update::Contact(c) => push_contact_update(q, c, OnConflict::Rollback),
                Update::Email(e) => push_email_update(q, e, OnConflict::Rollback),
                Update::EmailGuard {
                    workspace_id,
                    id,
                    updated_at,
                } => {
                    q.push(OnConflict::Rollback.update())
                        .push(" emails SET updated_at = updated_at WHERE workspace_id = ")
                        .push_bind(*workspace_id)
                        .push(" AND id = ")
                        .push_bind(*id)
                        .push(" AND updated_at = ")
                        .push_bind(micros(*updated_at));
                }
            }
            q.push("; INSERT INTO guarded_update_check (changed) VALUES (changes()); ");
        }
        self.inserts.push_statements(q, OnConflict::Rollback);
    }
}

/// `Write::UpdateContact` as one statement (no `;`), guarded by the contact's version.
pub(crate) fn push_contact_update(
    q: &mut QueryBuilder<Sqlite>,
    c: &Contact,
    on_conflict: OnConflict,
) {
    q.push(on_conflict.update())
        .push(" contacts SET email = ")
        .push_bind(c.email.as_str())
        .push(", subscribed = ")
        .push_bind(c.subscribed)
        .push(", data = ")
        .push_bind(json_text(&c.data))
        .push(", status = ")
        .push_bind(enum_text(&c.status))
        .push(", expires_at = ")
        .push_bind(opt_micros(c.expires_at))
        .push(", created_at = ")
        .push_bind(micros(c.created_at))
        .push(", updated_at = ")
        .push_bind(micros(c.updated_at))
        .push(", version = version + 1 WHERE workspace_id = ")
        .push_bind(c.workspace_id.as_str())
        .push(" AND id = ")
        .push_bind(c.id.as_str())
        .push(" AND version = ")
        .push_bind(to_i64(c.version));
}

/// `Write::UpdateEmail` as one statement (no `;`): the email's state only.
pub(crate) fn push_email_update(
    q: &mut QueryBuilder<Sqlite>,
    e: &EmailRecord,
    on_conflict: OnConflict,
) {
    let life = &e.lifecycle;
    q.push(on_conflict.update())
        .push(" emails SET status = ")
        .push_bind(enum_text(&e.status))
        .push(", provider_message_id = ")
        .push_bind(e.provider_message_id.as_deref())
        .push(", error = ")
        .push_bind(e.error.as_deref())
        .push(", sent_at = ")
        .push_bind(opt_micros(e.sent_at))
        .push(", updated_at = ")
        .push_bind(micros(e.updated_at))
        .push(", delivered_at = ")
        .push_bind(opt_micros(life.delivered_at))
        .push(", opened_at = ")
        .push_bind(opt_micros(life.opened_at))
        .push(", last_opened_at = ")
        .push_bind(opt_micros(life.last_opened_at))
        .push(", opens = ")
        .push_bind(i64::from(life.opens))
        .push(", clicked_at = ")
        .push_bind(opt_micros(life.clicked_at))
        .push(", last_clicked_at = ")
        .push_bind(opt_micros(life.last_clicked_at))
        .push(", clicks = ")
        .push_bind(i64::from(life.clicks))
        .push(", bounced_at = ")
        .push_bind(opt_micros(life.bounced_at))
        .push(", bounce_type = ")
        .push_bind(life.bounce_type.as_ref().map(enum_text))
        .push(", bounce_detail = ")
        .push_bind(life.bounce_detail.as_deref())
        .push(", complained_at = ")
        .push_bind(opt_micros(life.complained_at))
        .push(" WHERE workspace_id = ")
        .push_bind(e.workspace_id.as_str())
        .push(" AND id = ")
        .push_bind(e.id.as_str());
}

/// What a failing insert or update undoes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnConflict {
    /// The statement alone (SQLite's default), so the transaction can go on: SQLite keeps
    /// a statement journal, a copy of every page the statement changes, to undo it.
    Abort,
    /// The whole transaction (`INSERT OR ROLLBACK`), for a caller that rolls back on any
    /// failure anyway: no statement journal to keep.
    Rollback,
}

impl OnConflict {
    fn insert(self) -> &'static str {
        match self {
            Self::Abort => "INSERT",
            Self::Rollback => "INSERT OR ROLLBACK",
        }
    }

    fn update(self) -> &'static str {
        match self {
            Self::Abort => "UPDATE",
            Self::Rollback => "UPDATE OR ROLLBACK",
        }
    }
}
