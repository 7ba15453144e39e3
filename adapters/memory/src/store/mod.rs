//! `MemoryStore`: the `Store` and `Jobs` ports in process.

mod alongside;
mod commit;
mod hash_index;
mod reads;
mod state;
mod stored_event;
mod suppression_facts;
mod workflows;

use posthorn_core::model::{CampaignId, ContactId, EmailId, SegmentId, TemplateId, WorkspaceId};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock, RwLockReadGuard, TryLockError};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use posthorn_core::model::{
    ApiKey, Campaign, CampaignStatus, Contact, Domain, EmailCounts, EmailRecord, EmailStats, Event,
    IdempotencyRecord, InboundEmail, KeySet, Segment, Template, Workspace,
};
use posthorn_core::ports::{
    ChangeSet, ContactPage, ContactQuery, EmailStatsQuery, EventQuery, EventReads, FeedbackReads,
    MatchQuery, Store, StoreError, SuppressionFacts, TemplateQuery,
};
use posthorn_core::segment::{Condition, EventFact};
use tokio::sync::Notify;

use crate::jobs::JobQueue;
use state::State;

/// How often [`MemoryStore::read_yielding`] yields before it waits on the lock.
const READ_YIELDS: usize = 64;

/// Every record and the job queue, held in process memory.
///
/// Implements both [`Store`] and [`posthorn_core::ports::Jobs`]: jobs enqueued by
/// [`Store::commit`] land in this instance's queue. Nothing survives the process; this is
/// the embedded default and the reference the conformance suite holds other adapters to.
///
/// Commits take one write lock for the whole change set and undo the writes already applied
/// when a guarded write fails, so readers never see part of a change set.
#[derive(Debug, Default)]
pub struct MemoryStore {
    state: RwLock<State>,
    pub(crate) queue: Mutex<JobQueue>,
    pub(crate) work: Notify,
    /// Moves on every commit that changes workspaces or key sets.
    access: AtomicU64,
}

/// Contacts a count reads per hold of the store's read lock (about 10 ms of work).
const COUNT_SLICE: usize = 16_384;

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    /// `copy` of the stored email `id` of `workspace_id`, taken under the read lock.
    fn with_email<T>(
        &self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
        copy: impl FnOnce(&EmailRecord) -> T,
    ) -> Option<T> {
        let state = self.read();
        let email = state.data.get(workspace_id)?.emails.get(id)?;
        Some(copy(email))
    }

    /// The read lock for the hot reads of a request: while a commit holds the write lock
    /// the task yields to the runtime (which runs other requests meanwhile) instead of
    /// parking its worker thread on the lock. A waiting commit still gets the lock first:
    /// the lock refuses new readers while a writer waits. After [`READ_YIELDS`] tries (a
    /// long commit) it waits on the lock, rather than keep its worker spinning.
    async fn read_yielding(&self) -> RwLockReadGuard<'_, State> {
        for _ in 0..READ_YIELDS {
            if let Some(guard) = self.try_read() {
                return guard;
            }
            tokio::task::yield_now().await;
        }
        self.read()
    }

    /// The read lock if it can be had without waiting.
    fn try_read(&self) -> Option<RwLockReadGuard<'_, State>> {
        match self.state.try_read() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Counts matching contacts `slice` at a time, taking the read lock for each slice only,
    /// so that a count over a large workspace does not hold up every commit for its whole
    /// length. Not a snapshot: commits between slices are seen from their slice on.
    async fn count_in_slices(
        &self,
        workspace_id: &WorkspaceId,
        query: &reads::CountQuery<'_>,
        slice: usize,
    ) -> u64 {
        let mut total = 0;
        let mut after: Option<ContactId> = None;
        loop {
            let (matched, next) = reads::count_matching_slice(
                &self.read(),
                workspace_id,
                query,
                after.as_ref(),
                slice.max(1),
            );
            total += matched;
            match next {
                Some(id) => after = Some(id),
                None => return total,
            }
            tokio::task::yield_now().await;
        }
    }

    /// Tells waiting workers that work may be due.
    pub(crate) fn wake_workers(&self) {
        self.work.notify_waiters();
        // Leaves a permit for a worker that is between an empty claim and its wait, so the
        // wake-up is not lost; at worst the next wait returns once without new work.
        self.work.notify_one();
    }
}

#[async_trait]
impl Store for MemoryStore {
    async fn commit(&self, changes: ChangeSet) -> Result<(), StoreError> {
        let changes_access = changes.changes_access();
        let enqueued = {
            let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
            let jobs = commit::apply_all(&mut state, &self.queue, changes.writes)?;
            // Jobs join the queue before the state lock is released, so no reader can see
            // the change without its follow-up work.
            let enqueued = !jobs.is_empty();
            if enqueued {
                let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                for job in jobs {
                    queue.enqueue(job);
                }
            }
            enqueued
        };
        if enqueued {
            self.wake_workers();
        }
        if changes_access {
            self.access.fetch_add(1, Ordering::Release);
        }
        Ok(())
    }

    fn access_generation(&self) -> u64 {
        self.access.load(Ordering::Acquire)
    }

    async fn workspace(&self, id: &WorkspaceId) -> Result<Option<Workspace>, StoreError> {
        Ok(self.read().workspaces.get(id).cloned())
    }

    async fn workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        let mut all: Vec<Workspace> = self.read().workspaces.values().cloned().collect();
        all.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(all)
    }

    async fn key_by_hash(&self, key_hash: &str) -> Result<Option<ApiKey>, StoreError> {
        Ok(reads::key_by_hash(&self.read(), key_hash))
    }

    async fn key_sets(&self, workspace_id: &WorkspaceId) -> Result<Vec<KeySet>, StoreError> {
        Ok(reads::key_sets(&self.read(), workspace_id))
    }

    async fn domains(&self, workspace_id: &WorkspaceId) -> Result<Vec<Domain>, StoreError> {
        Ok(reads::domains(&self.read(), workspace_id))
    }

    async fn inbound_domain(&self, name: &str) -> Result<Option<Domain>, StoreError> {
        Ok(reads::inbound_domain(&self.read(), name))
    }

    async fn inbound_email(
        &self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
    ) -> Result<Option<InboundEmail>, StoreError> {
        Ok(self
            .read()
            .data
            .get(workspace_id)
            .and_then(|d| d.inbound.get(id))
            .cloned())
    }

    async fn contact(
        &self,
        workspace_id: &WorkspaceId,
        id: &ContactId,
    ) -> Result<Option<Contact>, StoreError> {
        let state = self.read();
        let contact = state
            .data
            .get(workspace_id)
            .and_then(|d| d.contacts.get(id));
        Ok(contact.cloned())
    }

    async fn contact_by_email(
        &self,
        workspace_id: &WorkspaceId,
        email: &str,
    ) -> Result<Option<Contact>, StoreError> {
        Ok(reads::contact_by_email(&self.read(), workspace_id, email))
    }

    async fn event_reads(
        &self,
        workspace_id: &WorkspaceId,
        email: &str,
        event_name: Option<&str>,
    ) -> Result<EventReads, StoreError> {
        // One read lock for the three reads: each taking it again is three chances to park
        // behind a commit.
        let state = self.read_yielding().await;
        let contact = reads::contact_by_email(&state, workspace_id, email);
        let tracked_segments = reads::tracked_segments(&state, workspace_id);
        let event_interest = event_name.is_some_and(|name| {
            state.workflows.get(workspace_id).is_some_and(|d| {
                workflows::event_interest(d, name, contact.as_ref().map(|c| &c.id))
            })
        });
        Ok(EventReads {
            contact,
            tracked_segments,
            event_interest,
        })
    }

    async fn contacts(
        &self,
        workspace_id: &WorkspaceId,
        query: &ContactQuery,
    ) -> Result<ContactPage, StoreError> {
        Ok(reads::contacts(&self.read(), workspace_id, query))
    }

    async fn count_contacts(
        &self,
        workspace_id: &WorkspaceId,
        query: &ContactQuery,
    ) -> Result<u64, StoreError> {
        Ok(reads::count_contacts(&self.read(), workspace_id, query))
    }

    async fn count_active_contacts(&self, workspace_id: &WorkspaceId) -> Result<u64, StoreError> {
        let state = self.read();
        Ok(state.data.get(workspace_id).map_or(0, |d| d.counts.active))
    }

    async fn pending_contacts(
        &self,
        workspace_id: &WorkspaceId,
        limit: usize,
    ) -> Result<Vec<Contact>, StoreError> {
        Ok(reads::pending_contacts(&self.read(), workspace_id, limit))
    }

    async fn template(
        &self,
        workspace_id: &WorkspaceId,
        id: &TemplateId,
    ) -> Result<Option<Template>, StoreError> {
        let state = self.read();
        let template = state
            .data
            .get(workspace_id)
            .and_then(|d| d.templates.get(id));
        Ok(template.cloned())
    }

    async fn templates(
        &self,
        workspace_id: &WorkspaceId,
        query: &TemplateQuery,
    ) -> Result<(Vec<Template>, u64), StoreError> {
        Ok(reads::templates(&self.read(), workspace_id, query))
    }

    async fn email(
        &self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
    ) -> Result<Option<EmailRecord>, StoreError> {
        Ok(self.with_email(workspace_id, id, EmailRecord::clone))
    }

    async fn email_without_content(
        &self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
    ) -> Result<Option<EmailRecord>, StoreError> {
        Ok(self.with_email(workspace_id, id, EmailRecord::without_content))
    }

    async fn suppression_facts(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
    ) -> Result<SuppressionFacts, StoreError> {
        Ok(suppression_facts::suppression_facts(
            &self.read(),
            workspace_id,
            contact_id,
        ))
    }

    async fn feedback_reads(
        &self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
        event_name: &str,
    ) -> Result<FeedbackReads, StoreError> {
        // One read lock for the three reads, as for `event_reads`.
        let state = self.read_yielding().await;
        let email = state
            .data
            .get(workspace_id)
            .and_then(|d| d.emails.get(id))
            .map(EmailRecord::without_content);
        let Some(email) = email else {
            return Ok(FeedbackReads::no_email());
        };
        let tracked_segments = reads::tracked_segments(&state, workspace_id);
        let event_interest = state
            .workflows
            .get(workspace_id)
            .is_some_and(|d| workflows::event_interest(d, event_name, Some(&email.contact_id)));
        Ok(FeedbackReads {
            email: Some(email),
            tracked_segments,
            event_interest,
        })
    }

    async fn email_by_provider_id(
        &self,
        provider_message_id: &str,
    ) -> Result<Option<EmailRecord>, StoreError> {
        let state = self.read();
        Ok(state.email_by_index(&state.provider_ids, provider_message_id))
    }

    async fn email_by_message_id(
        &self,
        message_id: &str,
    ) -> Result<Option<EmailRecord>, StoreError> {
        let state = self.read();
        Ok(state.email_by_index(&state.message_ids, message_id))
    }

    async fn email_by_id(&self, id: &EmailId) -> Result<Option<EmailRecord>, StoreError> {
        let state = self.read();
        let found = state.data.values().find_map(|d| d.emails.get(id));
        Ok(found.map(EmailRecord::without_content))
    }

    async fn email_stats(
        &self,
        workspace_id: &WorkspaceId,
        query: &EmailStatsQuery,
    ) -> Result<EmailStats, StoreError> {
        Ok(reads::email_stats(&self.read(), workspace_id, query))
    }

    async fn idempotency_record(
        &self,
        scope: &str,
        key: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        Ok(self
            .read()
            .idempotency
            .get(&(scope.to_owned(), key.to_owned()))
            .filter(|r| r.expires_at > now)
            .cloned())
    }

    async fn purge_idempotency(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        let before = state.idempotency.len();
        state.idempotency.retain(|_, r| r.expires_at > now);
        Ok((before - state.idempotency.len()) as u64)
    }

    async fn purge_sns_messages(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        let count = state.sns_messages.len();
        state.sns_messages.retain(|_, at| *at >= before);
        Ok((count - state.sns_messages.len()) as u64)
    }

    async fn ensure_secret(&self, name: &str, candidate: &[u8]) -> Result<Vec<u8>, StoreError> {
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        let stored = state
            .secrets
            .entry(name.to_owned())
            .or_insert_with(|| candidate.to_vec());
        Ok(stored.clone())
    }

    async fn sns_message_seen(&self, message_id: &str) -> Result<bool, StoreError> {
        Ok(self.read().sns_messages.contains_key(message_id))
    }

    async fn events(
        &self,
        workspace_id: &WorkspaceId,
        query: &EventQuery,
    ) -> Result<Vec<Event>, StoreError> {
        Ok(reads::events(&self.read(), workspace_id, query))
    }

    async fn event_names(&self, workspace_id: &WorkspaceId) -> Result<Vec<String>, StoreError> {
        let state = self.read();
        let names = state
            .data
            .get(workspace_id)
            .map(|d| d.events_by_name.keys().cloned().collect())
            .unwrap_or_default();
        Ok(names)
    }

    async fn segment(
        &self,
        workspace_id: &WorkspaceId,
        id: &SegmentId,
    ) -> Result<Option<Segment>, StoreError> {
        let state = self.read();
        let segment = state
            .data
            .get(workspace_id)
            .and_then(|d| d.segments.get(id));
        Ok(segment.cloned())
    }

    async fn segments(
        &self,
        workspace_id: &WorkspaceId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Segment>, u64), StoreError> {
        Ok(reads::segments(&self.read(), workspace_id, offset, limit))
    }

    async fn tracked_segments(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Vec<Segment>, StoreError> {
        Ok(reads::tracked_segments(&self.read(), workspace_id))
    }

    async fn segment_member_count(
        &self,
        workspace_id: &WorkspaceId,
        segment_id: &SegmentId,
    ) -> Result<u64, StoreError> {
        Ok(reads::segment_member_count(
            &self.read(),
            workspace_id,
            segment_id,
        ))
    }

    async fn segment_members(
        &self,
        workspace_id: &WorkspaceId,
        segment_id: &SegmentId,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<Contact>, StoreError> {
        Ok(reads::segment_members(
            &self.read(),
            workspace_id,
            segment_id,
            offset,
            limit,
        ))
    }

    async fn segment_member_ids(
        &self,
        workspace_id: &WorkspaceId,
        segment_id: &SegmentId,
        after_id: Option<&ContactId>,
        limit: usize,
    ) -> Result<Vec<ContactId>, StoreError> {
        Ok(reads::segment_member_ids(
            &self.read(),
            workspace_id,
            segment_id,
            after_id,
            limit,
        ))
    }

    async fn memberships(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
    ) -> Result<HashSet<SegmentId>, StoreError> {
        Ok(reads::memberships(&self.read(), workspace_id, contact_id))
    }

    async fn contact_event_facts(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
    ) -> Result<Vec<EventFact>, StoreError> {
        Ok(reads::contact_event_facts(
            &self.read(),
            workspace_id,
            contact_id,
        ))
    }

    async fn contacts_matching(
        &self,
        workspace_id: &WorkspaceId,
        condition: &Condition,
        query: &MatchQuery,
        now: DateTime<Utc>,
    ) -> Result<Vec<Contact>, StoreError> {
        Ok(reads::contacts_matching(
            &self.read(),
            workspace_id,
            condition,
            query,
            now,
        ))
    }

    async fn count_matching(
        &self,
        workspace_id: &WorkspaceId,
        condition: &Condition,
        audience_only: bool,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let query = reads::CountQuery {
            condition,
            audience_only,
            now,
        };
        Ok(self
            .count_in_slices(workspace_id, &query, COUNT_SLICE)
            .await)
    }

    async fn campaign(
        &self,
        workspace_id: &WorkspaceId,
        id: &CampaignId,
    ) -> Result<Option<Campaign>, StoreError> {
        let state = self.read();
        let campaign = state
            .data
            .get(workspace_id)
            .and_then(|d| d.campaigns.get(id));
        Ok(campaign.cloned())
    }

    async fn campaigns(
        &self,
        workspace_id: &WorkspaceId,
        status: Option<CampaignStatus>,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Campaign>, u64), StoreError> {
        Ok(reads::campaigns(
            &self.read(),
            workspace_id,
            status,
            offset,
            limit,
        ))
    }

    async fn campaign_email_counts(
        &self,
        workspace_id: &WorkspaceId,
        campaign_id: &CampaignId,
    ) -> Result<EmailCounts, StoreError> {
        Ok(reads::campaign_email_counts(
            &self.read(),
            workspace_id,
            campaign_id,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use posthorn_core::model::EmailAddress;
    use posthorn_core::ports::Write;

    fn w() -> WorkspaceId {
        WorkspaceId::from("w")
    }

    fn contact(ws: &WorkspaceId, n: usize, subscribed: bool, pending: bool) -> Contact {
        let email = EmailAddress::parse(&format!("c{n}@example.com")).expect("valid address");
        Contact::new(
            &posthorn_core::ports::SystemClock,
            ws,
            email,
            subscribed,
            Default::default(),
            pending,
            Utc::now(),
        )
    }

    async fn counts(store: &MemoryStore, ws: &WorkspaceId) -> (u64, u64, u64, usize) {
        let all = ContactQuery::default();
        let subscribed = ContactQuery {
            subscribed: Some(true),
            ..Default::default()
        };
        (
            store.count_contacts(ws, &all).await.expect("count"),
            store.count_contacts(ws, &subscribed).await.expect("count"),
            store.count_active_contacts(ws).await.expect("count"),
            store
                .pending_contacts(ws, 100)
                .await
                .expect("pending")
                .len(),
        )
    }

    #[tokio::test]
    async fn counters_and_indexes_survive_a_rolled_back_commit() {
        let store = MemoryStore::new();
        let a = contact(&w(), 1, true, false);
        let b = contact(&w(), 2, false, true);
        let writes = vec![
            Write::InsertContact(a.clone()),
            Write::InsertContact(b.clone()),
        ];
        assert!(store.commit(ChangeSet { writes }).await.is_ok());
        assert_eq!(counts(&store, &w()).await, (2, 1, 1, 1));

        let mut a2 = a.clone();
        a2.subscribed = false;
        let mut b2 = b.clone();
        b2.status = posthorn_core::model::ContactStatus::Active;
        b2.subscribed = true;
        let writes = vec![
            Write::UpdateContact(a2),
            Write::UpdateContact(b2),
            Write::InsertContact(contact(&w(), 3, true, false)),
            Write::DeleteContact {
                workspace_id: "w".into(),
                id: a.id.clone(),
            },
            // Conflicts: the contact was just deleted.
            Write::UpdateContact(a.clone()),
        ];
        let result = store.commit(ChangeSet { writes }).await;
        assert!(matches!(result, Err(StoreError::Conflict(_))));
        assert_eq!(counts(&store, &w()).await, (2, 1, 1, 1));
        let by_email = store.contact_by_email(&w(), a.email.as_str()).await;
        assert_eq!(by_email, Ok(Some(a)));
    }

    #[tokio::test]
    async fn email_lookup_accepts_an_unnormalised_address() {
        let store = MemoryStore::new();
        let a = contact(&w(), 1, true, false);
        let writes = vec![Write::InsertContact(a.clone())];
        assert!(store.commit(ChangeSet { writes }).await.is_ok());
        let found = store.contact_by_email(&w(), "C1@Example.com").await;
        assert_eq!(found, Ok(Some(a)));
    }

    #[tokio::test]
    async fn counting_in_slices_counts_what_one_pass_counts() {
        use posthorn_core::segment::parse_condition;

        let store = MemoryStore::new();
        let writes = (0..50)
            .map(|n| {
                let mut c = contact(&w(), n, n % 3 != 0, false);
                c.data.insert("n".into(), serde_json::json!(n));
                Write::InsertContact(c)
            })
            .collect();
        assert!(store.commit(ChangeSet { writes }).await.is_ok());
        let condition = parse_condition(
            &serde_json::json!({"logic": "AND", "groups": [{"filters": [
                {"field": "data.n", "operator": "greaterThan", "value": 9}
            ]}]}),
            "condition",
        )
        .expect("valid condition");
        let now = Utc::now();
        for audience_only in [false, true] {
            let query = reads::CountQuery {
                condition: &condition,
                audience_only,
                now,
            };
            let whole = store.count_in_slices(&w(), &query, usize::MAX).await;
            // n in 10..50; subscribed unless n is a multiple of 3 (13 of them).
            let expected = if audience_only { 27 } else { 40 };
            assert_eq!(whole, expected, "audience_only = {audience_only}");
            // Slices that divide the contacts evenly, unevenly, and one contact at a time.
            for slice in [1, 7, 10, 49, 50, 51] {
                let sliced = store.count_in_slices(&w(), &query, slice).await;
                assert_eq!(
                    sliced, whole,
                    "slice {slice}, audience_only = {audience_only}"
                );
            }
        }
        let everybody = reads::CountQuery {
            condition: &Default::default(),
            audience_only: false,
            now,
        };
        assert_eq!(store.count_in_slices(&w(), &everybody, 7).await, 50);
        assert_eq!(
            store.count_in_slices(&"nobody".into(), &everybody, 7).await,
            0
        );
    }

    /// A rough timing of the condition queries over 1,000,000 contacts; run with
    /// `cargo test --release -p posthorn-memory -- --ignored --nocapture`.
    #[tokio::test]
    #[ignore = "slow: a million contacts"]
    async fn condition_queries_over_a_million_contacts() {
        use posthorn_core::segment::parse_condition;
        use std::time::Instant;

        let store = MemoryStore::new();
        let now = Utc::now();
        let writes = (0..1_000_000)
            .map(|n| {
                let mut c = contact(&w(), n, n % 3 != 0, false);
                let plan = if n % 10 == 0 { "pro" } else { "free" };
                c.data.insert("plan".into(), serde_json::json!(plan));
                Write::InsertContact(c)
            })
            .collect();
        let started = Instant::now();
        assert!(store.commit(ChangeSet { writes }).await.is_ok());
        println!("insert 1,000,000 contacts: {:?}", started.elapsed());

        let condition = parse_condition(
            &serde_json::json!({"logic": "AND", "groups": [{"filters": [
                {"field": "data.plan", "operator": "equals", "value": "pro"}
            ]}]}),
            "condition",
        )
        .expect("valid condition");
        let started = Instant::now();
        let count = store.count_matching(&w(), &condition, false, now).await;
        println!("count_matching: {:?}", started.elapsed());
        assert_eq!(count, Ok(100_000));
        let started = Instant::now();
        let count = store.count_matching(&w(), &condition, true, now).await;
        println!("count_matching (audience): {:?}", started.elapsed());
        assert!(count.is_ok());

        let started = Instant::now();
        let mut query = MatchQuery {
            limit: 500,
            ..Default::default()
        };
        let mut pages = 0;
        loop {
            let page = store
                .contacts_matching(&w(), &condition, &query, now)
                .await
                .expect("page");
            pages += 1;
            match page.last() {
                Some(last) if page.len() == 500 => query.after_id = Some(last.id.clone()),
                _ => break,
            }
        }
        println!(
            "contacts_matching, {pages} pages of 500: {:?} ({:?} a page)",
            started.elapsed(),
            started.elapsed() / pages
        );
    }
}
