//! The submission relay (port 587 or 465): AUTH with a secret key, then every message goes
//! through `Engine::send` exactly as a `POST /v1/send` would, with the envelope recipients.

mod message;

use async_trait::async_trait;
use posthorn_core::app::send::MAX_RECIPIENTS;
use posthorn_core::app::Caller;
use posthorn_core::model::EmailAddress;
use std::sync::Arc;

pub use message::{to_send_command, MessageError};

use super::refusal;
use super::reply::Reply;
use super::sasl::Credentials;
use super::session::{Envelope, Handler};
use crate::http::auth;
use crate::http::AppState;

/// Most recipients of one submitted message: the limit of one `/v1/send`.
pub const SUBMISSION_MAX_RECIPIENTS: usize = MAX_RECIPIENTS;

/// The submission relay's handler.
pub struct Submission {
    state: AppState,
}

impl Submission {
    /// A relay on the HTTP API's state (engine, key cache, limits).
    pub fn new(state: AppState) -> Self {
        Self { state }
    }

    /// The caller of `secret`, checked again for each message so a revoked key or a
    /// disabled workspace stops a long session too.
    async fn caller(&self, secret: &str) -> Result<Arc<Caller>, Reply> {
        auth::authenticate(&self.state, Some(secret), false)
            .await
            .map_err(|e| refusal::from_auth(&e))
    }

    async fn accept(&self, secret: &str, envelope: Envelope, raw: &[u8]) -> Reply {
        let caller = match self.caller(secret).await {
            Ok(caller) => caller,
            Err(reply) => return reply,
        };
        let now = self.state.engine.clock.now();
        match auth::spend_budget(&self.state, &caller, now).await {
            Ok(decision) if decision.allowed => {}
            Ok(decision) => {
                let wait = (decision.reset_at - now).num_seconds().max(1);
                return Reply::new(
                    451,
                    [4, 7, 1],
                    format!("Rate limit reached for this workspace; try again in {wait} s"),
                );
            }
            Err(e) => return refusal::from_error(&e),
        }
        let command = match to_send_command(raw, &envelope.recipients) {
            Ok(command) => command,
            Err(e) => return Reply::new(554, [5, 6, 0], format!("Message refused: {e}")),
        };
        let sent = tokio::time::timeout(
            self.state.request_time_limit,
            self.state.engine.send(&caller, command),
        )
        .await;
        match sent {
            Ok(Ok(accepted)) => {
                let first = accepted
                    .emails
                    .first()
                    .map(|e| e.email_id.to_string())
                    .unwrap_or_default();
                Reply::new(
                    250,
                    [2, 0, 0],
                    format!(
                        "Queued as {first} ({} recipient{})",
                        accepted.emails.len(),
                        if accepted.emails.len() == 1 { "" } else { "s" }
                    ),
                )
            }
            Ok(Err(e)) => refusal::from_error(&e),
            Err(_) => {
                // The send may still commit; the client retrying can duplicate it, which is
                // the at-least-once side every SMTP relay has.
                tracing::warn!("SMTP submission outran the request time limit");
                Reply::try_later()
            }
        }
    }
}

#[async_trait]
impl Handler for Submission {
    type Identity = String;

    fn offers_auth(&self) -> bool {
        true
    }

    async fn authenticate(&self, credentials: Credentials) -> Result<String, Reply> {
        self.caller(&credentials.secret).await?;
        Ok(credentials.secret)
    }

    async fn mail_from(&self, _: Option<&String>, _: &Envelope) -> Result<(), Reply> {
        // The sender that counts is the From header, checked with the message.
        Ok(())
    }

    async fn rcpt_to(
        &self,
        _: Option<&String>,
        _: &Envelope,
        recipient: &str,
    ) -> Result<(), Reply> {
        EmailAddress::parse(recipient).map(drop).map_err(|e| {
            Reply::new(
                553,
                [5, 1, 3],
                format!("{recipient} is not a valid address: {e}"),
            )
        })
    }

    async fn data(&self, identity: Option<&String>, envelope: Envelope, message: Vec<u8>) -> Reply {
        match identity {
            Some(secret) => self.accept(secret, envelope, &message).await,
            None => Reply::new(530, [5, 7, 0], "Authentication required"),
        }
    }
}
