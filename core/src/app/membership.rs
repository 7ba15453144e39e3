//! Segment membership tracking: re-evaluating a contact after it changes, re-syncing a
//! segment's stored members, the entry and exit events, and the jobs that do this work.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::model::{ContactId, Event, JobId, Segment, SegmentId, SegmentType, WorkspaceId};
use crate::ports::{
    ChangeSet, ClaimedJob, Clock, JobPayload, MatchQuery, NewJob, StoreError, Write,
};
use crate::segment::{activity_of_event, matches, slug, ActivityFact, ContactFacts, EventFact};
use crate::Engine;

/// Stored members compared per batch when a segment is re-synced.
const SYNC_BATCH: usize = 500;

/// The `segment.<slug>.entry|exit` event of a transition.
pub fn transition_event(
    clock: &dyn Clock,
    segment: &Segment,
    contact_id: &ContactId,
    entered: bool,
    now: DateTime<Utc>,
) -> Event {
    let mut name_slug = slug(&segment.name);
    if name_slug.is_empty() {
        name_slug = segment.id.to_string();
    }
    let name = format!(
        "segment.{name_slug}.{}",
        if entered { "entry" } else { "exit" }
    );
    Event::new(
        clock,
        &segment.workspace_id,
        name,
        json!({"segmentId": segment.id, "segmentName": segment.name}),
        Some(contact_id.clone()),
        None,
        now,
    )
}

/// The job that rebuilds a DYNAMIC segment's stored members.
pub fn sync_job(segment: &Segment, announce: bool) -> JobPayload {
    JobPayload::SyncSegment {
        workspace_id: segment.workspace_id.clone(),
        segment_id: segment.id.clone(),
        announce,
    }
}

/// The id of the minute sweep's re-sync of a segment: the same at every sweep and in every
/// process, so that with [`Write::EnqueueJobUnlessPending`] at most one is pending per
/// segment however many workers sweep and however long a re-sync runs. It names nothing
/// of time; a dead one is replaced by the next sweep. (Segment ids are UUIDs Posthorn
/// makes, of one length, so the text names one segment of one workspace.)
pub fn sweep_job_id(workspace_id: &WorkspaceId, segment_id: &SegmentId) -> JobId {
    JobId::from(format!("segment-sweep-{workspace_id}-{segment_id}"))
}

/// Queues a re-evaluation of the contact against tracked segments (its memberships or
/// data changed, which other segments' conditions may read).
pub fn push_reevaluation(
    clock: &dyn Clock,
    changes: &mut ChangeSet,
    workspace_id: &WorkspaceId,
    contact_id: &ContactId,
    now: chrono::DateTime<chrono::Utc>,
) {
    changes.push(Write::EnqueueJob(NewJob::at(
        clock,
        JobPayload::ReevaluateContact {
            workspace_id: workspace_id.clone(),
            contact_id: contact_id.clone(),
        },
        now,
    )));
}

/// Whether a condition reads a contact's events or email activity.
pub fn reads_events(condition: &crate::segment::Condition) -> bool {
    let mut reads = false;
    condition.for_each_filter(&mut |f| {
        reads |= matches!(
            f.field,
            crate::segment::Field::Event(_) | crate::segment::Field::EmailActivity(_)
        );
    });
    reads
}

/// What settling a membership job needs: done, or try again shortly (a concurrent change).
pub enum Settled {
    /// Nothing left to do.
    Done,
    /// A concurrent change conflicted; run again.
    Again,
}

impl Engine {
    /// Queues a re-evaluation for every contact `changes` touches (and has none queued
    /// yet), when the workspace tracks any segment (`tracked`, as read ahead of the commit,
    /// or `None` to read them here). Called by [`Engine::commit`] only.
    pub(crate) async fn add_membership_jobs(
        &self,
        workspace_id: &WorkspaceId,
        tracked: Option<&[Segment]>,
        changes: &mut ChangeSet,
    ) -> Result<(), StoreError> {
        let touches_contacts = changes.writes.iter().any(|w| {
            matches!(
                w,
                Write::InsertContact(_) | Write::UpdateContact(_) | Write::AppendEvent(_)
            )
        });
        if !touches_contacts {
            return Ok(());
        }
        let read;
        let tracked = match tracked {
            Some(tracked) => tracked,
            None => {
                read = self.store.tracked_segments(workspace_id).await?;
                &read[..]
            }
        };
        if tracked.is_empty() {
            return Ok(());
        }
        // An event alone matters only to segments whose conditions read events.
        let events_matter = tracked
            .iter()
            .any(|s| s.condition.as_ref().is_some_and(reads_events));
        let mut ids: Vec<ContactId> = Vec::new();
        let queued: Vec<&ContactId> = changes
            .writes
            .iter()
            .filter_map(|w| match w {
                Write::EnqueueJob(NewJob {
                    payload: JobPayload::ReevaluateContact { contact_id, .. },
                    ..
                }) => Some(contact_id),
                _ => None,
            })
            .collect();
        for write in &changes.writes {
            let id = match write {
                Write::InsertContact(c) | Write::UpdateContact(c) => Some(&c.id),
                Write::AppendEvent(e) if events_matter => e.contact_id.as_ref(),
                _ => None,
            };
            if let Some(id) = id {
                if !ids.contains(id) && !queued.contains(&id) {
                    ids.push(id.clone());
                }
            }
        }
        let now = self.clock.now();
        for id in ids {
            push_reevaluation(&*self.clock, changes, workspace_id, &id, now);
        }
        Ok(())
    }

    /// Queues a re-sync of every tracked segment whose condition depends on time alone
    /// (`within`, `olderThan`, `triggeredWithin`, ...); the worker calls this every minute.
    /// A segment whose sweep re-sync is still pending (queued or running, in any process)
    /// gets no second one ([`sweep_job_id`]). Returns how many segments it asked a re-sync
    /// for, pending ones included.
    pub async fn sweep_time_based_segments(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<usize, StoreError> {
        let now = self.clock.now();
        let mut changes = ChangeSet::new();
        for segment in self.store.tracked_segments(workspace_id).await? {
            if segment
                .condition
                .as_ref()
                .is_some_and(crate::segment::uses_time)
            {
                // One pending sweep re-sync per segment, not one more each minute: a sync
                // that outruns the minute, or several workers sweeping, would pile them up.
                // A re-sync queued for another cause (a changed condition) has its own id.
                changes.push(Write::EnqueueJobUnlessPending(NewJob {
                    id: sweep_job_id(workspace_id, &segment.id),
                    payload: sync_job(&segment, true),
                    run_at: now,
                }));
            }
        }
        let queued = changes.writes.len();
        if queued > 0 {
            self.store.commit(changes).await?;
        }
        Ok(queued)
    }

    /// Handles `ReevaluateContact`: evaluates the contact against every tracked segment and
    /// records each entry and exit once (guarded writes make a concurrent duplicate conflict).
    pub(crate) async fn reevaluate_contact(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
    ) -> Result<Settled, StoreError> {
        let tracked = self.store.tracked_segments(workspace_id).await?;
        if tracked.is_empty() {
            return Ok(Settled::Done);
        }
        let Some(contact) = self.store.contact(workspace_id, contact_id).await? else {
            return Ok(Settled::Done);
        };
        let facts = self
            .store
            .contact_event_facts(workspace_id, contact_id)
            .await?;
        let (events, activity) = split_facts(facts);
        let stored = self.store.memberships(workspace_id, contact_id).await?;
        let dynamic: Vec<_> = tracked
            .iter()
            .filter(|s| s.segment_type == SegmentType::Dynamic)
            .filter_map(|s| s.condition.as_ref().map(|c| (&s.id, c)))
            .collect();
        let now = self.clock.now();
        let decided = decide_memberships(&dynamic, &stored, |condition, segments| {
            let view = ContactFacts {
                contact: &contact,
                events: &events,
                activity: &activity,
                segments,
            };
            matches(condition, &view, now)
        });
        let mut changes = ChangeSet::new();
        let dynamic_segments = tracked
            .iter()
            .filter(|s| s.segment_type == SegmentType::Dynamic && s.condition.is_some());
        for segment in dynamic_segments {
            let should_be = decided.contains(&segment.id);
            if stored.contains(&segment.id) != should_be {
                // Before the first snapshot is complete a member may be one from before
                // tracking began: store it quietly, as the snapshot does.
                push_transition(
                    &*self.clock,
                    &mut changes,
                    segment,
                    contact_id,
                    should_be,
                    segment.members_synced,
                    now,
                );
            }
        }
        if changes.is_empty() {
            return Ok(Settled::Done);
        }
        // Other segments may refer to these memberships or entry events: look once more.
        push_reevaluation(&*self.clock, &mut changes, workspace_id, contact_id, now);
        // Entry and exit events may start workflows (but no further membership round).
        self.add_workflow_jobs(&mut changes, None).await?;
        match self.store.commit(changes).await {
            Ok(()) => Ok(Settled::Done),
            Err(StoreError::Conflict(_)) => Ok(Settled::Again),
            Err(e) => Err(e),
        }
    }

    /// Handles `SyncSegment`: walks the matching contacts and the stored members side by
    /// side (both ascending by id) and applies the difference in batches.
    pub(crate) async fn sync_segment(
        &self,
        workspace_id: &WorkspaceId,
        segment_id: &SegmentId,
        announce: bool,
    ) -> Result<Settled, StoreError> {
        let Some(segment) = self.store.segment(workspace_id, segment_id).await? else {
            return Ok(Settled::Done);
        };
        if segment.segment_type == SegmentType::Static {
            return Ok(Settled::Done);
        }
        // Whether to announce was decided when the job was queued; tracking may have been
        // switched off since, and clearing the stored members is quiet. Until the first
        // snapshot since tracking began is complete, whichever sync runs first (the quiet one
        // queued with it, or an announcing one from the minute sweep or a changed condition)
        // takes it quietly: its "entries" are members from before.
        let announce = announce && segment.track_membership && segment.members_synced;
        let snapshot_of = segment
            .tracking_since
            .filter(|_| segment.track_membership && !segment.members_synced);
        let condition = segment
            .condition
            .clone()
            .filter(|_| segment.track_membership);
        let now = self.clock.now();
        let cascade = self.others_depend_on(&segment, announce).await?;
        let transition = |changes: &mut ChangeSet, contact: &ContactId, entered: bool| {
            push_transition(
                &*self.clock,
                changes,
                &segment,
                contact,
                entered,
                announce,
                now,
            );
            // Another tracked segment may refer to this membership (or to its entry and
            // exit events): look at the contact again, as `reevaluate_contact` does.
            if cascade {
                push_reevaluation(&*self.clock, changes, workspace_id, contact, now);
            }
        };
        let mut wanted = Cursor::default();
        let mut stored = Cursor::default();
        loop {
            if wanted.buffer.is_empty() && !wanted.done {
                wanted.buffer = match &condition {
                    Some(c) => {
                        let q = MatchQuery {
                            after_id: wanted.after.clone(),
                            until_id: None,
                            audience_only: false,
                            limit: SYNC_BATCH,
                        };
                        self.store
                            .contacts_matching(workspace_id, c, &q, now)
                            .await?
                            .into_iter()
                            .map(|c| c.id)
                            .collect()
                    }
                    None => Vec::new(),
                };
                wanted.advance(SYNC_BATCH);
            }
            if stored.buffer.is_empty() && !stored.done {
                stored.buffer = self
                    .store
                    .segment_member_ids(workspace_id, segment_id, stored.after.as_ref(), SYNC_BATCH)
                    .await?;
                stored.advance(SYNC_BATCH);
            }
            let mut changes = ChangeSet::new();
            // Merge the two sorted buffers until one runs dry (and is not finished).
            let mut wi = 0;
            let mut si = 0;
            loop {
                let w = wanted.buffer.get(wi);
                let s = stored.buffer.get(si);
                match (w, s) {
                    (Some(w), Some(s)) if w == s => {
                        wi += 1;
                        si += 1;
                    }
                    (Some(w), Some(s)) if w < s => {
                        transition(&mut changes, w, true);
                        wi += 1;
                    }
                    (Some(_), Some(s)) => {
                        transition(&mut changes, s, false);
                        si += 1;
                    }
                    (Some(w), None) if stored.done => {
                        transition(&mut changes, w, true);
                        wi += 1;
                    }
                    (None, Some(s)) if wanted.done => {
                        transition(&mut changes, s, false);
                        si += 1;
                    }
                    _ => break,
                }
            }
            wanted.buffer.drain(..wi);
            stored.buffer.drain(..si);
            if !changes.is_empty() {
                self.add_workflow_jobs(&mut changes, None).await?;
                match self.store.commit(changes).await {
                    Ok(()) => {}
                    Err(StoreError::Conflict(_)) => return Ok(Settled::Again),
                    Err(e) => return Err(e),
                }
            }
            if wanted.done && stored.done && wanted.buffer.is_empty() && stored.buffer.is_empty() {
                if let Some(tracking_since) = snapshot_of {
                    let mut changes = ChangeSet::new();
                    changes.push(Write::SegmentSynced {
                        workspace_id: workspace_id.clone(),
                        segment_id: segment_id.clone(),
                        tracking_since,
                    });
                    self.store.commit(changes).await?;
                }
                return Ok(Settled::Done);
            }
        }
    }

    /// Whether another tracked dynamic segment may change when `segment`'s memberships do:
    /// its condition refers to `segment`, or (when entries and exits are announced as
    /// events) reads events at all.
    async fn others_depend_on(
        &self,
        segment: &Segment,
        announce: bool,
    ) -> Result<bool, StoreError> {
        let tracked = self.store.tracked_segments(&segment.workspace_id).await?;
        Ok(tracked.iter().any(|other| {
            other.id != segment.id
                && other.segment_type == SegmentType::Dynamic
                && other.condition.as_ref().is_some_and(|c| {
                    crate::segment::referenced_segments(c).contains(&segment.id)
                        || (announce && reads_events(c))
                })
        }))
    }

    /// Settles a membership job with the queue.
    pub(crate) async fn settle_membership_job(
        &self,
        job: &ClaimedJob,
        settled: Settled,
    ) -> crate::Result<super::super::jobs::JobOutcome> {
        match settled {
            Settled::Done => {
                self.jobs.complete(job).await?;
                Ok(crate::jobs::JobOutcome::Done)
            }
            Settled::Again => {
                let at = self.clock.now() + chrono::Duration::milliseconds(200);
                self.jobs
                    .retry(job, at, false, "membership changed concurrently")
                    .await?;
                Ok(crate::jobs::JobOutcome::Retried)
            }
        }
    }
}

/// A paged walk over ids in ascending order.
#[derive(Default)]
struct Cursor {
    buffer: Vec<ContactId>,
    after: Option<ContactId>,
    done: bool,
}

impl Cursor {
    fn advance(&mut self, page: usize) {
        if self.buffer.len() < page {
            self.done = true;
        }
        if let Some(last) = self.buffer.last() {
            self.after = Some(last.clone());
        }
    }
}

/// The contact's memberships of `dynamic` segments once each is decided (`is_member`)
/// against the memberships decided before it in the same round, starting from `stored`, and
/// again until none moves. A segment defined on another thus sees that one's new
/// membership at once, rather than the stored one: deciding both against what was stored
/// made it enter and leave (or leave and come back) across two rounds, each with its event.
/// Segments refer to each other without cycles (refused when saved), so this settles within
/// one pass per level of reference; the bound only guards against a cycle slipping through.
fn decide_memberships<C>(
    dynamic: &[(&SegmentId, C)],
    stored: &HashSet<SegmentId>,
    is_member: impl Fn(&C, &HashSet<SegmentId>) -> bool,
) -> HashSet<SegmentId> {
    let mut current = stored.clone();
    for _ in 0..=dynamic.len() {
        let mut moved = false;
        for (id, condition) in dynamic {
            let should_be = is_member(condition, &current);
            if current.contains(*id) != should_be {
                if should_be {
                    current.insert((*id).clone());
                } else {
                    current.remove(*id);
                }
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    current
}

fn push_transition(
    clock: &dyn Clock,
    changes: &mut ChangeSet,
    segment: &Segment,
    contact_id: &ContactId,
    entered: bool,
    announce: bool,
    now: DateTime<Utc>,
) {
    let (ws, seg, contact) = (
        segment.workspace_id.clone(),
        segment.id.clone(),
        contact_id.clone(),
    );
    changes.push(if entered {
        Write::AddSegmentMember {
            workspace_id: ws,
            segment_id: seg,
            contact_id: contact,
        }
    } else {
        Write::RemoveSegmentMember {
            workspace_id: ws,
            segment_id: seg,
            contact_id: contact,
        }
    });
    if announce {
        changes.push(Write::AppendEvent(transition_event(
            clock, segment, contact_id, entered, now,
        )));
    }
}

/// Splits a contact's events into event facts and email activity facts.
pub fn split_facts(facts: Vec<EventFact>) -> (Vec<EventFact>, Vec<ActivityFact>) {
    let activity = facts
        .iter()
        .filter_map(|f| {
            activity_of_event(&f.name).map(|activity| ActivityFact { activity, at: f.at })
        })
        .collect();
    (facts, activity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::parse_condition;
    use serde_json::json;

    fn cond(field: &str, operator: &str) -> crate::segment::Condition {
        let value = json!({"groups": [{"filters": [{"field": field, "operator": operator, "value": "x"}]}]});
        parse_condition(&value, "condition").expect("valid")
    }

    #[test]
    fn only_event_and_activity_fields_read_events() {
        assert!(reads_events(&cond("event.signup", "triggered")));
        assert!(reads_events(&cond("email.opened", "triggered")));
        assert!(!reads_events(&cond("data.plan", "equals")));
        assert!(!reads_events(&cond("email", "contains")));
    }

    /// A toy condition: in `when_in` (or out of it, `negate`).
    struct Refers {
        when_in: &'static str,
        negate: bool,
    }

    fn ids(names: &[&str]) -> HashSet<SegmentId> {
        names.iter().map(|n| SegmentId::from(*n)).collect()
    }

    #[test]
    fn a_segment_is_decided_with_the_round_s_memberships_whatever_the_order() {
        let (a, b, c) = (
            SegmentId::from("a"),
            SegmentId::from("b"),
            SegmentId::from("c"),
        );
        // "c" is out of "b", "b" is in "a"; listed so that each is decided before what it
        // refers to. "a" holds whatever the contact is in.
        let dynamic = [
            (
                &c,
                Refers {
                    when_in: "b",
                    negate: true,
                },
            ),
            (
                &b,
                Refers {
                    when_in: "a",
                    negate: false,
                },
            ),
            (
                &a,
                Refers {
                    when_in: "",
                    negate: true,
                },
            ),
        ];
        let decided = decide_memberships(&dynamic, &ids(&["c"]), |r, current| {
            current.contains(r.when_in) != r.negate
        });
        assert_eq!(decided, ids(&["a", "b"]));
        // Settled memberships do not move.
        let again = decide_memberships(&dynamic, &decided, |r, current| {
            current.contains(r.when_in) != r.negate
        });
        assert_eq!(again, decided);
    }
}
