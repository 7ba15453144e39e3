//! The in-memory records and their indexes.
//!
//! Every record kind has one `replace_*` primitive that swaps the stored value (or its
//! absence) and keeps the indexes in step. Commits apply writes through these primitives and
//! undo a failed change set by calling them again with the previous values.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use posthorn_core::model::{
    Contact, ContactStatus, Domain, EmailRecord, Event, KeyKind, KeySet, Template, Workspace,
};

/// Position of an event in time order: (created_at, id).
pub(crate) type EventKey = (DateTime<Utc>, String);

/// Every record of the store.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Workspaces by id.
    pub(crate) workspaces: HashMap<String, Workspace>,
    /// Key hash → (workspace id, key set id, kind).
    pub(crate) key_hashes: HashMap<String, (String, String, KeyKind)>,
    /// Records per workspace.
    pub(crate) data: HashMap<String, WorkspaceData>,
}

/// The records of one workspace.
#[derive(Debug, Default)]
pub(crate) struct WorkspaceData {
    pub(crate) key_sets: HashMap<String, KeySet>,
    pub(crate) domains: HashMap<String, Domain>,
    /// Domain name → domain id.
    pub(crate) domain_names: HashMap<String, String>,
    /// Contacts by id; ids are time ordered, so the map's order is creation order.
    pub(crate) contacts: BTreeMap<String, Contact>,
    /// Email → contact id.
    pub(crate) contact_emails: HashMap<String, String>,
    /// PENDING contacts by (created_at, id).
    pub(crate) pending: BTreeSet<(DateTime<Utc>, String)>,
    pub(crate) active_count: u64,
    pub(crate) subscribed_count: u64,
    pub(crate) templates: HashMap<String, Template>,
    pub(crate) emails: HashMap<String, EmailRecord>,
    pub(crate) events: BTreeMap<EventKey, Event>,
    /// Event name → keys of the events with that name (never empty).
    pub(crate) events_by_name: BTreeMap<String, BTreeSet<EventKey>>,
    /// Contact id → keys of the events about that contact (never empty).
    pub(crate) events_by_contact: HashMap<String, BTreeSet<EventKey>>,
}

impl State {
    /// The records of `workspace_id`, created empty when missing.
    pub(crate) fn data_mut(&mut self, workspace_id: &str) -> &mut WorkspaceData {
        self.data.entry(workspace_id.to_string()).or_default()
    }

    /// Stores `new` (or removes) the workspace `id`; returns what was there.
    pub(crate) fn replace_workspace(
        &mut self,
        id: &str,
        new: Option<Workspace>,
    ) -> Option<Workspace> {
        match new {
            Some(workspace) => self.workspaces.insert(id.to_string(), workspace),
            None => self.workspaces.remove(id),
        }
    }

    /// Stores `new` (or removes) the key set `id` and its hash index entries.
    pub(crate) fn replace_key_set(
        &mut self,
        workspace_id: &str,
        id: &str,
        new: Option<KeySet>,
    ) -> Option<KeySet> {
        let data = self.data_mut(workspace_id);
        let old = match new.clone() {
            Some(set) => data.key_sets.insert(id.to_string(), set),
            None => data.key_sets.remove(id),
        };
        if let Some(old) = &old {
            for hash in [&old.public_key_hash, &old.secret_key_hash] {
                let ours = self
                    .key_hashes
                    .get(hash)
                    .is_some_and(|(ws, set, _)| ws == workspace_id && set == id);
                if ours {
                    self.key_hashes.remove(hash);
                }
            }
        }
        if let Some(set) = &new {
            for (hash, kind) in [
                (&set.public_key_hash, KeyKind::Public),
                (&set.secret_key_hash, KeyKind::Secret),
            ] {
                self.key_hashes.insert(
                    hash.clone(),
                    (workspace_id.to_string(), id.to_string(), kind),
                );
            }
        }
        old
    }
}

impl WorkspaceData {
    /// Stores `new` (or removes) the domain `id` and its name index entry.
    pub(crate) fn replace_domain(&mut self, id: &str, new: Option<Domain>) -> Option<Domain> {
        let old = self.domains.remove(id);
        if let Some(old) = &old {
            if self.domain_names.get(&old.domain).is_some_and(|d| d == id) {
                self.domain_names.remove(&old.domain);
            }
        }
        if let Some(domain) = new {
            self.domain_names
                .insert(domain.domain.clone(), id.to_string());
            self.domains.insert(id.to_string(), domain);
        }
        old
    }

    /// Stores `new` (or removes) the contact `id`, keeping the email index, the pending
    /// index and the counters in step.
    pub(crate) fn replace_contact(&mut self, id: &str, new: Option<Contact>) -> Option<Contact> {
        let old = self.contacts.remove(id);
        if let Some(old) = &old {
            if self
                .contact_emails
                .get(old.email.as_str())
                .is_some_and(|c| c == id)
            {
                self.contact_emails.remove(old.email.as_str());
            }
            match old.status {
                ContactStatus::Active => self.active_count = self.active_count.saturating_sub(1),
                ContactStatus::Pending => {
                    self.pending.remove(&(old.created_at, id.to_string()));
                }
            }
            if old.subscribed {
                self.subscribed_count = self.subscribed_count.saturating_sub(1);
            }
        }
        if let Some(contact) = new {
            self.contact_emails
                .insert(contact.email.as_str().to_string(), id.to_string());
            match contact.status {
                ContactStatus::Active => self.active_count += 1,
                ContactStatus::Pending => {
                    self.pending.insert((contact.created_at, id.to_string()));
                }
            }
            if contact.subscribed {
                self.subscribed_count += 1;
            }
            self.contacts.insert(id.to_string(), contact);
        }
        old
    }

    /// Stores `new` (or removes) the template `id`.
    pub(crate) fn replace_template(&mut self, id: &str, new: Option<Template>) -> Option<Template> {
        match new {
            Some(template) => self.templates.insert(id.to_string(), template),
            None => self.templates.remove(id),
        }
    }

    /// Stores `new` (or removes) the email record `id`.
    pub(crate) fn replace_email(
        &mut self,
        id: &str,
        new: Option<EmailRecord>,
    ) -> Option<EmailRecord> {
        match new {
            Some(email) => self.emails.insert(id.to_string(), email),
            None => self.emails.remove(id),
        }
    }

    /// Stores `new` (or removes) the event at `key`, keeping the name and contact indexes.
    pub(crate) fn replace_event(&mut self, key: &EventKey, new: Option<Event>) -> Option<Event> {
        let old = self.events.remove(key);
        if let Some(old) = &old {
            remove_from_index(&mut self.events_by_name, &old.name, key);
            if let Some(contact_id) = &old.contact_id {
                if let Some(keys) = self.events_by_contact.get_mut(contact_id) {
                    keys.remove(key);
                    if keys.is_empty() {
                        self.events_by_contact.remove(contact_id);
                    }
                }
            }
        }
        if let Some(event) = new {
            self.events_by_name
                .entry(event.name.clone())
                .or_default()
                .insert(key.clone());
            if let Some(contact_id) = &event.contact_id {
                self.events_by_contact
                    .entry(contact_id.clone())
                    .or_default()
                    .insert(key.clone());
            }
            self.events.insert(key.clone(), event);
        }
        old
    }
}

fn remove_from_index(index: &mut BTreeMap<String, BTreeSet<EventKey>>, name: &str, key: &EventKey) {
    if let Some(keys) = index.get_mut(name) {
        keys.remove(key);
        if keys.is_empty() {
            index.remove(name);
        }
    }
}
