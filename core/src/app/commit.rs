//! The one place a use case commits: the follow-up work that every change of a kind needs
//! is derived here from the change set, not remembered by each use case.

use crate::model::{ContactId, Segment, WorkspaceId};
use crate::ports::{ChangeSet, JobPayload, NewJob, StoreError, Write};
use crate::Engine;

/// What a use case read ahead of its commit, in one round trip with the contact
/// ([`crate::ports::Store::event_reads`]), so that the commit's follow-up work does not read
/// it again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadAhead<'a> {
    /// The workspace the reads are of.
    pub workspace_id: &'a WorkspaceId,
    /// Its tracked segments.
    pub tracked_segments: &'a [Segment],
    /// The event the interest was read for: its name and its contact (`None` when none
    /// was: a send stores no event for its recipient).
    pub event: Option<(&'a str, &'a ContactId)>,
    /// Whether that event concerns a workflow.
    pub event_interest: bool,
}

impl Engine {
    /// Commits `changes` with their follow-up work, atomically: a re-evaluation against the
    /// workspace's tracked segments for every contact the change set writes, or gives an
    /// event when a tracked segment reads events.
    ///
    /// Use cases and job handlers whose changes come from outside (a request, a delivery)
    /// commit through this. The membership handlers themselves commit to the store
    /// directly: their entry and exit events must not start another round.
    pub(crate) async fn commit(&self, changes: ChangeSet) -> Result<(), StoreError> {
        self.commit_read_ahead(changes, None).await
    }

    /// [`Engine::commit`], with what was read ahead used instead of reading it again.
    pub(crate) async fn commit_read_ahead(
        &self,
        mut changes: ChangeSet,
        ahead: Option<ReadAhead<'_>>,
    ) -> Result<(), StoreError> {
        for workspace_id in touched_workspaces(&changes) {
            let tracked = ahead
                .filter(|a| *a.workspace_id == workspace_id)
                .map(|a| a.tracked_segments);
            self.add_membership_jobs(&workspace_id, tracked, &mut changes)
                .await?;
        }
        self.add_workflow_jobs(&mut changes, ahead).await?;
        self.store.commit(changes).await
    }

    /// Adds one `DispatchWorkflowEvent` job per event of `changes` that concerns a workflow
    /// (an enabled workflow it triggers, or an execution of its contact waiting for it):
    /// one cheap read per event (none for the event `ahead` read it for), nothing more for
    /// events no workflow cares about.
    pub(crate) async fn add_workflow_jobs(
        &self,
        changes: &mut ChangeSet,
        ahead: Option<ReadAhead<'_>>,
    ) -> Result<(), StoreError> {
        let mut jobs = Vec::new();
        for write in &changes.writes {
            let Write::AppendEvent(event) = write else {
                continue;
            };
            let Some(contact_id) = &event.contact_id else {
                continue;
            };
            let known = ahead
                .filter(|a| {
                    *a.workspace_id == event.workspace_id
                        && a.event == Some((event.name.as_str(), contact_id))
                })
                .map(|a| a.event_interest);
            let interested = match known {
                Some(known) => known,
                None => {
                    self.store
                        .has_event_interest(&event.workspace_id, &event.name, contact_id)
                        .await?
                }
            };
            if interested {
                jobs.push(NewJob::at(
                    &*self.clock,
                    JobPayload::DispatchWorkflowEvent {
                        workspace_id: event.workspace_id.clone(),
                        event_id: event.id.clone(),
                    },
                    self.clock.now(),
                ));
            }
        }
        for job in jobs {
            changes.push(Write::EnqueueJob(job));
        }
        Ok(())
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
