//! `POST /inbound/raw`: the envelope in the query string, the answer's shape.

use posthorn_core::app::inbound::InboundReceipt;
use posthorn_core::model::timestamp;
use posthorn_core::{Error, FieldError};
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};

/// The envelope of a relayed message (query parameters; `to` repeats).
#[derive(Debug, Default, PartialEq, Eq, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct InboundEnvelope {
    /// The envelope sender (`MAIL FROM`); absent or empty for the null sender `<>`.
    pub from: Option<String>,
    /// An envelope recipient (`RCPT TO`) at an inbound domain of this workspace; repeat the
    /// parameter once per recipient.
    #[param(required = true)]
    pub to: Vec<String>,
}

impl InboundEnvelope {
    /// Reads the raw query string: one optional `from`, one or more `to`; other
    /// parameters are refused so that a misspelt `to` is not silently dropped.
    pub fn parse(query: Option<&str>) -> Result<Self, Error> {
        let mut envelope = InboundEnvelope::default();
        let mut errors = Vec::new();
        let mut froms = 0;
        for (key, value) in url::form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            match key.as_ref() {
                "from" => {
                    froms += 1;
                    let value = value.trim();
                    envelope.from = (!value.is_empty()).then(|| value.to_owned());
                }
                "to" => envelope.to.push(value.trim().to_owned()),
                other => errors.push(FieldError::new(
                    other,
                    "unknown_field",
                    "unknown parameter; expected `from` and `to`",
                )),
            }
        }
        if froms > 1 {
            errors.push(FieldError::new(
                "from",
                "too_many",
                "give the envelope sender at most once",
            ));
        }
        if errors.is_empty() {
            Ok(envelope)
        } else {
            Err(Error::Validation(errors))
        }
    }
}

/// One stored inbound email.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReceivedEmail {
    /// The inbound email record (the `emailId` of its `email.received` events).
    pub id: String,
    /// The envelope recipients it was received for, lower-case.
    pub recipients: Vec<String>,
}

/// The answer once the message is stored.
#[derive(Debug, Serialize, ToSchema)]
pub struct InboundResult {
    /// The stored records (one: every recipient is in the calling workspace).
    pub emails: Vec<ReceivedEmail>,
    /// When the message was accepted (RFC 3339, UTC, milliseconds).
    #[schema(format = DateTime)]
    pub timestamp: String,
}

impl InboundResult {
    /// The answer for `receipt`, accepted at `at`.
    pub fn new(receipt: InboundReceipt, at: chrono::DateTime<chrono::Utc>) -> Self {
        Self {
            emails: receipt
                .accepted
                .into_iter()
                .map(|a| ReceivedEmail {
                    id: a.id.into_string(),
                    recipients: a.recipients,
                })
                .collect(),
            timestamp: timestamp::format(&at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_to_and_one_from() {
        let e =
            InboundEnvelope::parse(Some("from=a%40x.example&to=b%40y.example&to=c@y.example")).ok();
        assert_eq!(
            e,
            Some(InboundEnvelope {
                from: Some("a@x.example".into()),
                to: vec!["b@y.example".into(), "c@y.example".into()],
            })
        );
    }

    #[test]
    fn empty_from_is_the_null_sender_and_unknown_keys_are_refused() {
        let e = InboundEnvelope::parse(Some("from=&to=b@y.example")).ok();
        assert_eq!(e.and_then(|e| e.from), None);
        assert!(InboundEnvelope::parse(Some("too=b@y.example")).is_err());
        assert!(InboundEnvelope::parse(Some("from=a@x&from=b@x&to=c@y")).is_err());
    }
}
