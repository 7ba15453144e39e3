//! The SNS message envelope: the JSON document SNS posts to an HTTP(S) subscriber, parsed
//! into a typed value, and the canonical string its signature covers.

use base64::Engine as _;
use serde::Deserialize;

/// Which digest the signature uses (`SignatureVersion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureVersion {
    /// `1`: RSA PKCS#1 v1.5 with SHA1.
    V1,
    /// `2`: RSA PKCS#1 v1.5 with SHA256.
    V2,
}

/// What kind of message SNS sent, with the fields only that kind carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnsKind {
    /// A message published to the topic.
    Notification {
        /// The optional `Subject`.
        subject: Option<String>,
    },
    /// SNS asks the endpoint to confirm a subscription by visiting `subscribe_url`.
    SubscriptionConfirmation {
        /// The `SubscribeURL` to fetch to confirm.
        subscribe_url: String,
        /// The `Token` (signed, not used otherwise).
        token: String,
    },
    /// SNS reports the subscription was removed.
    UnsubscribeConfirmation {
        /// The `SubscribeURL` that would subscribe again (never fetched by Posthorn).
        subscribe_url: String,
        /// The `Token`.
        token: String,
    },
}

/// One SNS message as posted to an HTTP(S) endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnsEnvelope {
    /// The kind and its own fields.
    pub kind: SnsKind,
    /// `MessageId`: the same for every redelivery of one message.
    pub message_id: String,
    /// `TopicArn`.
    pub topic_arn: String,
    /// `Message`: for SES notifications, a JSON document.
    pub message: String,
    /// `Timestamp`, as sent (it is signed as text).
    pub timestamp: String,
    /// `SignatureVersion`.
    pub signature_version: SignatureVersion,
    /// `Signature`, base64-decoded.
    pub signature: Vec<u8>,
    /// `SigningCertURL`: where the certificate of the signing key is.
    pub signing_cert_url: String,
}

/// Why a body is not an SNS envelope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    /// Not a JSON object of text fields.
    #[error("the body is not an SNS message: {0}")]
    NotJson(String),
    /// A field the message type needs is missing or empty.
    #[error("the SNS message has no {0}")]
    Missing(&'static str),
    /// `Type` is none of the three SNS sends.
    #[error("unknown SNS message type {0:?}")]
    UnknownType(String),
    /// `SignatureVersion` is neither 1 nor 2.
    #[error("unsupported SNS SignatureVersion {0:?}")]
    UnknownSignatureVersion(String),
    /// `Signature` is not base64.
    #[error("the SNS Signature is not base64")]
    BadSignatureEncoding,
}

/// The envelope's fields as they come (every one optional, checked by [`SnsEnvelope::parse`]).
#[derive(Deserialize)]
struct Raw {
    #[serde(rename = "Type")]
    kind: Option<String>,
    #[serde(rename = "MessageId")]
    message_id: Option<String>,
    #[serde(rename = "TopicArn")]
    topic_arn: Option<String>,
    #[serde(rename = "Subject")]
    subject: Option<String>,
    #[serde(rename = "Message")]
    message: Option<String>,
    #[serde(rename = "Timestamp")]
    timestamp: Option<String>,
    #[serde(rename = "SignatureVersion")]
    signature_version: Option<String>,
    #[serde(rename = "Signature")]
    signature: Option<String>,
    #[serde(rename = "SigningCertURL", alias = "SigningCertUrl")]
    signing_cert_url: Option<String>,
    #[serde(rename = "SubscribeURL", alias = "SubscribeUrl")]
    subscribe_url: Option<String>,
    #[serde(rename = "Token")]
    token: Option<String>,
}

fn required(value: Option<String>, name: &'static str) -> Result<String, EnvelopeError> {
    value
        .filter(|v| !v.is_empty())
        .ok_or(EnvelopeError::Missing(name))
}

impl SnsEnvelope {
    /// Parses the body SNS posted (JSON, whatever its `Content-Type` said).
    pub fn parse(body: &[u8]) -> Result<Self, EnvelopeError> {
        let raw: Raw =
            serde_json::from_slice(body).map_err(|e| EnvelopeError::NotJson(e.to_string()))?;
        let kind = match required(raw.kind, "Type")?.as_str() {
            "Notification" => SnsKind::Notification {
                subject: raw.subject,
            },
            "SubscriptionConfirmation" => SnsKind::SubscriptionConfirmation {
                subscribe_url: required(raw.subscribe_url, "SubscribeURL")?,
                token: required(raw.token, "Token")?,
            },
            "UnsubscribeConfirmation" => SnsKind::UnsubscribeConfirmation {
                subscribe_url: required(raw.subscribe_url, "SubscribeURL")?,
                token: required(raw.token, "Token")?,
            },
            other => return Err(EnvelopeError::UnknownType(other.to_owned())),
        };
        let signature_version = match required(raw.signature_version, "SignatureVersion")?.as_str()
        {
            "1" => SignatureVersion::V1,
            "2" => SignatureVersion::V2,
            other => return Err(EnvelopeError::UnknownSignatureVersion(other.to_owned())),
        };
        let signature = base64::engine::general_purpose::STANDARD
            .decode(required(raw.signature, "Signature")?.trim())
            .map_err(|_| EnvelopeError::BadSignatureEncoding)?;
        Ok(Self {
            kind,
            message_id: required(raw.message_id, "MessageId")?,
            topic_arn: required(raw.topic_arn, "TopicArn")?,
            // An empty message is possible (SNS allows it) and still signed.
            message: raw.message.ok_or(EnvelopeError::Missing("Message"))?,
            timestamp: required(raw.timestamp, "Timestamp")?,
            signature_version,
            signature,
            signing_cert_url: required(raw.signing_cert_url, "SigningCertURL")?,
        })
    }

    /// The text the signature covers: `Name\nvalue\n` for each signed field in SNS's
    /// documented order (a notification's `Subject` only when it has one).
    pub fn string_to_sign(&self) -> String {
        let mut fields: Vec<(&str, &str)> = vec![("Message", &self.message)];
        fields.push(("MessageId", &self.message_id));
        let kind_name = match &self.kind {
            SnsKind::Notification { subject } => {
                if let Some(subject) = subject {
                    fields.push(("Subject", subject));
                }
                fields.push(("Timestamp", &self.timestamp));
                "Notification"
            }
            SnsKind::SubscriptionConfirmation {
                subscribe_url,
                token,
            }
            | SnsKind::UnsubscribeConfirmation {
                subscribe_url,
                token,
            } => {
                fields.push(("SubscribeURL", subscribe_url));
                fields.push(("Timestamp", &self.timestamp));
                fields.push(("Token", token));
                if matches!(self.kind, SnsKind::SubscriptionConfirmation { .. }) {
                    "SubscriptionConfirmation"
                } else {
                    "UnsubscribeConfirmation"
                }
            }
        };
        fields.push(("TopicArn", &self.topic_arn));
        fields.push(("Type", kind_name));
        let mut out = String::new();
        for (name, value) in fields {
            out.push_str(name);
            out.push('\n');
            out.push_str(value);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests;
