//! The inbound MX (port 25): recipients are checked at RCPT against the verified,
//! inbound-enabled domains, and DATA is handed to `Engine::receive_inbound`; 250 only once
//! the message is durable.

use std::time::Duration;

use async_trait::async_trait;
use posthorn_core::app::inbound::{InboundMessage, RecipientCheck};
use posthorn_core::model::ProviderVerdicts;
use posthorn_core::Engine;

use super::refusal;
use super::reply::Reply;
use super::sasl::Credentials;
use super::session::{Envelope, Handler};

/// The inbound MX's handler.
pub struct Inbound {
    engine: Engine,
    time_limit: Duration,
    postmaster: Option<String>,
}

impl Inbound {
    /// An MX on `engine`; each store call may take up to `time_limit` (then 451).
    pub fn new(engine: Engine, time_limit: Duration) -> Self {
        Self {
            engine,
            time_limit,
            postmaster: None,
        }
    }

    /// Mail for the bare `Postmaster` recipient (no domain; RFC 5321 §4.5.1) goes to
    /// `address`, which is checked like any recipient. Without it that recipient is refused.
    pub fn with_postmaster(mut self, address: Option<String>) -> Self {
        self.postmaster = address;
        self
    }

    /// The address a recipient as given stands for: the postmaster's for a bare
    /// `Postmaster`, itself otherwise.
    fn resolve<'a>(&'a self, recipient: &'a str) -> Result<&'a str, Reply> {
        // The SMTP parser gives `<Postmaster>` as the empty path (RCPT has no other).
        if !(recipient.is_empty() || recipient.eq_ignore_ascii_case("postmaster")) {
            return Ok(recipient);
        }
        self.postmaster.as_deref().ok_or_else(|| {
            Reply::new(
                550,
                [5, 1, 1],
                "Recipient refused: this server has no postmaster without a domain; write to postmaster@<domain>",
            )
        })
    }
}

#[async_trait]
impl Handler for Inbound {
    type Identity = ();

    fn offers_auth(&self) -> bool {
        false
    }

    async fn authenticate(&self, _: Credentials) -> Result<(), Reply> {
        Err(Reply::new(502, [5, 5, 1], "AUTH not offered here"))
    }

    async fn mail_from(&self, _: Option<&()>, _: &Envelope) -> Result<(), Reply> {
        Ok(())
    }

    async fn rcpt_to(&self, _: Option<&()>, _: &Envelope, recipient: &str) -> Result<(), Reply> {
        let recipient = self.resolve(recipient)?;
        let checked = tokio::time::timeout(
            self.time_limit,
            self.engine.check_inbound_recipient(recipient),
        )
        .await;
        match checked {
            Ok(Ok(RecipientCheck::Accept)) => Ok(()),
            Ok(Ok(RecipientCheck::Refuse { reason })) => Err(Reply::new(
                550,
                [5, 1, 1],
                format!("Recipient refused: {reason}"),
            )),
            Ok(Err(e)) => Err(refusal::from_error(&e)),
            Err(_) => Err(Reply::try_later()),
        }
    }

    async fn data(&self, _: Option<&()>, envelope: Envelope, message: Vec<u8>) -> Reply {
        // Accepted recipients resolve: a bare `Postmaster` was checked as the postmaster.
        let mut recipients: Vec<String> = Vec::with_capacity(envelope.recipients.len());
        for given in &envelope.recipients {
            let address = self.resolve(given).unwrap_or(given);
            if !recipients.iter().any(|r| r.eq_ignore_ascii_case(address)) {
                recipients.push(address.to_string());
            }
        }
        let inbound = InboundMessage {
            envelope_from: envelope.from,
            recipients,
            raw: message,
            client_ip: envelope.client_ip,
            helo: envelope.helo,
            provider_verdicts: ProviderVerdicts::default(),
        };
        let received =
            tokio::time::timeout(self.time_limit, self.engine.receive_inbound(inbound)).await;
        match received {
            Ok(Ok(receipt)) => {
                let ids: Vec<String> = receipt.accepted.iter().map(|a| a.id.to_string()).collect();
                Reply::new(250, [2, 0, 0], format!("Queued as {}", ids.join(" ")))
            }
            Ok(Err(e)) => refusal::from_error(&e),
            Err(_) => {
                tracing::warn!("inbound message outran the time limit");
                Reply::try_later()
            }
        }
    }
}
