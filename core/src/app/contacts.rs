//! Contacts: create-or-update by email, read, list, patch, delete, and the PENDING rules.

use base64::Engine as _;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::{Caller, Patch, StepError};
use crate::error::{Error, Resource, Result};
use crate::model::{
    ascii_domain_address, merge_data, Contact, ContactId, ContactStatus, EmailAddress, Event,
    Segment, Workspace,
};
use crate::ports::{ChangeSet, Clock, ContactQuery, StoreError, Write};
use crate::Engine;

/// `POST /contacts`: create the contact with this address, or update it.
#[derive(Debug, Clone, PartialEq)]
pub struct UpsertContact {
    /// The contact's address.
    pub email: EmailAddress,
    /// The flag to set; a new contact is subscribed when `None`, an existing one keeps its flag.
    pub subscribed: Option<bool>,
    /// Data merged shallowly into the contact's data (a `null` value removes that key).
    pub data: Option<Map<String, Value>>,
}

/// `PATCH /contacts/{id}`: each field left, cleared or set.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContactPatch {
    /// New subscription flag.
    pub subscribed: Option<bool>,
    /// `Set`: merged shallowly (a `null` value removes that key); `Clear`: all data removed.
    pub data: Patch<Map<String, Value>>,
    /// New address (a conflict when another contact has it).
    pub email: Option<EmailAddress>,
}

/// `GET /contacts`: one page, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListContacts {
    /// Page size, 1 to [`MAX_CONTACT_PAGE`].
    pub limit: usize,
    /// Only contacts with this subscription flag.
    pub subscribed: Option<bool>,
    /// Case-insensitive substring of the address; in a term with `@` the domain after it
    /// is put in canonical form, as addresses are stored (`@bücher.de` finds
    /// `…@xn--bcher-kva.de`).
    pub search: Option<String>,
    /// The `cursor` of the previous page; the first page when `None`.
    pub cursor: Option<String>,
}

/// Largest page of `GET /contacts`.
pub const MAX_CONTACT_PAGE: usize = 100;

impl Default for ListContacts {
    /// The first page of 20.
    fn default() -> Self {
        Self {
            limit: 20,
            subscribed: None,
            search: None,
            cursor: None,
        }
    }
}

/// The validation error for a cursor this API did not hand out.
pub fn invalid_cursor() -> Error {
    Error::field(
        "cursor",
        "invalid_cursor",
        "cursor is not one this API returned",
    )
}

/// A change to apply to the contact with `email`, creating it when absent.
#[derive(Debug, Clone)]
pub struct Upsert<'a> {
    /// The contact's address.
    pub email: EmailAddress,
    /// The flag to set; `None` leaves an existing contact's flag alone.
    pub subscribed: Option<bool>,
    /// Data merged shallowly into the contact's data (`null` removes a key).
    pub data: Option<&'a Map<String, Value>>,
    /// The flag of a new contact when `subscribed` is `None`.
    pub default_subscribed: bool,
}

/// The contact after an upsert, and whether it was created.
#[derive(Debug, Clone)]
pub struct Upserted {
    /// The contact as it will be stored.
    pub contact: Contact,
    /// True when the upsert creates it.
    pub is_new: bool,
}

/// Room left under the active contact limit, counted once per request (per change set).
///
/// The count is read before the commit, so concurrent requests may each see the same room:
/// the change set of a request that took room carries [`Write::GuardActiveLimit`], which
/// the store checks inside the commit. A request that would pass the limit conflicts,
/// and its retry reads the count again and plans its new contacts as PENDING. A workspace
/// without a limit reads nothing and carries no guard.
#[derive(Debug, Default)]
pub struct ActiveRoom {
    /// Room left, once counted.
    remaining: Option<u64>,
    /// Whether the change set carries the guard already.
    guarded: bool,
}

impl ActiveRoom {
    /// Whether one more ACTIVE contact fits; consumes the room when it does.
    async fn take(&mut self, engine: &Engine, ws: &Workspace) -> Result<bool, StoreError> {
        let Some(limit) = ws.active_contact_limit else {
            return Ok(true);
        };
        let remaining = match self.remaining {
            Some(n) => n,
            None => limit.saturating_sub(engine.store.count_active_contacts(&ws.id).await?),
        };
        let fits = remaining > 0;
        self.remaining = Some(remaining.saturating_sub(1));
        Ok(fits)
    }

    /// Adds [`Write::GuardActiveLimit`] to `changes` once, after the first contact that
    /// took room; a no-op for a workspace without a limit.
    fn guard(&mut self, ws: &Workspace, changes: &mut ChangeSet) {
        let Some(limit) = ws.active_contact_limit else {
            return;
        };
        if !self.guarded {
            self.guarded = true;
            changes.push(Write::GuardActiveLimit {
                workspace_id: ws.id.clone(),
                limit,
            });
        }
    }
}

/// Plans an upsert into `changes` (contact write and subscription event) without committing.
pub async fn plan_upsert(
    engine: &Engine,
    ws: &Workspace,
    upsert: &Upsert<'_>,
    room: &mut ActiveRoom,
    now: DateTime<Utc>,
    changes: &mut ChangeSet,
) -> Result<Upserted, StoreError> {
    let found = engine
        .store
        .contact_by_email(&ws.id, upsert.email.as_str())
        .await?;
    plan_upsert_of(engine, ws, upsert, found, room, now, changes).await
}

/// What [`plan_upsert_reading`] read besides the contact.
#[derive(Debug, Clone)]
pub struct ReadAlong {
    /// The workspace's tracked segments.
    pub tracked_segments: Vec<Segment>,
    /// Whether the event named concerns a workflow (`false` when no name was given).
    pub event_interest: bool,
}

/// [`plan_upsert`] reading the contact together with the workspace's tracked segments and,
/// for an event named `event_name`, whether a workflow cares ([`crate::ports::Store::event_reads`]:
/// one round trip where the store can), so the commit need not read them again.
pub async fn plan_upsert_reading(
    engine: &Engine,
    ws: &Workspace,
    upsert: &Upsert<'_>,
    event_name: Option<&str>,
    room: &mut ActiveRoom,
    now: DateTime<Utc>,
    changes: &mut ChangeSet,
) -> Result<(Upserted, ReadAlong), StoreError> {
    let reads = engine
        .store
        .event_reads(&ws.id, upsert.email.as_str(), event_name)
        .await?;
    let done = plan_upsert_of(engine, ws, upsert, reads.contact, room, now, changes).await?;
    let along = ReadAlong {
        tracked_segments: reads.tracked_segments,
        event_interest: reads.event_interest,
    };
    Ok((done, along))
}

/// [`plan_upsert`] with the contact of the address already read (`found`).
pub async fn plan_upsert_of(
    engine: &Engine,
    ws: &Workspace,
    upsert: &Upsert<'_>,
    found: Option<Contact>,
    room: &mut ActiveRoom,
    now: DateTime<Utc>,
    changes: &mut ChangeSet,
) -> Result<Upserted, StoreError> {
    match found {
        None => {
            let mut data = Map::new();
            if let Some(patch) = upsert.data {
                merge_data(&mut data, patch);
            }
            let fits = room.take(engine, ws).await?;
            let contact = Contact::new(
                &*engine.clock,
                &ws.id,
                upsert.email.clone(),
                upsert.subscribed.unwrap_or(upsert.default_subscribed),
                data,
                !fits,
                now,
            );
            changes.push(Write::InsertContact(contact.clone()));
            if fits {
                room.guard(ws, changes);
            }
            Ok(Upserted {
                contact,
                is_new: true,
            })
        }
        Some(mut contact) => {
            let was_subscribed = contact.subscribed;
            let mut changed = false;
            if let Some(flag) = upsert.subscribed {
                changed |= flag != contact.subscribed;
                contact.subscribed = flag;
            }
            if let Some(patch) = upsert.data {
                changed |= merge_data(&mut contact.data, patch);
            }
            if changed {
                contact.updated_at = now;
                changes.push(Write::UpdateContact(contact.clone()));
                push_subscription_event(
                    &*engine.clock,
                    ws,
                    &contact,
                    was_subscribed,
                    None,
                    now,
                    changes,
                );
            }
            Ok(Upserted {
                contact,
                is_new: false,
            })
        }
    }
}

/// Appends `contact.subscribed` / `contact.unsubscribed` when the flag moved.
pub fn push_subscription_event(
    clock: &dyn Clock,
    ws: &Workspace,
    contact: &Contact,
    was_subscribed: bool,
    reason: Option<&str>,
    now: DateTime<Utc>,
    changes: &mut ChangeSet,
) {
    if was_subscribed == contact.subscribed {
        return;
    }
    let (name, data) = if contact.subscribed {
        ("contact.subscribed", serde_json::json!({}))
    } else {
        match reason {
            Some(reason) => (
                "contact.unsubscribed",
                serde_json::json!({ "reason": reason }),
            ),
            None => ("contact.unsubscribed", serde_json::json!({})),
        }
    };
    changes.push(Write::AppendEvent(Event::new(
        clock,
        &ws.id,
        name,
        data,
        Some(contact.id.clone()),
        None,
        now,
    )));
}

/// A page of contacts for `GET /contacts`.
#[derive(Debug, Clone)]
pub struct ContactList {
    /// The contacts, newest first.
    pub contacts: Vec<Contact>,
    /// Opaque cursor of the next page; `None` on the last page.
    pub cursor: Option<String>,
    /// Whether another page exists.
    pub has_more: bool,
    /// Number of matching contacts; only on the first page.
    pub total: Option<u64>,
}

impl Engine {
    /// `POST /contacts`: creates or updates the contact with the command's address.
    pub async fn upsert_contact(&self, caller: &Caller, cmd: UpsertContact) -> Result<Upserted> {
        let upsert = Upsert {
            email: cmd.email,
            subscribed: cmd.subscribed,
            data: cmd.data.as_ref(),
            default_subscribed: true,
        };
        self.on_conflict_retry(|| async {
            let now = self.clock.now();
            let mut changes = ChangeSet::new();
            let mut room = ActiveRoom::default();
            let done = plan_upsert(
                self,
                &caller.workspace,
                &upsert,
                &mut room,
                now,
                &mut changes,
            )
            .await?;
            if !changes.is_empty() {
                self.commit(changes).await?;
            }
            Ok(done)
        })
        .await
    }

    /// `GET /contacts/{id}`.
    pub async fn contact(&self, caller: &Caller, id: &ContactId) -> Result<Contact> {
        self.store
            .contact(caller.workspace_id(), id)
            .await?
            .ok_or(Error::NotFound(Resource::Contact))
    }

    /// `GET /contacts`: a page of at most `limit` (1 to 100) contacts, newest first.
    pub async fn list_contacts(&self, caller: &Caller, query: ListContacts) -> Result<ContactList> {
        if !(1..=MAX_CONTACT_PAGE).contains(&query.limit) {
            return Err(Error::field(
                "limit",
                "out_of_range",
                format!("limit must be between 1 and {MAX_CONTACT_PAGE}"),
            ));
        }
        let before_id = match query.cursor.as_deref() {
            None => None,
            Some(raw) => Some(decode_cursor(raw).ok_or_else(invalid_cursor)?),
        };
        let limit = query.limit;
        let subscribed = query.subscribed;
        let search = query
            .search
            .map(|s| ascii_domain_address(&s.trim().to_lowercase()).into_owned())
            .filter(|s| !s.is_empty());
        let first_page = before_id.is_none();
        let q = ContactQuery {
            subscribed,
            search,
            before_id,
            limit,
        };
        let page = self.store.contacts(caller.workspace_id(), &q).await?;
        let total = if first_page {
            Some(self.store.count_contacts(caller.workspace_id(), &q).await?)
        } else {
            None
        };
        let cursor = match (page.has_more, page.contacts.last()) {
            (true, Some(last)) => Some(encode_cursor(&last.id)),
            _ => None,
        };
        Ok(ContactList {
            contacts: page.contacts,
            cursor,
            has_more: page.has_more,
            total,
        })
    }

    /// `PATCH /contacts/{id}`: `subscribed`, `data` (merged; `Clear` empties it), `email`.
    pub async fn patch_contact(
        &self,
        caller: &Caller,
        id: &ContactId,
        patch: ContactPatch,
    ) -> Result<Contact> {
        let ContactPatch {
            subscribed,
            data,
            email,
        } = patch;
        self.on_conflict_retry(|| async {
            let now = self.clock.now();
            let ws = &caller.workspace;
            let mut contact = self
                .store
                .contact(&ws.id, id)
                .await?
                .ok_or(Error::NotFound(Resource::Contact))?;
            let before = contact.clone();
            if let Some(email) = &email {
                if *email != contact.email {
                    if self
                        .store
                        .contact_by_email(&ws.id, email.as_str())
                        .await?
                        .is_some()
                    {
                        return Err(StepError::Domain(Error::Conflict(format!(
                            "another contact already has the email {email}"
                        ))));
                    }
                    contact.email = email.clone();
                }
            }
            if let Some(flag) = subscribed {
                contact.subscribed = flag;
            }
            match &data {
                Patch::Keep => {}
                Patch::Clear => contact.data.clear(),
                Patch::Set(patch) => {
                    merge_data(&mut contact.data, patch);
                }
            }
            if contact == before {
                return Ok(contact);
            }
            contact.updated_at = now;
            let mut changes = ChangeSet::new();
            changes.push(Write::UpdateContact(contact.clone()));
            push_subscription_event(
                &*self.clock,
                ws,
                &contact,
                before.subscribed,
                None,
                now,
                &mut changes,
            );
            self.commit(changes).await?;
            contact.version += 1;
            Ok(contact)
        })
        .await
    }

    /// `DELETE /contacts/{id}`; then lets a PENDING contact take the freed place.
    pub async fn delete_contact(&self, caller: &Caller, id: &ContactId) -> Result<()> {
        let ws = &caller.workspace;
        let contact = self.contact(caller, id).await?;
        let mut changes = ChangeSet::new();
        changes.push(Write::DeleteContact {
            workspace_id: ws.id.clone(),
            id: contact.id,
        });
        self.store.commit(changes).await?;
        if contact.status == ContactStatus::Active {
            self.promote_pending_contacts(ws).await?;
        }
        Ok(())
    }

    /// Makes PENDING contacts ACTIVE, oldest first, while the limit leaves room, and
    /// deletes those whose `expiresAt` has passed. Safe to run at any time, repeatedly, and
    /// concurrently with itself and with new contacts: a batch that promotes carries
    /// [`Write::GuardActiveLimit`], and one that would pass the limit is planned again from
    /// a fresh count.
    pub async fn promote_pending_contacts(&self, ws: &Workspace) -> Result<u64> {
        let mut promoted = 0u64;
        loop {
            let batch = match self.on_conflict_retry(|| self.promote_batch(ws)).await {
                Ok(batch) => batch,
                // Contention that outlasted the retries (concurrent changes to these
                // contacts, or to the room): the next sweep picks them up again, so stop
                // here rather than fail.
                Err(Error::Conflict(_)) => break,
                Err(e) => return Err(e),
            };
            promoted += batch.promoted;
            if !batch.more {
                break;
            }
        }
        Ok(promoted)
    }

    /// One batch of [`Engine::promote_pending_contacts`], planned from fresh reads.
    async fn promote_batch(&self, ws: &Workspace) -> Result<Promoted, StepError> {
        const BATCH: usize = 500;
        let now = self.clock.now();
        let pending = self.store.pending_contacts(&ws.id, BATCH).await?;
        let mut room = match (ws.active_contact_limit, pending.is_empty()) {
            (_, true) | (None, _) => u64::MAX,
            (Some(limit), false) => {
                limit.saturating_sub(self.store.count_active_contacts(&ws.id).await?)
            }
        };
        let mut changes = ChangeSet::new();
        let mut promoted = 0u64;
        for mut contact in pending.iter().cloned() {
            if contact.expires_at.is_some_and(|at| at <= now) {
                changes.push(Write::DeleteContact {
                    workspace_id: ws.id.clone(),
                    id: contact.id,
                });
            } else if room > 0 {
                room -= 1;
                promoted += 1;
                contact.status = ContactStatus::Active;
                contact.expires_at = None;
                contact.updated_at = now;
                changes.push(Write::UpdateContact(contact));
            }
        }
        if changes.is_empty() {
            return Ok(Promoted {
                promoted,
                more: false,
            });
        }
        if let Some(limit) = ws.active_contact_limit.filter(|_| promoted > 0) {
            changes.push(Write::GuardActiveLimit {
                workspace_id: ws.id.clone(),
                limit,
            });
        }
        self.store.commit(changes).await?;
        Ok(Promoted {
            promoted,
            more: pending.len() == BATCH,
        })
    }
}

/// What one batch of [`Engine::promote_pending_contacts`] did.
struct Promoted {
    /// Contacts made ACTIVE.
    promoted: u64,
    /// Whether more PENDING contacts may be left to look at.
    more: bool,
}

/// Encodes a contact id as an opaque cursor.
pub fn encode_cursor(id: &ContactId) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id.as_str().as_bytes())
}

/// Decodes a cursor made by [`encode_cursor`].
pub fn decode_cursor(cursor: &str) -> Option<ContactId> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let id = String::from_utf8(bytes).ok()?;
    uuid::Uuid::parse_str(&id).ok().map(|_| ContactId::from(id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn cursors_round_trip(bytes in proptest::array::uniform16(any::<u8>())) {
            let id = ContactId::from(uuid::Uuid::from_bytes(bytes).to_string());
            prop_assert_eq!(decode_cursor(&encode_cursor(&id)), Some(id));
        }

        #[test]
        fn garbage_cursors_are_refused_not_panicking(raw in "\\PC{0,60}") {
            // Refused unless it is exactly the encoding of an id (the only cursors made).
            match decode_cursor(&raw) {
                None => {}
                Some(id) => {
                    prop_assert!(uuid::Uuid::parse_str(id.as_str()).is_ok(), "{raw:?} gave {id:?}");
                    prop_assert_eq!(encode_cursor(&id), raw);
                }
            }
        }

        #[test]
        fn well_formed_base64_of_anything_but_an_id_is_refused(
            bytes in proptest::collection::vec(any::<u8>(), 0..80),
        ) {
            prop_assume!(!std::str::from_utf8(&bytes).is_ok_and(|s| uuid::Uuid::parse_str(s).is_ok()));
            let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes);
            prop_assert_eq!(decode_cursor(&raw), None, "{:?}", raw);
        }
    }
}
