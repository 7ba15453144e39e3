//! Who is calling: the authenticated workspace and key.

use crate::model::{ApiKey, KeyKind, Workspace};

/// An authenticated API caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The workspace the key belongs to (enabled).
    pub workspace: Workspace,
    /// The key used.
    pub key: ApiKey,
}

impl Caller {
    /// The workspace id.
    pub fn workspace_id(&self) -> &str {
        &self.workspace.id
    }

    /// Whether the caller used a secret key.
    pub fn is_secret(&self) -> bool {
        self.key.kind == KeyKind::Secret
    }
}
