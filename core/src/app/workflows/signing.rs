//! The workspace's webhook signing secret: shown (made on first use) and rotated.

use super::SigningSecretView;
use crate::app::Caller;
use crate::error::Result;
use crate::model::WorkspaceId;
use crate::ports::{ChangeSet, SigningKeys, WebhookSecret, Write};
use crate::Engine;

impl Engine {
    /// The workspace's signing keys, made and stored on first use.
    pub async fn signing_keys(&self, workspace_id: &WorkspaceId) -> Result<SigningKeys> {
        if let Some(keys) = self.store.signing_keys(workspace_id).await? {
            return Ok(keys);
        }
        let keys = SigningKeys::new(WebhookSecret::generate(&mut rand::thread_rng()));
        let mut changes = ChangeSet::new();
        changes.push(Write::InsertSigningKeys {
            workspace_id: workspace_id.clone(),
            keys: keys.clone(),
        });
        self.store.commit(changes).await?;
        // Of racing first uses the first stored wins and stays: all sign with (and show)
        // that one, not each its own.
        Ok(self.store.signing_keys(workspace_id).await?.unwrap_or(keys))
    }

    /// `GET /workflows/signing-secret`.
    pub async fn signing_secret(&self, caller: &Caller) -> Result<SigningSecretView> {
        let keys = self.signing_keys(caller.workspace_id()).await?;
        Ok(view(&keys, self.clock.now()))
    }

    /// `POST /workflows/signing-secret/rotate`: a new secret; the old one keeps signing
    /// beside it for [`SigningKeys::ROTATION_OVERLAP`].
    pub async fn rotate_signing_secret(&self, caller: &Caller) -> Result<SigningSecretView> {
        let ws = caller.workspace_id().clone();
        let now = self.clock.now();
        let keys = self
            .signing_keys(&ws)
            .await?
            .rotate(WebhookSecret::generate(&mut rand::thread_rng()), now);
        let mut changes = ChangeSet::new();
        changes.push(Write::PutSigningKeys {
            workspace_id: ws,
            keys: keys.clone(),
        });
        self.store.commit(changes).await?;
        Ok(view(&keys, now))
    }
}

fn view(keys: &SigningKeys, now: chrono::DateTime<chrono::Utc>) -> SigningSecretView {
    SigningSecretView {
        secret: keys.current().expose(),
        previous_expires_at: keys.previous().map(|(_, until)| until).filter(|u| *u > now),
    }
}
