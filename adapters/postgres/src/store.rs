//! `Store` and `WorkflowStore` for [`PgStore`]: thin delegation to the read, matching and
//! commit modules.

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
    ChangeSet, ContactPage, ContactQuery, EmailStatsQuery, EventQuery, EventReads, FeedbackReads,
    MatchQuery, SigningKeys, Store, StoreError, SuppressionFacts, TemplateQuery, WorkflowStore,
};
use posthorn_core::segment::{Condition, EventFact};
use posthorn_core::workflow::{Execution, Step, StepRun, Transition, Workflow};

use crate::{contacts, matching, records, segments, workflows, PgStore};

#[async_trait]
impl Store for PgStore {
    async fn commit(&self, changes: ChangeSet) -> Result<(), StoreError> {
        let changes_access = changes.changes_access();
        let committed = self.group.commit(changes).await;
        if changes_access {
            // Also when the outcome is unknown (the commit may have happened).
            self.wake.access_changed();
        }
        committed
    }

    fn access_generation(&self) -> u64 {
        self.wake.access_generation()
    }

    async fn workspace(&self, id: &WorkspaceId) -> Result<Option<Workspace>, StoreError> {
        self.record_reads.workspace(id.as_str()).await
    }

    async fn workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        records::workspaces(&self.pool).await
    }

    async fn key_by_hash(&self, key_hash: &str) -> Result<Option<ApiKey>, StoreError> {
        records::key_by_hash(&self.pool, key_hash).await
    }

    async fn key_sets(&self, workspace_id: &WorkspaceId) -> Result<Vec<KeySet>, StoreError> {
        records::key_sets(&self.pool, workspace_id.as_str()).await
    }

    async fn domains(&self, workspace_id: &WorkspaceId) -> Result<Vec<Domain>, StoreError> {
        self.domain_reads.domains(workspace_id.as_str()).await
    }

    async fn inbound_domain(&self, name: &str) -> Result<Option<Domain>, StoreError> {
        records::inbound_domain(&self.pool, name).await
    }

    async fn inbound_email(
        &self,
        workspace_id: &WorkspaceId,
        id: &posthorn_core::model::EmailId,
    ) -> Result<Option<posthorn_core::model::InboundEmail>, StoreError> {
        crate::inbound::get(&self.pool, workspace_id, id).await
    }

    async fn contact(
        &self,
        workspace_id: &WorkspaceId,
        id: &ContactId,
    ) -> Result<Option<Contact>, StoreError> {
        contacts::by_id(&self.pool, workspace_id.as_str(), id.as_str()).await
    }

    async fn contact_by_email(
        &self,
        workspace_id: &WorkspaceId,
        email: &str,
    ) -> Result<Option<Contact>, StoreError> {
        contacts::by_email(&self.pool, workspace_id.as_str(), email).await
    }

    async fn event_reads(
        &self,
        workspace_id: &WorkspaceId,
        email: &str,
        event_name: Option<&str>,
    ) -> Result<EventReads, StoreError> {
        self.event_reads
            .event_reads(workspace_id, email, event_name)
            .await
    }

    async fn contacts(
        &self,
        workspace_id: &WorkspaceId,
        query: &ContactQuery,
    ) -> Result<ContactPage, StoreError> {
        contacts::page(&self.pool, workspace_id.as_str(), query).await
    }

    async fn count_contacts(
        &self,
        workspace_id: &WorkspaceId,
        query: &ContactQuery,
    ) -> Result<u64, StoreError> {
        contacts::count(&self.pool, workspace_id.as_str(), query).await
    }

    async fn count_active_contacts(&self, workspace_id: &WorkspaceId) -> Result<u64, StoreError> {
        contacts::count_active(&self.pool, workspace_id.as_str()).await
    }

    async fn pending_contacts(
        &self,
        workspace_id: &WorkspaceId,
        limit: usize,
    ) -> Result<Vec<Contact>, StoreError> {
        contacts::pending(&self.pool, workspace_id.as_str(), limit).await
    }

    async fn template(
        &self,
        workspace_id: &WorkspaceId,
        id: &TemplateId,
    ) -> Result<Option<Template>, StoreError> {
        records::template(&self.pool, workspace_id.as_str(), id.as_str()).await
    }

    async fn templates(
        &self,
        workspace_id: &WorkspaceId,
        query: &TemplateQuery,
    ) -> Result<(Vec<Template>, u64), StoreError> {
        records::templates(&self.pool, workspace_id.as_str(), query).await
    }

    async fn email(
        &self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
    ) -> Result<Option<EmailRecord>, StoreError> {
        self.record_reads
            .email(workspace_id.as_str(), id.as_str())
            .await
    }

    async fn feedback_reads(
        &self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
        event_name: &str,
    ) -> Result<FeedbackReads, StoreError> {
        crate::feedback_reads::feedback_reads(&self.pool, workspace_id, id, event_name).await
    }

    async fn suppression_facts(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
    ) -> Result<SuppressionFacts, StoreError> {
        crate::suppression_facts::suppression_facts(&self.pool, workspace_id, contact_id).await
    }

    async fn email_without_content(
        &self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
    ) -> Result<Option<EmailRecord>, StoreError> {
        records::email_without_content(&self.pool, workspace_id.as_str(), id.as_str()).await
    }

    async fn email_by_provider_id(
        &self,
        provider_message_id: &str,
    ) -> Result<Option<EmailRecord>, StoreError> {
        let key = records::EmailKey::ProviderMessageId;
        records::email_by(&self.pool, key, provider_message_id).await
    }

    async fn email_by_message_id(
        &self,
        message_id: &str,
    ) -> Result<Option<EmailRecord>, StoreError> {
        records::email_by(&self.pool, records::EmailKey::MessageId, message_id).await
    }

    async fn email_by_id(&self, id: &EmailId) -> Result<Option<EmailRecord>, StoreError> {
        records::email_by(&self.pool, records::EmailKey::Id, id.as_str()).await
    }

    async fn email_stats(
        &self,
        workspace_id: &WorkspaceId,
        query: &EmailStatsQuery,
    ) -> Result<EmailStats, StoreError> {
        records::email_stats(&self.pool, workspace_id.as_str(), query).await
    }

    async fn idempotency_record(
        &self,
        scope: &str,
        key: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        crate::idempotency::get(&self.pool, scope, key, now).await
    }

    async fn purge_idempotency(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        crate::idempotency::purge(&self.pool, now).await
    }

    async fn ensure_secret(&self, name: &str, candidate: &[u8]) -> Result<Vec<u8>, StoreError> {
        records::ensure_secret(&self.pool, name, candidate).await
    }

    async fn purge_sns_messages(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        crate::sns::purge(&self.pool, before).await
    }

    async fn sns_message_seen(&self, message_id: &str) -> Result<bool, StoreError> {
        crate::sns::seen(&self.pool, message_id).await
    }

    async fn events(
        &self,
        workspace_id: &WorkspaceId,
        query: &EventQuery,
    ) -> Result<Vec<Event>, StoreError> {
        records::events(&self.pool, workspace_id.as_str(), query).await
    }

    async fn event_names(&self, workspace_id: &WorkspaceId) -> Result<Vec<String>, StoreError> {
        records::event_names(&self.pool, workspace_id.as_str()).await
    }

    async fn segment(
        &self,
        workspace_id: &WorkspaceId,
        id: &SegmentId,
    ) -> Result<Option<Segment>, StoreError> {
        segments::segment(&self.pool, workspace_id.as_str(), id.as_str()).await
    }

    async fn segments(
        &self,
        workspace_id: &WorkspaceId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Segment>, u64), StoreError> {
        segments::segments(&self.pool, workspace_id.as_str(), offset, limit).await
    }

    async fn tracked_segments(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Vec<Segment>, StoreError> {
        segments::tracked_segments(&self.pool, workspace_id.as_str()).await
    }

    async fn segment_member_count(
        &self,
        workspace_id: &WorkspaceId,
        segment_id: &SegmentId,
    ) -> Result<u64, StoreError> {
        segments::member_count(&self.pool, workspace_id.as_str(), segment_id.as_str()).await
    }

    async fn segment_members(
        &self,
        workspace_id: &WorkspaceId,
        segment_id: &SegmentId,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<Contact>, StoreError> {
        segments::members(
            &self.pool,
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
            &self.pool,
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
        segments::memberships(&self.pool, workspace_id.as_str(), contact_id.as_str()).await
    }

    async fn contact_event_facts(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
    ) -> Result<Vec<EventFact>, StoreError> {
        segments::event_facts(&self.pool, workspace_id.as_str(), contact_id.as_str()).await
    }

    async fn contacts_matching(
        &self,
        workspace_id: &WorkspaceId,
        condition: &Condition,
        query: &MatchQuery,
        now: DateTime<Utc>,
    ) -> Result<Vec<Contact>, StoreError> {
        matching::contacts_matching(&self.pool, workspace_id.as_str(), condition, query, now).await
    }

    async fn count_matching(
        &self,
        workspace_id: &WorkspaceId,
        condition: &Condition,
        audience_only: bool,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        matching::count_matching(
            &self.pool,
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
        segments::campaign(&self.pool, workspace_id.as_str(), id.as_str()).await
    }

    async fn campaigns(
        &self,
        workspace_id: &WorkspaceId,
        status: Option<CampaignStatus>,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Campaign>, u64), StoreError> {
        segments::campaigns(&self.pool, workspace_id.as_str(), status, offset, limit).await
    }

    async fn campaign_email_counts(
        &self,
        workspace_id: &WorkspaceId,
        campaign_id: &CampaignId,
    ) -> Result<EmailCounts, StoreError> {
        segments::campaign_email_counts(&self.pool, workspace_id.as_str(), campaign_id.as_str())
            .await
    }
}

#[async_trait]
impl WorkflowStore for PgStore {
    async fn workflow(
        &self,
        workspace_id: &WorkspaceId,
        id: &WorkflowId,
    ) -> Result<Option<Workflow>, StoreError> {
        workflows::workflow(&self.pool, workspace_id, id).await
    }

    async fn workflows(
        &self,
        workspace_id: &WorkspaceId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Workflow>, u64), StoreError> {
        workflows::workflows(&self.pool, workspace_id, offset, limit).await
    }

    async fn workflow_steps(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<Vec<Step>, StoreError> {
        workflows::steps(&self.pool, workspace_id, workflow_id).await
    }

    async fn workflow_transitions(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<Vec<Transition>, StoreError> {
        workflows::transitions(&self.pool, workspace_id, workflow_id).await
    }

    async fn event_workflows(
        &self,
        workspace_id: &WorkspaceId,
        event_name: &str,
    ) -> Result<Vec<Workflow>, StoreError> {
        workflows::event_workflows(&self.pool, workspace_id, event_name).await
    }

    async fn has_event_interest(
        &self,
        workspace_id: &WorkspaceId,
        event_name: &str,
        contact_id: &ContactId,
    ) -> Result<bool, StoreError> {
        workflows::has_event_interest(&self.pool, workspace_id, event_name, contact_id).await
    }

    async fn waiting_executions(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
        event_name: &str,
    ) -> Result<Vec<Execution>, StoreError> {
        workflows::waiting_executions(&self.pool, workspace_id, contact_id, event_name).await
    }

    async fn execution(
        &self,
        workspace_id: &WorkspaceId,
        id: &ExecutionId,
    ) -> Result<Option<Execution>, StoreError> {
        workflows::execution(&self.pool, workspace_id, id).await
    }

    async fn executions(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Execution>, u64), StoreError> {
        workflows::executions(&self.pool, workspace_id, workflow_id, offset, limit).await
    }

    async fn active_executions(
        &self,
        workspace_id: &WorkspaceId,
        workflow_id: &WorkflowId,
    ) -> Result<u64, StoreError> {
        workflows::active_executions(&self.pool, workspace_id, workflow_id).await
    }

    async fn step_run(
        &self,
        workspace_id: &WorkspaceId,
        execution_id: &ExecutionId,
        step_id: &StepId,
    ) -> Result<Option<StepRun>, StoreError> {
        workflows::step_run(&self.pool, workspace_id, execution_id, step_id).await
    }

    async fn step_runs(
        &self,
        workspace_id: &WorkspaceId,
        execution_id: &ExecutionId,
    ) -> Result<Vec<StepRun>, StoreError> {
        workflows::step_runs(&self.pool, workspace_id, execution_id).await
    }

    async fn template_in_workflows(
        &self,
        workspace_id: &WorkspaceId,
        template_id: &TemplateId,
    ) -> Result<bool, StoreError> {
        workflows::template_in_workflows(&self.pool, workspace_id, template_id).await
    }

    async fn signing_keys(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Option<SigningKeys>, StoreError> {
        workflows::signing_keys(&self.pool, workspace_id).await
    }

    async fn event(
        &self,
        workspace_id: &WorkspaceId,
        id: &EventId,
    ) -> Result<Option<Event>, StoreError> {
        records::event(&self.pool, workspace_id.as_str(), id.as_str()).await
    }
}
