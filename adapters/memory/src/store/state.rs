//! The in-memory records and their indexes.
//!
//! Every record kind has one `replace_*` primitive that swaps the stored value (or its
//! absence) and keeps the indexes in step. Commits apply writes through these primitives and
//! undo a failed change set by calling them again with the previous values.

use std::collections::{btree_map, BTreeMap, BTreeSet, HashMap, HashSet};

use chrono::{DateTime, Utc};
use posthorn_core::model::{
    Campaign, CampaignId, CampaignStatus, Contact, ContactId, ContactStatus, Domain, DomainId,
    EmailAddress, EmailCounts, EmailId, EmailRecord, EmailStatus, Event, EventId,
    IdempotencyRecord, InboundEmail, KeyKind, KeySet, KeySetId, Segment, SegmentId, Template,
    TemplateId, Workspace, WorkspaceId,
};
use posthorn_core::segment::{activity_of_event, ActivityFact, EventFact};

use super::hash_index::HashIndex;
use super::stored_event::StoredEvent;
use super::workflows::WorkflowData;

/// Position of an event in time order: (created_at, id).
pub(crate) type EventKey = (DateTime<Utc>, EventId);

/// A map keyed by workspace id, which every request looks up a few times. Hashed with
/// hashbrown's default (foldhash), several times cheaper than std's SipHash for an id:
/// workspace ids are made by the store, so no stranger chooses the keys of these maps.
pub(crate) type WorkspaceMap<V> = hashbrown::HashMap<WorkspaceId, V>;

/// A deployment-wide index of emails by a header value: value → (email id, workspace id).
pub(crate) type EmailIndex = BTreeMap<String, BTreeSet<(EmailId, WorkspaceId)>>;

/// Position of a segment or campaign in listing order: (created_at, id).
pub(crate) type CreatedKey<Id> = (DateTime<Utc>, Id);

/// What the counters and the pending index of a workspace know of a contact.
#[derive(Clone, Copy)]
struct Counted {
    status: ContactStatus,
    created_at: DateTime<Utc>,
    subscribed: bool,
}

impl Counted {
    fn of(contact: &Contact) -> Self {
        Self {
            status: contact.status,
            created_at: contact.created_at,
            subscribed: contact.subscribed,
        }
    }
}

/// A workspace's contact counters and its index of PENDING contacts.
#[derive(Debug, Default)]
pub(crate) struct ContactCounts {
    /// PENDING contacts by (created_at, id).
    pub(crate) pending: BTreeSet<(DateTime<Utc>, ContactId)>,
    /// ACTIVE contacts.
    pub(crate) active: u64,
    /// Subscribed contacts.
    pub(crate) subscribed: u64,
}

impl ContactCounts {
    /// Counts a stored contact.
    fn add(&mut self, id: &ContactId, c: Counted) {
        match c.status {
            ContactStatus::Active => self.active += 1,
            ContactStatus::Pending => {
                self.pending.insert((c.created_at, id.clone()));
            }
        }
        if c.subscribed {
            self.subscribed += 1;
        }
    }

    /// Puts `new` in the place of the stored contact `slot` (the same id and address),
    /// counted instead of it; returns the contact it replaced.
    fn swap(&mut self, slot: &mut Contact, new: Contact) -> Contact {
        let counted = Counted::of(&new);
        let old = std::mem::replace(slot, new);
        self.remove(&old.id, Counted::of(&old));
        self.add(&old.id, counted);
        old
    }

    /// Takes a contact that leaves the store out of the counts.
    fn remove(&mut self, id: &ContactId, c: Counted) {
        match c.status {
            ContactStatus::Active => self.active = self.active.saturating_sub(1),
            ContactStatus::Pending => {
                self.pending.remove(&(c.created_at, id.clone()));
            }
        }
        if c.subscribed {
            self.subscribed = self.subscribed.saturating_sub(1);
        }
    }
}

/// What conditions can look at of one contact's events, kept beside the events.
#[derive(Debug, Default)]
pub(crate) struct EventFacts {
    /// Every event of the contact as (name, time), in no particular order.
    pub(crate) events: Vec<EventFact>,
    /// The events that stand for email activity (`email.open`, ...), in no particular order.
    pub(crate) activity: Vec<ActivityFact>,
    /// The keys of the contact's events, oldest first. Kept with the facts, not in an index
    /// of its own: a new event about a contact then costs one search, not two.
    pub(crate) keys: Vec<EventKey>,
}

/// Every record of the store.
///
/// Maps that grow with traffic (contacts, events, emails, their indexes) are B-trees, not
/// hash maps: a hash map grows by rehashing every entry at once, under the store's write
/// lock, and at a few hundred thousand events that stalled every request for about 250 ms
/// (docs/performance.md). A B-tree grows a node at a time.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Workspaces by id.
    pub(crate) workspaces: WorkspaceMap<Workspace>,
    /// Key hash → (workspace id, key set id, kind).
    pub(crate) key_hashes: HashMap<String, (WorkspaceId, KeySetId, KeyKind)>,
    /// Records per workspace.
    pub(crate) data: WorkspaceMap<WorkspaceData>,
    /// Provider message id → the emails carrying it, as (email id, workspace id).
    pub(crate) provider_ids: EmailIndex,
    /// Message-ID → the emails carrying it, as (email id, workspace id).
    pub(crate) message_ids: EmailIndex,
    /// Deployment-wide secrets by name.
    pub(crate) secrets: HashMap<String, Vec<u8>>,
    /// SNS messages already processed, by `MessageId`.
    /// Processed SNS messages, with when each was processed.
    pub(crate) sns_messages: BTreeMap<String, DateTime<Utc>>,
    /// Workflow records per workspace.
    pub(crate) workflows: WorkspaceMap<WorkflowData>,
    /// `Idempotency-Key` records by (scope, key).
    pub(crate) idempotency: BTreeMap<(String, String), IdempotencyRecord>,
}

/// What keeps [`WorkspaceData::insert_contact`] from storing a contact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Taken {
    /// Another contact has this address.
    Email(EmailAddress),
    /// Another contact has this id.
    Id(ContactId),
}

/// What keeps [`WorkspaceData::update_contact`] from storing a contact's new version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// No contact has this id.
    Gone,
    /// The stored contact is at another version than the change was planned on.
    Version(u64),
    /// Another contact has the new address.
    Email(EmailAddress),
}

/// The records of one workspace. Growing maps are B-trees, as for [`State`], except the
/// ones only ever searched by key, which are [`HashIndex`]es (they grow a table at a time).
#[derive(Debug, Default)]
pub(crate) struct WorkspaceData {
    pub(crate) key_sets: HashMap<KeySetId, KeySet>,
    pub(crate) domains: HashMap<DomainId, Domain>,
    /// Domain name → domain id.
    pub(crate) domain_names: HashMap<String, DomainId>,
    /// Contacts by id; ids are time ordered, so the map's order is creation order.
    pub(crate) contacts: BTreeMap<ContactId, Contact>,
    /// Email → contact id.
    pub(crate) contact_emails: HashIndex<String, ContactId>,
    /// The counters and the pending index of the contacts.
    pub(crate) counts: ContactCounts,
    pub(crate) templates: HashMap<TemplateId, Template>,
    pub(crate) emails: BTreeMap<EmailId, EmailRecord>,
    /// Received messages by id.
    pub(crate) inbound: BTreeMap<EmailId, InboundEmail>,
    pub(crate) events: BTreeMap<EventKey, StoredEvent>,
    /// Event name → keys of the events with that name (never empty).
    pub(crate) events_by_name: BTreeMap<String, BTreeSet<EventKey>>,
    /// Contact id → the facts of its events, for evaluating conditions, and their keys
    /// (never empty).
    pub(crate) event_facts: BTreeMap<ContactId, EventFacts>,
    pub(crate) segments: HashMap<SegmentId, Segment>,
    /// Every segment by (created_at, id).
    pub(crate) segment_order: BTreeSet<CreatedKey<SegmentId>>,
    /// Segment id → ids of its stored members (never empty).
    pub(crate) segment_members: HashMap<SegmentId, BTreeSet<ContactId>>,
    /// Contact id → ids of the segments it is a stored member of (never empty).
    pub(crate) contact_segments: BTreeMap<ContactId, HashSet<SegmentId>>,
    pub(crate) campaigns: HashMap<CampaignId, Campaign>,
    /// Every campaign by (created_at, id).
    pub(crate) campaign_order: BTreeSet<CreatedKey<CampaignId>>,
    /// Status → campaigns in it by (created_at, id) (never empty).
    pub(crate) campaigns_by_status: HashMap<CampaignStatus, BTreeSet<CreatedKey<CampaignId>>>,
    /// Campaign id → contact id → the id of the campaign's email to that contact.
    pub(crate) campaign_recipients: HashMap<CampaignId, BTreeMap<ContactId, EmailId>>,
    /// Campaign id → how many of its emails are in each status.
    pub(crate) campaign_counts: HashMap<CampaignId, EmailCounts>,
    /// Event id → its key in `events`.
    pub(crate) event_keys: HashIndex<EventId, EventKey>,
}

impl State {
    /// Stores `new` (or removes) the email `id` of `workspace_id`, keeping the deployment-wide
    /// id indexes in step; returns what was there.
    pub(crate) fn replace_email(
        &mut self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
        new: Option<EmailRecord>,
    ) -> Option<EmailRecord> {
        let key = (id.clone(), workspace_id.clone());
        // The index entries of the new record, taken before the record moves into the map
        // (not a copy of the record: bodies and attachments can weigh hundreds of KB).
        let new_ids = new
            .as_ref()
            .map(|e| (e.message_id.clone(), e.provider_message_id.clone()));
        let old = self.data_mut(workspace_id).replace_email(id, new);
        if let Some(old) = &old {
            unindex(&mut self.message_ids, Some(&old.message_id), &key);
            unindex(
                &mut self.provider_ids,
                old.provider_message_id.as_ref(),
                &key,
            );
        }
        if let Some((message_id, provider_id)) = new_ids {
            self.message_ids
                .entry(message_id)
                .or_default()
                .insert(key.clone());
            if let Some(provider_id) = provider_id {
                self.provider_ids
                    .entry(provider_id)
                    .or_default()
                    .insert(key);
            }
        }
        old
    }

    /// Gives the stored email `id` of `workspace_id` the state of `newer`
    /// ([`EmailRecord::take_state`]), in place, keeping the indexes in step; returns the
    /// state it had, without content, or `None` when there is no such email.
    pub(crate) fn update_email_state(
        &mut self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
        newer: EmailRecord,
    ) -> Option<EmailRecord> {
        let before = self
            .data
            .get(workspace_id)?
            .emails
            .get(id)?
            .without_content();
        // Out and in again through `replace_email`, so every index follows the new state;
        // the record itself moves, it is not copied.
        let mut stored = self.replace_email(workspace_id, id, None)?;
        stored.take_state(newer);
        self.replace_email(workspace_id, id, Some(stored));
        Some(before)
    }

    /// The newest email indexed under `value` in `index`, without its content.
    pub(crate) fn email_by_index(&self, index: &EmailIndex, value: &str) -> Option<EmailRecord> {
        let (id, ws) = index.get(value)?.iter().next_back()?;
        self.data
            .get(ws)?
            .emails
            .get(id)
            .map(EmailRecord::without_content)
    }

    /// The records of `workspace_id`, created empty when missing.
    pub(crate) fn data_mut(&mut self, workspace_id: &WorkspaceId) -> &mut WorkspaceData {
        self.data.entry(workspace_id.clone()).or_default()
    }

    /// Stores `new` (or removes) the workspace `id`; returns what was there.
    pub(crate) fn replace_workspace(
        &mut self,
        id: &WorkspaceId,
        new: Option<Workspace>,
    ) -> Option<Workspace> {
        match new {
            Some(workspace) => self.workspaces.insert(id.clone(), workspace),
            None => self.workspaces.remove(id),
        }
    }

    /// Stores `new` (or removes) the key set `id` and its hash index entries.
    pub(crate) fn replace_key_set(
        &mut self,
        workspace_id: &WorkspaceId,
        id: &KeySetId,
        new: Option<KeySet>,
    ) -> Option<KeySet> {
        let data = self.data_mut(workspace_id);
        let old = match new.clone() {
            Some(set) => data.key_sets.insert(id.clone(), set),
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
                self.key_hashes
                    .insert(hash.clone(), (workspace_id.clone(), id.clone(), kind));
            }
        }
        old
    }
}

impl WorkspaceData {
    /// Stores `new` (or removes) the domain `id` and its name index entry.
    pub(crate) fn replace_domain(&mut self, id: &DomainId, new: Option<Domain>) -> Option<Domain> {
        let old = self.domains.remove(id);
        if let Some(old) = &old {
            if self.domain_names.get(&old.domain).is_some_and(|d| d == id) {
                self.domain_names.remove(&old.domain);
            }
        }
        if let Some(domain) = new {
            self.domain_names.insert(domain.domain.clone(), id.clone());
            self.domains.insert(id.clone(), domain);
        }
        old
    }

    /// Stores `new` (or removes) the contact `id`, keeping the email index, the pending
    /// index and the counters in step. A contact that keeps its address changes in place:
    /// one search, and its index entries stay as they are (an update rolled back, for one).
    pub(crate) fn replace_contact(
        &mut self,
        id: &ContactId,
        new: Option<Contact>,
    ) -> Option<Contact> {
        let new = match new {
            Some(contact) => match self.contacts.get_mut(id) {
                Some(slot) if slot.email == contact.email => {
                    debug_assert_eq!(self.contact_emails.get(contact.email.as_str()), Some(id));
                    return Some(self.counts.swap(slot, contact));
                }
                _ => Some(contact),
            },
            None => None,
        };
        let old = self.contacts.remove(id);
        if let Some(old) = &old {
            if self
                .contact_emails
                .get(old.email.as_str())
                .is_some_and(|c| c == id)
            {
                self.contact_emails.remove(old.email.as_str());
            }
            self.counts.remove(id, Counted::of(old));
        }
        if let Some(contact) = new {
            self.contact_emails
                .insert(contact.email.as_str().to_string(), id.clone());
            self.counts.add(id, Counted::of(&contact));
            self.contacts.insert(id.clone(), contact);
        }
        old
    }

    /// Stores `contact` as the next version of the stored one, which must be at
    /// `contact.version`; returns the version it replaced. A contact keeping its address
    /// is found with one search and changed in place (every track of a known contact
    /// comes through here).
    pub(crate) fn update_contact(&mut self, mut contact: Contact) -> Result<Contact, Refused> {
        let stored = self.contacts.get_mut(&contact.id).ok_or(Refused::Gone)?;
        if stored.version != contact.version {
            return Err(Refused::Version(stored.version));
        }
        contact.version += 1;
        if stored.email == contact.email {
            // The address index already names this contact.
            return Ok(self.counts.swap(stored, contact));
        }
        if self
            .contact_emails
            .get(contact.email.as_str())
            .is_some_and(|owner| *owner != contact.id)
        {
            return Err(Refused::Email(contact.email));
        }
        let id = contact.id.clone();
        self.replace_contact(&id, Some(contact))
            .ok_or(Refused::Gone)
    }

    /// Stores a new contact, unless its address or its id is taken; one search of each
    /// index, where a check and then [`WorkspaceData::replace_contact`] would take five
    /// (every new contact of `/v1/track` comes through here).
    pub(crate) fn insert_contact(&mut self, contact: Contact) -> Result<(), Taken> {
        let Some(by_email) = self
            .contact_emails
            .vacant(contact.email.as_str().to_string())
        else {
            return Err(Taken::Email(contact.email));
        };
        let by_id = match self.contacts.entry(contact.id.clone()) {
            btree_map::Entry::Vacant(slot) => slot,
            btree_map::Entry::Occupied(_) => return Err(Taken::Id(contact.id)),
        };
        by_email.insert(contact.id.clone());
        self.counts.add(&contact.id, Counted::of(&contact));
        by_id.insert(contact);
        Ok(())
    }

    /// Stores `new` (or removes) the template `id`.
    pub(crate) fn replace_template(
        &mut self,
        id: &TemplateId,
        new: Option<Template>,
    ) -> Option<Template> {
        match new {
            Some(template) => self.templates.insert(id.clone(), template),
            None => self.templates.remove(id),
        }
    }

    /// Stores `new` (or removes) the email record `id`, keeping the campaign recipient
    /// index and the campaign counters in step.
    pub(crate) fn replace_email(
        &mut self,
        id: &EmailId,
        new: Option<EmailRecord>,
    ) -> Option<EmailRecord> {
        let old = self.emails.remove(id);
        if let Some(old) = &old {
            if let Some(campaign_id) = &old.campaign_id {
                if let Some(recipients) = self.campaign_recipients.get_mut(campaign_id) {
                    if recipients.get(&old.contact_id).is_some_and(|e| e == id) {
                        recipients.remove(&old.contact_id);
                    }
                    if recipients.is_empty() {
                        self.campaign_recipients.remove(campaign_id);
                    }
                }
                if let Some(counts) = self.campaign_counts.get_mut(campaign_id) {
                    let slot = count_slot(counts, old.status);
                    *slot = slot.saturating_sub(1);
                    if *counts == EmailCounts::default() {
                        self.campaign_counts.remove(campaign_id);
                    }
                }
            }
        }
        if let Some(email) = new {
            if let Some(campaign_id) = &email.campaign_id {
                self.campaign_recipients
                    .entry(campaign_id.clone())
                    .or_default()
                    .insert(email.contact_id.clone(), id.clone());
                self.campaign_counts
                    .entry(campaign_id.clone())
                    .or_default()
                    .add(email.status, 1);
            }
            self.emails.insert(id.clone(), email);
        }
        old
    }

    /// The id of the email of `campaign_id` to `contact_id`, if there is one.
    pub(crate) fn campaign_email_to(
        &self,
        campaign_id: &CampaignId,
        contact_id: &ContactId,
    ) -> Option<&EmailId> {
        self.campaign_recipients.get(campaign_id)?.get(contact_id)
    }

    /// Stores `new` (or removes) the segment `id`, keeping the listing order. Stored
    /// memberships are left alone.
    pub(crate) fn replace_segment(
        &mut self,
        id: &SegmentId,
        new: Option<Segment>,
    ) -> Option<Segment> {
        let old = self.segments.remove(id);
        if let Some(old) = &old {
            self.segment_order.remove(&(old.created_at, id.clone()));
        }
        if let Some(segment) = new {
            self.segment_order.insert((segment.created_at, id.clone()));
            self.segments.insert(id.clone(), segment);
        }
        old
    }

    /// Whether `contact_id` is a stored member of `segment_id`.
    pub(crate) fn is_member(&self, segment_id: &SegmentId, contact_id: &ContactId) -> bool {
        self.segment_members
            .get(segment_id)
            .is_some_and(|members| members.contains(contact_id))
    }

    /// Makes `contact_id` a stored member of `segment_id` or not, in both indexes; returns
    /// whether it was one.
    pub(crate) fn set_member(
        &mut self,
        segment_id: &SegmentId,
        contact_id: &ContactId,
        member: bool,
    ) -> bool {
        let was = self.is_member(segment_id, contact_id);
        if member && !was {
            self.segment_members
                .entry(segment_id.clone())
                .or_default()
                .insert(contact_id.clone());
            self.contact_segments
                .entry(contact_id.clone())
                .or_default()
                .insert(segment_id.clone());
        } else if !member && was {
            remove_from_set(&mut self.segment_members, segment_id, contact_id);
            if let Some(segments) = self.contact_segments.get_mut(contact_id) {
                segments.remove(segment_id);
                if segments.is_empty() {
                    self.contact_segments.remove(contact_id);
                }
            }
        }
        was
    }

    /// Removes every stored member of `segment_id`; returns their ids.
    pub(crate) fn take_members(&mut self, segment_id: &SegmentId) -> BTreeSet<ContactId> {
        let members = self.segment_members.remove(segment_id).unwrap_or_default();
        for contact_id in &members {
            if let Some(segments) = self.contact_segments.get_mut(contact_id) {
                segments.remove(segment_id);
                if segments.is_empty() {
                    self.contact_segments.remove(contact_id);
                }
            }
        }
        members
    }

    /// Removes every stored membership of `contact_id`; returns the segment ids.
    pub(crate) fn take_memberships(&mut self, contact_id: &ContactId) -> HashSet<SegmentId> {
        let segments = self.contact_segments.remove(contact_id).unwrap_or_default();
        for segment_id in &segments {
            remove_from_set(&mut self.segment_members, segment_id, contact_id);
        }
        segments
    }

    /// Stores `new` (or removes) the campaign `id`, keeping the listing orders.
    pub(crate) fn replace_campaign(
        &mut self,
        id: &CampaignId,
        new: Option<Campaign>,
    ) -> Option<Campaign> {
        let old = self.campaigns.remove(id);
        if let Some(old) = &old {
            let key = (old.created_at, id.clone());
            self.campaign_order.remove(&key);
            if let Some(keys) = self.campaigns_by_status.get_mut(&old.status) {
                keys.remove(&key);
                if keys.is_empty() {
                    self.campaigns_by_status.remove(&old.status);
                }
            }
        }
        if let Some(campaign) = new {
            let key = (campaign.created_at, id.clone());
            self.campaign_order.insert(key.clone());
            self.campaigns_by_status
                .entry(campaign.status)
                .or_default()
                .insert(key);
            self.campaigns.insert(id.clone(), campaign);
        }
        old
    }

    /// The keys of the events about `contact_id`, oldest first.
    pub(crate) fn event_keys_of_contact(
        &self,
        contact_id: &ContactId,
    ) -> impl DoubleEndedIterator<Item = &EventKey> {
        self.event_facts
            .get(contact_id)
            .map(|facts| facts.keys.iter())
            .into_iter()
            .flatten()
    }

    /// Stores `new` (or removes) the event at `key`, keeping the name and contact indexes.
    pub(crate) fn replace_event(&mut self, key: &EventKey, new: Option<Event>) -> Option<Event> {
        let old = self.events.remove(key).map(StoredEvent::into_event);
        if let Some(old) = &old {
            self.event_keys.remove(&old.id);
            remove_from_index(&mut self.events_by_name, &old.name, key);
            if let Some(contact_id) = &old.contact_id {
                if let Some(facts) = self.event_facts.get_mut(contact_id) {
                    facts.forget(old, key);
                    if facts.events.is_empty() {
                        self.event_facts.remove(contact_id);
                    }
                }
            }
        }
        if let Some(event) = new {
            index_event(
                &mut self.event_keys,
                &mut self.events_by_name,
                &mut self.event_facts,
                key,
                &event,
            );
            self.events.insert(key.clone(), StoredEvent::new(event));
        }
        old
    }

    /// Stores a new event at `key`; returns the event it replaced, which only an id used
    /// twice can leave there. One search of the event map, not a removal and an insertion:
    /// every tracked event comes through here.
    pub(crate) fn append_event(&mut self, key: EventKey, event: Event) -> Option<Event> {
        match self.events.entry(key) {
            btree_map::Entry::Vacant(slot) => {
                let key = slot.key().clone();
                // The stored copy is indexed: its `data` is parked as text, which no
                // index reads.
                let stored = slot.insert(StoredEvent::new(event));
                index_event(
                    &mut self.event_keys,
                    &mut self.events_by_name,
                    &mut self.event_facts,
                    &key,
                    &stored.event,
                );
                None
            }
            btree_map::Entry::Occupied(slot) => {
                let key = slot.key().clone();
                self.replace_event(&key, Some(event))
            }
        }
    }
}

impl EventFacts {
    /// Adds the facts of `event`, stored at `key`.
    fn learn(&mut self, event: &Event, key: &EventKey) {
        // Most contacts have a handful of events: start with room for one, not Vec's four.
        let first = usize::from(self.events.is_empty());
        self.events.reserve_exact(first);
        self.keys.reserve_exact(first);
        // Events mostly come in time order: then this is the end.
        let at = self.keys.partition_point(|k| k < key);
        self.keys.insert(at, key.clone());
        self.events.push(EventFact {
            name: event.name.clone(),
            at: event.created_at,
        });
        if let Some(activity) = activity_of_event(&event.name) {
            self.activity.push(ActivityFact {
                activity,
                at: event.created_at,
            });
        }
    }

    /// Removes the facts of `event`, stored at `key` (one occurrence; equal facts are
    /// interchangeable).
    fn forget(&mut self, event: &Event, key: &EventKey) {
        if let Ok(i) = self.keys.binary_search(key) {
            self.keys.remove(i);
        }
        let at = event.created_at;
        if let Some(i) = self
            .events
            .iter()
            .position(|f| f.at == at && f.name == event.name)
        {
            self.events.swap_remove(i);
        }
        if let Some(activity) = activity_of_event(&event.name) {
            if let Some(i) = self
                .activity
                .iter()
                .position(|f| f.at == at && f.activity == activity)
            {
                self.activity.swap_remove(i);
            }
        }
    }
}

/// The counter of `status` in `counts`.
fn count_slot(counts: &mut EmailCounts, status: EmailStatus) -> &mut u64 {
    use EmailStatus as S;
    match status {
        S::Queued => &mut counts.queued,
        S::Sent => &mut counts.sent,
        S::Delivered => &mut counts.delivered,
        S::Opened => &mut counts.opened,
        S::Clicked => &mut counts.clicked,
        S::Bounced => &mut counts.bounced,
        S::Complained => &mut counts.complained,
        S::Failed => &mut counts.failed,
        S::Cancelled => &mut counts.cancelled,
    }
}

fn remove_from_set(
    index: &mut HashMap<SegmentId, BTreeSet<ContactId>>,
    key: &SegmentId,
    item: &ContactId,
) {
    if let Some(items) = index.get_mut(key) {
        items.remove(item);
        if items.is_empty() {
            index.remove(key);
        }
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

/// Adds the event at `key` to a workspace's event indexes (passed apart, so the event can
/// be borrowed from the event map meanwhile).
fn index_event(
    event_keys: &mut HashIndex<EventId, EventKey>,
    by_name: &mut BTreeMap<String, BTreeSet<EventKey>>,
    facts: &mut BTreeMap<ContactId, EventFacts>,
    key: &EventKey,
    event: &Event,
) {
    event_keys.insert(event.id.clone(), key.clone());
    // The name is copied only the first time it is seen.
    match by_name.get_mut(event.name.as_str()) {
        Some(keys) => {
            keys.insert(key.clone());
        }
        None => {
            by_name.insert(event.name.clone(), BTreeSet::from([key.clone()]));
        }
    }
    if let Some(contact_id) = &event.contact_id {
        // One search; the id's copy is a count, not its text.
        facts
            .entry(contact_id.clone())
            .or_default()
            .learn(event, key);
    }
}

/// Removes `key` from the entry `value` of `index`, dropping the entry when it empties.
fn unindex(index: &mut EmailIndex, value: Option<&String>, key: &(EmailId, WorkspaceId)) {
    let Some(value) = value else { return };
    if let Some(set) = index.get_mut(value) {
        set.remove(key);
        if set.is_empty() {
            index.remove(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use posthorn_core::ports::ManualClock;

    use super::*;

    fn event(clock: &ManualClock, contact: &str, minute: u32) -> (EventKey, Event) {
        let at = Utc.with_ymd_and_hms(2026, 1, 1, 0, minute, 0).single();
        let at = at.unwrap_or_default();
        let workspace = WorkspaceId::from("ws");
        let event = Event::new(
            clock,
            &workspace,
            "signup",
            serde_json::Value::Null,
            Some(ContactId::from(contact)),
            None,
            at,
        );
        ((at, event.id.clone()), event)
    }

    #[test]
    fn a_contacts_event_keys_are_its_own_in_time_order_and_gone_once_removed() {
        let clock = ManualClock::new(Utc::now());
        let mut data = WorkspaceData::default();
        let mut keys_of_b = Vec::new();
        for minute in [5, 1, 3, 2, 4] {
            for contact in ["a", "b", "c"] {
                let (key, event) = event(&clock, contact, minute);
                if contact == "b" {
                    keys_of_b.push(key.clone());
                }
                data.replace_event(&key, Some(event));
            }
        }
        keys_of_b.sort();
        let b = ContactId::from("b");
        let found: Vec<EventKey> = data.event_keys_of_contact(&b).cloned().collect();
        assert_eq!(found, keys_of_b);
        let newest_first: Vec<EventKey> = data.event_keys_of_contact(&b).rev().cloned().collect();
        assert_eq!(newest_first.first(), keys_of_b.last());

        for key in &keys_of_b {
            data.replace_event(key, None);
        }
        assert_eq!(data.event_keys_of_contact(&b).count(), 0);
        assert_eq!(data.event_keys_of_contact(&ContactId::from("a")).count(), 5);
        assert!(!data.event_facts.contains_key(&b));
    }

    fn contact(clock: &ManualClock, address: &str, pending: bool) -> Contact {
        let email = EmailAddress::parse(address).unwrap_or_else(|e| panic!("{address}: {e:?}"));
        let ws = WorkspaceId::from("ws");
        Contact::new(
            clock,
            &ws,
            email,
            true,
            Default::default(),
            pending,
            Utc::now(),
        )
    }

    #[test]
    fn a_contact_is_inserted_once_per_address_and_per_id() {
        let clock = ManualClock::new(Utc::now());
        let mut data = WorkspaceData::default();
        let first = contact(&clock, "ada@example.org", false);
        assert_eq!(data.insert_contact(first.clone()), Ok(()));
        let pending = contact(&clock, "bob@example.org", true);
        assert_eq!(data.insert_contact(pending.clone()), Ok(()));

        let same_address = contact(&clock, "ada@example.org", false);
        assert_eq!(
            data.insert_contact(same_address.clone()),
            Err(Taken::Email(same_address.email.clone()))
        );
        let mut same_id = contact(&clock, "cy@example.org", false);
        same_id.id = first.id.clone();
        assert_eq!(
            data.insert_contact(same_id),
            Err(Taken::Id(first.id.clone()))
        );

        // Neither refusal left a trace in a map, an index or a counter.
        assert_eq!(data.contacts.len(), 2);
        assert_eq!(data.contacts.get(&first.id), Some(&first));
        assert_eq!(data.contact_emails.len(), 2);
        assert_eq!(data.contact_emails.get("ada@example.org"), Some(&first.id));
        assert!(!data.contact_emails.contains_key("cy@example.org"));
        assert_eq!((data.counts.active, data.counts.subscribed), (1, 2));
        assert_eq!(
            data.counts.pending.iter().collect::<Vec<_>>(),
            [&(pending.created_at, pending.id.clone())]
        );
    }

    #[test]
    fn a_contact_changed_in_place_or_moved_keeps_its_indexes_and_counts() {
        let clock = ManualClock::new(Utc::now());
        let mut data = WorkspaceData::default();
        let pending = contact(&clock, "bob@example.org", true);
        assert_eq!(data.insert_contact(pending.clone()), Ok(()));
        let pending_key = (pending.created_at, pending.id.clone());

        // Same address, still PENDING, unsubscribed: changed in place.
        let mut quieter = pending.clone();
        quieter.subscribed = false;
        assert_eq!(
            data.replace_contact(&pending.id, Some(quieter.clone())),
            Some(pending.clone())
        );
        assert_eq!(data.contacts.get(&pending.id), Some(&quieter));
        assert_eq!(
            data.counts.pending.iter().collect::<Vec<_>>(),
            [&pending_key]
        );
        assert_eq!((data.counts.active, data.counts.subscribed), (0, 0));

        // Confirmed and subscribed again.
        let mut active = quieter.clone();
        active.status = ContactStatus::Active;
        active.subscribed = true;
        data.replace_contact(&pending.id, Some(active.clone()));
        assert!(data.counts.pending.is_empty());
        assert_eq!((data.counts.active, data.counts.subscribed), (1, 1));

        // A new address moves the index entry.
        let mut moved = active.clone();
        moved.email = EmailAddress::parse("robert@example.org").expect("valid");
        data.replace_contact(&pending.id, Some(moved.clone()));
        assert_eq!(data.contact_emails.len(), 1);
        assert_eq!(
            data.contact_emails.get("robert@example.org"),
            Some(&pending.id)
        );
        assert_eq!(data.contacts.get(&pending.id), Some(&moved));
        assert_eq!((data.counts.active, data.counts.subscribed), (1, 1));

        assert_eq!(data.replace_contact(&pending.id, None), Some(moved));
        assert!(data.contacts.is_empty() && data.contact_emails.is_empty());
        assert_eq!((data.counts.active, data.counts.subscribed), (0, 0));
    }

    #[test]
    fn an_update_is_refused_when_gone_stale_or_onto_a_taken_address() {
        let clock = ManualClock::new(Utc::now());
        let mut data = WorkspaceData::default();
        let ada = contact(&clock, "ada@example.org", false);
        let bob = contact(&clock, "bob@example.org", true);
        assert_eq!(data.insert_contact(ada.clone()), Ok(()));
        assert_eq!(data.insert_contact(bob.clone()), Ok(()));

        let stranger = contact(&clock, "cy@example.org", false);
        assert_eq!(data.update_contact(stranger), Err(Refused::Gone));
        let mut onto_bob = ada.clone();
        onto_bob.email = bob.email.clone();
        assert_eq!(
            data.update_contact(onto_bob),
            Err(Refused::Email(bob.email.clone()))
        );

        // In place: the next version, counted anew; a plan on the old version is stale.
        let mut confirmed = bob.clone();
        confirmed.status = ContactStatus::Active;
        assert_eq!(data.update_contact(confirmed.clone()), Ok(bob.clone()));
        let stored = data.contacts.get(&bob.id).expect("stored");
        assert_eq!((stored.version, stored.status), (1, ContactStatus::Active));
        assert!(data.counts.pending.is_empty());
        assert_eq!(data.counts.active, 2);
        assert_eq!(data.update_contact(confirmed), Err(Refused::Version(1)));

        // A new address moves the index entry.
        let mut moved = ada.clone();
        moved.email = EmailAddress::parse("ada@example.net").expect("valid");
        assert_eq!(data.update_contact(moved), Ok(ada.clone()));
        assert_eq!(data.contact_emails.get("ada@example.net"), Some(&ada.id));
        assert!(!data.contact_emails.contains_key("ada@example.org"));
        assert_eq!(data.contacts.get(&ada.id).map(|c| c.version), Some(1));
        assert_eq!((data.counts.active, data.counts.subscribed), (2, 2));
    }

    #[test]
    fn an_event_appended_at_a_used_key_replaces_the_one_there_in_every_index() {
        let clock = ManualClock::new(Utc::now());
        let mut data = WorkspaceData::default();
        let (key, first) = event(&clock, "a", 1);
        assert_eq!(data.append_event(key.clone(), first.clone()), None);
        let mut second = first.clone();
        second.name = "upgrade".into();
        second.contact_id = Some(ContactId::from("b"));
        assert_eq!(data.append_event(key.clone(), second), Some(first));

        assert_eq!(data.events.len(), 1);
        assert_eq!(data.events_by_name.keys().collect::<Vec<_>>(), ["upgrade"]);
        assert_eq!(data.event_keys_of_contact(&ContactId::from("a")).count(), 0);
        assert_eq!(
            data.event_keys_of_contact(&ContactId::from("b"))
                .collect::<Vec<_>>(),
            [&key]
        );
        assert!(!data.event_facts.contains_key(&ContactId::from("a")));
        assert_eq!(data.event_keys.len(), 1);
    }
}
