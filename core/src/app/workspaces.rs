//! The operator's API: workspaces, their key sets and domains; and API-key authentication.

use serde_json::{Map, Value};

use super::Caller;
use crate::error::{Error, Resource, Result};
use crate::model::{hash_key, new_id, parse_domain_name, Domain, NewKeySet, Workspace};
use crate::ports::{ChangeSet, StoreError, Write};
use crate::validate::Checker;
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

/// Limits the operator can set on a workspace.
fn read_limits(c: &mut Checker, obj: &Map<String, Value>, ws: &mut Workspace) {
    if obj.contains_key("activeContactLimit") {
        ws.active_contact_limit = match obj.get("activeContactLimit") {
            Some(Value::Null) => None,
            _ => c
                .integer(obj, "activeContactLimit", "", false, 0, i64::MAX)
                .map(|n| n as u64)
                .or(ws.active_contact_limit),
        };
    }
    if let Some(n) = c.integer(obj, "rateLimitPerMinute", "", false, 1, 10_000_000) {
        ws.rate_limit_per_minute = n as u32;
    }
    if let Some(n) = c.positive_number(obj, "sendRatePerSecond", "", 100_000.0) {
        ws.send_rate_per_second = n;
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
    pub async fn create_workspace(&self, body: &Value) -> Result<(Workspace, NewKeySet)> {
        let obj = Checker::body(body)?;
        let mut c = Checker::new();
        let name = c.line(obj, "name", "", true, 255).map(str::to_string);
        let now = self.clock.now();
        let mut ws = Workspace::new(name.clone().unwrap_or_default(), now);
        read_limits(&mut c, obj, &mut ws);
        c.finish()?;
        let keys = NewKeySet::generate(&ws.id, None, Vec::new(), now);
        let mut changes = ChangeSet::new();
        changes.push(Write::PutWorkspace(ws.clone()));
        changes.push(Write::PutKeySet(keys.record.clone()));
        self.store.commit(changes).await?;
        Ok((ws, keys))
    }

    /// `GET /admin/workspaces/{id}`.
    pub async fn workspace(&self, id: &str) -> Result<Workspace> {
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
    pub async fn patch_workspace(&self, id: &str, body: &Value) -> Result<Workspace> {
        let mut ws = self.workspace(id).await?;
        let obj = Checker::body(body)?;
        let mut c = Checker::new();
        if let Some(name) = c.line(obj, "name", "", false, 255) {
            ws.name = name.to_string();
        }
        if let Some(disabled) = c.boolean(obj, "disabled", "", false) {
            ws.disabled = disabled;
        }
        read_limits(&mut c, obj, &mut ws);
        c.finish()?;
        ws.updated_at = self.clock.now();
        let mut changes = ChangeSet::new();
        changes.push(Write::PutWorkspace(ws.clone()));
        self.store.commit(changes).await?;
        // A raised limit lets PENDING contacts in at once.
        self.promote_pending_contacts(&ws).await?;
        Ok(ws)
    }

    /// `POST /admin/workspaces/{id}/key-sets {domains?}`.
    pub async fn admin_create_key_set(&self, id: &str, body: &Value) -> Result<NewKeySet> {
        let ws = self.workspace(id).await?;
        self.add_key_set(&ws.id, body).await
    }

    /// `POST /admin/workspaces/{id}/domains {domain, verified?, inboundEnabled?}`.
    pub async fn admin_add_domain(&self, id: &str, body: &Value) -> Result<Domain> {
        let ws = self.workspace(id).await?;
        let obj = Checker::body(body)?;
        let mut c = Checker::new();
        let name = c.string(obj, "domain", "", true).and_then(|raw| {
            let parsed = parse_domain_name(raw);
            if parsed.is_none() {
                c.fail(
                    "domain",
                    "invalid_domain",
                    format!("'{raw}' is not a domain name"),
                );
            }
            parsed
        });
        let verified = c.boolean(obj, "verified", "", false).unwrap_or(false);
        let inbound = c.boolean(obj, "inboundEnabled", "", false).unwrap_or(false);
        c.finish()?;
        let now = self.clock.now();
        let domain = Domain {
            id: new_id(),
            workspace_id: ws.id,
            domain: name.unwrap_or_default(),
            verified,
            inbound_enabled: inbound,
            created_at: now,
            updated_at: now,
        };
        let mut changes = ChangeSet::new();
        changes.push(Write::InsertDomain(domain.clone()));
        match self.store.commit(changes).await {
            Ok(()) => Ok(domain),
            Err(StoreError::Conflict(_)) => Err(Error::Conflict(format!(
                "the workspace already has the domain {}",
                domain.domain
            ))),
            Err(e) => Err(e.into()),
        }
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
            .ok_or_else(|| Error::BadRequest(format!("'{domain}' is not a domain name")))?;
        let now = self.clock.now();
        let mut ws = Workspace::new("default".into(), now);
        ws.id = BOOTSTRAP_WORKSPACE_ID.to_string();
        let keys = NewKeySet::generate(&ws.id, None, Vec::new(), now);
        let mut changes = ChangeSet::new();
        changes.push(Write::PutWorkspace(ws.clone()));
        changes.push(Write::PutKeySet(keys.record.clone()));
        changes.push(Write::InsertDomain(Domain {
            id: new_id(),
            workspace_id: ws.id.clone(),
            domain,
            verified: true,
            inbound_enabled: false,
            created_at: now,
            updated_at: now,
        }));
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
