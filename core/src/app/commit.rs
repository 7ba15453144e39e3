//! The one place a use case commits: the follow-up work that every change of a kind needs
//! is derived here from the change set, not remembered by each use case.

use crate::model::WorkspaceId;
use crate::ports::{ChangeSet, StoreError, Write};
use crate::Engine;

impl Engine {
    /// Commits `changes` with their follow-up work, atomically: a re-evaluation against the
    /// workspace's tracked segments for every contact the change set writes, or gives an
    /// event when a tracked segment reads events.
    ///
    /// Use cases and job handlers whose changes come from outside (a request, a delivery)
    /// commit through this. The membership handlers themselves commit to the store
    /// directly: their entry and exit events must not start another round.
    pub(crate) async fn commit(&self, mut changes: ChangeSet) -> Result<(), StoreError> {
        for workspace_id in touched_workspaces(&changes) {
            self.add_membership_jobs(&workspace_id, &mut changes)
                .await?;
        }
        self.store.commit(changes).await
    }
}

/// The workspaces whose contacts or events `changes` writes, in first-seen order.
fn touched_workspaces(changes: &ChangeSet) -> Vec<WorkspaceId> {
    let mut out: Vec<WorkspaceId> = Vec::new();
    for write in &changes.writes {
        let ws = match write {
            Write::InsertContact(c) | Write::UpdateContact(c) => &c.workspace_id,
            Write::AppendEvent(e) => &e.workspace_id,
            _ => continue,
        };
        if !out.contains(ws) {
            out.push(ws.clone());
        }
    }
    out
}
