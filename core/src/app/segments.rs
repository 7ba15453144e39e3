//! Segments: create, read, list, update, delete, members, and their member counts.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{on_conflict_retry, Caller, StepError};
use crate::error::{Error, FieldError, Resource, Result};
use crate::model::{new_id, CampaignStatus, Contact, EmailAddress, Segment, SegmentType};
use crate::ports::{ChangeSet, JobPayload, MatchQuery, NewJob, Write};
use crate::segment::{parse_condition, referenced_segments, Condition};
use crate::validate::{type_name, Checker};
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

/// Reads `page` (>= 1, default 1) and the page size (see [`Checker::page_size`]).
pub fn page_params(c: &mut Checker, query: &HashMap<String, String>) -> (u64, u64) {
    let page = c.query_int(query, "page", 1, 1_000_000, 1) as u64;
    (page, c.page_size(query))
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
        workspace_id: &str,
        condition: &Condition,
        self_id: Option<&str>,
        field: &str,
    ) -> Result<()> {
        let mut errors = Vec::new();
        let mut queue: Vec<String> = referenced_segments(condition);
        let mut seen = HashSet::new();
        let direct: HashSet<String> = queue.iter().cloned().collect();
        while let Some(id) = queue.pop() {
            if !seen.insert(id.clone()) {
                continue;
            }
            if Some(id.as_str()) == self_id {
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
    pub async fn create_segment(&self, caller: &Caller, body: &Value) -> Result<SegmentView> {
        let obj = Checker::body(body)?;
        let mut c = Checker::new();
        let name = c.line(obj, "name", "", true, 255).map(str::to_string);
        let description = c
            .line(obj, "description", "", false, 2000)
            .map(str::to_string);
        let track = c
            .boolean(obj, "trackMembership", "", false)
            .unwrap_or(false);
        let segment_type = match c.string(obj, "type", "", false) {
            None => SegmentType::Dynamic,
            Some(raw) => SegmentType::parse(raw).unwrap_or_else(|| {
                c.fail("type", "invalid_enum", "type must be DYNAMIC or STATIC");
                SegmentType::Dynamic
            }),
        };
        let condition = read_condition(&mut c, obj, segment_type == SegmentType::Dynamic);
        c.finish()?;
        let ws = caller.workspace_id();
        let id = new_id();
        if let Some(condition) = &condition {
            self.check_references(ws, condition, Some(&id), "condition")
                .await?;
        }
        let now = self.clock.now();
        let segment = Segment {
            id,
            workspace_id: ws.to_string(),
            name: name.unwrap_or_default(),
            description,
            segment_type,
            condition,
            track_membership: track,
            created_at: now,
            updated_at: now,
        };
        let mut changes = ChangeSet::new();
        changes.push(Write::PutSegment(segment.clone()));
        if segment.segment_type == SegmentType::Dynamic && track {
            // Take the first snapshot of members quietly: entries are announced from now on.
            changes.push(Write::EnqueueJob(NewJob::at(
                sync_job(&segment, false),
                now,
            )));
        }
        self.store.commit(changes).await?;
        self.view(segment).await
    }

    /// `GET /segments/{id}` (the record, without counting).
    pub async fn segment_record(&self, caller: &Caller, id: &str) -> Result<Segment> {
        self.store
            .segment(caller.workspace_id(), id)
            .await?
            .ok_or(Error::NotFound(Resource::Segment))
    }

    /// `GET /segments/{id}`.
    pub async fn segment(&self, caller: &Caller, id: &str) -> Result<SegmentView> {
        let segment = self.segment_record(caller, id).await?;
        self.view(segment).await
    }

    /// `GET /segments`: page style.
    pub async fn list_segments(
        &self,
        caller: &Caller,
        query: &HashMap<String, String>,
    ) -> Result<Page<SegmentView>> {
        let mut c = Checker::new();
        let (page, size) = page_params(&mut c, query);
        c.finish()?;
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
        id: &str,
        body: &Value,
    ) -> Result<SegmentView> {
        let mut segment = self.segment_record(caller, id).await?;
        let obj = Checker::body(body)?;
        let mut c = Checker::new();
        let name = c.line(obj, "name", "", false, 255).map(str::to_string);
        let description = c.nullable_line(obj, "description", 2000);
        let track = c.boolean(obj, "trackMembership", "", false);
        if let Some(raw) = c.string(obj, "type", "", false) {
            if SegmentType::parse(raw) != Some(segment.segment_type) {
                c.fail(
                    "type",
                    "immutable",
                    "a segment's type cannot change; create a new segment",
                );
            }
        }
        let condition = if obj.get("condition").is_some_and(|v| !v.is_null()) {
            read_condition(&mut c, obj, true)
        } else {
            None
        };
        c.finish()?;
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
        if let Some(v) = description {
            segment.description = v;
        }
        if let Some(v) = track {
            segment.track_membership = v;
        }
        if let Some(v) = condition {
            segment.condition = Some(v);
        }
        let now = self.clock.now();
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
        let mut offset = 0;
        loop {
            let (page, _) = self.store.segments(ws, offset, 100).await?;
            if let Some(s) = page.iter().find(|s| names(&s.condition)) {
                return Ok(Some(format!("segment {} ({})", s.id, s.name)));
            }
            if page.len() < 100 {
                break;
            }
            offset += 100;
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

    /// `DELETE /segments/{id}`: 409 while a scheduled or sending campaign uses it.
    pub async fn delete_segment(&self, caller: &Caller, id: &str) -> Result<()> {
        let segment = self.segment_record(caller, id).await?;
        for status in [CampaignStatus::Scheduled, CampaignStatus::Sending] {
            let mut offset = 0;
            loop {
                let (page, _) = self
                    .store
                    .campaigns(&segment.workspace_id, Some(status), offset, 100)
                    .await?;
                // Its audience is the segment, or a condition that names it.
                let uses = |c: &&crate::model::Campaign| {
                    c.segment_id.as_deref() == Some(id)
                        || c.audience_condition
                            .as_ref()
                            .is_some_and(|cond| referenced_segments(cond).iter().any(|r| r == id))
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
        id: &str,
        query: &HashMap<String, String>,
    ) -> Result<Page<Contact>> {
        let mut c = Checker::new();
        let (page, size) = page_params(&mut c, query);
        c.finish()?;
        let segment = self.segment_record(caller, id).await?;
        let ws = &segment.workspace_id;
        let offset = ((page - 1) * size) as usize;
        match (&segment.segment_type, &segment.condition) {
            (SegmentType::Dynamic, Some(condition)) => {
                let now = self.clock.now();
                let total = self.store.count_matching(ws, condition, false, now).await?;
                let mut skipped = 0usize;
                let mut after: Option<String> = None;
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
    async fn static_segment(&self, caller: &Caller, id: &str, verb: &str) -> Result<Segment> {
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
        id: &str,
        body: &Value,
    ) -> Result<MembersAdded> {
        let (emails, create_missing, subscribed) = read_member_emails(body, true)?;
        let segment = self.static_segment(caller, id, "added to").await?;
        on_conflict_retry(|| async {
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
                        changes.push(Write::AppendEvent(super::membership::transition_event(
                            &segment,
                            &contact.id,
                            true,
                            now,
                        )));
                    }
                    push_reevaluation(&mut changes, &ws.id, &contact.id, now);
                }
            }
            if !changes.is_empty() {
                self.store.commit(changes).await?;
            }
            Ok::<_, StepError>(out)
        })
        .await
    }

    /// `DELETE /segments/{id}/members {emails}` (STATIC only): `{removed}`.
    pub async fn remove_segment_members(
        &self,
        caller: &Caller,
        id: &str,
        body: &Value,
    ) -> Result<u64> {
        let (emails, _, _) = read_member_emails(body, false)?;
        let segment = self.static_segment(caller, id, "removed from").await?;
        on_conflict_retry(|| async {
            let now = self.clock.now();
            let ws = &caller.workspace_id();
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
                        workspace_id: ws.to_string(),
                        segment_id: segment.id.clone(),
                        contact_id: contact.id.clone(),
                    });
                    if segment.track_membership {
                        changes.push(Write::AppendEvent(super::membership::transition_event(
                            &segment,
                            &contact.id,
                            false,
                            now,
                        )));
                    }
                    push_reevaluation(&mut changes, ws, &contact.id, now);
                }
            }
            if !changes.is_empty() {
                self.store.commit(changes).await?;
            }
            Ok::<_, StepError>(removed)
        })
        .await
    }
}

/// The job that rebuilds a DYNAMIC segment's stored members.
pub fn sync_job(segment: &Segment, announce: bool) -> JobPayload {
    JobPayload::SyncSegment {
        workspace_id: segment.workspace_id.clone(),
        segment_id: segment.id.clone(),
        announce,
    }
}

/// Queues a re-evaluation of the contact against tracked segments (its memberships or
/// data changed, which other segments' conditions may read).
pub fn push_reevaluation(
    changes: &mut ChangeSet,
    workspace_id: &str,
    contact_id: &str,
    now: chrono::DateTime<chrono::Utc>,
) {
    changes.push(Write::EnqueueJob(NewJob::at(
        JobPayload::ReevaluateContact {
            workspace_id: workspace_id.to_string(),
            contact_id: contact_id.to_string(),
        },
        now,
    )));
}

fn read_condition(
    c: &mut Checker,
    obj: &serde_json::Map<String, Value>,
    required: bool,
) -> Option<Condition> {
    let value = c.value(obj, "condition", "", required)?;
    match parse_condition(value, "condition") {
        Ok(condition) => Some(condition),
        Err(errors) => {
            for e in errors {
                c.fail(e.field, &e.code, e.message);
            }
            None
        }
    }
}

fn read_member_emails(body: &Value, adding: bool) -> Result<(Vec<EmailAddress>, bool, bool)> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let mut emails = Vec::new();
    match c.value(obj, "emails", "", true) {
        Some(Value::Array(items)) => {
            if items.is_empty() || items.len() > MAX_MEMBER_EMAILS {
                c.fail(
                    "emails",
                    "out_of_range",
                    format!(
                        "emails must list 1 to {MAX_MEMBER_EMAILS} addresses, got {}",
                        items.len()
                    ),
                );
            } else {
                for (i, item) in items.iter().enumerate() {
                    match item.as_str() {
                        Some(raw) => {
                            if let Some(e) = c.parse_email(raw, &format!("emails.{i}")) {
                                if !emails.contains(&e) {
                                    emails.push(e);
                                }
                            }
                        }
                        None => c.fail(
                            format!("emails.{i}"),
                            "invalid_type",
                            format!("must be a string, got {}", type_name(item)),
                        ),
                    }
                }
            }
        }
        Some(other) => c.fail(
            "emails",
            "invalid_type",
            format!("emails must be an array, got {}", type_name(other)),
        ),
        None => {}
    }
    let (create_missing, subscribed) = if adding {
        (
            c.boolean(obj, "createMissing", "", false).unwrap_or(false),
            c.boolean(obj, "subscribed", "", false).unwrap_or(true),
        )
    } else {
        (false, true)
    };
    c.finish()?;
    Ok((emails, create_missing, subscribed))
}
