//! Bounce collection: the envelope sender of outgoing mail (a per-email bounce address
//! when this server can receive its bounces) and the intake of the bounce and complaint
//! reports that come back to it.

use std::borrow::Cow;

use crate::bounce::{self, token, Report, BOUNCE_SECRET};
use crate::error::Result;
use crate::model::{
    ascii_domain_address, same_domain, BounceType, Domain, EmailRecord, WorkspaceId,
};
use crate::ports::StoreError;
use crate::Engine;

impl Engine {
    /// The deployment's bounce-token key: read once from the store (created on first use,
    /// shared by every process) and kept in the settings' cell for
    /// [`Engine::is_bounce_address`].
    pub async fn bounce_key(&self) -> Result<Vec<u8>, StoreError> {
        self.settings
            .bounce_key
            .get_or_load(&*self.store, BOUNCE_SECRET)
            .await
    }

    /// Whether `address` is a bounce address this deployment collects:
    /// `bounces+<token>@<domain>` with a token that verifies, or any address at
    /// POSTHORN_BOUNCE_DOMAIN. Sync and cheap (no store access).
    ///
    /// Before the key was loaded ([`Engine::bounce_key`], done at start-up by the server
    /// and by the first send or report) a token is only checked for its shape;
    /// [`Engine::receive_bounce_message`] verifies it before recording anything.
    pub fn is_bounce_address(&self, address: &str) -> bool {
        let address = address.trim().trim_start_matches('<').trim_end_matches('>');
        let Some((_, domain)) = address.rsplit_once('@') else {
            return false;
        };
        let at_bounce_domain = self
            .settings
            .bounce_domain
            .as_deref()
            .is_some_and(|d| same_domain(d, domain));
        if at_bounce_domain {
            return true;
        }
        let Some((token, _)) = token::split_address(address) else {
            return false;
        };
        match self.settings.bounce_key.get() {
            Some(key) => token::verify(key, token).is_some(),
            None => token::well_formed(token),
        }
    }

    /// Reads a DSN or ARF report sent to `recipient` (or offered because it is
    /// multipart/report) and records the bounce or complaint for its email. Ok(true) when
    /// it was recognised and recorded (or already recorded), Ok(false) when it is not a
    /// report Posthorn understands or matches no email. Idempotent.
    ///
    /// The email is found by the recipient's bounce token first (a token that does not
    /// verify refuses the report); without one, only among the emails of the workspace whose
    /// inbound domain `recipient` is at, by the original Message-ID the report quotes, then
    /// by the original's `X-Posthorn-Email-Id`. Bounces are Permanent only for
    /// recipient-specific failures (5.1.x, 5.2.1) and unsubscribe the contact; ARF
    /// `abuse` and `fraud` reports are complaints and unsubscribe with reason `complaint`.
    pub async fn receive_bounce_message(&self, recipient: &str, raw: &[u8]) -> Result<bool> {
        let by_token = match token::split_address(recipient) {
            Some((text, _)) => {
                let key = self.bounce_key().await?;
                match token::verify(&key, text) {
                    Some(email_id) => Some(email_id),
                    None => {
                        tracing::warn!(
                            recipient,
                            "bounce address with a forged or foreign token: ignored"
                        );
                        return Ok(false);
                    }
                }
            }
            None => None,
        };
        let Some(report) = bounce::read_report(raw) else {
            return Ok(false);
        };
        let email = match by_token {
            Some(id) => self.store.email_by_id(&id).await?,
            // Without a token nothing proves who sent the report: anyone who saw an email's
            // headers can quote them. So it may only concern the receiving workspace's own
            // emails, never another's.
            None => match self.receiving_workspace(recipient).await? {
                Some(workspace_id) => self.email_for_original(&workspace_id, &report).await?,
                None => {
                    tracing::warn!(recipient, "report without a bounce token to an address no workspace receives: ignored");
                    None
                }
            },
        };
        let Some(email) = email else {
            return Ok(false);
        };
        let now = self.clock.now();
        match report {
            Report::Complaint { .. } => {
                self.record_complaint(&email.workspace_id, &email.id, now)
                    .await?;
            }
            Report::Bounce { failures, .. } => {
                // One email has one recipient: its own failure, else the first reported.
                let to = email.to.email.to_ascii_lowercase();
                let failure = failures
                    .iter()
                    .find(|f| f.recipient.as_deref() == Some(to.as_str()))
                    .or_else(|| failures.first());
                let Some(failure) = failure else {
                    return Ok(false);
                };
                let bounce_type = failure.bounce_type();
                if already_recorded(&email, bounce_type, failure.detail.as_deref()) {
                    return Ok(true);
                }
                self.record_bounce(
                    &email.workspace_id,
                    &email.id,
                    bounce_type,
                    failure.detail.clone(),
                    now,
                )
                .await?;
            }
        }
        Ok(true)
    }

    /// The email of `workspace_id` the report quotes: by its original Message-ID, else by
    /// its `X-Posthorn-Email-Id`.
    async fn email_for_original(
        &self,
        workspace_id: &WorkspaceId,
        report: &Report,
    ) -> Result<Option<EmailRecord>> {
        let original = report.original();
        let ours = |email: &EmailRecord| &email.workspace_id == workspace_id;
        if let Some(found) = self
            .find_email_for_feedback(None, original.message_id.as_deref())
            .await?
            .filter(ours)
        {
            return Ok(Some(found));
        }
        match &original.email_id {
            Some(id) => Ok(self.store.email_by_id(id).await?.filter(ours)),
            None => Ok(None),
        }
    }

    /// The workspace receiving mail at `recipient` (a verified inbound domain of an enabled
    /// workspace), if any: the deployment's bounce domain belongs to none.
    async fn receiving_workspace(&self, recipient: &str) -> Result<Option<WorkspaceId>> {
        let bare = recipient
            .trim()
            .trim_start_matches('<')
            .trim_end_matches('>');
        Ok(self.route_recipient(bare).await?.ok().map(|(ws, _)| ws))
    }

    /// The envelope sender (MAIL FROM) of `email`, sent from `domain` (the sender's
    /// domain record, if it still exists): `bounces+<token>@<sender domain>` when that
    /// domain has inbound enabled, else `bounces+<token>@<POSTHORN_BOUNCE_DOMAIN>` when
    /// set, else the sender's own address (bounces are then not collected).
    pub async fn envelope_sender(
        &self,
        email: &EmailRecord,
        domain: Option<&Domain>,
    ) -> Result<String, StoreError> {
        let bounce_domain = match domain.filter(|d| d.inbound_enabled) {
            Some(domain) => Some(domain.ascii_name()),
            None => self.settings.bounce_domain.as_deref().map(Cow::Borrowed),
        };
        let sender = || ascii_domain_address(&email.from.email).into_owned();
        let Some(bounce_domain) = bounce_domain else {
            return Ok(sender());
        };
        let key = self.bounce_key().await?;
        Ok(token::address(&key, &email.id, &bounce_domain).unwrap_or_else(sender))
    }
}

/// A report seen before: a permanent bounce or a transient one with the same words
/// (`record_feedback` already ignores a repeated permanent bounce; a repeated transient
/// one would count again).
fn already_recorded(email: &EmailRecord, bounce_type: BounceType, detail: Option<&str>) -> bool {
    let l = &email.lifecycle;
    l.bounce_type == Some(BounceType::Permanent)
        || (bounce_type == BounceType::Transient
            && l.bounce_type == Some(BounceType::Transient)
            && l.bounce_detail.as_deref() == detail)
}
