//! Mail intake: which recipients the MX accepts, and taking a received message in durably.
//!
//! `receive_inbound` only checks, rate-limits and commits the raw message with a
//! `ProcessInboundEmail` job, so a listener can answer 250 quickly; the job judges the
//! message and emits `email.received` (see `jobs::inbound`).

mod parse;
mod settings;

pub use parse::{summarize, MessageSummary};
pub use settings::InboundSettings;

use std::collections::BTreeMap;
use std::net::IpAddr;

use crate::app::Caller;
use crate::error::{Error, FieldError, Result};
use crate::model::{EmailAddress, EmailId, InboundEmail, ProviderVerdicts, WorkspaceId};
use crate::ports::{ChangeSet, JobPayload, NewJob, Quota, Write};
use crate::Engine;

/// A message as received from an MTA (MX listener, `/inbound/raw`, SES).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundMessage {
    /// The envelope sender (`MAIL FROM`); `None` for the null sender `<>`.
    pub envelope_from: Option<String>,
    /// The envelope recipients (`RCPT TO`).
    pub recipients: Vec<String>,
    /// The message as received (RFC 5322).
    pub raw: Vec<u8>,
    /// The address of the client that handed the message over, when known.
    pub client_ip: Option<IpAddr>,
    /// The name the client gave in HELO/EHLO, when known.
    pub helo: Option<String>,
    /// Verdicts a provider that received the message already gave (SES); empty otherwise.
    pub provider_verdicts: ProviderVerdicts,
}

/// Whether the MX takes mail for one recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecipientCheck {
    /// Take it (SMTP 250).
    Accept,
    /// Refuse it for good (SMTP 550), for the reason given.
    Refuse {
        /// Why, for the sending server's log.
        reason: String,
    },
}

/// The records a received message became: one per receiving workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundReceipt {
    /// One entry per workspace that received the message.
    pub accepted: Vec<AcceptedInbound>,
    /// Envelope recipients that no workspace receives mail for (left out).
    pub refused: Vec<String>,
    /// Recipients the message was taken for as a bounce or complaint report (a bounce
    /// address, or a `multipart/report` recorded as one): no `email.received` for them.
    pub reports: Vec<String>,
}

/// One received message as stored for one workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptedInbound {
    /// The inbound email record (the `emailId` of its events).
    pub id: EmailId,
    /// The receiving workspace.
    pub workspace_id: WorkspaceId,
    /// The envelope recipients it was received for.
    pub recipients: Vec<String>,
}

/// Why one recipient is not received.
pub(crate) enum Unroutable {
    /// Not an address at all.
    Invalid,
    /// No verified, inbound-enabled domain of that name (or its workspace is disabled).
    NoDomain,
}

impl Engine {
    /// Whether the MX accepts RCPT TO `address`: a bounce address of this deployment, or
    /// an address at a verified domain with `inboundEnabled` in an enabled workspace.
    pub async fn check_inbound_recipient(&self, address: &str) -> Result<RecipientCheck> {
        if self.is_bounce_address(address) {
            return Ok(RecipientCheck::Accept);
        }
        Ok(match self.route_recipient(address).await? {
            Ok(_) => RecipientCheck::Accept,
            Err(Unroutable::Invalid) => RecipientCheck::Refuse {
                reason: format!("'{address}' is not a valid address"),
            },
            Err(Unroutable::NoDomain) => RecipientCheck::Refuse {
                reason: format!("this server does not receive mail for '{address}'"),
            },
        })
    }

    /// Accepts a message: durable once this returns `Ok` (the caller answers 250/2xx only
    /// then). Recipients no workspace receives mail for are left out (listed in
    /// `refused`); with none left the message is refused with a validation error.
    ///
    /// Bounce and complaint reports do not become `email.received`: a message for a
    /// bounce address is handed to [`Engine::receive_bounce_message`] for that recipient,
    /// and a `multipart/report` is offered to it first (recorded there, it goes no
    /// further). Reports, having the null sender, are limited per client address.
    ///
    /// Refusals: `Validation` (too large, too many recipients, no receivable recipient),
    /// `RateLimited` (the sender or a workspace sent too much: retry later),
    /// `Unavailable` (the store: retry later).
    pub async fn receive_inbound(&self, message: InboundMessage) -> Result<InboundReceipt> {
        self.take_in(message, true, Vec::new()).await
    }

    /// Takes in a message a trusted provider already accepted for Posthorn's domains (SES
    /// through SNS): like [`Engine::receive_inbound`] without the per-sender and
    /// per-workspace budgets (the provider limits its senders, and a refusal here would
    /// only make it redeliver until it gives up), and with `with` committed in the same
    /// transaction as the received records (the record that the provider's notification
    /// was handled). When nothing is stored (only reports), `with` is not committed.
    pub(crate) async fn receive_provider_inbound(
        &self,
        message: InboundMessage,
        with: Vec<Write>,
    ) -> Result<InboundReceipt> {
        self.take_in(message, false, with).await
    }

    /// [`Engine::receive_inbound`], with the budgets taken only when `limited`.
    async fn take_in(
        &self,
        message: InboundMessage,
        limited: bool,
        with: Vec<Write>,
    ) -> Result<InboundReceipt> {
        self.check_limits(&message)?;
        let (bounce_rcpts, others): (Vec<&String>, Vec<&String>) = message
            .recipients
            .iter()
            .partition(|r| self.is_bounce_address(r));
        let mut reports = Vec::new();
        if limited && (!bounce_rcpts.is_empty() || (!others.is_empty() && is_report(&message.raw)))
        {
            self.take_sender_budget(&message).await?;
        }
        for recipient in bounce_rcpts {
            // A message for a bounce address that is no report (an auto-reply) is dropped.
            self.receive_bounce_message(recipient, &message.raw).await?;
            reports.push(recipient.clone());
        }
        if let Some(first) = others.first() {
            if is_report(&message.raw) && self.receive_bounce_message(first, &message.raw).await? {
                reports.extend(others.iter().map(|r| (*r).clone()));
                return Ok(InboundReceipt {
                    accepted: Vec::new(),
                    refused: Vec::new(),
                    reports,
                });
            }
        }
        let mut routed: BTreeMap<WorkspaceId, Vec<String>> = BTreeMap::new();
        let mut refused = Vec::new();
        for recipient in others {
            match self.route_recipient(recipient).await? {
                Ok((workspace_id, address)) => {
                    let list = routed.entry(workspace_id).or_default();
                    if !list.contains(&address) {
                        list.push(address);
                    }
                }
                Err(_) => refused.push(recipient.clone()),
            }
        }
        if routed.is_empty() {
            if !reports.is_empty() {
                return Ok(InboundReceipt {
                    accepted: Vec::new(),
                    refused,
                    reports,
                });
            }
            return Err(Error::field(
                "to",
                "not_inbound_domain",
                "no recipient is at a verified domain with inbound mail enabled",
            ));
        }
        if limited {
            if reports.is_empty() {
                self.take_sender_budget(&message).await?;
            }
            for ws in routed.keys() {
                self.take_one(
                    &format!("inbound:workspace:{ws}"),
                    self.settings.inbound.per_workspace,
                    "this workspace",
                )
                .await?;
            }
        }
        let mut receipt = self.store_inbound(message, routed, refused, with).await?;
        receipt.reports = reports;
        Ok(receipt)
    }

    /// `POST /inbound/raw`: like [`Engine::receive_inbound`], but every recipient must be
    /// at an inbound domain of the caller's workspace (each other one is a field error
    /// `to.<n>`), and the envelope sender, when given, must be an address (`from`).
    pub async fn receive_inbound_for(
        &self,
        caller: &Caller,
        message: InboundMessage,
    ) -> Result<InboundReceipt> {
        let mut errors = Vec::new();
        if let Some(from) = &message.envelope_from {
            if EmailAddress::parse(from).is_err() {
                errors.push(FieldError::new(
                    "from",
                    "invalid_email",
                    format!("'{from}' is not a valid email address"),
                ));
            }
        }
        if message.recipients.is_empty() {
            errors.push(FieldError::new(
                "to",
                "required",
                "give at least one envelope recipient",
            ));
        }
        for (i, recipient) in message.recipients.iter().enumerate() {
            // A bounce address (its token is checked when the report is read) belongs to no
            // workspace: relaying bounces over HTTP is how a deployment without an MX
            // collects them, as the MX does for anyone.
            if self.is_bounce_address(recipient) {
                continue;
            }
            let problem = match self.route_recipient(recipient).await? {
                Ok((ws, _)) if &ws == caller.workspace_id() => continue,
                Err(Unroutable::Invalid) => ("invalid_email", "is not a valid email address"),
                _ => (
                    "not_inbound_domain",
                    "is not at a verified domain of this workspace with inbound mail enabled",
                ),
            };
            errors.push(FieldError::new(
                format!("to.{i}"),
                problem.0,
                format!("'{recipient}' {}", problem.1),
            ));
        }
        if !errors.is_empty() {
            return Err(Error::Validation(errors));
        }
        self.receive_inbound(message).await
    }

    /// Size and recipient-count limits.
    fn check_limits(&self, message: &InboundMessage) -> Result<()> {
        let limits = &self.settings.inbound;
        if message.raw.len() > limits.max_message_bytes {
            return Err(Error::field(
                "message",
                "too_large",
                format!(
                    "the message has {} bytes; the limit is {}",
                    message.raw.len(),
                    limits.max_message_bytes
                ),
            ));
        }
        if message.recipients.len() > limits.max_recipients {
            return Err(Error::field(
                "to",
                "too_many",
                format!("at most {} recipients per message", limits.max_recipients),
            ));
        }
        check_shape(&message.raw)
    }

    /// The workspace receiving mail for `address`, and the address lower-cased.
    pub(crate) async fn route_recipient(
        &self,
        address: &str,
    ) -> Result<std::result::Result<(WorkspaceId, String), Unroutable>> {
        let Ok(parsed) = EmailAddress::parse(address) else {
            return Ok(Err(Unroutable::Invalid));
        };
        let Some(domain) = self.store.inbound_domain(parsed.domain()).await? else {
            return Ok(Err(Unroutable::NoDomain));
        };
        if !domain.verified {
            return Ok(Err(Unroutable::NoDomain));
        }
        match self.store.workspace(&domain.workspace_id).await? {
            Some(ws) if !ws.disabled => Ok(Ok((ws.id, parsed.as_str().to_owned()))),
            _ => Ok(Err(Unroutable::NoDomain)),
        }
    }

    /// Takes one message from the sender's budget: the envelope sender's, or for the
    /// null sender `<>` (bounces) the client address's; with neither known (a relayed
    /// bounce) only the workspace budget applies.
    async fn take_sender_budget(&self, message: &InboundMessage) -> Result<()> {
        let sender = match (&message.envelope_from, message.client_ip) {
            (Some(from), _) if !from.trim().is_empty() => from.trim().to_lowercase(),
            (_, Some(ip)) => format!("<>@{ip}"),
            _ => return Ok(()),
        };
        self.take_one(
            &format!("inbound:sender:{sender}"),
            self.settings.inbound.per_sender,
            "this sender",
        )
        .await
    }

    async fn take_one(&self, key: &str, quota: Quota, whose: &str) -> Result<()> {
        let now = self.clock.now();
        let decision = self.rate_limiter.take(key, 1, quota, now).await?;
        if decision.allowed {
            return Ok(());
        }
        let wait = (decision.reset_at - now).num_seconds().max(1);
        Err(Error::RateLimited {
            message: format!(
                "too much mail from {whose}: at most {} messages per {} s",
                quota.limit,
                quota.window.as_secs()
            ),
            retry_after_secs: u64::try_from(wait).unwrap_or(1),
        })
    }

    /// Commits one record and one processing job per receiving workspace, in one change set.
    async fn store_inbound(
        &self,
        message: InboundMessage,
        routed: BTreeMap<WorkspaceId, Vec<String>>,
        refused: Vec<String>,
        with: Vec<Write>,
    ) -> Result<InboundReceipt> {
        let now = self.clock.now();
        let envelope_from = message
            .envelope_from
            .map(|f| f.trim().to_lowercase())
            .filter(|f| !f.is_empty());
        let mut changes = ChangeSet::new();
        let mut accepted = Vec::with_capacity(routed.len());
        for (workspace_id, recipients) in routed {
            let id = EmailId::generate(&*self.clock);
            changes.push(Write::InsertInboundEmail(InboundEmail {
                id: id.clone(),
                workspace_id: workspace_id.clone(),
                envelope_from: envelope_from.clone(),
                recipients: recipients.clone(),
                client_ip: message.client_ip,
                helo: message.helo.clone(),
                raw: Some(message.raw.clone()),
                received_at: now,
                processed_at: None,
                provider_verdicts: message.provider_verdicts,
            }));
            changes.push(Write::EnqueueJob(NewJob::at(
                &*self.clock,
                JobPayload::ProcessInboundEmail {
                    workspace_id: workspace_id.clone(),
                    email_id: id.clone(),
                },
                now,
            )));
            accepted.push(AcceptedInbound {
                id,
                workspace_id,
                recipients,
            });
        }
        for write in with {
            changes.push(write);
        }
        self.store.commit(changes).await?;
        Ok(InboundReceipt {
            accepted,
            refused,
            reports: Vec::new(),
        })
    }
}

/// Most bytes of a message's header section (Exim's limit; Postfix keeps 100 KB).
pub const MAX_HEADER_BYTES: usize = 1024 * 1024;

/// Most MIME boundary lines (`--…` at the start of a line) in a message: far more parts
/// than real mail has, few enough that reading the message stays a few MB of memory.
pub const MAX_BOUNDARY_LINES: usize = 10_000;

/// Refuses a message whose shape would make reading it cost far more memory than its size:
/// a header section past [`MAX_HEADER_BYTES`] (millions of tiny header lines took 60 times
/// the message's size to parse) or more than [`MAX_BOUNDARY_LINES`] MIME part boundaries.
pub fn check_shape(raw: &[u8]) -> Result<()> {
    if header_section(raw).len() > MAX_HEADER_BYTES {
        return Err(Error::field(
            "message",
            "header_too_large",
            format!("the message's header section is over {MAX_HEADER_BYTES} bytes"),
        ));
    }
    let boundaries = memchr::memmem::find_iter(raw, b"\n--").count();
    if boundaries > MAX_BOUNDARY_LINES {
        return Err(Error::field(
            "message",
            "too_many_parts",
            format!("the message has over {MAX_BOUNDARY_LINES} MIME part boundaries"),
        ));
    }
    Ok(())
}

/// The header section of `raw`: its header lines up to the first empty line, the last
/// one's line break included (the whole message when it has no empty line).
fn header_section(raw: &[u8]) -> &[u8] {
    let end = [&b"\r\n\r\n"[..], &b"\n\n"[..]]
        .iter()
        .filter_map(|blank| memchr::memmem::find(raw, blank).map(|at| at + blank.len() / 2))
        .min()
        .unwrap_or(raw.len());
    &raw[..end]
}

/// Whether the message's top-level type is `multipart/report` (RFC 6522: DSNs, ARF).
fn is_report(raw: &[u8]) -> bool {
    use mail_parser::MimeHeaders;
    // Only the header section is read (the message passed `check_shape`).
    mail_parser::MessageParser::default()
        .parse_headers(header_section(raw))
        .and_then(|m| {
            m.content_type().map(|ct| {
                ct.ctype().eq_ignore_ascii_case("multipart")
                    && ct
                        .subtype()
                        .is_some_and(|s| s.eq_ignore_ascii_case("report"))
            })
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(raw: &[u8]) -> Vec<String> {
        match check_shape(raw) {
            Ok(()) => Vec::new(),
            Err(Error::Validation(fields)) => fields.into_iter().map(|f| f.code).collect(),
            Err(other) => vec![other.to_string()],
        }
    }

    #[test]
    fn a_flood_of_headers_or_parts_is_refused_before_it_is_parsed() {
        let plain = b"From: a@x.test\r\nSubject: hi\r\n\r\n--\r\nsignature\r\n";
        assert!(codes(plain).is_empty());
        let mut headers = b"From: a@x.test\r\n".to_vec();
        while headers.len() <= MAX_HEADER_BYTES {
            headers.extend_from_slice(b"a:b\r\n");
        }
        headers.extend_from_slice(b"\r\nbody\r\n");
        assert_eq!(codes(&headers), ["header_too_large"]);
        // The same lines in the body are only body.
        let mut body = b"From: a@x.test\r\n\r\n".to_vec();
        body.extend_from_slice(&headers);
        assert!(codes(&body).is_empty());
        let mut parts = b"Content-Type: multipart/mixed; boundary=b\r\n\r\n".to_vec();
        for _ in 0..=MAX_BOUNDARY_LINES {
            parts.extend_from_slice(b"--b\r\n\r\n");
        }
        assert_eq!(codes(&parts), ["too_many_parts"]);
    }

    #[test]
    fn a_report_is_known_by_its_header_section_alone() {
        let report = b"Content-Type: multipart/report; report-type=delivery-status; \
                       boundary=x\r\n\r\n--x\r\nContent-Type: text/plain\r\n\r\nhi\r\n--x--\r\n";
        assert!(is_report(report));
        // A multipart/report type line after the header section is body text.
        let body = b"Subject: hi\r\n\r\nContent-Type: multipart/report\r\n";
        assert!(!is_report(body));
    }
}
