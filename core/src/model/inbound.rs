//! Received mail: one inbound email record per (message, receiving workspace).

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{EmailId, WorkspaceId};

/// A message received for one workspace, kept with its raw bytes until the retention ends.
///
/// Its id is an [`EmailId`]: events about it carry it as `emailId`, and its source type is
/// INBOUND.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundEmail {
    /// Record id.
    pub id: EmailId,
    /// The receiving workspace.
    pub workspace_id: WorkspaceId,
    /// The envelope sender (`MAIL FROM`); `None` for the null sender `<>`.
    pub envelope_from: Option<String>,
    /// The envelope recipients at this workspace's inbound domains (lower-case).
    pub recipients: Vec<String>,
    /// The address of the client that handed the message over, when known.
    pub client_ip: Option<std::net::IpAddr>,
    /// The name the client gave in HELO/EHLO, when known.
    pub helo: Option<String>,
    /// The message as received; `None` once the retention period purged it.
    pub raw: Option<Vec<u8>>,
    /// When the message was accepted.
    pub received_at: DateTime<Utc>,
    /// When its `email.received` events were emitted; `None` while pending.
    pub processed_at: Option<DateTime<Utc>>,
    /// The verdicts the provider that received it gave (Amazon SES), if any.
    pub provider_verdicts: ProviderVerdicts,
}

/// The verdicts a provider that received a message for Posthorn already gave (Amazon SES's
/// receipt: `spamVerdict`, `virusVerdict`, `spfVerdict`, `dkimVerdict`, `dmarcVerdict`).
///
/// Each one given is used as the message's verdict of that kind instead of Posthorn's own
/// check: the provider saw what Posthorn cannot (the connecting client's address, which SPF
/// is about) or ran a scanner Posthorn may not have (viruses).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderVerdicts {
    /// The spam verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spam: Option<Verdict>,
    /// The virus verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virus: Option<Verdict>,
    /// SPF of the envelope sender against the connecting client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spf: Option<Verdict>,
    /// DKIM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dkim: Option<Verdict>,
    /// DMARC of the From domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dmarc: Option<Verdict>,
}

impl ProviderVerdicts {
    /// Whether no verdict was given.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// The outcome of one check of a received message (SPF, DKIM, DMARC, spam, virus).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    /// The check passed.
    Pass,
    /// The check failed (or the message is spam or infected).
    Fail,
    /// The check could not say either way (nothing to check, or no checker configured).
    Gray,
    /// The check could not be carried out (a DNS time-out, the scanner unreachable).
    ProcessingFailed,
}

impl Verdict {
    /// The verdict `value` names (`PASS`, `FAIL`, `GRAY`, `PROCESSING_FAILED`, in any
    /// case); `None` for anything else.
    pub fn parse(value: &str) -> Option<Self> {
        [
            Verdict::Pass,
            Verdict::Fail,
            Verdict::Gray,
            Verdict::ProcessingFailed,
        ]
        .into_iter()
        .find(|v| v.as_str().eq_ignore_ascii_case(value.trim()))
    }

    /// The value as events carry it (`PASS`, `FAIL`, `GRAY`, `PROCESSING_FAILED`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Gray => "GRAY",
            Verdict::ProcessingFailed => "PROCESSING_FAILED",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_verdict_is_parsed_only_from_its_name(value in "\\PC{0,20}|(?i:pass|fail|gray|processing_failed)") {
            let named = [Verdict::Pass, Verdict::Fail, Verdict::Gray, Verdict::ProcessingFailed]
                .into_iter()
                .find(|v| v.as_str() == value.trim().to_ascii_uppercase());
            prop_assert_eq!(Verdict::parse(&value), named);
        }
    }

    #[test]
    fn verdicts_parse_their_own_names_and_nothing_else() {
        for v in [
            Verdict::Pass,
            Verdict::Fail,
            Verdict::Gray,
            Verdict::ProcessingFailed,
        ] {
            assert_eq!(Verdict::parse(v.as_str()), Some(v));
            assert_eq!(Verdict::parse(&v.as_str().to_lowercase()), Some(v));
        }
        assert_eq!(Verdict::parse("DISABLED"), None);
        assert_eq!(Verdict::parse(""), None);
    }

    #[test]
    fn provider_verdicts_keep_only_what_was_given() {
        let none = ProviderVerdicts::default();
        assert!(none.is_empty());
        assert_eq!(serde_json::to_string(&none).expect("json"), "{}");
        let some = ProviderVerdicts {
            virus: Some(Verdict::Fail),
            spf: Some(Verdict::Pass),
            ..ProviderVerdicts::default()
        };
        assert!(!some.is_empty());
        let text = serde_json::to_string(&some).expect("json");
        assert_eq!(text, r#"{"virus":"FAIL","spf":"PASS"}"#);
        assert_eq!(
            serde_json::from_str::<ProviderVerdicts>(&text).ok(),
            Some(some)
        );
    }
}
