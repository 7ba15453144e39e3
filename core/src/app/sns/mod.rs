//! `POST /webhooks/sns`: Amazon SES feedback (and inbound mail) delivered by SNS. The order
//! of the checks is the security: the topic must be listed (nothing is fetched otherwise),
//! the certificate URL must pass the host rules, and the signature must verify, before
//! anything is confirmed, read or written.

mod ses;

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};

pub use ses::SesOutcome;

use crate::error::{Error, Result};
use crate::ports::{SnsFetchError, SnsFetcher, Write};
use crate::sns::{
    verify_signature, SesNotification, SnsEnvelope, SnsHostRules, SnsKind, TopicAllowList,
};
use crate::Engine;

/// How long the ids of processed SNS messages are kept, so that a redelivery is applied
/// once. SNS stops redelivering an HTTP(S) notification within hours; two weeks leave room.
pub const SNS_MESSAGES_KEPT: TimeDelta = TimeDelta::days(14);

/// The oldest `Timestamp` an SNS message may carry. Older messages are refused: once their
/// ids are purged ([`SNS_MESSAGES_KEPT`]), a replay of a captured message could not be told
/// from a first delivery. Half the time ids are kept, so a message is refused before its id
/// can be forgotten.
pub const SNS_MAX_AGE: TimeDelta = TimeDelta::days(7);

/// What receiving one SNS message did.
#[derive(Debug, Clone, PartialEq)]
pub enum SnsOutcome {
    /// A subscription of a listed topic was confirmed (its `SubscribeURL` fetched).
    SubscriptionConfirmed,
    /// SNS reported an unsubscription; nothing to do.
    UnsubscribeNoted,
    /// This message was processed before (a redelivery): nothing done again.
    Duplicate,
    /// An SES notification was processed.
    Ses(SesOutcome),
}

/// Receives SNS messages: the topics listened to, the URL host rules, and the port that
/// fetches certificates and confirms subscriptions.
#[derive(Clone)]
pub struct SnsReceiver {
    fetcher: Arc<dyn SnsFetcher>,
    topics: TopicAllowList,
    hosts: SnsHostRules,
}

impl std::fmt::Debug for SnsReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnsReceiver")
            .field("topics", &self.topics)
            .field("hosts", &self.hosts)
            .finish_non_exhaustive()
    }
}

impl SnsReceiver {
    /// A receiver for `topics`, fetching through `fetcher` what `hosts` allows.
    pub fn new(fetcher: Arc<dyn SnsFetcher>, topics: TopicAllowList, hosts: SnsHostRules) -> Self {
        Self {
            fetcher,
            topics,
            hosts,
        }
    }

    /// Receives the body SNS posted. `Forbidden` for a topic that is not listed, a
    /// certificate or subscribe URL the host rules refuse, or a signature that does not
    /// verify (nothing changed in each case); `BadRequest` for a body that is not an SNS
    /// message or a signed message that is not an SES notification; `Unavailable` when a
    /// certificate or subscribe URL could not be fetched (SNS tries again).
    pub async fn receive(&self, engine: &Engine, body: &[u8]) -> Result<SnsOutcome> {
        let envelope = SnsEnvelope::parse(body).map_err(|e| Error::BadRequest(e.to_string()))?;
        if !self.topics.allows(&envelope.topic_arn) {
            return Err(Error::Forbidden(format!(
                "SNS topic {} is not listed in POSTHORN_SNS_TOPIC_ARNS",
                envelope.topic_arn
            )));
        }
        let cert_url = self
            .hosts
            .check_certificate(&envelope.signing_cert_url)
            .map_err(|e| Error::Forbidden(format!("SigningCertURL refused: {e}")))?;
        let cert = self
            .fetcher
            .certificate(&cert_url)
            .await
            .map_err(|e| fetch_error("the signing certificate", e))?;
        verify_signature(&envelope, &cert, engine.clock.now())
            .map_err(|e| Error::Forbidden(e.to_string()))?;
        check_age(&envelope.timestamp, engine.clock.now())?;

        match &envelope.kind {
            SnsKind::SubscriptionConfirmation { subscribe_url, .. } => {
                self.confirm(engine, &envelope, subscribe_url).await
            }
            SnsKind::UnsubscribeConfirmation { .. } => {
                tracing::warn!(topic = %envelope.topic_arn, "SNS reports the endpoint was unsubscribed");
                Ok(SnsOutcome::UnsubscribeNoted)
            }
            SnsKind::Notification { .. } => {
                let notification = SesNotification::parse(&envelope.message)
                    .map_err(|e| Error::BadRequest(e.to_string()))?;
                let outcome = engine
                    .apply_ses_notification(&envelope.message_id, &notification)
                    .await?;
                Ok(match outcome {
                    SesOutcome::Duplicate => SnsOutcome::Duplicate,
                    other => SnsOutcome::Ses(other),
                })
            }
        }
    }

    /// Confirms a subscription once per message (a redelivered confirmation is not
    /// fetched again).
    async fn confirm(
        &self,
        engine: &Engine,
        envelope: &SnsEnvelope,
        subscribe_url: &str,
    ) -> Result<SnsOutcome> {
        if engine.store.sns_message_seen(&envelope.message_id).await? {
            return Ok(SnsOutcome::Duplicate);
        }
        let url = self
            .hosts
            .check(subscribe_url)
            .map_err(|e| Error::Forbidden(format!("SubscribeURL refused: {e}")))?;
        self.fetcher
            .confirm_subscription(&url)
            .await
            .map_err(|e| fetch_error("the subscription confirmation", e))?;
        tracing::info!(topic = %envelope.topic_arn, "SNS subscription confirmed");
        engine
            .mark_sns_message(&envelope.message_id)
            .await
            .map(|_| SnsOutcome::SubscriptionConfirmed)
    }
}

/// Refuses a signed message older than [`SNS_MAX_AGE`] (a replay whose id may be forgotten).
fn check_age(timestamp: &str, now: DateTime<Utc>) -> Result<()> {
    let sent = DateTime::parse_from_rfc3339(timestamp).map_err(|_| {
        Error::BadRequest(format!("the SNS Timestamp {timestamp:?} is not RFC 3339"))
    })?;
    let age = now.signed_duration_since(sent.with_timezone(&Utc));
    if age > SNS_MAX_AGE {
        return Err(Error::Forbidden(format!(
            "the SNS message was sent {} days ago; messages older than {} days are refused, \
             as a replay could no longer be told from a first delivery",
            age.num_days(),
            SNS_MAX_AGE.num_days()
        )));
    }
    Ok(())
}

impl Engine {
    /// Forgets the SNS messages processed more than [`SNS_MESSAGES_KEPT`] ago; how many.
    /// Run by the workers' maintenance.
    pub async fn purge_sns_messages(&self) -> Result<u64> {
        let before = self.clock.now() - SNS_MESSAGES_KEPT;
        Ok(self.store.purge_sns_messages(before).await?)
    }

    /// Records that SNS message `message_id` was handled; `Ok(false)` when it already was.
    pub(crate) async fn mark_sns_message(&self, message_id: &str) -> Result<bool> {
        let mut changes = crate::ports::ChangeSet::new();
        changes.push(Write::RecordSnsMessage {
            message_id: message_id.to_owned(),
            processed_at: self.clock.now(),
        });
        match self.commit(changes).await {
            Ok(()) => Ok(true),
            Err(crate::ports::StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

fn fetch_error(what: &str, e: SnsFetchError) -> Error {
    match e {
        SnsFetchError::Refused(why) => Error::Forbidden(format!("{what} was refused: {why}")),
        SnsFetchError::Failed(why) => {
            Error::Unavailable(format!("{what} could not be fetched: {why}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0)
            .single()
            .expect("date")
    }

    #[test]
    fn messages_up_to_seven_days_old_pass_older_ones_are_forbidden() {
        assert_eq!(check_age("2026-11-21T10:05:00.000Z", now()), Ok(()));
        assert_eq!(check_age("2026-11-14T10:00:00Z", now()), Ok(()));
        assert!(matches!(
            check_age("2026-11-14T09:59:59Z", now()),
            Err(Error::Forbidden(_))
        ));
        assert!(matches!(
            check_age("yesterday", now()),
            Err(Error::BadRequest(_))
        ));
    }
}
