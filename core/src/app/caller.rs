//! Who is calling: the authenticated workspace and key.

use crate::error::{Error, Result};
use crate::model::{ApiKey, KeyKind, KeySet, Workspace, WorkspaceId};

/// An authenticated API caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The workspace the key belongs to (enabled).
    pub workspace: Workspace,
    /// The key used.
    pub key: ApiKey,
}

impl Caller {
    /// Acting with the secret key of `key_set` on `workspace`: how an embedder calls the
    /// use cases of a workspace it created (`Engine::create_workspace` returns both).
    pub fn with_secret_key(workspace: Workspace, key_set: KeySet) -> Self {
        Self {
            workspace,
            key: ApiKey {
                key_set,
                kind: KeyKind::Secret,
            },
        }
    }

    /// The workspace id.
    pub fn workspace_id(&self) -> &WorkspaceId {
        &self.workspace.id
    }

    /// Whether the caller used a secret key.
    pub fn is_secret(&self) -> bool {
        self.key.kind == KeyKind::Secret
    }

    /// Whether the key may manage the workspace's key sets: only an unscoped secret key
    /// may, or a key limited to some sender domains could mint itself an unlimited one.
    pub fn may_manage_keys(&self) -> Result<()> {
        if !self.is_secret() {
            return Err(Error::Forbidden("Key management needs a secret key".into()));
        }
        if !self.key.key_set.domains.is_empty() {
            return Err(Error::Forbidden(format!(
                "This key is limited to the sender domains {}; key management needs a \
                 secret key without domain limits",
                self.key.key_set.domains.join(", ")
            )));
        }
        Ok(())
    }
}
