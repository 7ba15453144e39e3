//! `POST /v1/send`: one email record and delivery job per recipient, all or nothing.

mod command;

pub use command::{
    attachment_bytes_problem, attachment_count_problem, header_count_problem, header_problem,
    header_value_problem, recipients_problem, Recipient, SendEmail, MAX_ATTACHMENTS,
    MAX_ATTACHMENT_BYTES, MAX_HEADERS, MAX_HEADER_VALUE_BYTES, MAX_NAME_CHARS, MAX_RECIPIENTS,
    MAX_SUBJECT_CHARS, RESERVED_HEADERS,
};

use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

use super::commit::ReadAhead;
use super::contacts::{plan_upsert, plan_upsert_reading, ActiveRoom, Upsert};
use super::idempotency::Keyed;
use super::{Caller, StepError};
use crate::error::{Error, Resource, Result};
use crate::model::{
    Contact, ContactId, EmailAddress, EmailId, EmailRecord, EmailStatus, SourceType, Template,
    TemplateType, Workspace, WorkspaceId,
};
use crate::ports::{ChangeSet, Clock, JobPayload, Mailbox, NewJob, Write};
use crate::render::{render, Escape};
use crate::tracking::Tracker;
use crate::Engine;

/// One accepted recipient: its contact and its email record.
#[derive(Debug, Clone)]
pub struct SentTo {
    /// Contact id.
    pub contact_id: ContactId,
    /// Recipient address.
    pub email: EmailAddress,
    /// Email record id (the `emailId` of later events).
    pub email_id: EmailId,
}

/// The answer of `/v1/send`.
#[derive(Debug, Clone)]
pub struct Accepted {
    /// One entry per distinct recipient, in request order.
    pub emails: Vec<SentTo>,
    /// When the request was accepted.
    pub at: DateTime<Utc>,
}

/// Subject, body, sender and reply-to after applying a template and the request's overrides.
struct Resolved {
    from: EmailAddress,
    from_name: Option<String>,
    reply_to: Option<String>,
    subject: String,
    body: String,
    text: Option<String>,
    template: Option<Template>,
}

impl Engine {
    /// Validates and accepts a send: contacts, email records and delivery jobs in one commit.
    pub async fn send(&self, caller: &Caller, req: SendEmail) -> Result<Accepted> {
        self.send_keyed(caller, req, None).await
    }

    /// [`Engine::send`] that, given a key, commits the key's record (the answer `keyed`
    /// renders from the result) in the same change set as the emails and their jobs.
    pub async fn send_keyed(
        &self,
        caller: &Caller,
        req: SendEmail,
        keyed: Option<Keyed<'_, Accepted>>,
    ) -> Result<Accepted> {
        req.validate()?;
        let ws = &caller.workspace;
        let template = match &req.template {
            Some(id) => Some(
                self.store
                    .template(&ws.id, id)
                    .await?
                    .ok_or(Error::NotFound(Resource::Template))?,
            ),
            None => None,
        };
        let resolved = resolve(&req, template)?;
        self.check_sender(caller, &resolved.from).await?;
        self.on_conflict_retry(|| self.accept_send(ws, &req, &resolved, keyed.as_ref()))
            .await
    }

    /// Refuses senders outside the workspace's verified domains or the key's scope.
    pub async fn check_sender(&self, caller: &Caller, from: &EmailAddress) -> Result<()> {
        let domain = from.domain();
        if !self.sender_verified(caller.workspace_id(), from).await? {
            return Err(Error::DomainNotVerified(format!(
                "The sender domain {domain} is not a verified domain of this workspace"
            )));
        }
        if !caller.key.may_send_from(domain) {
            return Err(Error::Forbidden(format!(
                "This API key may not send from {domain}; its key set is limited to: {}",
                caller.key.key_set.domains.join(", ")
            )));
        }
        Ok(())
    }

    /// Whether `from` is on a verified domain of the workspace.
    pub(crate) async fn sender_verified(
        &self,
        workspace_id: &WorkspaceId,
        from: &EmailAddress,
    ) -> Result<bool> {
        let domain = from.domain();
        Ok(self
            .store
            .domains(workspace_id)
            .await?
            .iter()
            .any(|d| d.verified && d.name_is(domain)))
    }

    async fn accept_send(
        &self,
        ws: &Workspace,
        req: &SendEmail,
        resolved: &Resolved,
        keyed: Option<&Keyed<'_, Accepted>>,
    ) -> Result<Accepted, StepError> {
        let now = self.clock.now();
        let mut changes = ChangeSet::new();
        let mut room = ActiveRoom::default();
        let mut emails = Vec::with_capacity(req.to.len());
        let mut unsubscribed = Vec::new();
        let marketing = resolved
            .template
            .as_ref()
            .is_some_and(|t| t.template_type == TemplateType::Marketing);
        let track = req.tracking != Some(false);
        let tracker = self
            .tracker(track && ws.track_opens, track && ws.track_clicks)
            .await?;
        // The workspace's tracked segments, read with the first recipient's contact (one
        // round trip where the store can), for the commit's membership work; the other
        // recipients read their contacts alone.
        let mut tracked_segments = None;
        for recipient in &req.to {
            let upsert = Upsert {
                email: recipient.email.clone(),
                subscribed: req.subscribed,
                data: None,
                default_subscribed: false,
            };
            let done = if tracked_segments.is_none() {
                let (done, along) =
                    plan_upsert_reading(self, ws, &upsert, None, &mut room, now, &mut changes)
                        .await?;
                tracked_segments = Some(along.tracked_segments);
                done
            } else {
                plan_upsert(self, ws, &upsert, &mut room, now, &mut changes).await?
            };
            if marketing && !done.contact.subscribed {
                unsubscribed.push(recipient.email.to_string());
                continue;
            }
            let links = Links {
                tracker: &tracker,
                marketing,
            };
            // Mail to an address that bounced for good or complained is accepted and kept
            // (CANCELLED, with the reason) but not delivered; only an existing contact can be.
            let suppressed = if done.is_new {
                None
            } else {
                self.suppression(&ws.id, &done.contact).await?
            };
            let ctx = render_context(&req.data, &done.contact);
            let mut record = build_record(
                &*self.clock,
                ws,
                req,
                resolved,
                (recipient, &done.contact),
                &ctx,
                &links,
                now,
            )?;
            emails.push(SentTo {
                contact_id: done.contact.id.clone(),
                email: recipient.email.clone(),
                email_id: record.id.clone(),
            });
            match suppressed {
                Some(why) => {
                    record.status = EmailStatus::Cancelled;
                    record.error = Some(why.reason().to_owned());
                }
                None => {
                    changes.push(Write::EnqueueJob(NewJob::at(
                        &*self.clock,
                        JobPayload::DeliverEmail {
                            workspace_id: ws.id.clone(),
                            email_id: record.id.clone(),
                        },
                        now,
                    )));
                }
            }
            changes.push(Write::InsertEmail(record));
        }
        if !unsubscribed.is_empty() {
            return Err(StepError::Domain(Error::BadRequest(format!(
                "The template is MARKETING and these recipients are unsubscribed: {}. \
                 Use a TRANSACTIONAL template or resubscribe them.",
                unsubscribed.join(", ")
            ))));
        }
        let accepted = Accepted { emails, at: now };
        if let Some(keyed) = keyed {
            changes.push(Write::PutIdempotency(keyed.record(self, &accepted)));
        }
        let ahead = tracked_segments.as_deref().map(|tracked| ReadAhead {
            workspace_id: &ws.id,
            tracked_segments: tracked,
            event: None,
            event_interest: false,
        });
        self.commit_read_ahead(changes, ahead).await?;
        Ok(accepted)
    }
}

fn resolve(req: &SendEmail, template: Option<Template>) -> Result<Resolved> {
    let t = template.as_ref();
    let (from, mut from_name) = match (&req.from, t.and_then(|t| t.from.as_deref())) {
        (Some((email, name)), _) => (email.clone(), name.clone()),
        (None, Some(raw)) => {
            let email = EmailAddress::parse(raw).map_err(|e| {
                Error::field(
                    "from",
                    "invalid_email",
                    format!("template from address: {e}"),
                )
            })?;
            (email, t.and_then(|t| t.from_name.clone()))
        }
        (None, None) => {
            return Err(Error::field(
                "from",
                "required",
                "from is required unless the template has a from address",
            ))
        }
    };
    if req.name.is_some() {
        from_name = req.name.clone();
    }
    let subject = req
        .subject
        .clone()
        .or_else(|| t.map(|t| t.subject.clone()))
        .unwrap_or_default();
    let body = req
        .body
        .clone()
        .or_else(|| t.map(|t| t.body.clone()))
        .unwrap_or_default();
    let text = match &req.text {
        Some(text) => Some(text.clone()),
        None if req.body.is_none() => t.and_then(|t| t.text.clone()),
        None => None,
    };
    let reply_to = req
        .reply
        .as_ref()
        .map(|r| r.to_string())
        .or_else(|| t.and_then(|t| t.reply_to.clone()));
    Ok(Resolved {
        from,
        from_name,
        reply_to,
        subject,
        body,
        text,
        template,
    })
}

/// The variables a message is rendered with: the request's `data` at the top level and
/// under `data`, plus `contact` and `email`.
pub fn render_context(data: &Map<String, Value>, contact: &Contact) -> Value {
    let mut ctx = data.clone();
    ctx.insert("data".into(), Value::Object(data.clone()));
    ctx.insert(
        "contact".into(),
        json!({
            "id": contact.id,
            "email": contact.email,
            "subscribed": contact.subscribed,
            "data": contact.data,
        }),
    );
    ctx.entry("email").or_insert_with(|| json!(contact.email));
    Value::Object(ctx)
}

/// How the links of a send's emails are built.
struct Links<'a> {
    tracker: &'a Tracker,
    /// Marketing mail carries the unsubscribe headers and footer.
    marketing: bool,
}

/// A workflow step's email: `template` rendered with the step's variables `ctx` for
/// `contact` at `to`, as `/v1/send` would build it, with source type WORKFLOW. The sender is
/// the template's and must be on a verified domain of the workspace.
pub(crate) async fn workflow_email(
    engine: &Engine,
    ws: &Workspace,
    template: Template,
    contact: &Contact,
    to: EmailAddress,
    ctx: &Value,
    now: DateTime<Utc>,
) -> Result<EmailRecord> {
    let recipient = Recipient::new(to.clone());
    let tracker = engine.tracker(ws.track_opens, ws.track_clicks).await?;
    let links = Links {
        tracker: &tracker,
        marketing: template.template_type == TemplateType::Marketing,
    };
    let mut req = SendEmail::to(to);
    req.template = Some(template.id.clone());
    let resolved = resolve(&req, Some(template))?;
    if !engine.sender_verified(&ws.id, &resolved.from).await? {
        return Err(Error::DomainNotVerified(format!(
            "The sender domain {} is not a verified domain of this workspace",
            resolved.from.domain()
        )));
    }
    let mut record = build_record(
        &*engine.clock,
        ws,
        &req,
        &resolved,
        (&recipient, contact),
        ctx,
        &links,
        now,
    )?;
    record.source_type = SourceType::Workflow;
    Ok(record)
}

// The id comes from the clock and the context is the send's or a workflow step's variables.
#[allow(clippy::too_many_arguments)]
fn build_record(
    clock: &dyn Clock,
    ws: &Workspace,
    req: &SendEmail,
    resolved: &Resolved,
    (recipient, contact): (&Recipient, &Contact),
    ctx: &Value,
    links: &Links<'_>,
    now: DateTime<Utc>,
) -> Result<EmailRecord> {
    let id = EmailId::generate(clock);
    let unsubscribe_url = links.tracker.unsubscribe_url(&ws.id, &contact.id, &id);
    let mut ctx = ctx.clone();
    if let Value::Object(map) = &mut ctx {
        map.insert("unsubscribeUrl".into(), json!(unsubscribe_url));
    }
    let ctx = &ctx;
    let rendered = |field: &str, source: &str, escape: Escape| {
        render(source, ctx, escape)
            .map_err(|e| Error::field(field, "invalid_template", e.to_string()))
    };
    let (subject, html, text) = if req.verbatim {
        (
            resolved.subject.clone(),
            resolved.body.clone(),
            resolved.text.clone(),
        )
    } else {
        let subject = rendered("subject", &resolved.subject, Escape::None)?;
        let html = rendered("body", &resolved.body, Escape::Html)?;
        // No text given: delivery derives it from the HTML (see `EmailRecord::text`).
        let text = match resolved.text.as_deref() {
            Some("") => Some(String::new()),
            Some(source) => Some(rendered("text", source, Escape::None)?),
            None => None,
        };
        (subject, html, text)
    };
    if subject.chars().any(|c| c.is_control() && c != '\t') {
        return Err(Error::field(
            "subject",
            "invalid_characters",
            "the rendered subject contains a line break",
        ));
    }
    let mut record = EmailRecord {
        message_id: format!("{id}@{}", resolved.from.domain()),
        id,
        workspace_id: ws.id.clone(),
        contact_id: contact.id.clone(),
        to: Mailbox {
            name: recipient.name.clone(),
            email: recipient.email.to_string(),
        },
        from: Mailbox {
            name: resolved.from_name.clone(),
            email: resolved.from.to_string(),
        },
        reply_to: resolved.reply_to.clone(),
        subject,
        html,
        text,
        headers: req.headers.clone(),
        attachments: req.attachments.clone(),
        template_id: resolved.template.as_ref().map(|t| t.id.clone()),
        campaign_id: None,
        source_type: SourceType::Transactional,
        status: EmailStatus::Queued,
        provider_message_id: None,
        error: None,
        created_at: now,
        sent_at: None,
        updated_at: now,
        lifecycle: Default::default(),
    };
    let unsubscribe = links.marketing.then_some(unsubscribe_url.as_str());
    links.tracker.decorate(&mut record, unsubscribe);
    Ok(record)
}
