//! The operator's API: workspaces, their key sets and domains; and API-key authentication.

use super::keys::CreateKeySet;
use super::{Caller, Patch};
use crate::error::{Error, Resource, Result};
use crate::model::{hash_key, parse_domain_name, Domain, NewKeySet, Workspace, WorkspaceId};
use crate::ports::{ChangeSet, StoreError, Write};
use crate::validate::line_problem;
use crate::Engine;

/// The id of the workspace created on first run (fixed, so concurrent first runs collide).
pub const BOOTSTRAP_WORKSPACE_ID: &str = "00000000-0000-7000-8000-000000000001";

/// Why a bearer key was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthFailure {
    /// Not a `pk_`/`sk_` key at all.
    Malformed,
    /// Unknown or revoked key.
    Unknown,
    /// The workspace is disabled.
    Disabled,
}

/// `POST /admin/workspaces`: a workspace and its first key set.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreateWorkspace {
    /// Name (one line).
    pub name: String,
    /// Most ACTIVE contacts; `None` = no limit.
    pub active_contact_limit: Option<u64>,
    /// API requests per minute; the default when `None`.
    pub rate_limit_per_minute: Option<u32>,
    /// Emails per second; the default when `None`.
    pub send_rate_per_second: Option<f64>,
}

/// `PATCH /admin/workspaces/{id}`: each field left, cleared (the contact limit) or set.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkspacePatch {
    /// New name.
    pub name: Option<String>,
    /// Disable (every request 403) or enable.
    pub disabled: Option<bool>,
    /// New active contact limit (`Clear`: no limit).
    pub active_contact_limit: Patch<u64>,
    /// New API budget per minute.
    pub rate_limit_per_minute: Option<u32>,
    /// New send rate per second.
    pub send_rate_per_second: Option<f64>,
    /// Switch the open pixel on or off.
    pub track_opens: Option<bool>,
    /// Switch click tracking on or off.
    pub track_clicks: Option<bool>,
}

/// `POST /admin/workspaces/{id}/domains`: a sender (and inbound) domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddDomain {
    /// The domain name, lower case.
    pub domain: String,
    /// Mark it verified without a DNS check (operators and tests).
    pub verified: bool,
    /// Accept inbound mail for it.
    pub inbound_enabled: bool,
}

impl CreateWorkspace {
    /// A workspace with this name and the default limits.
    pub fn named(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }
}

impl AddDomain {
    /// A sender domain marked verified without a DNS check (the operator vouches for it).
    pub fn verified(domain: impl Into<String>) -> Self {
        Self {
            domain: domain.into(),
            verified: true,
            inbound_enabled: false,
        }
    }
}

impl WorkspacePatch {
    /// Applies the patch to a workspace (its `updated_at` is the caller's to set).
    fn apply(self, ws: &mut Workspace) {
        if let Some(name) = self.name {
            ws.name = name;
        }
        if let Some(disabled) = self.disabled {
            ws.disabled = disabled;
        }
        self.active_contact_limit
            .apply_to(&mut ws.active_contact_limit);
        if let Some(n) = self.rate_limit_per_minute {
            ws.rate_limit_per_minute = n;
        }
        if let Some(n) = self.send_rate_per_second {
            ws.send_rate_per_second = n;
        }
        if let Some(on) = self.track_opens {
            ws.track_opens = on;
        }
        if let Some(on) = self.track_clicks {
            ws.track_clicks = on;
        }
    }
}

impl Engine {
    /// Resolves a bearer key to its caller.
    pub async fn authenticate(&self, key: &str) -> Result<Caller, AuthOutcome> {
        let key = key.trim();
        if !(key.starts_with("pk_") || key.starts_with("sk_")) || key.len() > 200 {
            return Err(AuthOutcome::Refused(AuthFailure::Malformed));
        }
        let found = self
            .store
            .key_by_hash(&hash_key(key))
            .await
            .map_err(AuthOutcome::Store)?;
        let Some(api_key) = found else {
            return Err(AuthOutcome::Refused(AuthFailure::Unknown));
        };
        let workspace = self
            .store
            .workspace(&api_key.key_set.workspace_id)
            .await
            .map_err(AuthOutcome::Store)?
            .ok_or(AuthOutcome::Refused(AuthFailure::Unknown))?;
        if workspace.disabled {
            return Err(AuthOutcome::Refused(AuthFailure::Disabled));
        }
        Ok(Caller {
            workspace,
            key: api_key,
        })
    }

    /// `POST /admin/workspaces`: a workspace and its first key set.
    pub async fn create_workspace(&self, cmd: CreateWorkspace) -> Result<(Workspace, NewKeySet)> {
        if let Some((code, message)) = line_problem("name", &cmd.name, 255) {
            return Err(Error::field("name", code, message));
        }
        let now = self.clock.now();
        let mut ws = Workspace::new(&*self.clock, cmd.name, now);
        WorkspacePatch {
            active_contact_limit: cmd.active_contact_limit.map_or(Patch::Keep, Patch::Set),
            rate_limit_per_minute: cmd.rate_limit_per_minute,
            send_rate_per_second: cmd.send_rate_per_second,
            ..WorkspacePatch::default()
        }
        .apply(&mut ws);
        let keys = NewKeySet::generate(&*self.clock, &ws.id, None, Vec::new(), now);
        let mut changes = ChangeSet::new();
        changes.push(Write::PutWorkspace(ws.clone()));
        changes.push(Write::PutKeySet(keys.record.clone()));
        self.store.commit(changes).await?;
        Ok((ws, keys))
    }

    /// `GET /admin/workspaces/{id}`.
    pub async fn workspace(&self, id: &WorkspaceId) -> Result<Workspace> {
        self.store
            .workspace(id)
            .await?
            .ok_or(Error::NotFound(Resource::Workspace))
    }

    /// `GET /admin/workspaces`.
    pub async fn workspaces(&self) -> Result<Vec<Workspace>> {
        Ok(self.store.workspaces().await?)
    }

    /// `PATCH /admin/workspaces/{id}`: `name`, `disabled` and the limits.
    pub async fn patch_workspace(
        &self,
        id: &WorkspaceId,
        patch: WorkspacePatch,
    ) -> Result<Workspace> {
        let mut ws = self.workspace(id).await?;
        patch.apply(&mut ws);
        ws.updated_at = self.clock.now();
        let mut changes = ChangeSet::new();
        changes.push(Write::PutWorkspace(ws.clone()));
        self.store.commit(changes).await?;
        // A raised limit lets PENDING contacts in at once.
        self.promote_pending_contacts(&ws).await?;
        Ok(ws)
    }

    /// `POST /admin/workspaces/{id}/key-sets {domains?}`.
    pub async fn admin_create_key_set(
        &self,
        id: &WorkspaceId,
        cmd: CreateKeySet,
    ) -> Result<NewKeySet> {
        let ws = self.workspace(id).await?;
        self.add_key_set(&ws.id, cmd).await
    }

    /// `POST /admin/workspaces/{id}/domains {domain, verified?, inboundEnabled?}`.
    pub async fn admin_add_domain(&self, id: &WorkspaceId, cmd: AddDomain) -> Result<Domain> {
        let ws = self.workspace(id).await?;
        let name = parse_domain_name(&cmd.domain).map_err(|_| {
            Error::field(
                "domain",
                "invalid_domain",
                format!("'{}' is not a domain name", cmd.domain),
            )
        })?;
        let (verified, inbound) = (cmd.verified, cmd.inbound_enabled);
        let now = self.clock.now();
        let mut domain = Domain::new(&*self.clock, ws.id, name, now);
        domain.verified = verified;
        domain.verified_by_operator = verified;
        domain.inbound_enabled = inbound;
        self.insert_domain(domain).await
    }

    /// First run: when the store has no workspace, creates `default` with a key set and a
    /// verified sender domain, in one commit. Returns the new workspace and its clear keys.
    ///
    /// Several processes starting together on an empty database race here: the workspace has
    /// a fixed id and its domain is a guarded insert, so exactly one commit wins and the
    /// others conflict and create nothing.
    pub async fn bootstrap(&self, domain: &str) -> Result<Option<(Workspace, NewKeySet)>> {
        if !self.store.workspaces().await?.is_empty() {
            return Ok(None);
        }
        let domain = parse_domain_name(domain)
            .map_err(|e| Error::BadRequest(format!("'{domain}' is not a domain name: {e}")))?;
        let now = self.clock.now();
        let mut ws = Workspace::new(&*self.clock, "default".into(), now);
        ws.id = WorkspaceId::from(BOOTSTRAP_WORKSPACE_ID);
        let keys = NewKeySet::generate(&*self.clock, &ws.id, None, Vec::new(), now);
        let mut changes = ChangeSet::new();
        changes.push(Write::PutWorkspace(ws.clone()));
        changes.push(Write::PutKeySet(keys.record.clone()));
        let mut domain = Domain::new(&*self.clock, ws.id.clone(), domain, now);
        domain.verified = true;
        domain.verified_by_operator = true;
        changes.push(Write::InsertDomain(domain));
        match self.store.commit(changes).await {
            Ok(()) => Ok(Some((ws, keys))),
            Err(StoreError::Conflict(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

/// The outcome of a failed authentication: refused, or the store failed.
#[derive(Debug, Clone, PartialEq)]
pub enum AuthOutcome {
    /// The key is refused.
    Refused(AuthFailure),
    /// The store could not answer.
    Store(StoreError),
}
