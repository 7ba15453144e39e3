//! `Store` for [`PgStore`]: thin delegation to the read and commit modules.

use async_trait::async_trait;
use posthorn_core::model::{
    ApiKey, Contact, Domain, EmailRecord, Event, KeySet, Template, Workspace,
};
use posthorn_core::ports::{
    ChangeSet, ContactPage, ContactQuery, EventQuery, Store, StoreError, TemplateQuery,
};

use crate::{commit, contacts, records, PgStore};

#[async_trait]
impl Store for PgStore {
    async fn commit(&self, changes: ChangeSet) -> Result<(), StoreError> {
        commit::commit(&self.pool, changes).await
    }

    async fn workspace(&self, id: &str) -> Result<Option<Workspace>, StoreError> {
        records::workspace(&self.pool, id).await
    }

    async fn workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        records::workspaces(&self.pool).await
    }

    async fn key_by_hash(&self, key_hash: &str) -> Result<Option<ApiKey>, StoreError> {
        records::key_by_hash(&self.pool, key_hash).await
    }

    async fn key_sets(&self, workspace_id: &str) -> Result<Vec<KeySet>, StoreError> {
        records::key_sets(&self.pool, workspace_id).await
    }

    async fn domains(&self, workspace_id: &str) -> Result<Vec<Domain>, StoreError> {
        records::domains(&self.pool, workspace_id).await
    }

    async fn contact(&self, workspace_id: &str, id: &str) -> Result<Option<Contact>, StoreError> {
        contacts::by_id(&self.pool, workspace_id, id).await
    }

    async fn contact_by_email(
        &self,
        workspace_id: &str,
        email: &str,
    ) -> Result<Option<Contact>, StoreError> {
        contacts::by_email(&self.pool, workspace_id, email).await
    }

    async fn contacts(
        &self,
        workspace_id: &str,
        query: &ContactQuery,
    ) -> Result<ContactPage, StoreError> {
        contacts::page(&self.pool, workspace_id, query).await
    }

    async fn count_contacts(
        &self,
        workspace_id: &str,
        query: &ContactQuery,
    ) -> Result<u64, StoreError> {
        contacts::count(&self.pool, workspace_id, query).await
    }

    async fn count_active_contacts(&self, workspace_id: &str) -> Result<u64, StoreError> {
        contacts::count_active(&self.pool, workspace_id).await
    }

    async fn pending_contacts(
        &self,
        workspace_id: &str,
        limit: usize,
    ) -> Result<Vec<Contact>, StoreError> {
        contacts::pending(&self.pool, workspace_id, limit).await
    }

    async fn template(&self, workspace_id: &str, id: &str) -> Result<Option<Template>, StoreError> {
        records::template(&self.pool, workspace_id, id).await
    }

    async fn templates(
        &self,
        workspace_id: &str,
        query: &TemplateQuery,
    ) -> Result<(Vec<Template>, u64), StoreError> {
        records::templates(&self.pool, workspace_id, query).await
    }

    async fn email(&self, workspace_id: &str, id: &str) -> Result<Option<EmailRecord>, StoreError> {
        records::email(&self.pool, workspace_id, id).await
    }

    async fn events(
        &self,
        workspace_id: &str,
        query: &EventQuery,
    ) -> Result<Vec<Event>, StoreError> {
        records::events(&self.pool, workspace_id, query).await
    }

    async fn event_names(&self, workspace_id: &str) -> Result<Vec<String>, StoreError> {
        records::event_names(&self.pool, workspace_id).await
    }
}
