//! Key sets of a workspace: list, create (clear keys shown once), revoke.

use super::Caller;
use crate::error::{Error, FieldError, Resource, Result};
use crate::model::{parse_domain_name, KeySet, KeySetId, NewKeySet, WorkspaceId};
use crate::ports::{ChangeSet, Write};
use crate::validate::line_problem;
use crate::Engine;

/// `POST /keys`: a new key set, optionally limited to sender domains.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateKeySet {
    /// Label (one line).
    pub name: Option<String>,
    /// Sender-domain allowlist; empty = any verified domain of the workspace.
    pub domains: Vec<String>,
}

impl CreateKeySet {
    /// The domains as stored: each a valid name, lower case, once; or the failing fields.
    fn normalized_domains(&self) -> Result<Vec<String>> {
        let mut out: Vec<String> = Vec::new();
        let mut errors = Vec::new();
        for (i, raw) in self.domains.iter().enumerate() {
            match parse_domain_name(raw) {
                Ok(d) if !out.contains(&d) => out.push(d),
                Ok(_) => {}
                Err(_) => errors.push(FieldError::new(
                    format!("domains.{i}"),
                    "invalid_domain",
                    "not a domain name",
                )),
            }
        }
        if let Some((code, message)) = self
            .name
            .as_deref()
            .and_then(|n| line_problem("name", n, 255))
        {
            errors.insert(0, FieldError::new("name", code, message));
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(Error::Validation(errors))
        }
    }
}

impl Engine {
    /// `GET /keys`: the workspace's key sets (no clear keys). Needs an unscoped secret key.
    pub async fn list_key_sets(&self, caller: &Caller) -> Result<Vec<KeySet>> {
        caller.may_manage_keys()?;
        Ok(self.store.key_sets(caller.workspace_id()).await?)
    }

    /// `POST /keys {name?, domains?}`: a new key set of the caller's workspace. Needs an
    /// unscoped secret key.
    pub async fn create_key_set(&self, caller: &Caller, cmd: CreateKeySet) -> Result<NewKeySet> {
        caller.may_manage_keys()?;
        self.add_key_set(caller.workspace_id(), cmd).await
    }

    /// Adds a key set to `workspace_id` (already checked to exist and be the caller's).
    pub(crate) async fn add_key_set(
        &self,
        workspace_id: &WorkspaceId,
        cmd: CreateKeySet,
    ) -> Result<NewKeySet> {
        let domains = cmd.normalized_domains()?;
        let name = cmd.name;
        let set = NewKeySet::generate(&*self.clock, workspace_id, name, domains, self.clock.now());
        let mut changes = ChangeSet::new();
        changes.push(Write::PutKeySet(set.record.clone()));
        self.store.commit(changes).await?;
        Ok(set)
    }

    /// `DELETE /keys/{id}`: revokes a key set; the last one cannot be revoked. Needs an
    /// unscoped secret key.
    pub async fn revoke_key_set(&self, caller: &Caller, id: &KeySetId) -> Result<()> {
        caller.may_manage_keys()?;
        // Decided again from a fresh read after any conflict: two revocations at once (the
        // guard below refuses the second when it would leave none, and its new read says
        // why), or a transaction the database gave up.
        self.on_conflict_retry(|| async {
            let sets = self.store.key_sets(caller.workspace_id()).await?;
            if !sets.iter().any(|s| s.id == *id) {
                return Err(Error::NotFound(Resource::KeySet).into());
            }
            if sets.len() == 1 {
                return Err(last_key_set().into());
            }
            let mut changes = ChangeSet::new();
            changes.push(Write::DeleteKeySet {
                workspace_id: caller.workspace_id().clone(),
                id: id.clone(),
            });
            changes.push(Write::KeepAKeySet {
                workspace_id: caller.workspace_id().clone(),
            });
            self.store.commit(changes).await?;
            Ok(())
        })
        .await
    }
}

/// 409: the last key set stays.
fn last_key_set() -> Error {
    Error::Conflict(
        "This is the workspace's last key set; create another before revoking it".into(),
    )
}
