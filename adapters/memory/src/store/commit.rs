//! Applying a change set: every write in order, undone in reverse on the first conflict.

use std::collections::{BTreeSet, HashSet};
use std::sync::{Mutex, MutexGuard};

use posthorn_core::model::{
    Campaign, CampaignId, Contact, ContactId, Domain, DomainId, EmailId, EmailRecord, Event,
    IdempotencyRecord, InboundEmail, JobId, KeySet, KeySetId, Segment, SegmentId, Template,
    TemplateId, Workspace, WorkspaceId,
};
use posthorn_core::ports::{check_active_limit, NewJob, StoreError, Write};

use super::state::{EventKey, Refused, State, Taken};
use super::workflows::{self, WorkflowUndo};
use crate::jobs::JobQueue;

/// How to put back what one applied write changed.
#[derive(Debug)]
pub(crate) enum Undo {
    Workspace(WorkspaceId, Option<Workspace>),
    KeySet(WorkspaceId, KeySetId, Option<KeySet>),
    Domain(WorkspaceId, DomainId, Option<Domain>),
    Contact(WorkspaceId, ContactId, Option<Contact>),
    Template(WorkspaceId, TemplateId, Option<Template>),
    Email(WorkspaceId, EmailId, Option<EmailRecord>),
    /// The state an email had before an update (its content was not touched).
    EmailState(WorkspaceId, EmailId, EmailRecord),
    Event(WorkspaceId, EventKey, Option<Event>),
    Segment(WorkspaceId, SegmentId, Option<Segment>),
    /// (workspace, segment, contact, whether it was a member).
    Member(WorkspaceId, SegmentId, ContactId, bool),
    /// The members a deleted segment had: (workspace, segment, contact ids).
    Members(WorkspaceId, SegmentId, BTreeSet<ContactId>),
    /// The memberships a deleted contact had: (workspace, contact, segment ids).
    Memberships(WorkspaceId, ContactId, HashSet<SegmentId>),
    Campaign(WorkspaceId, CampaignId, Option<Campaign>),
    Inbound(WorkspaceId, EmailId, Option<InboundEmail>),
    /// A change to a workspace's workflow records.
    Workflow(WorkspaceId, WorkflowUndo),
    /// An `Idempotency-Key` record: (scope, key) and what was stored before.
    Idempotency((String, String), Option<IdempotencyRecord>),
    /// An SNS message recorded as processed.
    SnsMessage(String),
}

/// Refuses an inbound-enabled `domain` whose name another workspace receives mail for.
fn inbound_unique(state: &State, domain: &Domain) -> Result<(), StoreError> {
    if !domain.inbound_enabled {
        return Ok(());
    }
    let taken = state.data.iter().any(|(ws, data)| {
        *ws != domain.workspace_id
            && data
                .domains
                .values()
                .any(|d| d.inbound_enabled && d.domain == domain.domain)
    });
    if taken {
        return Err(conflict(format!(
            "domain {} receives inbound mail in another workspace",
            domain.domain
        )));
    }
    Ok(())
}

/// Applies `writes` in order, then checks the `GuardActiveLimit`s among them. On the first
/// failing write or guard everything applied is undone and the error returned; on success
/// the jobs to enqueue are returned.
pub(crate) fn apply_all(
    state: &mut State,
    queue: &Mutex<JobQueue>,
    writes: Vec<Write>,
) -> Result<Vec<NewJob>, StoreError> {
    let mut undo = Vec::new();
    let mut jobs = Enqueued::new(queue);
    let mut limits = Vec::new();
    for write in writes {
        let applied = match write {
            Write::GuardActiveLimit {
                workspace_id,
                limit,
            } => {
                limits.push((workspace_id, limit));
                Ok(())
            }
            write => apply(state, write, &mut undo, &mut jobs),
        };
        if let Err(error) = applied {
            rollback(state, undo);
            return Err(error);
        }
    }
    // Commits take the state's write lock in turn: the count includes every earlier one.
    let within = limits
        .iter()
        .try_for_each(|(workspace_id, limit)| within_active_limit(state, workspace_id, *limit));
    if let Err(error) = within {
        rollback(state, undo);
        return Err(error);
    }
    Ok(jobs.jobs)
}

/// The jobs a change set enqueues, checked against the queue and each other by id.
struct Enqueued<'q> {
    queue: &'q Mutex<JobQueue>,
    jobs: Vec<NewJob>,
    /// The ids of `jobs`: a campaign's change set enqueues a job per recipient.
    ids: HashSet<JobId>,
}

impl<'q> Enqueued<'q> {
    fn new(queue: &'q Mutex<JobQueue>) -> Self {
        Self {
            queue,
            jobs: Vec::new(),
            ids: HashSet::new(),
        }
    }

    fn queue(&self) -> MutexGuard<'q, JobQueue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `Write::EnqueueJob`: `Conflict` when the id is taken. No other commit can enqueue
    /// before this one does (the caller holds the state's write lock).
    fn push(&mut self, job: NewJob) -> Result<(), StoreError> {
        if self.ids.contains(&job.id) || self.queue().contains(&job.id) {
            return Err(conflict(format!("job {} exists", job.id)));
        }
        self.ids.insert(job.id.clone());
        self.jobs.push(job);
        Ok(())
    }

    /// `Write::EnqueueJobUnlessPending`: nothing when the id is pending (a dead job with it
    /// is replaced when the queue takes the new one).
    fn push_unless_pending(&mut self, job: NewJob) {
        if self.ids.contains(&job.id) || self.queue().is_pending(&job.id) {
            return;
        }
        self.ids.insert(job.id.clone());
        self.jobs.push(job);
    }
}

/// `Write::GuardActiveLimit`, once the change set's writes are applied.
fn within_active_limit(
    state: &State,
    workspace_id: &WorkspaceId,
    limit: u64,
) -> Result<(), StoreError> {
    let active = state.data.get(workspace_id).map_or(0, |d| d.counts.active);
    check_active_limit(workspace_id, active, limit)
}

fn apply(
    state: &mut State,
    write: Write,
    undo: &mut Vec<Undo>,
    jobs: &mut Enqueued<'_>,
) -> Result<(), StoreError> {
    match write {
        Write::PutWorkspace(workspace) => {
            let id = workspace.id.clone();
            let old = state.replace_workspace(&id, Some(workspace));
            undo.push(Undo::Workspace(id, old));
        }
        Write::PutKeySet(set) => {
            let (ws, id) = (set.workspace_id.clone(), set.id.clone());
            let old = state.replace_key_set(&ws, &id, Some(set));
            undo.push(Undo::KeySet(ws, id, old));
        }
        Write::DeleteKeySet { workspace_id, id } => {
            let old = state.replace_key_set(&workspace_id, &id, None);
            undo.push(Undo::KeySet(workspace_id, id, old));
        }
        Write::GuardDomain {
            workspace_id,
            id,
            updated_at,
        } => {
            let data = state.data.get(&workspace_id);
            let stored = data.and_then(|d| d.domains.get(&id)).map(|d| d.updated_at);
            guard_updated_at(stored, updated_at, "domain", &id)?;
        }
        Write::GuardTemplate {
            workspace_id,
            id,
            updated_at,
        } => {
            let data = state.data.get(&workspace_id);
            let stored = data
                .and_then(|d| d.templates.get(&id))
                .map(|t| t.updated_at);
            guard_updated_at(stored, updated_at, "template", &id)?;
        }
        Write::KeepAKeySet { workspace_id } => {
            let left = state
                .data
                .get(&workspace_id)
                .map_or(0, |data| data.key_sets.len());
            if left == 0 {
                return Err(conflict(format!(
                    "workspace {workspace_id} would have no key set left"
                )));
            }
        }
        // Checked by `apply_all` once every write is applied.
        Write::GuardActiveLimit { .. } => {}
        Write::InsertDomain(domain) => {
            let (ws, id) = (domain.workspace_id.clone(), domain.id.clone());
            inbound_unique(state, &domain)?;
            let data = state.data_mut(&ws);
            if data.domain_names.contains_key(&domain.domain) {
                return Err(conflict(format!("domain {} already exists", domain.domain)));
            }
            if data.domains.contains_key(&id) {
                return Err(conflict(format!("domain id {id} already exists")));
            }
            let old = data.replace_domain(&id, Some(domain));
            undo.push(Undo::Domain(ws, id, old));
        }
        Write::UpdateDomain(mut domain) => {
            let (ws, id) = (domain.workspace_id.clone(), domain.id.clone());
            inbound_unique(state, &domain)?;
            let data = state.data_mut(&ws);
            let Some(stored) = data.domains.get(&id) else {
                return Err(conflict(format!("domain {id} is gone")));
            };
            // Only `SetDomainDkimKey` writes the key.
            domain.dkim = stored.dkim.clone();
            if data
                .domain_names
                .get(&domain.domain)
                .is_some_and(|d| *d != id)
            {
                return Err(conflict(format!("domain {} already exists", domain.domain)));
            }
            let old = data.replace_domain(&id, Some(domain));
            undo.push(Undo::Domain(ws, id, old));
        }
        Write::DeleteDomain { workspace_id, id } => {
            let old = state.data_mut(&workspace_id).replace_domain(&id, None);
            undo.push(Undo::Domain(workspace_id, id, old));
        }
        Write::SetDomainDkimKey {
            workspace_id,
            id,
            key,
        } => {
            let data = state.data_mut(&workspace_id);
            if let Some(stored) = data.domains.get(&id).filter(|d| d.dkim.is_none()) {
                let mut new = stored.clone();
                new.dkim = Some(key);
                let old = data.replace_domain(&id, Some(new));
                undo.push(Undo::Domain(workspace_id, id, old));
            }
        }
        Write::InsertContact(mut contact) => {
            let (ws, id) = (contact.workspace_id.clone(), contact.id.clone());
            contact.version = 0;
            match state.data_mut(&ws).insert_contact(contact) {
                Ok(()) => undo.push(Undo::Contact(ws, id, None)),
                Err(Taken::Email(email)) => {
                    return Err(conflict(format!("contact {email} already exists")))
                }
                Err(Taken::Id(id)) => {
                    return Err(conflict(format!("contact id {id} already exists")))
                }
            }
        }
        Write::UpdateContact(contact) => {
            let (ws, id) = (contact.workspace_id.clone(), contact.id.clone());
            let planned = contact.version;
            match state.data_mut(&ws).update_contact(contact) {
                Ok(old) => undo.push(Undo::Contact(ws, id, Some(old))),
                Err(Refused::Gone) => return Err(conflict(format!("contact {id} is gone"))),
                Err(Refused::Version(stored)) => {
                    return Err(conflict(format!(
                        "contact {id} is at version {stored}, not {planned}"
                    )))
                }
                Err(Refused::Email(email)) => {
                    return Err(conflict(format!("contact {email} already exists")))
                }
            }
        }
        Write::DeleteContact { workspace_id, id } => {
            let data = state.data_mut(&workspace_id);
            let old = data.replace_contact(&id, None);
            let segments = data.take_memberships(&id);
            undo.push(Undo::Contact(workspace_id.clone(), id.clone(), old));
            if !segments.is_empty() {
                undo.push(Undo::Memberships(workspace_id, id, segments));
            }
        }
        Write::PutTemplate(template) => {
            let (ws, id) = (template.workspace_id.clone(), template.id.clone());
            let old = state.data_mut(&ws).replace_template(&id, Some(template));
            undo.push(Undo::Template(ws, id, old));
        }
        Write::DeleteTemplate { workspace_id, id } => {
            let old = state.data_mut(&workspace_id).replace_template(&id, None);
            undo.push(Undo::Template(workspace_id, id, old));
        }
        Write::InsertEmail(email) => {
            let (ws, id) = (email.workspace_id.clone(), email.id.clone());
            let data = state.data_mut(&ws);
            if data.emails.contains_key(&id) {
                return Err(conflict(format!("email {id} already exists")));
            }
            if let Some(campaign_id) = &email.campaign_id {
                if data
                    .campaign_email_to(campaign_id, &email.contact_id)
                    .is_some()
                {
                    return Err(conflict(format!(
                        "campaign {campaign_id} already has an email to contact {}",
                        email.contact_id
                    )));
                }
            }
            let old = state.replace_email(&ws, &id, Some(email));
            undo.push(Undo::Email(ws, id, old));
        }
        Write::UpdateEmail(email) => {
            let (ws, id) = (email.workspace_id.clone(), email.id.clone());
            // Only the state changes: what the email was accepted with stays as stored.
            let Some(before) = state.update_email_state(&ws, &id, email) else {
                return Err(conflict(format!("email {id} is gone")));
            };
            undo.push(Undo::EmailState(ws, id, before));
        }
        Write::GuardEmail {
            workspace_id,
            id,
            updated_at,
        } => {
            let data = state.data.get(&workspace_id);
            let stored = data.and_then(|d| d.emails.get(&id)).map(|e| e.updated_at);
            guard_updated_at(stored, updated_at, "email", &id)?;
        }
        Write::AppendEvent(event) => {
            let ws = event.workspace_id.clone();
            let key = (event.created_at, event.id.clone());
            let old = state.data_mut(&ws).append_event(key.clone(), event);
            undo.push(Undo::Event(ws, key, old));
        }
        Write::EnqueueJob(job) => jobs.push(job)?,
        Write::EnqueueJobUnlessPending(job) => jobs.push_unless_pending(job),
        Write::PutSegment(mut segment) => {
            let (ws, id) = (segment.workspace_id.clone(), segment.id.clone());
            let data = state.data_mut(&ws);
            // The snapshot state is the store's: kept while tracking stays as it was.
            match data.segments.get(&id) {
                Some(stored) if stored.track_membership == segment.track_membership => {
                    segment.tracking_since = stored.tracking_since;
                    segment.members_synced = stored.members_synced;
                }
                _ => segment.members_synced = false,
            }
            let old = data.replace_segment(&id, Some(segment));
            undo.push(Undo::Segment(ws, id, old));
        }
        Write::SegmentSynced {
            workspace_id,
            segment_id,
            tracking_since,
        } => {
            let data = state.data_mut(&workspace_id);
            if let Some(segment) = data.segments.get(&segment_id) {
                if segment.track_membership && segment.tracking_since == Some(tracking_since) {
                    let mut synced = segment.clone();
                    synced.members_synced = true;
                    let old = data.replace_segment(&segment_id, Some(synced));
                    undo.push(Undo::Segment(workspace_id, segment_id, old));
                }
            }
        }
        Write::DeleteSegment { workspace_id, id } => {
            let data = state.data_mut(&workspace_id);
            let old = data.replace_segment(&id, None);
            let members = data.take_members(&id);
            undo.push(Undo::Segment(workspace_id.clone(), id.clone(), old));
            if !members.is_empty() {
                undo.push(Undo::Members(workspace_id, id, members));
            }
        }
        Write::AddSegmentMember {
            workspace_id,
            segment_id,
            contact_id,
        } => {
            let data = state.data_mut(&workspace_id);
            if !data.segments.contains_key(&segment_id) {
                return Err(conflict(format!("segment {segment_id} is gone")));
            }
            if !data.contacts.contains_key(&contact_id) {
                return Err(conflict(format!("contact {contact_id} is gone")));
            }
            if data.set_member(&segment_id, &contact_id, true) {
                return Err(conflict(format!(
                    "contact {contact_id} is already a member of segment {segment_id}"
                )));
            }
            undo.push(Undo::Member(workspace_id, segment_id, contact_id, false));
        }
        Write::RemoveSegmentMember {
            workspace_id,
            segment_id,
            contact_id,
        } => {
            let data = state.data_mut(&workspace_id);
            if !data.set_member(&segment_id, &contact_id, false) {
                return Err(conflict(format!(
                    "contact {contact_id} is not a member of segment {segment_id}"
                )));
            }
            undo.push(Undo::Member(workspace_id, segment_id, contact_id, true));
        }
        Write::InsertCampaign(mut campaign) => {
            let (ws, id) = (campaign.workspace_id.clone(), campaign.id.clone());
            let data = state.data_mut(&ws);
            if data.campaigns.contains_key(&id) {
                return Err(conflict(format!("campaign {id} already exists")));
            }
            campaign.version = 0;
            let old = data.replace_campaign(&id, Some(campaign));
            undo.push(Undo::Campaign(ws, id, old));
        }
        Write::UpdateCampaign(mut campaign) => {
            let (ws, id) = (campaign.workspace_id.clone(), campaign.id.clone());
            let data = state.data_mut(&ws);
            let Some(stored) = data.campaigns.get(&id) else {
                return Err(conflict(format!("campaign {id} is gone")));
            };
            if stored.version != campaign.version {
                return Err(conflict(format!(
                    "campaign {id} is at version {}, not {}",
                    stored.version, campaign.version
                )));
            }
            campaign.version += 1;
            let old = data.replace_campaign(&id, Some(campaign));
            undo.push(Undo::Campaign(ws, id, old));
        }
        Write::DeleteCampaign { workspace_id, id } => {
            let old = state.data_mut(&workspace_id).replace_campaign(&id, None);
            undo.push(Undo::Campaign(workspace_id, id, old));
        }
        Write::InsertInboundEmail(email) => {
            let (ws, id) = (email.workspace_id.clone(), email.id.clone());
            let data = state.data_mut(&ws);
            if data.inbound.contains_key(&id) {
                return Err(conflict(format!("inbound email {id} already exists")));
            }
            data.inbound.insert(id.clone(), email);
            undo.push(Undo::Inbound(ws, id, None));
        }
        Write::MarkInboundProcessed {
            workspace_id,
            id,
            at,
        } => {
            let data = state.data_mut(&workspace_id);
            let Some(email) = data.inbound.get_mut(&id) else {
                return Err(conflict(format!("inbound email {id} is gone")));
            };
            if email.processed_at.is_some() {
                return Err(conflict(format!(
                    "inbound email {id} was already processed"
                )));
            }
            let old = email.clone();
            email.processed_at = Some(at);
            undo.push(Undo::Inbound(workspace_id, id, Some(old)));
        }
        Write::PurgeInboundRaw { before } => {
            for (ws, data) in state.data.iter_mut() {
                for email in data.inbound.values_mut() {
                    if email.processed_at.is_some()
                        && email.received_at < before
                        && email.raw.is_some()
                    {
                        undo.push(Undo::Inbound(
                            ws.clone(),
                            email.id.clone(),
                            Some(email.clone()),
                        ));
                        email.raw = None;
                    }
                }
            }
        }
        Write::RecordSnsMessage {
            message_id,
            processed_at,
        } => {
            if state
                .sns_messages
                .insert(message_id.clone(), processed_at)
                .is_some()
            {
                return Err(conflict(format!(
                    "SNS message {message_id} was already processed"
                )));
            }
            undo.push(Undo::SnsMessage(message_id));
        }
        write @ (Write::PutWorkflow(_)
        | Write::DeleteWorkflow { .. }
        | Write::PutStep(_)
        | Write::DeleteStep { .. }
        | Write::PutTransition(_)
        | Write::DeleteTransition { .. }
        | Write::InsertExecution(_)
        | Write::UpdateExecution(_)
        | Write::InsertStepRun(_)
        | Write::UpdateStepRun(_)
        | Write::PutSigningKeys { .. }
        | Write::InsertSigningKeys { .. }) => apply_workflow(state, write, undo)?,
        Write::PutIdempotency(record) => {
            let id = (record.scope.clone(), record.key.clone());
            if state
                .idempotency
                .get(&id)
                .is_some_and(|stored| stored.expires_at > record.created_at)
            {
                return Err(conflict(format!(
                    "idempotency key {:?} is already recorded",
                    record.key
                )));
            }
            let old = state.idempotency.insert(id.clone(), record);
            undo.push(Undo::Idempotency(id, old));
        }
    }
    Ok(())
}

/// Applies a workflow write to its workspace's workflow records.
fn apply_workflow(state: &mut State, write: Write, undo: &mut Vec<Undo>) -> Result<(), StoreError> {
    let Some(ws) = workflows::workspace_of(&write) else {
        return Err(StoreError::Unavailable(
            "a write that is not a workflow write reached the workflow commit".into(),
        ));
    };
    let mut steps = Vec::new();
    let applied = state
        .workflows
        .entry(ws.clone())
        .or_default()
        .apply(write, &mut steps);
    undo.extend(steps.into_iter().map(|s| Undo::Workflow(ws.clone(), s)));
    applied
}

/// Puts back, newest first, everything the applied writes changed.
fn rollback(state: &mut State, undo: Vec<Undo>) {
    for step in undo.into_iter().rev() {
        match step {
            Undo::Workspace(id, old) => {
                state.replace_workspace(&id, old);
            }
            Undo::KeySet(ws, id, old) => {
                state.replace_key_set(&ws, &id, old);
            }
            Undo::Domain(ws, id, old) => {
                state.data_mut(&ws).replace_domain(&id, old);
            }
            Undo::Contact(ws, id, old) => {
                state.data_mut(&ws).replace_contact(&id, old);
            }
            Undo::Template(ws, id, old) => {
                state.data_mut(&ws).replace_template(&id, old);
            }
            Undo::Email(ws, id, old) => {
                state.replace_email(&ws, &id, old);
            }
            Undo::EmailState(ws, id, before) => {
                state.update_email_state(&ws, &id, before);
            }
            Undo::Event(ws, key, old) => {
                state.data_mut(&ws).replace_event(&key, old);
            }
            Undo::Segment(ws, id, old) => {
                state.data_mut(&ws).replace_segment(&id, old);
            }
            Undo::Member(ws, segment_id, contact_id, was) => {
                state
                    .data_mut(&ws)
                    .set_member(&segment_id, &contact_id, was);
            }
            Undo::Members(ws, segment_id, members) => {
                let data = state.data_mut(&ws);
                for contact_id in members {
                    data.set_member(&segment_id, &contact_id, true);
                }
            }
            Undo::Memberships(ws, contact_id, segments) => {
                let data = state.data_mut(&ws);
                for segment_id in segments {
                    data.set_member(&segment_id, &contact_id, true);
                }
            }
            Undo::Campaign(ws, id, old) => {
                state.data_mut(&ws).replace_campaign(&id, old);
            }
            Undo::Inbound(ws, id, old) => {
                let data = state.data_mut(&ws);
                match old {
                    Some(email) => data.inbound.insert(id, email),
                    None => data.inbound.remove(&id),
                };
            }
            Undo::Workflow(ws, step) => {
                state.workflows.entry(ws).or_default().undo(step);
            }
            Undo::Idempotency(id, old) => match old {
                Some(old) => {
                    state.idempotency.insert(id, old);
                }
                None => {
                    state.idempotency.remove(&id);
                }
            },
            Undo::SnsMessage(message_id) => {
                state.sns_messages.remove(&message_id);
            }
        }
    }
}

fn conflict(message: String) -> StoreError {
    StoreError::Conflict(message)
}

/// A guard on a record's `updated_at`: `Conflict` unless it is `stored` with `read`.
fn guard_updated_at(
    stored: Option<chrono::DateTime<chrono::Utc>>,
    read: chrono::DateTime<chrono::Utc>,
    what: &str,
    id: &dyn std::fmt::Display,
) -> Result<(), StoreError> {
    if stored == Some(read) {
        Ok(())
    } else {
        Err(conflict(format!("{what} {id} changed since it was read")))
    }
}
