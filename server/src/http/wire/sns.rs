//! The answer of `POST /webhooks/sns`.

use posthorn_core::app::sns::{SesOutcome, SnsOutcome};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// What Posthorn did with one SNS message.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnsResult {
    /// `subscriptionConfirmed`, `unsubscribeNoted`, `duplicate` (a redelivery, not processed
    /// again), `recorded`, `unchanged` (the email already knew), `noEmail` (no email
    /// matches), `trackedByPosthorn` (an SES open or click of an email Posthorn tracks
    /// itself), `inbound` (received mail taken in; `emailId` is its record, the first one
    /// when several workspaces received it), `inboundNotStored` (received mail without
    /// content or without a receivable recipient) or `ignored` (a notification type
    /// Posthorn does not act on).
    #[schema(example = "recorded")]
    pub outcome: &'static str,
    /// The email the notification was about, when one matched (for `inbound`, the received
    /// email's record).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub email_id: Option<String>,
    /// The event stored (`email.delivery`, `email.bounce`, …), when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub event: Option<&'static str>,
    /// Whether the contact was unsubscribed by this notification.
    pub unsubscribed: bool,
}

impl From<SnsOutcome> for SnsResult {
    fn from(outcome: SnsOutcome) -> Self {
        let plain = |outcome| Self {
            outcome,
            email_id: None,
            event: None,
            unsubscribed: false,
        };
        match outcome {
            SnsOutcome::SubscriptionConfirmed => plain("subscriptionConfirmed"),
            SnsOutcome::UnsubscribeNoted => plain("unsubscribeNoted"),
            SnsOutcome::Duplicate | SnsOutcome::Ses(SesOutcome::Duplicate) => plain("duplicate"),
            SnsOutcome::Ses(SesOutcome::Recorded {
                email_id,
                event,
                unsubscribed,
            }) => Self {
                outcome: "recorded",
                email_id: Some(email_id.to_string()),
                event,
                unsubscribed,
            },
            SnsOutcome::Ses(SesOutcome::Unchanged { email_id }) => Self {
                email_id: Some(email_id.to_string()),
                ..plain("unchanged")
            },
            SnsOutcome::Ses(SesOutcome::TrackedByPosthorn { email_id }) => Self {
                email_id: Some(email_id.to_string()),
                ..plain("trackedByPosthorn")
            },
            SnsOutcome::Ses(SesOutcome::NoEmail) => plain("noEmail"),
            SnsOutcome::Ses(SesOutcome::Inbound { accepted }) => Self {
                email_id: accepted.first().map(ToString::to_string),
                ..plain("inbound")
            },
            SnsOutcome::Ses(SesOutcome::InboundNotStored { .. }) => plain("inboundNotStored"),
            SnsOutcome::Ses(SesOutcome::Ignored(_)) => plain("ignored"),
        }
    }
}

/// The SNS message `POST /webhooks/sns` reads: the JSON document SNS posts (with
/// `Content-Type: text/plain`). For the document only: the handler reads the raw bytes, so
/// the signature is checked over exactly what was sent.
#[derive(Deserialize, ToSchema)]
#[serde(untagged)]
#[schema(as = SnsMessage)]
#[allow(dead_code)]
pub enum SnsMessageDoc {
    /// A notification (an SES event in `Message`).
    Notification(SnsNotificationDoc),
    /// A subscription or unsubscribe confirmation.
    Confirmation(SnsConfirmationDoc),
}

/// An SNS notification.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct SnsNotificationDoc {
    /// `Notification`.
    #[serde(rename = "Type")]
    #[schema(pattern = "^Notification$")]
    kind: String,
    /// SNS's id of the message (a redelivery has the same one).
    #[serde(rename = "MessageId")]
    #[schema(min_length = 1)]
    message_id: String,
    /// The topic; only listed topics are processed (others: 403).
    #[serde(rename = "TopicArn")]
    #[schema(min_length = 1)]
    topic_arn: String,
    /// The subject, when the publisher gave one.
    #[serde(rename = "Subject")]
    subject: Option<String>,
    /// The SES event, as JSON text.
    #[serde(rename = "Message")]
    message: String,
    /// When SNS published it.
    #[serde(rename = "Timestamp")]
    #[schema(min_length = 1)]
    timestamp: String,
    /// `1` (SHA1) or `2` (SHA256).
    #[serde(rename = "SignatureVersion")]
    #[schema(pattern = "^[12]$")]
    signature_version: String,
    /// The signature: canonical base64 (padded, no stray bits in the last symbol).
    #[serde(rename = "Signature")]
    #[schema(
        pattern = "^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$",
        min_length = 4
    )]
    signature: String,
    /// Where the signing certificate is (an `sns.<region>.amazonaws.com` URL).
    #[serde(rename = "SigningCertURL")]
    #[schema(min_length = 1)]
    signing_cert_url: String,
    /// The URL that unsubscribes the endpoint.
    #[serde(rename = "UnsubscribeURL")]
    unsubscribe_url: Option<String>,
}

/// An SNS subscription (or unsubscribe) confirmation.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct SnsConfirmationDoc {
    /// `SubscriptionConfirmation` or `UnsubscribeConfirmation`.
    #[serde(rename = "Type")]
    #[schema(pattern = "^(SubscriptionConfirmation|UnsubscribeConfirmation)$")]
    kind: String,
    /// SNS's id of the message.
    #[serde(rename = "MessageId")]
    #[schema(min_length = 1)]
    message_id: String,
    /// The topic; only listed topics are confirmed (others: 403).
    #[serde(rename = "TopicArn")]
    #[schema(min_length = 1)]
    topic_arn: String,
    /// SNS's text about the confirmation.
    #[serde(rename = "Message")]
    message: String,
    /// When SNS sent it.
    #[serde(rename = "Timestamp")]
    #[schema(min_length = 1)]
    timestamp: String,
    /// `1` (SHA1) or `2` (SHA256).
    #[serde(rename = "SignatureVersion")]
    #[schema(pattern = "^[12]$")]
    signature_version: String,
    /// The signature: canonical base64 (padded, no stray bits in the last symbol).
    #[serde(rename = "Signature")]
    #[schema(
        pattern = "^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$",
        min_length = 4
    )]
    signature: String,
    /// Where the signing certificate is.
    #[serde(rename = "SigningCertURL")]
    #[schema(min_length = 1)]
    signing_cert_url: String,
    /// The URL Posthorn fetches to confirm the subscription.
    #[serde(rename = "SubscribeURL")]
    #[schema(min_length = 1)]
    subscribe_url: String,
    /// The confirmation token.
    #[serde(rename = "Token")]
    #[schema(min_length = 1)]
    token: String,
}
