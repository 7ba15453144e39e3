//! Amazon SNS as a source of provider feedback: the message envelope and its signature, the
//! rules for the URLs it names, the topics Posthorn listens to, and the SES notifications
//! SNS carries. All pure; fetching is the [`crate::ports::SnsFetcher`] port's, and the use
//! case is [`crate::app::sns::SnsReceiver`].

mod envelope;
mod hosts;
mod ses;
mod signature;

pub use envelope::{EnvelopeError, SignatureVersion, SnsEnvelope, SnsKind};
pub use hosts::{AllowedUrl, BadHostList, SnsHostRules, UrlRefused};
pub use ses::{classify_bounce, SesError, SesEvent, SesMail, SesNotification, SesReceived};
pub use signature::{verify_signature, SignatureError};

/// The SNS topics whose messages Posthorn confirms and processes (`POSTHORN_SNS_TOPIC_ARNS`);
/// every other topic is refused before anything is fetched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicAllowList(Vec<String>);

/// A `POSTHORN_SNS_TOPIC_ARNS` entry that is not an SNS topic ARN.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("POSTHORN_SNS_TOPIC_ARNS: {0:?} is not an SNS topic ARN (arn:aws:sns:REGION:ACCOUNT:NAME)")]
pub struct BadTopicArn(pub String);

impl TopicAllowList {
    /// Parses a comma-separated list of topic ARNs; empty entries are skipped.
    pub fn parse(list: &str) -> Result<Self, BadTopicArn> {
        let mut arns = Vec::new();
        for arn in list.split(',').map(str::trim).filter(|a| !a.is_empty()) {
            let parts: Vec<&str> = arn.split(':').collect();
            let well_formed = parts.len() == 6
                && parts[0] == "arn"
                && parts[1].starts_with("aws")
                && parts[2] == "sns"
                && parts[3..].iter().all(|p| !p.is_empty());
            if !well_formed {
                return Err(BadTopicArn(arn.to_owned()));
            }
            arns.push(arn.to_owned());
        }
        Ok(Self(arns))
    }

    /// Whether `topic_arn` is listed (exactly, as ARNs are case-sensitive).
    pub fn allows(&self, topic_arn: &str) -> bool {
        self.0.iter().any(|a| a == topic_arn)
    }

    /// Whether no topic is listed (the endpoint then refuses everything).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_are_listed_exactly() {
        let list = TopicAllowList::parse(
            " arn:aws:sns:us-east-1:123456789012:ses-feedback ,,arn:aws-us-gov:sns:us-gov-west-1:1:t",
        )
        .expect("parses");
        assert!(list.allows("arn:aws:sns:us-east-1:123456789012:ses-feedback"));
        assert!(list.allows("arn:aws-us-gov:sns:us-gov-west-1:1:t"));
        assert!(!list.allows("arn:aws:sns:us-east-1:123456789012:SES-feedback"));
        assert!(!list.allows("arn:aws:sns:us-east-1:999999999999:ses-feedback"));
        assert!(TopicAllowList::parse("").expect("empty").is_empty());
        assert!(TopicAllowList::parse("arn:aws:sqs:us-east-1:1:q").is_err());
        assert!(TopicAllowList::parse("ses-feedback").is_err());
    }
}
