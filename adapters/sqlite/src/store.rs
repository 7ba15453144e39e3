//! `Store` for [`SqliteStore`]: thin delegation to the read, matching and commit modules.
//! Commits go through the writer connection; every read uses the reader pool.

use std::collections::HashSet;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use posthorn_core::model::{
    ApiKey, Campaign, CampaignStatus, Contact, Domain, EmailCounts, EmailRecord, Event, KeySet,
    Segment, Template, Workspace,
};
use posthorn_core::ports::{
    ChangeSet, ContactPage, ContactQuery, EventQuery, MatchQuery, Store, StoreError, TemplateQuery,
};
use posthorn_core::segment::{Condition, EventFact};

use crate::{commit, contacts, matching, records, segments, SqliteStore};

#[async_trait]
impl Store for SqliteStore {
    async fn commit(&self, changes: ChangeSet) -> Result<(), StoreError> {
        let changes_access = changes.changes_access();
        let committed = commit::commit(self.writer()?, changes).await;
        if changes_access {
            // Also when the outcome is unknown (the commit may have happened).
            self.wake.access_changed();
        }
        if committed? {
            self.wake.notify();
        }
        Ok(())
    }

    fn access_generation(&self) -> u64 {
        self.wake.access_generation()
    }

    async fn workspace(&self, id: &str) -> Result<Option<Workspace>, StoreError> {
        records::workspace(&self.readers, id).await
    }

    async fn workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        records::workspaces(&self.readers).await
    }

    async fn key_by_hash(&self, key_hash: &str) -> Result<Option<ApiKey>, StoreError> {
        records::key_by_hash(&self.readers, key_hash).await
    }

    async fn key_sets(&self, workspace_id: &str) -> Result<Vec<KeySet>, StoreError> {
        records::key_sets(&self.readers, workspace_id).await
    }

    async fn domains(&self, workspace_id: &str) -> Result<Vec<Domain>, StoreError> {
        records::domains(&self.readers, workspace_id).await
    }

    async fn contact(&self, workspace_id: &str, id: &str) -> Result<Option<Contact>, StoreError> {
        contacts::by_id(&self.readers, workspace_id, id).await
    }

    async fn contact_by_email(
        &self,
        workspace_id: &str,
        email: &str,
    ) -> Result<Option<Contact>, StoreError> {
        contacts::by_email(&self.readers, workspace_id, email).await
    }

    async fn contacts(
        &self,
        workspace_id: &str,
        query: &ContactQuery,
    ) -> Result<ContactPage, StoreError> {
        contacts::page(&self.readers, workspace_id, query).await
    }

    async fn count_contacts(
        &self,
        workspace_id: &str,
        query: &ContactQuery,
    ) -> Result<u64, StoreError> {
        contacts::count_matching_filters(&self.readers, workspace_id, query).await
    }

    async fn count_active_contacts(&self, workspace_id: &str) -> Result<u64, StoreError> {
        contacts::count_active(&self.readers, workspace_id).await
    }

    async fn pending_contacts(
        &self,
        workspace_id: &str,
        limit: usize,
    ) -> Result<Vec<Contact>, StoreError> {
        contacts::pending(&self.readers, workspace_id, limit).await
    }

    async fn template(&self, workspace_id: &str, id: &str) -> Result<Option<Template>, StoreError> {
        records::template(&self.readers, workspace_id, id).await
    }

    async fn templates(
        &self,
        workspace_id: &str,
        query: &TemplateQuery,
    ) -> Result<(Vec<Template>, u64), StoreError> {
        records::templates(&self.readers, workspace_id, query).await
    }

    async fn email(&self, workspace_id: &str, id: &str) -> Result<Option<EmailRecord>, StoreError> {
        records::email(&self.readers, workspace_id, id).await
    }

    async fn events(
        &self,
        workspace_id: &str,
        query: &EventQuery,
    ) -> Result<Vec<Event>, StoreError> {
        records::events(&self.readers, workspace_id, query).await
    }

    async fn event_names(&self, workspace_id: &str) -> Result<Vec<String>, StoreError> {
        records::event_names(&self.readers, workspace_id).await
    }

    async fn segment(&self, workspace_id: &str, id: &str) -> Result<Option<Segment>, StoreError> {
        segments::segment(&self.readers, workspace_id, id).await
    }

    async fn segments(
        &self,
        workspace_id: &str,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Segment>, u64), StoreError> {
        segments::segments(&self.readers, workspace_id, offset, limit).await
    }

    async fn tracked_segments(&self, workspace_id: &str) -> Result<Vec<Segment>, StoreError> {
        segments::tracked_segments(&self.readers, workspace_id).await
    }

    async fn segment_member_count(
        &self,
        workspace_id: &str,
        segment_id: &str,
    ) -> Result<u64, StoreError> {
        segments::member_count(&self.readers, workspace_id, segment_id).await
    }

    async fn segment_members(
        &self,
        workspace_id: &str,
        segment_id: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<Contact>, StoreError> {
        segments::members(&self.readers, workspace_id, segment_id, offset, limit).await
    }

    async fn segment_member_ids(
        &self,
        workspace_id: &str,
        segment_id: &str,
        after_id: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        segments::member_ids(&self.readers, workspace_id, segment_id, after_id, limit).await
    }

    async fn memberships(
        &self,
        workspace_id: &str,
        contact_id: &str,
    ) -> Result<HashSet<String>, StoreError> {
        segments::memberships(&self.readers, workspace_id, contact_id).await
    }

    async fn contact_event_facts(
        &self,
        workspace_id: &str,
        contact_id: &str,
    ) -> Result<Vec<EventFact>, StoreError> {
        segments::event_facts(&self.readers, workspace_id, contact_id).await
    }

    async fn contacts_matching(
        &self,
        workspace_id: &str,
        condition: &Condition,
        query: &MatchQuery,
        now: DateTime<Utc>,
    ) -> Result<Vec<Contact>, StoreError> {
        matching::contacts_matching(&self.readers, workspace_id, condition, query, now).await
    }

    async fn count_matching(
        &self,
        workspace_id: &str,
        condition: &Condition,
        audience_only: bool,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        matching::count_matching(&self.readers, workspace_id, condition, audience_only, now).await
    }

    async fn campaign(&self, workspace_id: &str, id: &str) -> Result<Option<Campaign>, StoreError> {
        segments::campaign(&self.readers, workspace_id, id).await
    }

    async fn campaigns(
        &self,
        workspace_id: &str,
        status: Option<CampaignStatus>,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Campaign>, u64), StoreError> {
        segments::campaigns(&self.readers, workspace_id, status, offset, limit).await
    }

    async fn campaign_email_counts(
        &self,
        workspace_id: &str,
        campaign_id: &str,
    ) -> Result<EmailCounts, StoreError> {
        segments::campaign_email_counts(&self.readers, workspace_id, campaign_id).await
    }
}
