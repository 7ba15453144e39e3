//! Queries over the in-memory state; indexes where the data can be large.

use posthorn_core::model::{CampaignId, ContactId, SegmentId, WorkspaceId};
use std::collections::{BTreeSet, HashSet};
use std::ops::Bound;

use chrono::{DateTime, Utc};
use posthorn_core::model::{
    ApiKey, BounceType, Campaign, CampaignStatus, Contact, ContactStatus, Domain, EmailCounts,
    EmailRecord, EmailStats, Event, KeySet, Segment, SegmentType, Template,
};
use posthorn_core::ports::{
    ContactPage, ContactQuery, EmailStatsQuery, EventQuery, MatchQuery, TemplateQuery,
};
use posthorn_core::segment::{self, Condition, ContactFacts, EventFact, Field};

use super::alongside::Alongside;
use super::state::{EventFacts, EventKey, State, WorkspaceData};
use super::stored_event::StoredEvent;

pub(super) fn key_by_hash(state: &State, key_hash: &str) -> Option<ApiKey> {
    let (ws, id, kind) = state.key_hashes.get(key_hash)?;
    let key_set = state.data.get(ws)?.key_sets.get(id)?.clone();
    Some(ApiKey {
        key_set,
        kind: *kind,
    })
}

pub(super) fn key_sets(state: &State, workspace_id: &WorkspaceId) -> Vec<KeySet> {
    let Some(data) = state.data.get(workspace_id) else {
        return Vec::new();
    };
    let mut sets: Vec<KeySet> = data.key_sets.values().cloned().collect();
    sets.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    sets
}

pub(super) fn inbound_domain(state: &State, name: &str) -> Option<Domain> {
    state
        .data
        .values()
        .flat_map(|data| data.domains.values())
        .find(|d| d.inbound_enabled && d.domain == name)
        .cloned()
}

pub(super) fn domains(state: &State, workspace_id: &WorkspaceId) -> Vec<Domain> {
    let Some(data) = state.data.get(workspace_id) else {
        return Vec::new();
    };
    let mut domains: Vec<Domain> = data.domains.values().cloned().collect();
    domains.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    domains
}

pub(super) fn contact_by_email(
    state: &State,
    workspace_id: &WorkspaceId,
    email: &str,
) -> Option<Contact> {
    let data = state.data.get(workspace_id)?;
    let emails = &data.contact_emails;
    let id = match emails.get(email) {
        Some(id) => id,
        // Stored emails are lower-case; accept a caller that did not normalise (and spare
        // the second search, and its allocation, to the many that did).
        None if !is_lower_case(email) => emails.get(&email.to_lowercase())?,
        None => return None,
    };
    data.contacts.get(id).cloned()
}

/// Whether lower-casing `text` leaves it as it is.
fn is_lower_case(text: &str) -> bool {
    // Most addresses are ASCII: a byte scan, not the Unicode tables for every char.
    if text.is_ascii() {
        return !text.bytes().any(|b| b.is_ascii_uppercase());
    }
    text.chars().flat_map(char::to_lowercase).eq(text.chars())
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

pub(super) fn contacts(
    state: &State,
    workspace_id: &WorkspaceId,
    query: &ContactQuery,
) -> ContactPage {
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

pub(super) fn count_contacts(
    state: &State,
    workspace_id: &WorkspaceId,
    query: &ContactQuery,
) -> u64 {
    let Some(data) = state.data.get(workspace_id) else {
        return 0;
    };
    let filter = ContactFilter::new(query);
    let total = data.contacts.len() as u64;
    match (&filter.search, filter.subscribed) {
        (None, None) => total,
        (None, Some(true)) => data.counts.subscribed,
        (None, Some(false)) => total.saturating_sub(data.counts.subscribed),
        (Some(_), _) => data.contacts.values().filter(|c| filter.matches(c)).count() as u64,
    }
}

pub(super) fn pending_contacts(
    state: &State,
    workspace_id: &WorkspaceId,
    limit: usize,
) -> Vec<Contact> {
    let Some(data) = state.data.get(workspace_id) else {
        return Vec::new();
    };
    data.counts
        .pending
        .iter()
        .filter_map(|(_, id)| data.contacts.get(id))
        .take(limit)
        .cloned()
        .collect()
}

pub(super) fn templates(
    state: &State,
    workspace_id: &WorkspaceId,
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

pub(super) fn events(state: &State, workspace_id: &WorkspaceId, query: &EventQuery) -> Vec<Event> {
    let Some(data) = state.data.get(workspace_id) else {
        return Vec::new();
    };
    let wanted = |event: &&Event| {
        query.name.as_deref().is_none_or(|n| event.name == n)
            && query
                .contact_id
                .as_ref()
                .is_none_or(|c| event.contact_id.as_ref() == Some(c))
    };
    // Walk the narrowest index that applies, newest first.
    let keys: Box<dyn Iterator<Item = &EventKey>> = match (&query.contact_id, &query.name) {
        (Some(contact_id), _) => Box::new(data.event_keys_of_contact(contact_id).rev()),
        (None, Some(name)) => match data.events_by_name.get(name) {
            Some(keys) => Box::new(keys.iter().rev()),
            None => return Vec::new(),
        },
        (None, None) => Box::new(data.events.keys().rev()),
    };
    keys.filter_map(|key| data.events.get(key))
        .filter(|stored| wanted(&&stored.event))
        .take(query.limit)
        .map(StoredEvent::to_event)
        .collect()
}

pub(super) fn segments(
    state: &State,
    workspace_id: &WorkspaceId,
    offset: usize,
    limit: usize,
) -> (Vec<Segment>, u64) {
    let Some(data) = state.data.get(workspace_id) else {
        return (Vec::new(), 0);
    };
    let page = data
        .segment_order
        .iter()
        .rev()
        .skip(offset)
        .take(limit)
        .filter_map(|(_, id)| data.segments.get(id))
        .cloned()
        .collect();
    (page, data.segment_order.len() as u64)
}

pub(super) fn tracked_segments(state: &State, workspace_id: &WorkspaceId) -> Vec<Segment> {
    let Some(data) = state.data.get(workspace_id) else {
        return Vec::new();
    };
    data.segment_order
        .iter()
        .filter_map(|(_, id)| data.segments.get(id))
        .filter(|s| s.segment_type == SegmentType::Dynamic && s.track_membership)
        .cloned()
        .collect()
}

fn members<'a>(
    state: &'a State,
    workspace_id: &WorkspaceId,
    segment_id: &SegmentId,
) -> Option<&'a BTreeSet<ContactId>> {
    state
        .data
        .get(workspace_id)?
        .segment_members
        .get(segment_id)
}

pub(super) fn segment_member_count(
    state: &State,
    workspace_id: &WorkspaceId,
    segment_id: &SegmentId,
) -> u64 {
    members(state, workspace_id, segment_id).map_or(0, |m| m.len() as u64)
}

pub(super) fn segment_members(
    state: &State,
    workspace_id: &WorkspaceId,
    segment_id: &SegmentId,
    offset: usize,
    limit: usize,
) -> Vec<Contact> {
    let (Some(data), Some(members)) = (
        state.data.get(workspace_id),
        members(state, workspace_id, segment_id),
    ) else {
        return Vec::new();
    };
    // Ids are time ordered: the greatest id is the newest contact.
    members
        .iter()
        .rev()
        .skip(offset)
        .take(limit)
        .filter_map(|id| data.contacts.get(id))
        .cloned()
        .collect()
}

pub(super) fn segment_member_ids(
    state: &State,
    workspace_id: &WorkspaceId,
    segment_id: &SegmentId,
    after_id: Option<&ContactId>,
    limit: usize,
) -> Vec<ContactId> {
    let Some(members) = members(state, workspace_id, segment_id) else {
        return Vec::new();
    };
    let lower = after_id.map_or(Bound::Unbounded, Bound::Excluded);
    members
        .range::<ContactId, _>((lower, Bound::Unbounded))
        .take(limit)
        .cloned()
        .collect()
}

pub(super) fn memberships(
    state: &State,
    workspace_id: &WorkspaceId,
    contact_id: &ContactId,
) -> HashSet<SegmentId> {
    state
        .data
        .get(workspace_id)
        .and_then(|d| d.contact_segments.get(contact_id))
        .cloned()
        .unwrap_or_default()
}

pub(super) fn contact_event_facts(
    state: &State,
    workspace_id: &WorkspaceId,
    contact_id: &ContactId,
) -> Vec<EventFact> {
    let Some(facts) = state
        .data
        .get(workspace_id)
        .and_then(|d| d.event_facts.get(contact_id))
    else {
        return Vec::new();
    };
    let mut events = facts.events.clone();
    events.sort_by(|a, b| (a.at, &a.name).cmp(&(b.at, &b.name)));
    events
}

/// What a condition looks at besides the contact record.
#[derive(Debug, Default)]
struct Needs {
    events: bool,
    segments: bool,
}

impl Needs {
    fn of(condition: &Condition) -> Self {
        let mut needs = Self::default();
        condition.for_each_filter(&mut |filter| match filter.field {
            Field::Event(_) | Field::EmailActivity(_) => needs.events = true,
            Field::Segment(_) => needs.segments = true,
            _ => {}
        });
        needs
    }
}

/// Evaluates one condition for the contacts of a workspace, visited in id order after
/// `from`, fetching only the facts it looks at from the indexes (walked alongside).
struct Matcher<'a> {
    condition: &'a Condition,
    needs: Needs,
    audience_only: bool,
    now: DateTime<Utc>,
    event_facts: Alongside<'a, ContactId, EventFacts>,
    contact_segments: Alongside<'a, ContactId, HashSet<SegmentId>>,
    no_segments: HashSet<SegmentId>,
}

impl<'a> Matcher<'a> {
    fn new(
        data: &'a WorkspaceData,
        condition: &'a Condition,
        audience_only: bool,
        now: DateTime<Utc>,
        from: Bound<&ContactId>,
    ) -> Self {
        Self {
            condition,
            needs: Needs::of(condition),
            audience_only,
            now,
            event_facts: Alongside::new(&data.event_facts, from),
            contact_segments: Alongside::new(&data.contact_segments, from),
            no_segments: HashSet::new(),
        }
    }

    fn matches(&mut self, contact: &Contact) -> bool {
        if self.audience_only && !(contact.subscribed && contact.status == ContactStatus::Active) {
            return false;
        }
        let facts = if self.needs.events {
            self.event_facts.get(&contact.id)
        } else {
            None
        };
        let (events, activity) = match facts {
            Some(f) => (f.events.as_slice(), f.activity.as_slice()),
            None => (&[][..], &[][..]),
        };
        let segments = if self.needs.segments {
            self.contact_segments
                .get(&contact.id)
                .unwrap_or(&self.no_segments)
        } else {
            &self.no_segments
        };
        let facts = ContactFacts {
            contact,
            events,
            activity,
            segments,
        };
        segment::matches(self.condition, &facts, self.now)
    }
}

pub(super) fn contacts_matching(
    state: &State,
    workspace_id: &WorkspaceId,
    condition: &Condition,
    query: &MatchQuery,
    now: DateTime<Utc>,
) -> Vec<Contact> {
    let Some(data) = state.data.get(workspace_id) else {
        return Vec::new();
    };
    if query.limit == 0 {
        return Vec::new();
    }
    if let (Some(after), Some(until)) = (&query.after_id, &query.until_id) {
        if after >= until {
            return Vec::new();
        }
    }
    let lower = query
        .after_id
        .as_ref()
        .map_or(Bound::Unbounded, Bound::Excluded);
    let upper = query
        .until_id
        .as_ref()
        .map_or(Bound::Unbounded, Bound::Included);
    let mut matcher = Matcher::new(data, condition, query.audience_only, now, lower);
    data.contacts
        .range::<ContactId, _>((lower, upper))
        .map(|(_, c)| c)
        .filter(|c| matcher.matches(c))
        .take(query.limit)
        .cloned()
        .collect()
}

/// One slice of a count: how many of the (at most) `slice` contacts after `after` (in id
/// order) match, and the id to continue after, or `None` when the workspace is done.
pub(super) fn count_matching_slice(
    state: &State,
    workspace_id: &WorkspaceId,
    query: &CountQuery<'_>,
    after: Option<&ContactId>,
    slice: usize,
) -> (u64, Option<ContactId>) {
    let Some(data) = state.data.get(workspace_id) else {
        return (0, None);
    };
    if query.condition.groups.is_empty() && !query.audience_only {
        return (data.contacts.len() as u64, None);
    }
    let from = after.map_or(Bound::Unbounded, Bound::Excluded);
    let mut matcher = Matcher::new(data, query.condition, query.audience_only, query.now, from);
    let range = data
        .contacts
        .range::<ContactId, _>((from, Bound::Unbounded));
    let mut seen = 0;
    let mut matched = 0;
    let mut last = None;
    for (id, contact) in range.take(slice) {
        seen += 1;
        matched += u64::from(matcher.matches(contact));
        last = Some(id);
    }
    let next = if seen == slice { last.cloned() } else { None };
    (matched, next)
}

/// What a count matches: the condition, whether only the audience (subscribed, ACTIVE)
/// counts, and the instant time-relative filters are judged at.
pub(super) struct CountQuery<'a> {
    pub(super) condition: &'a Condition,
    pub(super) audience_only: bool,
    pub(super) now: DateTime<Utc>,
}

pub(super) fn campaigns(
    state: &State,
    workspace_id: &WorkspaceId,
    status: Option<CampaignStatus>,
    offset: usize,
    limit: usize,
) -> (Vec<Campaign>, u64) {
    let Some(data) = state.data.get(workspace_id) else {
        return (Vec::new(), 0);
    };
    let keys = match status {
        None => &data.campaign_order,
        Some(status) => match data.campaigns_by_status.get(&status) {
            Some(keys) => keys,
            None => return (Vec::new(), 0),
        },
    };
    let page = keys
        .iter()
        .rev()
        .skip(offset)
        .take(limit)
        .filter_map(|(_, id)| data.campaigns.get(id))
        .cloned()
        .collect();
    (page, keys.len() as u64)
}

pub(super) fn campaign_email_counts(
    state: &State,
    workspace_id: &WorkspaceId,
    campaign_id: &CampaignId,
) -> EmailCounts {
    state
        .data
        .get(workspace_id)
        .and_then(|d| d.campaign_counts.get(campaign_id))
        .copied()
        .unwrap_or_default()
}

/// Outcome counts of the workspace's sent emails matching `query`.
pub(super) fn email_stats(
    state: &State,
    workspace_id: &WorkspaceId,
    query: &EmailStatsQuery,
) -> EmailStats {
    let mut stats = EmailStats::default();
    let Some(data) = state.data.get(workspace_id) else {
        return stats;
    };
    let emails: Box<dyn Iterator<Item = &EmailRecord>> = match &query.campaign_id {
        Some(campaign_id) => Box::new(
            data.campaign_recipients
                .get(campaign_id)
                .into_iter()
                .flat_map(|r| r.values())
                .filter_map(|id| data.emails.get(id)),
        ),
        None => Box::new(data.emails.values()),
    };
    for email in emails {
        let Some(sent_at) = email.sent_at else {
            continue;
        };
        if query.sent_since.is_some_and(|since| sent_at < since) {
            continue;
        }
        let l = &email.lifecycle;
        stats.sent += 1;
        let opened = l.opened_at.is_some() || l.clicked_at.is_some();
        let delivered = l.delivered_at.is_some() || opened || l.complained_at.is_some();
        stats.delivered += u64::from(delivered);
        stats.opened += u64::from(opened);
        stats.clicked += u64::from(l.clicked_at.is_some());
        stats.bounced += u64::from(l.bounce_type == Some(BounceType::Permanent));
        stats.complained += u64::from(l.complained_at.is_some());
    }
    stats
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::is_lower_case;

    proptest! {
        #[test]
        fn the_ascii_scan_agrees_with_lower_casing_each_char(text in "[ -~]{0,40}") {
            let by_chars = text.chars().flat_map(char::to_lowercase).eq(text.chars());
            prop_assert_eq!(is_lower_case(&text), by_chars);
        }
    }

    #[test]
    fn lower_case_is_told_from_any_other_case() {
        assert!(is_lower_case("ada@example.com"));
        assert!(is_lower_case("ünal@example.com"));
        assert!(!is_lower_case("Ada@example.com"));
        assert!(!is_lower_case("ÜNAL@example.com"));
        // A title-case letter is neither upper nor lower case, yet lower-cases to another.
        assert!(!is_lower_case("\u{1C5}@example.com"));
    }
}
