//! The `Store` port: reads per aggregate and one atomic `commit` for every decision.

use async_trait::async_trait;

use std::collections::HashSet;

use chrono::{DateTime, Utc};

use crate::model::{
    Campaign, CampaignId, CampaignStatus, Contact, ContactId, DkimKeyPair, Domain, DomainId,
    EmailCounts, EmailId, EmailRecord, EmailStats, Event, IdempotencyRecord, InboundEmail, KeySet,
    KeySetId, Segment, SegmentId, Template, TemplateId, TemplateType, Workspace, WorkspaceId,
};
use crate::model::{StepId, TransitionId, WorkflowId};
use crate::segment::{Condition, EventFact};
use crate::workflow::{Execution, Step, StepRun, Transition, Workflow};

use super::{EventReads, FeedbackReads, NewJob, SigningKeys, SuppressionFacts, WorkflowStore};

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// A guarded write found another state than expected (unique email taken, version
    /// moved on, record gone), or the database gave up a transaction to keep concurrent
    /// ones consistent (serialization failure, deadlock). Nothing of the change set was
    /// applied; re-read and decide again.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The backend failed; nothing of the change set was applied.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// A stored record does not decode into the model (a corrupt or foreign row): a bug or
    /// tampering, not an outage, so retrying cannot help. The message names the table, the
    /// column and the record's id.
    #[error("corrupt record: {0}")]
    Corrupt(String),
}

/// One write of a change set.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    /// Inserts or replaces a workspace.
    PutWorkspace(Workspace),
    /// Inserts or replaces a key set.
    PutKeySet(KeySet),
    /// Deletes a key set (no-op when absent).
    DeleteKeySet {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// Key set id.
        id: KeySetId,
    },
    /// A guard: `Conflict` unless the domain is stored with this `updated_at` (a
    /// read-decide-write that took a while, such as a DNS check, does not overwrite a change
    /// made meanwhile; it reads again and decides again).
    GuardDomain {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// The domain.
        id: DomainId,
        /// Its `updated_at` as read.
        updated_at: DateTime<Utc>,
    },
    /// A guard: `Conflict` unless the template is stored with this `updated_at` (two
    /// concurrent edits of one template: the second reads again instead of undoing the
    /// first, and an edit racing a delete does not bring the template back).
    GuardTemplate {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// The template.
        id: TemplateId,
        /// Its `updated_at` as read.
        updated_at: DateTime<Utc>,
    },
    /// A guard: `Conflict` unless the workspace still has a key set, counted where this
    /// stands in the change set and after any concurrent revocation in the same workspace
    /// (revoking the last key set would lock everybody out of it).
    KeepAKeySet {
        /// The workspace.
        workspace_id: WorkspaceId,
    },
    /// A guard: `Conflict` unless the workspace has at most `limit` ACTIVE contacts once
    /// every write of the change set is applied (it is checked then, wherever it stands in
    /// the change set), counted after every concurrent commit that carries this guard for
    /// the same workspace. A change set that makes contacts ACTIVE under the workspace's
    /// active contact limit carries it, with the limit it was planned under: of concurrent
    /// requests that each read room for their contacts, those that would together pass the
    /// limit conflict, read the count again and plan again (their contacts become PENDING).
    /// A workspace already over `limit` (the limit was lowered) refuses every change set
    /// carrying the guard, since each adds ACTIVE contacts; those it has stay ACTIVE.
    GuardActiveLimit {
        /// The workspace.
        workspace_id: WorkspaceId,
        /// Most ACTIVE contacts the workspace may have after the commit.
        limit: u64,
    },
    /// Inserts a domain; `Conflict` if the workspace already has that domain name.
    InsertDomain(Domain),
    /// Replaces an existing domain, all but its DKIM key (see `SetDomainDkimKey`);
    /// `Conflict` if it is gone. Both domain writes also answer `Conflict` when the domain
    /// is inbound-enabled and another workspace's domain of that name already is.
    UpdateDomain(Domain),
    /// Inserts a contact with `version` 0; `Conflict` if (workspace, email) exists.
    InsertContact(Contact),
    /// Replaces a contact whose stored `version` equals `contact.version`, storing it with
    /// `version + 1`; `Conflict` otherwise (also when gone, or when the new email is taken).
    UpdateContact(Contact),
    /// Deletes a contact (no-op when absent).
    DeleteContact {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// Contact id.
        id: ContactId,
    },
    /// Inserts or replaces a template.
    PutTemplate(Template),
    /// Deletes a template (no-op when absent).
    DeleteTemplate {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// Template id.
        id: TemplateId,
    },
    /// Inserts an email record; `Conflict` if the id exists, or if the email belongs to a
    /// campaign that already has an email for the same contact (unique (campaign, contact)).
    InsertEmail(EmailRecord),
    /// Stores an email's new state (what [`EmailRecord::take_state`] takes: status,
    /// provider id, error, sent and updated times, lifecycle); `Conflict` if it is gone.
    /// What the email was accepted with (its recipient, addresses, subject, bodies,
    /// headers, attachments, template, campaign, origin, Message-ID and creation time)
    /// stays as inserted: adapters do not write it again, so an open or a click does not
    /// rewrite a large body or its attachments.
    UpdateEmail(EmailRecord),
    /// Writes nothing; `Conflict` unless the email exists with this `updated_at` (the one it
    /// was read with). Put before an `UpdateEmail` that was decided from a read, so that of
    /// two concurrent read-decide-writes of one email the second conflicts and decides
    /// again, instead of overwriting the first.
    GuardEmail {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// The email.
        id: EmailId,
        /// Its `updated_at` as read.
        updated_at: DateTime<Utc>,
    },
    /// Appends an event.
    AppendEvent(Event),
    /// Enqueues a job; `Conflict` if a job with its id exists (queued, running or dead) or
    /// was enqueued earlier in the change set. Completed jobs are deleted, so their ids are
    /// free again.
    EnqueueJob(NewJob),
    /// Enqueues a job unless one with its id is pending (queued or running, a lapsed lease
    /// included) or was enqueued earlier in the change set: then it writes nothing, and is
    /// no conflict. A dead job with that id is replaced by the new one (no attempts, no
    /// claims, no error), so a job that died does not hold back its successors for ever.
    /// For work that is queued again and again under one id (the minute sweep of
    /// time-based segments), so that at most one is pending at a time.
    EnqueueJobUnlessPending(NewJob),
    /// Inserts or replaces a segment.
    PutSegment(Segment),
    /// Records that the quiet first snapshot of a tracked segment's members is complete
    /// (`Segment::members_synced`); a no-op when the segment is gone or its tracking was
    /// switched on again since `tracking_since` (that new snapshot is not taken yet).
    SegmentSynced {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// Segment id.
        segment_id: SegmentId,
        /// The segment's `tracking_since` when the snapshot began.
        tracking_since: DateTime<Utc>,
    },
    /// Deletes a segment and all its stored memberships (no-op when absent).
    DeleteSegment {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// Segment id.
        id: SegmentId,
    },
    /// Stores that a contact is a member of a segment; `Conflict` if it already is.
    AddSegmentMember {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// Segment id.
        segment_id: SegmentId,
        /// Contact id.
        contact_id: ContactId,
    },
    /// Removes a stored membership; `Conflict` if the contact is not a member.
    RemoveSegmentMember {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// Segment id.
        segment_id: SegmentId,
        /// Contact id.
        contact_id: ContactId,
    },
    /// Inserts a campaign with `version` 0; `Conflict` if the id exists.
    InsertCampaign(Campaign),
    /// Replaces a campaign whose stored `version` equals `campaign.version`, storing it with
    /// `version + 1`; `Conflict` otherwise (also when gone).
    UpdateCampaign(Campaign),
    /// Deletes a campaign (no-op when absent; its emails stay).
    DeleteCampaign {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// Campaign id.
        id: CampaignId,
    },
    /// Deletes a domain (no-op when absent).
    DeleteDomain {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// Domain id.
        id: DomainId,
    },
    /// Stores the DKIM key pair of a domain that has none yet; a domain that already has
    /// one keeps it (no-op, so concurrent first uses agree on one key), and a domain that
    /// is gone is a no-op too. Read the domain again to learn which key won.
    SetDomainDkimKey {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// Domain id.
        id: DomainId,
        /// The key pair.
        key: DkimKeyPair,
    },
    /// Inserts or replaces a workflow (not its steps).
    PutWorkflow(Workflow),
    /// Deletes a workflow with its steps, transitions, executions and step records (no-op
    /// when absent).
    DeleteWorkflow {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// Workflow id.
        id: WorkflowId,
    },
    /// Inserts or replaces a step.
    PutStep(Step),
    /// Deletes a step and every transition into or out of it (no-op when absent).
    DeleteStep {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// The step's workflow.
        workflow_id: WorkflowId,
        /// Step id.
        id: StepId,
    },
    /// Inserts or replaces a transition.
    PutTransition(Transition),
    /// Deletes a transition (no-op when absent).
    DeleteTransition {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// The transition's workflow.
        workflow_id: WorkflowId,
        /// Transition id.
        id: TransitionId,
    },
    /// Inserts an execution with `version` 0; `Conflict` if the id exists, if the same
    /// (workflow, contact) has a RUNNING or WAITING execution, or, when
    /// `execution.single_entry`, if it has any execution at all. This is the re-entry rule,
    /// enforced by the store so two racing starts cannot both enrol a contact.
    InsertExecution(Execution),
    /// Replaces an execution whose stored `version` equals `execution.version`, storing it
    /// with `version + 1`; `Conflict` otherwise (also when gone).
    UpdateExecution(Execution),
    /// Inserts the record of a step of an execution; `Conflict` if that (execution, step)
    /// already has one: a step's side effects happen once per execution.
    InsertStepRun(StepRun),
    /// Replaces the record of (execution, step); `Conflict` if it is gone.
    UpdateStepRun(StepRun),
    /// Inserts a received message; `Conflict` if the id exists.
    InsertInboundEmail(InboundEmail),
    /// Records that a received message's events were emitted; `Conflict` if it is gone or
    /// was already processed (so a re-run of its job emits nothing twice).
    MarkInboundProcessed {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// The inbound email.
        id: EmailId,
        /// When it was processed.
        at: DateTime<Utc>,
    },
    /// Drops the raw bytes of every processed received message (of any workspace) received
    /// before `before`; the records stay. Messages still waiting to be processed keep theirs.
    PurgeInboundRaw {
        /// The retention cut-off.
        before: DateTime<Utc>,
    },
    /// Stores the workspace's webhook signing secrets (inserted or replaced).
    PutSigningKeys {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// The secrets.
        keys: SigningKeys,
    },
    /// Stores the workspace's first webhook signing secrets, only when it has none: of
    /// racing first uses, the first stored wins and is never replaced by another's.
    InsertSigningKeys {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// The secrets.
        keys: SigningKeys,
    },
    /// Stores the answer of an `Idempotency-Key`, in the commit of the changes it answers
    /// for, so that a crash keeps both or neither. `Conflict` if an unexpired record of the
    /// same (scope, key) exists; an expired one is replaced.
    PutIdempotency(IdempotencyRecord),
    /// Records that the SNS message `message_id` was processed (deployment-wide);
    /// `Conflict` if it already was, so a redelivery racing the first delivery commits
    /// nothing.
    RecordSnsMessage {
        /// The SNS `MessageId`.
        message_id: String,
        /// When it was processed.
        processed_at: DateTime<Utc>,
    },
}

/// An ordered list of writes applied all or nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChangeSet {
    /// The writes, applied in order.
    pub writes: Vec<Write>,
}

impl ChangeSet {
    /// An empty change set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The change set's `Write::GuardActiveLimit`s as (workspace, limit), in workspace
    /// order (one order for stores that lock the workspaces to check them).
    pub fn active_limits(&self) -> Vec<(&WorkspaceId, u64)> {
        let mut limits: Vec<_> = self
            .writes
            .iter()
            .filter_map(|w| match w {
                Write::GuardActiveLimit {
                    workspace_id,
                    limit,
                } => Some((workspace_id, *limit)),
                _ => None,
            })
            .collect();
        limits.sort_unstable();
        limits
    }

    /// Adds a write.
    pub fn push(&mut self, write: Write) -> &mut Self {
        self.writes.push(write);
        self
    }

    /// Whether nothing would be written.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// Whether this change set enqueues jobs (`EnqueueJob`, `EnqueueJobUnlessPending`):
    /// adapters wake waiting workers after committing such a change set.
    pub fn enqueues(&self) -> bool {
        self.writes
            .iter()
            .any(|w| matches!(w, Write::EnqueueJob(_) | Write::EnqueueJobUnlessPending(_)))
    }

    /// Whether this change set can change who may call the API: it writes a workspace
    /// (disabled, limits) or a key set (created, revoked). Adapters announce such commits
    /// through [`Store::access_generation`].
    pub fn changes_access(&self) -> bool {
        self.writes.iter().any(|w| {
            matches!(
                w,
                Write::PutWorkspace(_) | Write::PutKeySet(_) | Write::DeleteKeySet { .. }
            )
        })
    }
}

/// Filters and page position for listing contacts, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContactQuery {
    /// Only contacts with this subscription flag.
    pub subscribed: Option<bool>,
    /// Case-insensitive substring of the email.
    pub search: Option<String>,
    /// Keyset position: only contacts with an id strictly less than this.
    pub before_id: Option<ContactId>,
    /// Page size.
    pub limit: usize,
}

/// A page of contacts.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactPage {
    /// Contacts, newest (greatest id) first.
    pub contacts: Vec<Contact>,
    /// Whether more contacts match beyond this page.
    pub has_more: bool,
}

/// Filters and page position for listing templates, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TemplateQuery {
    /// Only this type.
    pub template_type: Option<TemplateType>,
    /// Case-insensitive substring of name or subject.
    pub search: Option<String>,
    /// Rows to skip.
    pub offset: usize,
    /// Page size.
    pub limit: usize,
}

/// Filters for listing events, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventQuery {
    /// Only events with this exact name.
    pub name: Option<String>,
    /// Only events of this contact.
    pub contact_id: Option<ContactId>,
    /// At most this many.
    pub limit: usize,
}

/// Which emails [`Store::email_stats`] counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmailStatsQuery {
    /// Only emails of this campaign.
    pub campaign_id: Option<CampaignId>,
    /// Only emails sent at or after this time (emails never sent are never counted).
    pub sent_since: Option<DateTime<Utc>>,
}

/// Which contacts a condition query walks, in ascending id order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MatchQuery {
    /// Only contacts with an id strictly greater than this.
    pub after_id: Option<ContactId>,
    /// Only contacts with an id less than or equal to this (an audience snapshot).
    pub until_id: Option<ContactId>,
    /// Only subscribed, ACTIVE contacts (a campaign audience).
    pub audience_only: bool,
    /// At most this many.
    pub limit: usize,
}

/// Durable storage of every record.
///
/// Contract for all reads: records of other workspaces are invisible (a read with the wrong
/// `workspace_id` returns `None` or leaves them out), and `Ok(None)` means "no such record".
/// Reads see every change set committed before they started.
///
/// Workflow reads live in the [`WorkflowStore`] supertrait.
#[async_trait]
pub trait Store: WorkflowStore + Send + Sync {
    /// Applies `changes` atomically and in order: either every write is applied and
    /// durable when this returns `Ok`, or none is. Jobs enqueued here become claimable
    /// through the `Jobs` port of the same adapter.
    async fn commit(&self, changes: ChangeSet) -> Result<(), StoreError>;

    /// A number that changes after every committed change set for which
    /// [`ChangeSet::changes_access`] holds, whichever process committed it. Callers that
    /// cache authenticated keys drop their cache when it moves. No I/O: it reads a counter.
    ///
    /// Contract: after a commit returns, the value differs from any value read before that
    /// commit started, in the committing process at once and in every other process sharing
    /// the store within one second (adapters shared by several processes listen to the
    /// store's notifications, and also move it whenever they may have missed one).
    fn access_generation(&self) -> u64;

    /// A workspace by id.
    async fn workspace(&self, id: &WorkspaceId) -> Result<Option<Workspace>, StoreError>;
    /// Every workspace, oldest first.
    async fn workspaces(&self) -> Result<Vec<Workspace>, StoreError>;

    /// The key set holding a key whose hash is `key_hash`, and which of its two keys it is.
    async fn key_by_hash(&self, key_hash: &str)
        -> Result<Option<crate::model::ApiKey>, StoreError>;
    /// The key sets of a workspace, oldest first.
    async fn key_sets(&self, workspace_id: &WorkspaceId) -> Result<Vec<KeySet>, StoreError>;

    /// The domains of a workspace, oldest first.
    async fn domains(&self, workspace_id: &WorkspaceId) -> Result<Vec<Domain>, StoreError>;
    /// The inbound-enabled domain named `name` (lower-case), whichever workspace has it:
    /// at most one exists, since the domain writes refuse a second.
    async fn inbound_domain(&self, name: &str) -> Result<Option<Domain>, StoreError>;

    /// A contact by id.
    async fn contact(
        &self,
        workspace_id: &WorkspaceId,
        id: &ContactId,
    ) -> Result<Option<Contact>, StoreError>;
    /// A contact by (lower-cased) email.
    async fn contact_by_email(
        &self,
        workspace_id: &WorkspaceId,
        email: &str,
    ) -> Result<Option<Contact>, StoreError>;
    /// The contact with this (lower-cased) address, the workspace's tracked segments, and
    /// whether an event named `event_name` of that contact (or of a new one, when there is
    /// none) concerns a workflow: what storing an event for a contact found by address
    /// reads first. `event_name` is `None` when the caller stores no event for the contact
    /// (a send to an address): the interest is then `false`. The default reads them one by
    /// one; a store whose reads are round trips makes them in one.
    async fn event_reads(
        &self,
        workspace_id: &WorkspaceId,
        email: &str,
        event_name: Option<&str>,
    ) -> Result<EventReads, StoreError> {
        let contact = self.contact_by_email(workspace_id, email).await?;
        let tracked_segments = self.tracked_segments(workspace_id).await?;
        // No execution can wait for a contact that is not stored yet: for one, only the
        // workflows the event triggers count, which an id no contact has asks about.
        let no_contact = ContactId::from(String::new());
        let contact_id = contact.as_ref().map_or(&no_contact, |c| &c.id);
        let event_interest = match event_name {
            Some(name) => {
                self.has_event_interest(workspace_id, name, contact_id)
                    .await?
            }
            None => false,
        };
        Ok(EventReads {
            contact,
            tracked_segments,
            event_interest,
        })
    }
    /// A page of contacts matching `query`, newest first.
    async fn contacts(
        &self,
        workspace_id: &WorkspaceId,
        query: &ContactQuery,
    ) -> Result<ContactPage, StoreError>;
    /// How many contacts match the filters of `query` (its position and limit are ignored).
    async fn count_contacts(
        &self,
        workspace_id: &WorkspaceId,
        query: &ContactQuery,
    ) -> Result<u64, StoreError>;
    /// How many ACTIVE contacts the workspace has.
    async fn count_active_contacts(&self, workspace_id: &WorkspaceId) -> Result<u64, StoreError>;
    /// Up to `limit` PENDING contacts, oldest first.
    async fn pending_contacts(
        &self,
        workspace_id: &WorkspaceId,
        limit: usize,
    ) -> Result<Vec<Contact>, StoreError>;

    /// A template by id.
    async fn template(
        &self,
        workspace_id: &WorkspaceId,
        id: &TemplateId,
    ) -> Result<Option<Template>, StoreError>;
    /// A page of templates (newest first) and the number matching the filters.
    async fn templates(
        &self,
        workspace_id: &WorkspaceId,
        query: &TemplateQuery,
    ) -> Result<(Vec<Template>, u64), StoreError>;

    /// An email record by id.
    async fn email(
        &self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
    ) -> Result<Option<EmailRecord>, StoreError>;

    /// The email `id` of `workspace_id` without its content, as
    /// [`EmailRecord::without_content`] leaves it: what recording an open, a click, a bounce
    /// or a complaint reads, so that none of them reads bodies and attachments (hundreds of
    /// kilobytes for an invoice) only to change a few state columns.
    async fn email_without_content(
        &self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
    ) -> Result<Option<EmailRecord>, StoreError>;

    /// The email `id` of `workspace_id` without its content, the workspace's tracked
    /// segments, and whether an event named `event_name` about the email's contact concerns
    /// a workflow: what recording feedback about an email reads first. Nothing else is read
    /// when there is no such email. The default reads them one by one; a store whose reads
    /// are round trips makes them in one.
    async fn feedback_reads(
        &self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
        event_name: &str,
    ) -> Result<FeedbackReads, StoreError> {
        let Some(email) = self.email_without_content(workspace_id, id).await? else {
            return Ok(FeedbackReads::no_email());
        };
        let tracked_segments = self.tracked_segments(workspace_id).await?;
        let event_interest = self
            .has_event_interest(workspace_id, event_name, &email.contact_id)
            .await?;
        Ok(FeedbackReads {
            email: Some(email),
            tracked_segments,
            event_interest,
        })
    }

    /// The newest `contact.subscribed`, `email.complaint`, permanent `email.bounce` and
    /// `contact.unsubscribed` events of the contact `contact_id` (newest: the greatest id):
    /// what deciding whether mail to it is suppressed reads, in one statement or one walk
    /// over the contact's events (four reads by name through [`Store::events`] would each
    /// walk all of a contact's events on the planners seen).
    async fn suppression_facts(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
    ) -> Result<SuppressionFacts, StoreError>;

    /// The email whose transport-assigned id is `provider_message_id`, in any workspace
    /// (provider feedback does not name the workspace), without its content, as
    /// [`EmailRecord::without_content`] leaves it (the three lookups by an id are how
    /// feedback finds its email, and it needs the envelope and the state only). Indexed.
    /// When several match (a provider reusing ids), the newest.
    async fn email_by_provider_id(
        &self,
        provider_message_id: &str,
    ) -> Result<Option<EmailRecord>, StoreError>;
    /// The email whose RFC 5322 Message-ID is `message_id` as stored (without angle
    /// brackets), in any workspace, without its content. Indexed. When several match, the
    /// newest.
    async fn email_by_message_id(
        &self,
        message_id: &str,
    ) -> Result<Option<EmailRecord>, StoreError>;
    /// The email with id `id`, in any workspace (a bounce names its email by id alone),
    /// without its content. Indexed. `None` when there is none.
    async fn email_by_id(&self, id: &EmailId) -> Result<Option<EmailRecord>, StoreError>;
    /// Counts of the workspace's emails matching `query` by outcome (see [`EmailStats`]):
    /// only emails with `sent_at` set count; `clicked` by `clicked_at`, `opened` by
    /// `opened_at` or `clicked_at` (a click proves the open a blocked pixel missed),
    /// `delivered` by `delivered_at` or any of those or `complained_at` (each proves
    /// delivery), `bounced` by a Permanent `bounce_type`, `complained` by `complained_at`.
    async fn email_stats(
        &self,
        workspace_id: &WorkspaceId,
        query: &EmailStatsQuery,
    ) -> Result<EmailStats, StoreError>;

    /// A received message by id (raw bytes included while kept).
    async fn inbound_email(
        &self,
        workspace_id: &WorkspaceId,
        id: &EmailId,
    ) -> Result<Option<InboundEmail>, StoreError>;

    /// The deployment-wide secret called `name`: stores `candidate` when there is none yet
    /// and returns the stored value. Atomic: processes racing to create it all get the same
    /// value (the first stored), so every process of a deployment signs alike.
    async fn ensure_secret(&self, name: &str, candidate: &[u8]) -> Result<Vec<u8>, StoreError>;

    /// Whether the SNS message `message_id` was recorded by [`Write::RecordSnsMessage`].
    async fn sns_message_seen(&self, message_id: &str) -> Result<bool, StoreError>;

    /// Events matching `query`, newest first.
    async fn events(
        &self,
        workspace_id: &WorkspaceId,
        query: &EventQuery,
    ) -> Result<Vec<Event>, StoreError>;
    /// The distinct event names stored in the workspace, sorted.
    async fn event_names(&self, workspace_id: &WorkspaceId) -> Result<Vec<String>, StoreError>;

    /// A segment by id.
    async fn segment(
        &self,
        workspace_id: &WorkspaceId,
        id: &SegmentId,
    ) -> Result<Option<Segment>, StoreError>;
    /// A page of segments (newest first) and how many the workspace has.
    async fn segments(
        &self,
        workspace_id: &WorkspaceId,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Segment>, u64), StoreError>;
    /// Every DYNAMIC segment of the workspace with `track_membership`, oldest first.
    async fn tracked_segments(
        &self,
        workspace_id: &WorkspaceId,
    ) -> Result<Vec<Segment>, StoreError>;
    /// How many stored members a segment has.
    async fn segment_member_count(
        &self,
        workspace_id: &WorkspaceId,
        segment_id: &SegmentId,
    ) -> Result<u64, StoreError>;
    /// A page of a segment's stored members, newest contact first.
    async fn segment_members(
        &self,
        workspace_id: &WorkspaceId,
        segment_id: &SegmentId,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<Contact>, StoreError>;
    /// Stored member ids of a segment greater than `after_id`, ascending, at most `limit`.
    async fn segment_member_ids(
        &self,
        workspace_id: &WorkspaceId,
        segment_id: &SegmentId,
        after_id: Option<&ContactId>,
        limit: usize,
    ) -> Result<Vec<ContactId>, StoreError>;
    /// The ids of the segments a contact is a stored member of.
    async fn memberships(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
    ) -> Result<HashSet<SegmentId>, StoreError>;
    /// Every event of a contact as (name, time), for evaluating conditions.
    async fn contact_event_facts(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
    ) -> Result<Vec<EventFact>, StoreError>;
    /// Contacts matching `condition` at `now`, ascending by id, within `query`'s bounds.
    ///
    /// Must equal filtering the workspace's contacts with `segment::matches`, where a
    /// contact's events are its stored events, its activity the events named `email.sent`,
    /// `email.delivery`, `email.open`, `email.click`, `email.bounce` and `email.complaint`
    /// (see `segment::activity_of_event`), and its segments its stored memberships.
    async fn contacts_matching(
        &self,
        workspace_id: &WorkspaceId,
        condition: &Condition,
        query: &MatchQuery,
        now: DateTime<Utc>,
    ) -> Result<Vec<Contact>, StoreError>;
    /// How many contacts match `condition` at `now` (optionally only the audience).
    async fn count_matching(
        &self,
        workspace_id: &WorkspaceId,
        condition: &Condition,
        audience_only: bool,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError>;

    /// A campaign by id.
    async fn campaign(
        &self,
        workspace_id: &WorkspaceId,
        id: &CampaignId,
    ) -> Result<Option<Campaign>, StoreError>;
    /// A page of campaigns (newest first), optionally of one status, and the matching total.
    async fn campaigns(
        &self,
        workspace_id: &WorkspaceId,
        status: Option<CampaignStatus>,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Campaign>, u64), StoreError>;
    /// How many of the campaign's emails are in each status.
    async fn campaign_email_counts(
        &self,
        workspace_id: &WorkspaceId,
        campaign_id: &CampaignId,
    ) -> Result<EmailCounts, StoreError>;

    /// The record of `key` in `scope`, unless it expired at or before `now`.
    async fn idempotency_record(
        &self,
        scope: &str,
        key: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<IdempotencyRecord>, StoreError>;
    /// Deletes the idempotency records that expired at or before `now`; how many.
    async fn purge_idempotency(&self, now: DateTime<Utc>) -> Result<u64, StoreError>;
    /// Deletes the records of SNS messages processed before `before`; how many. Afterwards
    /// [`Store::sns_message_seen`] answers `false` for them.
    async fn purge_sns_messages(&self, before: DateTime<Utc>) -> Result<u64, StoreError>;
}

/// The check of `Write::GuardActiveLimit` once a store has counted the workspace's ACTIVE
/// contacts after the change set: `Conflict` when `active` passes `limit`.
pub fn check_active_limit(
    workspace_id: &WorkspaceId,
    active: u64,
    limit: u64,
) -> Result<(), StoreError> {
    if active > limit {
        return Err(StoreError::Conflict(format!(
            "workspace {workspace_id} would have {active} ACTIVE contacts, over its limit of {limit}"
        )));
    }
    Ok(())
}
