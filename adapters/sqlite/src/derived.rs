//! Facts read on every stored event, kept in memory per workspace: its dynamic segments
//! with tracked membership, and whether no workflow can care about any event (no enabled
//! EVENT workflow, no WAITING execution).
//!
//! Only a store that writes keeps them. One process owns the file ([`SqliteStore::open`]
//! locks it) and every write goes through its commits, so a commit that writes segments,
//! workflows or executions forgets the facts of the workspaces it touched once it returned,
//! and the next read loads them again. A generation counter keeps a read that raced such a
//! commit from storing what it read before it.
//!
//! [`SqliteStore::open`]: crate::SqliteStore::open

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use posthorn_core::model::Segment;
use posthorn_core::ports::{ChangeSet, StoreError, Write};

/// The facts of one workspace, each `None` until read.
#[derive(Debug, Default)]
struct Facts {
    tracked_segments: Option<Vec<Segment>>,
    /// True when no enabled workflow has an EVENT trigger and no execution waits.
    quiet: Option<bool>,
}

/// What a change set makes stale, by workspace id.
#[derive(Debug, Default)]
pub(crate) struct Stale {
    segments: Vec<String>,
    workflows: Vec<String>,
}

impl Stale {
    /// The facts `changes` may change.
    pub(crate) fn of(changes: &ChangeSet) -> Self {
        let mut stale = Self::default();
        for write in &changes.writes {
            match write {
                Write::PutSegment(s) => stale.segments.push(s.workspace_id.to_string()),
                Write::DeleteSegment { workspace_id, .. }
                | Write::SegmentSynced { workspace_id, .. } => {
                    stale.segments.push(workspace_id.to_string());
                }
                Write::PutWorkflow(w) => stale.workflows.push(w.workspace_id.to_string()),
                Write::DeleteWorkflow { workspace_id, .. } => {
                    stale.workflows.push(workspace_id.to_string());
                }
                Write::InsertExecution(e) | Write::UpdateExecution(e) => {
                    stale.workflows.push(e.workspace_id.to_string());
                }
                _ => {}
            }
        }
        stale
    }

    fn is_empty(&self) -> bool {
        self.segments.is_empty() && self.workflows.is_empty()
    }
}

/// The kept facts of every workspace.
#[derive(Debug, Default)]
pub(crate) struct Derived {
    /// Moved by every [`Derived::forget`], before it forgets.
    generation: AtomicU64,
    facts: Mutex<HashMap<String, Facts>>,
}

impl Derived {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Facts>> {
        // Plain values only: a panic cannot leave the map inconsistent.
        self.facts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forgets what a committed (or possibly committed) change set made stale.
    pub(crate) fn forget(&self, stale: &Stale) {
        if stale.is_empty() {
            return;
        }
        self.generation.fetch_add(1, Ordering::AcqRel);
        let mut facts = self.lock();
        for ws in &stale.segments {
            if let Some(f) = facts.get_mut(ws) {
                f.tracked_segments = None;
            }
        }
        for ws in &stale.workflows {
            if let Some(f) = facts.get_mut(ws) {
                f.quiet = None;
            }
        }
    }

    /// The workspace's tracked segments, from memory or from `load`.
    pub(crate) async fn tracked_segments(
        &self,
        workspace_id: &str,
        load: impl Future<Output = Result<Vec<Segment>, StoreError>>,
    ) -> Result<Vec<Segment>, StoreError> {
        self.read_through(workspace_id, |f| &mut f.tracked_segments, load)
            .await
    }

    /// Whether no workflow of the workspace can care about an event, from memory or from
    /// `load`.
    pub(crate) async fn quiet(
        &self,
        workspace_id: &str,
        load: impl Future<Output = Result<bool, StoreError>>,
    ) -> Result<bool, StoreError> {
        self.read_through(workspace_id, |f| &mut f.quiet, load)
            .await
    }

    /// The fact `slot` picks out of the workspace's facts, from memory or from `load`; what
    /// `load` read is kept unless something was forgotten while it read.
    async fn read_through<T: Clone>(
        &self,
        workspace_id: &str,
        slot: fn(&mut Facts) -> &mut Option<T>,
        load: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        if let Some(kept) = self
            .lock()
            .get_mut(workspace_id)
            .and_then(|f| slot(f).clone())
        {
            return Ok(kept);
        }
        let generation = self.generation.load(Ordering::Acquire);
        let value = load.await?;
        let mut facts = self.lock();
        if self.generation.load(Ordering::Acquire) == generation {
            *slot(facts.entry(workspace_id.to_string()).or_default()) = Some(value.clone());
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workflow_write(ws: &str) -> ChangeSet {
        let mut changes = ChangeSet::new();
        changes.push(Write::DeleteWorkflow {
            workspace_id: ws.into(),
            id: "wf".into(),
        });
        changes
    }

    #[tokio::test]
    async fn a_fact_is_read_once_and_again_after_a_write_that_changes_it() {
        let derived = Derived::default();
        assert!(derived.quiet("ws", async { Ok(true) }).await.expect("read"));
        // Kept: the second load is not awaited.
        assert!(derived
            .quiet("ws", async { Ok(false) })
            .await
            .expect("kept"));
        derived.forget(&Stale::of(&workflow_write("other")));
        assert!(derived
            .quiet("ws", async { Ok(false) })
            .await
            .expect("kept"));
        derived.forget(&Stale::of(&workflow_write("ws")));
        assert!(!derived
            .quiet("ws", async { Ok(false) })
            .await
            .expect("read again"));
    }

    #[tokio::test]
    async fn a_read_that_raced_a_write_is_not_kept() {
        let derived = Derived::default();
        let stale = Stale::of(&workflow_write("ws"));
        // The write commits and forgets while the read is under way.
        let read = derived.quiet("ws", async {
            derived.forget(&stale);
            Ok(true)
        });
        assert!(read.await.expect("read"));
        assert!(!derived
            .quiet("ws", async { Ok(false) })
            .await
            .expect("read again"));
    }
}
