//! `CapturingTransport`: a `MailTransport` that keeps messages instead of sending them.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use posthorn_core::ports::{MailTransport, OutgoingMessage, TransportError};

/// Records every message it is given, for tests and local runs; can be told to fail.
///
/// Accepted messages are returned by [`messages`](Self::messages) with the id
/// `"{message_id}@capture"`; every call, accepted or failed, is in
/// [`attempts`](Self::attempts).
#[derive(Debug, Default)]
pub struct CapturingTransport {
    inner: Mutex<Capture>,
}

#[derive(Debug, Default)]
struct Capture {
    accepted: Vec<OutgoingMessage>,
    attempts: Vec<OutgoingMessage>,
    /// Failures still to hand out to the next calls, and the error to use.
    fail_next: Option<(usize, TransportError)>,
    /// Recipients (lower-case) whose every message fails.
    fail_for: HashMap<String, TransportError>,
}

impl CapturingTransport {
    /// A transport that accepts everything.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Capture> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The accepted messages, in the order they were sent.
    pub fn messages(&self) -> Vec<OutgoingMessage> {
        self.lock().accepted.clone()
    }

    /// Every message handed to `send`, including the ones that were made to fail.
    pub fn attempts(&self) -> Vec<OutgoingMessage> {
        self.lock().attempts.clone()
    }

    /// The accepted messages to `address` (case-insensitive).
    pub fn messages_to(&self, address: &str) -> Vec<OutgoingMessage> {
        self.lock()
            .accepted
            .iter()
            .filter(|m| m.to.email.eq_ignore_ascii_case(address))
            .cloned()
            .collect()
    }

    /// Makes the next `n` sends (to any recipient) fail with `error`, replacing any earlier
    /// `fail_next`.
    pub fn fail_next(&self, n: usize, error: TransportError) {
        self.lock().fail_next = (n > 0).then_some((n, error));
    }

    /// Makes every send to `address` (case-insensitive) fail with `error` until
    /// [`stop_failing_for`](Self::stop_failing_for).
    pub fn fail_for(&self, address: &str, error: TransportError) {
        self.lock().fail_for.insert(address.to_lowercase(), error);
    }

    /// Lets sends to `address` succeed again.
    pub fn stop_failing_for(&self, address: &str) {
        self.lock().fail_for.remove(&address.to_lowercase());
    }

    /// Forgets the captured messages and attempts (failure settings stay).
    pub fn clear(&self) {
        let mut capture = self.lock();
        capture.accepted.clear();
        capture.attempts.clear();
    }
}

#[async_trait]
impl MailTransport for CapturingTransport {
    async fn send(&self, message: &OutgoingMessage) -> Result<String, TransportError> {
        let mut capture = self.lock();
        capture.attempts.push(message.clone());
        if let Some(error) = capture.fail_for.get(&message.to.email.to_lowercase()) {
            return Err(error.clone());
        }
        if let Some((left, error)) = capture.fail_next.take() {
            if left > 1 {
                capture.fail_next = Some((left - 1, error.clone()));
            }
            return Err(error);
        }
        capture.accepted.push(message.clone());
        Ok(format!("{}@capture", message.message_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use posthorn_core::ports::Mailbox;

    fn message(to: &str) -> OutgoingMessage {
        OutgoingMessage {
            email_id: "e1".into(),
            message_id: format!("m-{to}"),
            from: Mailbox {
                name: None,
                email: "from@example.com".into(),
            },
            envelope_from: "from@example.com".into(),
            to: Mailbox {
                name: Some("To".into()),
                email: to.into(),
            },
            reply_to: None,
            subject: "Hi".into(),
            html: "<p>Hi</p>".into(),
            text: None,
            headers: vec![],
            attachments: vec![],
            dkim: None,
        }
    }

    #[tokio::test]
    async fn captures_and_returns_an_id() {
        let transport = CapturingTransport::new();
        let id = transport.send(&message("a@example.com")).await;
        assert_eq!(id, Ok("m-a@example.com@capture".to_string()));
        assert_eq!(transport.messages(), vec![message("a@example.com")]);
        assert_eq!(transport.messages_to("A@example.com").len(), 1);
    }

    #[tokio::test]
    async fn fail_next_fails_exactly_n_sends() {
        let transport = CapturingTransport::new();
        let error = TransportError::Transient("421 try later".into());
        transport.fail_next(2, error.clone());
        assert_eq!(
            transport.send(&message("a@example.com")).await,
            Err(error.clone())
        );
        assert_eq!(transport.send(&message("a@example.com")).await, Err(error));
        assert!(transport.send(&message("a@example.com")).await.is_ok());
        assert_eq!(transport.messages().len(), 1);
        assert_eq!(transport.attempts().len(), 3);
    }

    #[tokio::test]
    async fn fail_for_fails_one_recipient_until_stopped() {
        let transport = CapturingTransport::new();
        let error = TransportError::Permanent("550 no such user".into());
        transport.fail_for("Bad@Example.com", error.clone());
        assert_eq!(
            transport.send(&message("bad@example.com")).await,
            Err(error)
        );
        assert!(transport.send(&message("good@example.com")).await.is_ok());
        transport.stop_failing_for("bad@example.com");
        assert!(transport.send(&message("bad@example.com")).await.is_ok());
        assert_eq!(transport.messages().len(), 2);
    }
}
