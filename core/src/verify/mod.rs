//! Email address verification (`POST /v1/verify`): offline checks plus a few DNS lookups.
//!
//! No SMTP probing: the verdict rests on syntax, the lists in [`lists`] and what DNS says
//! about the domain. A DNS failure is never read as a negative answer.

mod classify;
pub mod lists;
mod random;

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use serde::Serialize;

pub use classify::{is_alias_domain, is_disposable_domain, is_personal_domain, suggest_domain};
pub use random::looks_random;

use crate::model::{EmailAddress, EmailAddressError};
use crate::ports::{Dns, DnsError, RecordKind};

/// What Posthorn could tell about an address; serialised as the spec's Verification result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct VerificationResult {
    /// The normalised address, or the trimmed input when it does not parse.
    pub email: String,
    /// Whether the address can plausibly receive mail: good syntax, an existing domain, MX.
    pub valid: bool,
    /// The domain is a disposable, throw-away mail service.
    pub is_disposable: bool,
    /// The domain is an alias or forwarding service hiding the real mailbox.
    pub is_alias: bool,
    /// The domain looks like a misspelling; see `suggested_email`.
    pub is_typo: bool,
    /// The local part carries a `+tag`.
    pub is_plus_addressed: bool,
    /// The local part looks machine-generated or keyboard-mashed.
    pub is_random_input: bool,
    /// The domain is a free personal mailbox provider.
    pub is_personal_email: bool,
    /// DNS confirmed that the domain exists.
    pub domain_exists: bool,
    /// The domain has an address record, so it may serve a website.
    pub has_website: bool,
    /// The domain has at least one usable MX record.
    pub has_mx_records: bool,
    /// The address the writer probably meant, when `is_typo`.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub suggested_email: Option<String>,
    /// Plain sentences explaining the verdict and the flags.
    pub reasons: Vec<String>,
}

impl VerificationResult {
    fn unparseable(input: &str, err: &EmailAddressError) -> Self {
        let reason = match err {
            EmailAddressError::Empty => "The address is empty.",
            EmailAddressError::TooLong => "The address is longer than 254 characters.",
            EmailAddressError::Invalid(_) => {
                "The address is not of the form name@domain with a valid name and domain."
            }
        };
        Self {
            email: input.to_string(),
            valid: false,
            is_disposable: false,
            is_alias: false,
            is_typo: false,
            is_plus_addressed: false,
            is_random_input: false,
            is_personal_email: false,
            domain_exists: false,
            has_website: false,
            has_mx_records: false,
            suggested_email: None,
            reasons: vec![reason.to_string()],
        }
    }
}

/// Verifies `raw` with the offline checks and at most three concurrent DNS lookups
/// (MX, A, NS) through `dns`; never fails, the outcome is in the result.
pub async fn verify_email(dns: &dyn Dns, raw: &str) -> VerificationResult {
    let address = match EmailAddress::parse(raw) {
        Ok(address) => address,
        Err(err) => return VerificationResult::unparseable(raw.trim(), &err),
    };
    let (local, domain) = (address.local_part(), address.domain());
    let mut reasons = Vec::new();

    let is_disposable = is_disposable_domain(domain);
    if is_disposable {
        reasons.push("The domain belongs to a disposable (temporary) email service.".to_string());
    }
    let is_alias = is_alias_domain(domain);
    if is_alias {
        reasons.push(
            "The domain is an email alias or forwarding service that hides the real mailbox."
                .to_string(),
        );
    }
    let suggested_email = suggest_domain(domain).map(|meant| format!("{local}@{meant}"));
    if let Some(suggestion) = &suggested_email {
        reasons.push(format!(
            "The domain looks like a typo; did you mean {suggestion}?"
        ));
    }
    let is_plus_addressed = local.contains('+');
    if is_plus_addressed {
        reasons.push("The address uses plus addressing (a tag after '+').".to_string());
    }
    let is_random_input = looks_random(local);
    if is_random_input {
        reasons.push("The part before @ looks randomly generated.".to_string());
    }
    let is_personal_email = is_personal_domain(domain);
    if is_personal_email {
        reasons.push("The address belongs to a free personal email provider.".to_string());
    }

    let dns_facts = DnsFacts::look_up(dns, domain).await;
    reasons.extend(dns_facts.reasons());

    VerificationResult {
        email: address.as_str().to_string(),
        valid: dns_facts.domain_exists != Some(false) && dns_facts.has_mx_records != Some(false),
        is_disposable,
        is_alias,
        is_typo: suggested_email.is_some(),
        is_plus_addressed,
        is_random_input,
        is_personal_email,
        domain_exists: dns_facts.domain_exists == Some(true),
        has_website: dns_facts.has_website == Some(true),
        has_mx_records: dns_facts.has_mx_records == Some(true),
        suggested_email,
        reasons,
    }
}

/// What DNS said about a domain; `None` where it could not tell.
struct DnsFacts {
    domain_exists: Option<bool>,
    has_website: Option<bool>,
    has_mx_records: Option<bool>,
}

impl DnsFacts {
    async fn look_up(dns: &dyn Dns, domain: &str) -> Self {
        let [mx, a, ns] = join3([
            dns.lookup(domain, RecordKind::Mx),
            dns.lookup(domain, RecordKind::A),
            dns.lookup(domain, RecordKind::Ns),
        ])
        .await;
        let answers = [&mx, &a, &ns];
        // Any answer, even an empty one, proves the name exists; NXDOMAIN proves it does not.
        let domain_exists = if answers.iter().any(|r| r.is_ok()) {
            Some(true)
        } else if answers.iter().any(|r| **r == Err(DnsError::NoSuchDomain)) {
            Some(false)
        } else {
            None
        };
        let has = |answer: &Result<Vec<String>, DnsError>| match answer {
            // A null MX (RFC 7505) is "." and means the domain takes no mail.
            Ok(records) => Some(records.iter().any(|r| !r.trim_end_matches('.').is_empty())),
            Err(DnsError::NoSuchDomain) => Some(false),
            Err(DnsError::Unavailable(_)) => (domain_exists == Some(false)).then_some(false),
        };
        Self {
            domain_exists,
            has_website: has(&a),
            has_mx_records: has(&mx),
        }
    }

    fn reasons(&self) -> Vec<String> {
        let unknown = [self.domain_exists, self.has_mx_records, self.has_website]
            .iter()
            .filter(|fact| fact.is_none())
            .count();
        if unknown == 3 {
            return vec![
                "DNS lookups are unavailable, so the domain and its mail servers could not be checked."
                    .to_string(),
            ];
        }
        let mut reasons = Vec::new();
        if self.domain_exists == Some(false) {
            reasons.push("The domain does not exist.".to_string());
            return reasons;
        }
        match self.has_mx_records {
            Some(false) => reasons.push(
                "The domain has no mail servers (MX records), so it cannot receive email."
                    .to_string(),
            ),
            None => reasons.push(
                "DNS did not answer for the domain's mail servers, so they could not be checked."
                    .to_string(),
            ),
            Some(true) => {}
        }
        match self.has_website {
            Some(false) => reasons.push("The domain has no website (no address record).".to_string()),
            None => reasons.push(
                "DNS did not answer for the domain's address records, so its website could not be checked."
                    .to_string(),
            ),
            Some(true) => {}
        }
        reasons
    }
}

type Lookup<'a> = Pin<Box<dyn Future<Output = Result<Vec<String>, DnsError>> + Send + 'a>>;

/// Drives three lookups at once (core has no runtime to spawn on) and returns their answers
/// in order.
async fn join3(mut lookups: [Lookup<'_>; 3]) -> [Result<Vec<String>, DnsError>; 3] {
    let mut answers: [Option<Result<Vec<String>, DnsError>>; 3] = [None, None, None];
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (lookup, answer) in lookups.iter_mut().zip(answers.iter_mut()) {
            if answer.is_none() {
                match lookup.as_mut().poll(cx) {
                    Poll::Ready(result) => *answer = Some(result),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    answers.map(|answer| {
        answer.unwrap_or_else(|| Err(DnsError::Unavailable("lookup did not finish".to_string())))
    })
}

#[cfg(test)]
mod tests;
