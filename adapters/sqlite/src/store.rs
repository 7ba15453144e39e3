//! `Store` and `WorkflowStore` for [`SqliteStore`]: thin delegation to the read, matching and commit modules.
//! Commits go through the writer connection; every read uses the reader pool.

use posthorn_core::model::{CampaignId, ContactId, EmailId, SegmentId, TemplateId, WorkspaceId};
use std::collections::HashSet;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use posthorn_core::model::{
    ApiKey, Campaign, CampaignStatus, Contact, Domain, EmailCounts, EmailRecord, EmailStats, Event,
    KeySet, Segment, Template, Workspace,
};
use posthorn_core::model::{EventId, ExecutionId, IdempotencyRecord, StepId, WorkflowId};
use posthorn_core::ports::{
    ChangeSet, ContactPage, ContactQuery, EmailStatsQuery, EventQuery, MatchQuery, SigningKeys,
    Store, StoreError, SuppressionFacts, TemplateQuery, WorkflowStore,
};
use posthorn_core::segment::{Condition, EventFact};
use posthorn_core::workflow::{Execution, Step, StepRun, Transition, Workflow};

use std::sync::Arc;

use crate::after_commit::AfterCommit;
use crate::{contacts, derived, matching, records, segments, workflows, SqliteStore};

#[async_trait]
impl Store for SqliteStore {
    async fn commit(&self, changes: ChangeSet) -> Result<(), StoreError> {
        let changes_access = changes.changes_access();
        let stale = derived::Stale::of(&changes);
        let Some(outcome) = self.group.submit(self.writer()?, changes) else {
            return Ok(());
        };
        AfterCommit::new(
            self.derived.clone(),
            Arc::clone(&self.wake),
            stale,
            changes_access,
            outcome,
        )
        .wait()
        .await
        .map(drop)
    }

    fn access_generation(&self) -> u64 {
        self.wake.access_generation()
    }

    async fn workspace(&self, id: &WorkspaceId) -> Result<Option<Workspace>, StoreError> {
        records::workspace(&self.readers, id.as_str()).await
    }

    async fn workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        records::workspaces(&self.readers).await
    }

    async fn key_by_hash(&self, key_hash: &str) -> Result<Option<ApiKey>, StoreError> {
        records::key_by_hash(&self.readers, key_hash).await
    }

    async fn key_sets(&self, workspace_id: &WorkspaceId) -> Result<Vec<KeySet>, StoreError> {
        records::key_sets(&self.readers, workspace_id.as_str()).await
    }

    async fn domains(&self, workspace_id: &WorkspaceId) -> Result<Vec<Domain>, StoreError> {
        records::domains(&self.readers, workspace_id.as_str()).await
    }

    async fn inbound_domain(&self, name: &str) -> Result<Option<Domain>, StoreError> {
        records::inbound_domain(&self.readers, name).await
    }

    async fn inbound_email(
        &self,
        workspace_id: &WorkspaceId,
        id: &posthorn_core::model::EmailId,
    ) -> Result<Option<posthorn_core::model::InboundEmail>, StoreError> {
        crate::inbound::get(&self.readers, workspace_id, id).await
    }

    async fn contact(
        &self,
        workspace_id: &WorkspaceId,
        id: &ContactId,
    ) -> Result<Option<Contact>, StoreError> {
        contacts::by_id(&self.readers, workspace_id.as_str(), id.as_str()).await
    }

    async fn contact_by_email(
        &self,
        workspace_id: &WorkspaceId,
        email: &str,
    ) -> Result<Option<Contact>, StoreError> {
        self.point
            .contact_by_email(workspace_id.as_str(), &email.to_lowercase())
    }

    async fn contacts(
        &self,
        workspace_id: &WorkspaceId,
        query: &ContactQuery,
    ) -> Result<ContactPage, StoreError> {
        contacts::page(&self.readers, workspace_id.as_str(), query).await
    }

    async fn count_contacts(
        &self,
        workspace_id: &WorkspaceId,
        query: &ContactQuery,
    ) -> Result<u64, StoreError> {
        contacts::count_matching_filters(&self.readers, workspace_id.as_str(), query).await
    }

    async fn count_active_contacts(&self, workspace_id: &WorkspaceId) -> Result<u64, StoreError> {
        contacts::count_active(&self.readers, workspace_id.as_str()).await
    }

    async fn pending_contacts(
        &self,
        workspace_id: &WorkspaceId,
        limit: usize,
    ) -> Result<Vec<Contact>, StoreError> {
        contacts::pending(&self.readers, workspace_id.as_str(), limit).await
    }

    async fn template(
        &self,
        workspace_id: &WorkspaceId,
        id: &TemplateId,
    ) -> Result<Option<Template>, StoreError> {
        records::template(&self.readers, workspace_id.as_str(), id.as_str()).await
    }

    async fn templates(
        &self,
        workspace_id: &WorkspaceId,
        query: &TemplateQuery,
    ) -> Result<(Vec<Template>, u64), StoreError> {
        records::templates(&self.readers, workspace_id.as_str(), query).await
    }

    async fn email(
        &self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
    ) -> Result<Option<EmailRecord>, StoreError> {
        records::email(&self.readers, workspace_id.as_str(), id.as_str()).await
    }

    async fn email_without_content(
        &self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
    ) -> Result<Option<EmailRecord>, StoreError> {
        records::email_without_content(&self.readers, workspace_id.as_str(), id.as_str()).await
    }

    async fn suppression_facts(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
    ) -> Result<SuppressionFacts, StoreError> {
        crate::suppression_facts::suppression_facts(&self.readers, workspace_id, contact_id).await
    }

    async fn email_by_provider_id(
        &self,
        provider_message_id: &str,
    ) -> Result<Option<EmailRecord>, StoreError> {
        let key = records::EmailKey::ProviderMessageId;
        records::email_by(&self.readers, key, provider_message_id).await
    }

    async fn email_by_message_id(
        &self,
        message_id: &str,
    ) -> Result<Option<EmailRecord>, StoreError> {
        records::email_by(&self.readers, records::EmailKey::MessageId, message_id).await
    }

    async fn email_by_id(&self, id: &EmailId) -> Result<Option<EmailRecord>, StoreError> {
        records::email_by(&self.readers, records::EmailKey::Id, id.as_str()).await
    }

    async fn email_stats(
        &self,
        workspace_id: &WorkspaceId,
        query: &EmailStatsQuery,
    ) -> Result<EmailStats, StoreError> {
        records::email_stats(&self.readers, workspace_id.as_str(), query).await
    }

    async fn idempotency_record(
        &self,
        scope: &str,
        key: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        crate::idempotency::get(&self.readers, scope, key, now).await
    }

    async fn purge_idempotency(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        crate::idempotency::purge(&*self.direct_writer()?, now).await
    }

    async fn ensure_secret(&self, name: &str, candidate: &[u8]) -> Result<Vec<u8>, StoreError> {
        if let Some(value) = records::secret(&self.readers, name).await? {
            return Ok(value);
        }
        records::ensure_secret(&*self.direct_writer()?, name, candidate).await
    }

    async fn purge_sns_messages(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        crate::sns::purge(&*self.direct_writer()?, before).await
    }

    async fn sns_message_seen(&self, message_id: &str) -> Result<bool, StoreError> {
        crate::sns::seen(&self.readers, message_id).await
    }

    async fn events(
        &self,
        workspace_id: &WorkspaceId,
        query: &EventQuery,
    ) -> Result<Vec<Event>, StoreError> {
        records::events(&self.readers, workspace_id.as_str(), query).await
    }

    async fn event_names(&self, workspace_id: &WorkspaceId) -> Result<Vec<String>, StoreError> {
        records::event_names(&self.readers, workspace_id.as_str()).await
    }

    async fn segment(
        &self,
        workspace_id: &WorkspaceId,
        id: &SegmentId,
    ) -> Result<Option<Segment>, StoreError> {
        segments::segment(&self.readers, workspace_id.as_str(), id.as_str()).await
    }

    async fn segments(
        &self,
        workspace_id: &WorkspaceId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Segment>, u64), StoreError> {
        segments::segments(&self.readers, workspace_id.as_str(), offset, limit).await
    }

    async fn tracked_segments(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Vec<Segment>, StoreError> {
        let ws = workspace_id.as_str();
        let load = segments::tracked_segments(&self.readers, ws);
        match &self.derived {
            Some(derived) => derived.tracked_segments(ws, load).await,
            None => load.await,
        }
    }

    async fn segment_member_count(
        &self,
        workspace_id: &WorkspaceId,
        segment_id: &SegmentId,
    ) -> Result<u64, StoreError> {
        segments::member_count(&self.readers, workspace_id.as_str(), segment_id.as_str()).await
    }

    async fn segment_members(
        &self,
        workspace_id: &WorkspaceId,
        segment_id: &SegmentId,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<Contact>, StoreError> {
        segments::members(
            &self.readers,
            workspace_id.as_str(),
            segment_id.as_str(),
            offset,
            limit,
        )
        .await
    }

    async fn segment_member_ids(
        &self,
        workspace_id: &WorkspaceId,
        segment_id: &SegmentId,
        after_id: Option<&ContactId>,
        limit: usize,
    ) -> Result<Vec<ContactId>, StoreError> {
        segments::member_ids(
            &self.readers,
            workspace_id.as_str(),
            segment_id.as_str(),
            after_id.map(|id| id.as_str()),
            limit,
        )
        .await
    }

    async fn memberships(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
    ) -> Result<HashSet<SegmentId>, StoreError> {
        segments::memberships(&self.readers, workspace_id.as_str(), contact_id.as_str()).await
    }

    async fn contact_event_facts(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
    ) -> Result<Vec<EventFact>, StoreError> {
        segments::event_facts(&self.readers, workspace_id.as_str(), contact_id.as_str()).await
    }

    async fn contacts_matching(
        &self,
        workspace_id: &WorkspaceId,
        condition: &Condition,
        query: &MatchQuery,
        now: DateTime<Utc>,
    ) -> Result<Vec<Contact>, StoreError> {
        matching::contacts_matching(&self.readers, workspace_id.as_str(), condition, query, now)
            .await
    }

    async fn count_matching(
        &self,
        workspace_id: &WorkspaceId,
        condition: &Condition,
        audience_only: bool,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        matching::count_matching(
            &self.readers,
            workspace_id.as_str(),
            condition,
            audience_only,
            now,
        )
        .await
    }

    async fn campaign(
        &self,
        workspace_id: &WorkspaceId,
        id: &CampaignId,
    ) -> Result<Option<Campaign>, StoreError> {
        segments::campaign(&self.readers, workspace_id.as_str(), id.as_str()).await
    }

    async fn campaigns(
        &self,
        workspace_id: &WorkspaceId,
        status: Option<CampaignStatus>,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Campaign>, u64), StoreError> {
        segments::campaigns(&self.readers, workspace_id.as_str(), status, offset, limit).await
    }

    async fn campaign_email_counts(
        &self,
        workspace_id: &WorkspaceId,
        campaign_id: &CampaignId,
    ) -> Result<EmailCounts, StoreError> {
        segments::campaign_email_counts(&self.readers, workspace_id.as_str(), campaign_id.as_str())
            .await
    }
}

#[async_trait]
impl WorkflowStore for SqliteStore {
    async fn workflow(
        &self,
        workspace_id: &WorkspaceId,
        id: &WorkflowId,
    ) -> Result<Option<Workflow>, StoreError> {
        workflows::workflow(&self.readers, workspace_id, id).await
    }

    async fn workflows(
        &self,
        workspace_id: &WorkspaceId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Workflow>, u64), StoreError> {
        workflows::workflows(&self.readers, workspace_id, offset, limit).await
    }

    async fn workflow_steps(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<Vec<Step>, StoreError> {
        workflows::steps(&self.readers, workspace_id, workflow_id).await
    }

    async fn workflow_transitions(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<Vec<Transition>, StoreError> {
        workflows::transitions(&self.readers, workspace_id, workflow_id).await
    }

    async fn event_workflows(
        &self,
        workspace_id: &WorkspaceId,
        event_name: &str,
    ) -> Result<Vec<Workflow>, StoreError> {
        workflows::event_workflows(&self.readers, workspace_id, event_name).await
    }

    async fn has_event_interest(
        &self,
        workspace_id: &WorkspaceId,
        event_name: &str,
        contact_id: &ContactId,
    ) -> Result<bool, StoreError> {
        if let Some(derived) = &self.derived {
            let quiet = workflows::quiet(&self.readers, workspace_id);
            if derived.quiet(workspace_id.as_str(), quiet).await? {
                return Ok(false);
            }
        }
        workflows::has_event_interest(&self.readers, workspace_id, event_name, contact_id).await
    }

    async fn waiting_executions(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
        event_name: &str,
    ) -> Result<Vec<Execution>, StoreError> {
        workflows::waiting_executions(&self.readers, workspace_id, contact_id, event_name).await
    }

    async fn execution(
        &self,
        workspace_id: &WorkspaceId,
        id: &ExecutionId,
    ) -> Result<Option<Execution>, StoreError> {
        workflows::execution(&self.readers, workspace_id, id).await
    }

    async fn executions(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Execution>, u64), StoreError> {
        workflows::executions(&self.readers, workspace_id, workflow_id, offset, limit).await
    }

    async fn active_executions(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<u64, StoreError> {
        workflows::active_executions(&self.readers, workspace_id, workflow_id).await
    }

    async fn step_run(
        &self,
        workspace_id: &WorkspaceId,
        execution_id: &ExecutionId,
        step_id: &StepId,
    ) -> Result<Option<StepRun>, StoreError> {
        workflows::step_run(&self.readers, workspace_id, execution_id, step_id).await
    }

    async fn step_runs(
        &self,
        workspace_id: &WorkspaceId,
        execution_id: &ExecutionId,
    ) -> Result<Vec<StepRun>, StoreError> {
        workflows::step_runs(&self.readers, workspace_id, execution_id).await
    }

    async fn template_in_workflows(
        &self,
        workspace_id: &WorkspaceId,
        template_id: &TemplateId,
    ) -> Result<bool, StoreError> {
        workflows::template_in_workflows(&self.readers, workspace_id, template_id).await
    }

    async fn signing_keys(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Option<SigningKeys>, StoreError> {
        workflows::signing_keys(&self.readers, workspace_id).await
    }

    async fn event(
        &self,
        workspace_id: &WorkspaceId,
        id: &EventId,
    ) -> Result<Option<Event>, StoreError> {
        records::event(&self.readers, workspace_id.as_str(), id.as_str()).await
    }
}
