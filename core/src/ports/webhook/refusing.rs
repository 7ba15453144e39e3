//! A [`WebhookSink`] that sends nothing: the default of engines built without an HTTP sink.

use async_trait::async_trait;

use super::{WebhookError, WebhookRequest, WebhookResponse, WebhookSink};

/// Refuses every request (`WebhookError::Refused`, so the WEBHOOK step fails at once with a
/// message saying what to configure). Never opens a connection.
#[derive(Debug, Clone, Copy, Default)]
pub struct RefusingWebhookSink;

#[async_trait]
impl WebhookSink for RefusingWebhookSink {
    async fn deliver(&self, _request: &WebhookRequest) -> Result<WebhookResponse, WebhookError> {
        Err(WebhookError::Refused(
            "no webhook sink is configured for this engine (give one to Engine::builder().webhooks(..))".into(),
        ))
    }
}
