//! Segments: create, read, list, update, delete, members, and their member counts.

use std::collections::HashSet;

use super::membership::{push_reevaluation, sync_job, transition_event};
use super::{check_page, Caller, PageRequest, Patch, StepError};
use crate::error::{Error, FieldError, Resource, Result};
use crate::model::{
    CampaignStatus, Contact, ContactId, EmailAddress, Segment, SegmentId, SegmentType, WorkspaceId,
};
use crate::ports::{ChangeSet, MatchQuery, NewJob, Write};
use crate::segment::{referenced_segments, Condition};
use crate::validate::text_problems;
use crate::Engine;

/// Most emails in one members request.
pub const MAX_MEMBER_EMAILS: usize = 500;

/// A segment with its member count, as the API shows it.
#[derive(Debug, Clone)]
pub struct SegmentView {
    /// The segment.
    pub segment: Segment,
    /// Its members now.
    pub member_count: u64,
}

/// A page of things with the page-style fields.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// The items.
    pub data: Vec<T>,
    /// 1-based page.
    pub page: u64,
    /// Page size.
    pub page_size: u64,
    /// Items in all pages.
    pub total: u64,
    /// Number of pages.
    pub total_pages: u64,
}

impl<T> Page<T> {
    /// A page of `data` out of `total`.
    pub fn new(data: Vec<T>, page: u64, page_size: u64, total: u64) -> Self {
        Self {
            data,
            page,
            page_size,
            total,
            total_pages: total.div_ceil(page_size.max(1)),
        }
    }
}

/// Longest segment name, in characters.
pub const MAX_SEGMENT_NAME_CHARS: usize = 255;
/// Longest segment description, in characters.
pub const MAX_SEGMENT_DESCRIPTION_CHARS: usize = 2000;

/// `POST /segments`: a DYNAMIC segment (members follow `condition`) or a STATIC one
/// (members added by hand).
#[derive(Debug, Clone, PartialEq)]
pub struct CreateSegment {
    /// Name (one line).
    pub name: String,
    /// Description (one line).
    pub description: Option<String>,
    /// DYNAMIC or STATIC.
    pub segment_type: SegmentType,
    /// Who belongs (required for DYNAMIC).
    pub condition: Option<Condition>,
    /// Keep members stored and announce entries and exits.
    pub track_membership: bool,
}

/// `PATCH /segments/{id}`: each field left or set (the description may be cleared).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SegmentPatch {
    /// New name.
    pub name: Option<String>,
    /// New description.
    pub description: Patch<String>,
    /// Switch membership tracking on or off.
    pub track_membership: Option<bool>,
    /// The type, if given: it cannot change, so it must be the stored one.
    pub segment_type: Option<SegmentType>,
    /// New condition.
    pub condition: Option<Condition>,
}

/// `POST|DELETE /segments/{id}/members`: 1 to [`MAX_MEMBER_EMAILS`] distinct addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentMembers {
    /// The addresses.
    pub emails: Vec<EmailAddress>,
    /// When adding: create contacts for unknown addresses.
    pub create_missing: bool,
    /// When adding and creating: the new contacts' subscription flag.
    pub subscribed: bool,
}

impl SegmentMembers {
    /// Members to add or remove, without creating contacts.
    pub fn new(emails: Vec<EmailAddress>) -> Self {
        Self {
            emails,
            create_missing: false,
            subscribed: true,
        }
    }

    /// Why this many addresses cannot be given at once: `(code, message)`.
    pub fn count_problem(count: usize) -> Option<(&'static str, String)> {
        (count == 0 || count > MAX_MEMBER_EMAILS).then(|| {
            (
                "out_of_range",
                format!("emails must list 1 to {MAX_MEMBER_EMAILS} addresses, got {count}"),
            )
        })
    }

    fn validate(&self) -> Result<()> {
        match Self::count_problem(self.emails.len()) {
            Some((code, message)) => Err(Error::field("emails", code, message)),
            None => Ok(()),
        }
    }
}

/// The one-line rules of a segment's name and description.
fn segment_text_problems(name: Option<&str>, description: Option<&str>) -> Result<()> {
    text_problems(
        &[
            ("name", name, MAX_SEGMENT_NAME_CHARS),
            ("description", description, MAX_SEGMENT_DESCRIPTION_CHARS),
        ],
        &[],
    )
}

/// Outcome of `POST /segments/{id}/members`.
#[derive(Debug, Clone, Default)]
pub struct MembersAdded {
    /// Emails that matched (or became) contacts.
    pub added: u64,
    /// Emails that matched no contact.
    pub not_found: Vec<String>,
    /// Contacts created (with `createMissing`).
    pub created: u64,
}

impl Engine {
    /// Checks a condition's segment references: they exist in the workspace, keep stored
    /// members (STATIC or tracked), and lead back to `self_id` nowhere (no cycles).
    pub(crate) async fn check_references(
        &self,
        workspace_id: &WorkspaceId,
        condition: &Condition,
        self_id: Option<&SegmentId>,
        field: &str,
    ) -> Result<()> {
        let mut errors = Vec::new();
        let mut queue: Vec<SegmentId> = referenced_segments(condition);
        let mut seen = HashSet::new();
        let direct: HashSet<SegmentId> = queue.iter().cloned().collect();
        while let Some(id) = queue.pop() {
            if !seen.insert(id.clone()) {
                continue;
            }
            if Some(&id) == self_id {
                errors.push(FieldError::new(
                    field,
                    "segment_cycle",
                    "the condition refers to this segment itself, directly or through other segments",
                ));
                break;
            }
            let Some(seg) = self.store.segment(workspace_id, &id).await? else {
                if direct.contains(&id) {
                    errors.push(FieldError::new(
                        field,
                        "unknown_segment",
                        format!("segment {id} does not exist"),
                    ));
                }
                continue;
            };
            if direct.contains(&id) && !seg.has_stored_members() {
                errors.push(FieldError::new(
                    field,
                    "segment_not_tracked",
                    format!(
                        "segment {id} is DYNAMIC without trackMembership; enable trackMembership on it or copy its conditions"
                    ),
                ));
            }
            if let Some(c) = &seg.condition {
                queue.extend(referenced_segments(c));
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Error::Validation(errors))
        }
    }

    /// Members of a segment right now.
    pub async fn segment_member_count(&self, segment: &Segment) -> Result<u64> {
        match (&segment.segment_type, &segment.condition) {
            (SegmentType::Dynamic, Some(condition)) => Ok(self
                .store
                .count_matching(&segment.workspace_id, condition, false, self.clock.now())
                .await?),
            _ => Ok(self
                .store
                .segment_member_count(&segment.workspace_id, &segment.id)
                .await?),
        }
    }

    async fn view(&self, segment: Segment) -> Result<SegmentView> {
        let member_count = self.segment_member_count(&segment).await?;
        Ok(SegmentView {
            segment,
            member_count,
        })
    }

    /// `POST /segments`.
    pub async fn create_segment(&self, caller: &Caller, cmd: CreateSegment) -> Result<SegmentView> {
        segment_text_problems(Some(&cmd.name), cmd.description.as_deref())?;
        if cmd.segment_type == SegmentType::Dynamic && cmd.condition.is_none() {
            return Err(Error::field(
                "condition",
                "required",
                "condition is required",
            ));
        }
        let CreateSegment {
            name,
            description,
            segment_type,
            condition,
            track_membership: track,
        } = cmd;
        let ws = caller.workspace_id();
        let id = SegmentId::generate(&*self.clock);
        if let Some(condition) = &condition {
            self.check_references(ws, condition, Some(&id), "condition")
                .await?;
        }
        let now = self.clock.now();
        let segment = Segment {
            id,
            workspace_id: ws.clone(),
            name,
            description,
            segment_type,
            condition,
            track_membership: track,
            created_at: now,
            updated_at: now,
            tracking_since: track.then_some(now),
            members_synced: false,
        };
        let mut changes = ChangeSet::new();
        changes.push(Write::PutSegment(segment.clone()));
        if segment.segment_type == SegmentType::Dynamic && track {
            // Take the first snapshot of members quietly: entries are announced from now on.
            changes.push(Write::EnqueueJob(NewJob::at(
                &*self.clock,
                sync_job(&segment, false),
                now,
            )));
        }
        self.store.commit(changes).await?;
        self.view(segment).await
    }

    /// `GET /segments/{id}` (the record, without counting).
    pub async fn segment_record(&self, caller: &Caller, id: &SegmentId) -> Result<Segment> {
        self.store
            .segment(caller.workspace_id(), id)
            .await?
            .ok_or(Error::NotFound(Resource::Segment))
    }

    /// `GET /segments/{id}`.
    pub async fn segment(&self, caller: &Caller, id: &SegmentId) -> Result<SegmentView> {
        let segment = self.segment_record(caller, id).await?;
        self.view(segment).await
    }

    /// `GET /segments`: page style.
    pub async fn list_segments(
        &self,
        caller: &Caller,
        page: PageRequest,
    ) -> Result<Page<SegmentView>> {
        check_page(&page)?;
        let PageRequest {
            page,
            page_size: size,
        } = page;
        let (segments, total) = self
            .store
            .segments(
                caller.workspace_id(),
                ((page - 1) * size) as usize,
                size as usize,
            )
            .await?;
        let mut data = Vec::with_capacity(segments.len());
        for s in segments {
            data.push(self.view(s).await?);
        }
        Ok(Page::new(data, page, size, total))
    }

    /// `PATCH /segments/{id}`: `name`, `description`, `condition`, `trackMembership`.
    pub async fn patch_segment(
        &self,
        caller: &Caller,
        id: &SegmentId,
        patch: SegmentPatch,
    ) -> Result<SegmentView> {
        let mut segment = self.segment_record(caller, id).await?;
        let description = patch.description.as_set().map(String::as_str);
        segment_text_problems(patch.name.as_deref(), description)?;
        if patch
            .segment_type
            .is_some_and(|t| t != segment.segment_type)
        {
            return Err(immutable_type());
        }
        let SegmentPatch {
            name,
            description,
            track_membership: track,
            condition,
            ..
        } = patch;
        if let Some(condition) = &condition {
            self.check_references(
                &segment.workspace_id,
                condition,
                Some(&segment.id),
                "condition",
            )
            .await?;
        }
        let was_tracked = segment.track_membership;
        if was_tracked && track == Some(false) && segment.segment_type == SegmentType::Dynamic {
            // Off clears the stored members: refused while a condition reads them, as a
            // reference to an untracked segment is refused when it is made.
            if let Some(reader) = self.stored_members_reader(&segment).await? {
                return Err(Error::Conflict(format!(
                    "{reader} refers to this segment; change that condition before switching trackMembership off"
                )));
            }
        }
        let condition_changed = condition
            .as_ref()
            .is_some_and(|c| Some(c) != segment.condition.as_ref());
        if let Some(v) = name {
            segment.name = v;
        }
        description.apply_to(&mut segment.description);
        let now = self.clock.now();
        if let Some(v) = track {
            if v != was_tracked {
                segment.tracking_since = v.then_some(now);
            }
            segment.track_membership = v;
        }
        if let Some(v) = condition {
            segment.condition = Some(v);
        }
        segment.updated_at = now;
        let mut changes = ChangeSet::new();
        changes.push(Write::PutSegment(segment.clone()));
        if segment.segment_type == SegmentType::Dynamic
            && (was_tracked != segment.track_membership
                || (segment.track_membership && condition_changed))
        {
            // A changed condition moves contacts in and out: announce it. Switching tracking
            // on or off only (re)builds or clears the stored members, quietly.
            let announce = was_tracked && segment.track_membership;
            changes.push(Write::EnqueueJob(NewJob::at(
                &*self.clock,
                sync_job(&segment, announce),
                now,
            )));
        }
        self.store.commit(changes).await?;
        self.view(segment).await
    }

    /// What reads the stored members of `segment` through a condition naming it: another
    /// segment, or a SCHEDULED or SENDING campaign's audience; described, or `None`.
    async fn stored_members_reader(&self, segment: &Segment) -> Result<Option<String>> {
        let ws = &segment.workspace_id;
        let names = |c: &Option<Condition>| {
            c.as_ref()
                .is_some_and(|c| referenced_segments(c).contains(&segment.id))
        };
        if let Some(referrer) = self.referring_segment(segment).await? {
            return Ok(Some(referrer));
        }
        for status in [CampaignStatus::Scheduled, CampaignStatus::Sending] {
            let mut offset = 0;
            loop {
                let (page, _) = self.store.campaigns(ws, Some(status), offset, 100).await?;
                if let Some(c) = page.iter().find(|c| names(&c.audience_condition)) {
                    return Ok(Some(format!("campaign {} ({})", c.id, status.as_str())));
                }
                if page.len() < 100 {
                    break;
                }
                offset += 100;
            }
        }
        Ok(None)
    }

    /// Another segment whose condition names `segment`, described, or `None`.
    async fn referring_segment(&self, segment: &Segment) -> Result<Option<String>> {
        let mut offset = 0;
        loop {
            let (page, _) = self
                .store
                .segments(&segment.workspace_id, offset, 100)
                .await?;
            let refers = |s: &&Segment| {
                s.condition
                    .as_ref()
                    .is_some_and(|c| referenced_segments(c).contains(&segment.id))
            };
            if let Some(s) = page.iter().find(refers) {
                return Ok(Some(format!("segment {} ({})", s.id, s.name)));
            }
            if page.len() < 100 {
                return Ok(None);
            }
            offset += 100;
        }
    }

    /// `DELETE /segments/{id}`: 409 while another segment's condition names it (deleting
    /// it would silently change that segment: a `notMemberOfSegment` filter on it would
    /// take in everybody) or a scheduled or sending campaign uses it.
    pub async fn delete_segment(&self, caller: &Caller, id: &SegmentId) -> Result<()> {
        let segment = self.segment_record(caller, id).await?;
        if let Some(referrer) = self.referring_segment(&segment).await? {
            return Err(Error::Conflict(format!(
                "{referrer} refers to this segment; change that condition before deleting it"
            )));
        }
        for status in [CampaignStatus::Scheduled, CampaignStatus::Sending] {
            let mut offset = 0;
            loop {
                let (page, _) = self
                    .store
                    .campaigns(&segment.workspace_id, Some(status), offset, 100)
                    .await?;
                // Its audience is the segment, or a condition that names it.
                let uses = |c: &&crate::model::Campaign| {
                    c.segment_id.as_ref() == Some(id)
                        || c.audience_condition
                            .as_ref()
                            .is_some_and(|cond| referenced_segments(cond).contains(id))
                };
                if let Some(c) = page.iter().find(uses) {
                    return Err(Error::Conflict(format!(
                        "campaign {} ({}) uses this segment; cancel it or wait until it is sent",
                        c.id,
                        status.as_str()
                    )));
                }
                if page.len() < 100 {
                    break;
                }
                offset += 100;
            }
        }
        let mut changes = ChangeSet::new();
        changes.push(Write::DeleteSegment {
            workspace_id: segment.workspace_id,
            id: segment.id,
        });
        self.store.commit(changes).await?;
        Ok(())
    }

    /// `GET /segments/{id}/contacts`: page style. Stored members newest first; members of
    /// an untracked DYNAMIC segment in ascending id order (oldest contact first).
    pub async fn segment_contacts(
        &self,
        caller: &Caller,
        id: &SegmentId,
        page: PageRequest,
    ) -> Result<Page<Contact>> {
        check_page(&page)?;
        let PageRequest {
            page,
            page_size: size,
        } = page;
        let segment = self.segment_record(caller, id).await?;
        let ws = &segment.workspace_id;
        let offset = ((page - 1) * size) as usize;
        match (&segment.segment_type, &segment.condition) {
            (SegmentType::Dynamic, Some(condition)) => {
                let now = self.clock.now();
                let total = self.store.count_matching(ws, condition, false, now).await?;
                let mut skipped = 0usize;
                let mut after: Option<ContactId> = None;
                let mut data = Vec::new();
                // Walk the keyset to the page: a database does this in one indexed scan.
                while data.len() < size as usize {
                    let want = if skipped < offset {
                        (offset - skipped).min(1000)
                    } else {
                        size as usize - data.len()
                    };
                    let q = MatchQuery {
                        after_id: after.clone(),
                        until_id: None,
                        audience_only: false,
                        limit: want,
                    };
                    let batch = self.store.contacts_matching(ws, condition, &q, now).await?;
                    let Some(last) = batch.last() else { break };
                    after = Some(last.id.clone());
                    let n = batch.len();
                    if skipped < offset {
                        skipped += n;
                    } else {
                        data.extend(batch);
                    }
                    if n < want {
                        break;
                    }
                }
                Ok(Page::new(data, page, size, total))
            }
            _ => {
                let total = self.store.segment_member_count(ws, &segment.id).await?;
                let data = self
                    .store
                    .segment_members(ws, &segment.id, offset, size as usize)
                    .await?;
                Ok(Page::new(data, page, size, total))
            }
        }
    }

    /// The segment `id`, which must be STATIC for its members to be `verb` by hand.
    async fn static_segment(&self, caller: &Caller, id: &SegmentId, verb: &str) -> Result<Segment> {
        let segment = self.segment_record(caller, id).await?;
        if segment.segment_type != SegmentType::Static {
            return Err(Error::InvalidState(format!(
                "members can only be {verb} STATIC segments; a DYNAMIC segment's members follow its condition"
            )));
        }
        Ok(segment)
    }

    /// `POST /segments/{id}/members {emails, createMissing?, subscribed?}` (STATIC only).
    pub async fn add_segment_members(
        &self,
        caller: &Caller,
        id: &SegmentId,
        members: SegmentMembers,
    ) -> Result<MembersAdded> {
        members.validate()?;
        let SegmentMembers {
            emails,
            create_missing,
            subscribed,
        } = members;
        let segment = self.static_segment(caller, id, "added to").await?;
        self.on_conflict_retry(|| async {
            let now = self.clock.now();
            let ws = &caller.workspace;
            let mut out = MembersAdded::default();
            let mut changes = ChangeSet::new();
            let mut room = super::contacts::ActiveRoom::default();
            for email in &emails {
                let contact = match self.store.contact_by_email(&ws.id, email.as_str()).await? {
                    Some(c) => c,
                    None if create_missing => {
                        let upsert = super::contacts::Upsert {
                            email: email.clone(),
                            subscribed: Some(subscribed),
                            data: None,
                            default_subscribed: subscribed,
                        };
                        out.created += 1;
                        super::contacts::plan_upsert(
                            self,
                            ws,
                            &upsert,
                            &mut room,
                            now,
                            &mut changes,
                        )
                        .await?
                        .contact
                    }
                    None => {
                        out.not_found.push(email.to_string());
                        continue;
                    }
                };
                out.added += 1;
                let members = self.store.memberships(&ws.id, &contact.id).await?;
                if !members.contains(&segment.id) {
                    changes.push(Write::AddSegmentMember {
                        workspace_id: ws.id.clone(),
                        segment_id: segment.id.clone(),
                        contact_id: contact.id.clone(),
                    });
                    if segment.track_membership {
                        changes.push(Write::AppendEvent(transition_event(
                            &*self.clock,
                            &segment,
                            &contact.id,
                            true,
                            now,
                        )));
                    }
                    push_reevaluation(&*self.clock, &mut changes, &ws.id, &contact.id, now);
                }
            }
            if !changes.is_empty() {
                self.commit(changes).await?;
            }
            Ok::<_, StepError>(out)
        })
        .await
    }

    /// `DELETE /segments/{id}/members {emails}` (STATIC only): `{removed}`.
    pub async fn remove_segment_members(
        &self,
        caller: &Caller,
        id: &SegmentId,
        members: SegmentMembers,
    ) -> Result<u64> {
        members.validate()?;
        let emails = members.emails;
        let segment = self.static_segment(caller, id, "removed from").await?;
        self.on_conflict_retry(|| async {
            let now = self.clock.now();
            let ws = caller.workspace_id();
            let mut removed = 0;
            let mut changes = ChangeSet::new();
            for email in &emails {
                let Some(contact) = self.store.contact_by_email(ws, email.as_str()).await? else {
                    continue;
                };
                if self
                    .store
                    .memberships(ws, &contact.id)
                    .await?
                    .contains(&segment.id)
                {
                    removed += 1;
                    changes.push(Write::RemoveSegmentMember {
                        workspace_id: ws.clone(),
                        segment_id: segment.id.clone(),
                        contact_id: contact.id.clone(),
                    });
                    if segment.track_membership {
                        changes.push(Write::AppendEvent(transition_event(
                            &*self.clock,
                            &segment,
                            &contact.id,
                            false,
                            now,
                        )));
                    }
                    push_reevaluation(&*self.clock, &mut changes, ws, &contact.id, now);
                }
            }
            if !changes.is_empty() {
                self.commit(changes).await?;
            }
            Ok::<_, StepError>(removed)
        })
        .await
    }
}

/// The validation error for a type that differs from the stored one.
pub fn immutable_type() -> Error {
    Error::field(
        "type",
        "immutable",
        "a segment's type cannot change; create a new segment",
    )
}
