//! Queries over the in-memory state; indexes where the data can be large.

use std::ops::Bound;

use posthorn_core::model::{ApiKey, Contact, Domain, Event, KeySet, Template};
use posthorn_core::ports::{ContactPage, ContactQuery, EventQuery, TemplateQuery};

use super::state::{EventKey, State};

pub(super) fn key_by_hash(state: &State, key_hash: &str) -> Option<ApiKey> {
    let (ws, id, kind) = state.key_hashes.get(key_hash)?;
    let key_set = state.data.get(ws)?.key_sets.get(id)?.clone();
    Some(ApiKey {
        key_set,
        kind: *kind,
    })
}

pub(super) fn key_sets(state: &State, workspace_id: &str) -> Vec<KeySet> {
    let Some(data) = state.data.get(workspace_id) else {
        return Vec::new();
    };
    let mut sets: Vec<KeySet> = data.key_sets.values().cloned().collect();
    sets.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    sets
}

pub(super) fn domains(state: &State, workspace_id: &str) -> Vec<Domain> {
    let Some(data) = state.data.get(workspace_id) else {
        return Vec::new();
    };
    let mut domains: Vec<Domain> = data.domains.values().cloned().collect();
    domains.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    domains
}

pub(super) fn contact_by_email(state: &State, workspace_id: &str, email: &str) -> Option<Contact> {
    let data = state.data.get(workspace_id)?;
    let id = match data.contact_emails.get(email) {
        Some(id) => id,
        // Stored emails are lower-case; accept a caller that did not normalise.
        None => data.contact_emails.get(&email.to_lowercase())?,
    };
    data.contacts.get(id).cloned()
}

/// The filters of a contact query, prepared once.
struct ContactFilter {
    subscribed: Option<bool>,
    search: Option<String>,
}

impl ContactFilter {
    fn new(query: &ContactQuery) -> Self {
        Self {
            subscribed: query.subscribed,
            search: query
                .search
                .as_deref()
                .map(str::to_lowercase)
                .filter(|s| !s.is_empty()),
        }
    }

    fn matches(&self, contact: &Contact) -> bool {
        self.subscribed.is_none_or(|s| contact.subscribed == s)
            && self
                .search
                .as_deref()
                .is_none_or(|s| contact.email.as_str().contains(s))
    }
}

pub(super) fn contacts(state: &State, workspace_id: &str, query: &ContactQuery) -> ContactPage {
    let mut page = ContactPage {
        contacts: Vec::new(),
        has_more: false,
    };
    let Some(data) = state.data.get(workspace_id) else {
        return page;
    };
    let filter = ContactFilter::new(query);
    let upper = match &query.before_id {
        Some(before) => Bound::Excluded(before.as_str()),
        None => Bound::Unbounded,
    };
    let candidates = data
        .contacts
        .range::<str, _>((Bound::Unbounded, upper))
        .rev()
        .map(|(_, c)| c)
        .filter(|c| filter.matches(c));
    for contact in candidates {
        if page.contacts.len() == query.limit {
            page.has_more = true;
            break;
        }
        page.contacts.push(contact.clone());
    }
    page
}

pub(super) fn count_contacts(state: &State, workspace_id: &str, query: &ContactQuery) -> u64 {
    let Some(data) = state.data.get(workspace_id) else {
        return 0;
    };
    let filter = ContactFilter::new(query);
    let total = data.contacts.len() as u64;
    match (&filter.search, filter.subscribed) {
        (None, None) => total,
        (None, Some(true)) => data.subscribed_count,
        (None, Some(false)) => total.saturating_sub(data.subscribed_count),
        (Some(_), _) => data.contacts.values().filter(|c| filter.matches(c)).count() as u64,
    }
}

pub(super) fn pending_contacts(state: &State, workspace_id: &str, limit: usize) -> Vec<Contact> {
    let Some(data) = state.data.get(workspace_id) else {
        return Vec::new();
    };
    data.pending
        .iter()
        .filter_map(|(_, id)| data.contacts.get(id))
        .take(limit)
        .cloned()
        .collect()
}

pub(super) fn templates(
    state: &State,
    workspace_id: &str,
    query: &TemplateQuery,
) -> (Vec<Template>, u64) {
    let Some(data) = state.data.get(workspace_id) else {
        return (Vec::new(), 0);
    };
    let search = query.search.as_deref().map(str::to_lowercase);
    let mut matching: Vec<&Template> = data
        .templates
        .values()
        .filter(|t| query.template_type.is_none_or(|ty| t.template_type == ty))
        .filter(|t| {
            search.as_deref().is_none_or(|s| {
                t.name.to_lowercase().contains(s) || t.subject.to_lowercase().contains(s)
            })
        })
        .collect();
    matching.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
    let total = matching.len() as u64;
    let page = matching
        .into_iter()
        .skip(query.offset)
        .take(query.limit)
        .cloned()
        .collect();
    (page, total)
}

pub(super) fn events(state: &State, workspace_id: &str, query: &EventQuery) -> Vec<Event> {
    let Some(data) = state.data.get(workspace_id) else {
        return Vec::new();
    };
    let wanted = |event: &&Event| {
        query.name.as_deref().is_none_or(|n| event.name == n)
            && query
                .contact_id
                .as_deref()
                .is_none_or(|c| event.contact_id.as_deref() == Some(c))
    };
    // Walk the narrowest index that applies, newest first.
    let keys: Box<dyn Iterator<Item = &EventKey>> = match (&query.contact_id, &query.name) {
        (Some(contact_id), _) => match data.events_by_contact.get(contact_id) {
            Some(keys) => Box::new(keys.iter().rev()),
            None => return Vec::new(),
        },
        (None, Some(name)) => match data.events_by_name.get(name) {
            Some(keys) => Box::new(keys.iter().rev()),
            None => return Vec::new(),
        },
        (None, None) => Box::new(data.events.keys().rev()),
    };
    keys.filter_map(|key| data.events.get(key))
        .filter(wanted)
        .take(query.limit)
        .cloned()
        .collect()
}
