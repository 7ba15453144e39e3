//! Key sets of a workspace: list, create (clear keys shown once), revoke.

use serde_json::Value;

use super::Caller;
use crate::error::{Error, Resource, Result};
use crate::model::{parse_domain_name, KeySet, NewKeySet};
use crate::ports::{ChangeSet, Write};
use crate::validate::{type_name, Checker};
use crate::Engine;

/// Reads an optional `domains` array of domain names.
pub fn read_domains(c: &mut Checker, obj: &serde_json::Map<String, Value>) -> Vec<String> {
    let Some(value) = c.value(obj, "domains", "", false) else {
        return Vec::new();
    };
    let Value::Array(items) = value else {
        c.fail(
            "domains",
            "invalid_type",
            format!("domains must be an array, got {}", type_name(value)),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item.as_str().and_then(parse_domain_name) {
            Some(d) if !out.contains(&d) => out.push(d),
            Some(_) => {}
            None => c.fail(
                format!("domains.{i}"),
                "invalid_domain",
                "not a domain name",
            ),
        }
    }
    out
}

impl Engine {
    /// `GET /keys`: the workspace's key sets (no clear keys). Needs an unscoped secret key.
    pub async fn list_key_sets(&self, caller: &Caller) -> Result<Vec<KeySet>> {
        caller.may_manage_keys()?;
        Ok(self.store.key_sets(caller.workspace_id()).await?)
    }

    /// `POST /keys {name?, domains?}`: a new key set of the caller's workspace. Needs an
    /// unscoped secret key.
    pub async fn create_key_set(&self, caller: &Caller, body: &Value) -> Result<NewKeySet> {
        caller.may_manage_keys()?;
        self.add_key_set(caller.workspace_id(), body).await
    }

    /// Adds a key set to `workspace_id` (already checked to exist and be the caller's).
    pub(crate) async fn add_key_set(&self, workspace_id: &str, body: &Value) -> Result<NewKeySet> {
        let obj = Checker::body(body)?;
        let mut c = Checker::new();
        let name = c.line(obj, "name", "", false, 255).map(str::to_string);
        let domains = read_domains(&mut c, obj);
        c.finish()?;
        let set = NewKeySet::generate(workspace_id, name, domains, self.clock.now());
        let mut changes = ChangeSet::new();
        changes.push(Write::PutKeySet(set.record.clone()));
        self.store.commit(changes).await?;
        Ok(set)
    }

    /// `DELETE /keys/{id}`: revokes a key set; the last one cannot be revoked. Needs an
    /// unscoped secret key.
    pub async fn revoke_key_set(&self, caller: &Caller, id: &str) -> Result<()> {
        caller.may_manage_keys()?;
        let sets = self.store.key_sets(caller.workspace_id()).await?;
        if !sets.iter().any(|s| s.id == id) {
            return Err(Error::NotFound(Resource::KeySet));
        }
        if sets.len() == 1 {
            return Err(Error::Conflict(
                "This is the workspace's last key set; create another before revoking it".into(),
            ));
        }
        let mut changes = ChangeSet::new();
        changes.push(Write::DeleteKeySet {
            workspace_id: caller.workspace_id().to_string(),
            id: id.to_string(),
        });
        self.store.commit(changes).await?;
        Ok(())
    }
}
