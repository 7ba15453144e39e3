//! Enhanced mail system status codes (RFC 3463) and what a bounce with one means.

use std::sync::OnceLock;

use regex::Regex;

use crate::model::BounceType;

/// An enhanced status code `class.subject.detail`, as `5.1.1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusCode {
    /// 2 (success), 4 (persistent transient failure) or 5 (permanent failure).
    pub class: u16,
    /// The subject (1: addressing, 2: mailbox, 7: policy, …).
    pub subject: u16,
    /// The detail.
    pub detail: u16,
}

impl StatusCode {
    /// The code at the start of a `Status:` field value (`5.1.1 (comment)`).
    pub fn parse(text: &str) -> Option<Self> {
        let word = text.split_whitespace().next()?;
        let mut parts = word.split('.');
        let code = Self {
            class: parts.next()?.parse().ok()?,
            subject: parts.next()?.parse().ok()?,
            detail: parts.next()?.parse().ok()?,
        };
        (parts.next().is_none() && matches!(code.class, 2 | 4 | 5)).then_some(code)
    }

    /// The first enhanced code of a failure (class 4 or 5) anywhere in free text, as in a
    /// `Diagnostic-Code` or the body of a human-readable bounce.
    pub fn find_in(text: &str) -> Option<Self> {
        static CODE: OnceLock<Regex> = OnceLock::new();
        let re = CODE.get_or_init(|| {
            Regex::new(r"(?:^|[^0-9.])([45])\.([0-9]{1,3})\.([0-9]{1,3})(?:$|[^0-9.]|\.(?:$|\s))")
                .unwrap_or_else(|_| unreachable!("the pattern is valid"))
        });
        let caps = re.captures(text)?;
        Some(Self {
            class: caps[1].parse().ok()?,
            subject: caps[2].parse().ok()?,
            detail: caps[3].parse().ok()?,
        })
    }

    /// Whether the failure is about the recipient itself (5.1.x bad address, 5.2.1
    /// mailbox disabled): only then does the bounce unsubscribe.
    pub fn is_recipient_failure(&self) -> bool {
        self.class == 5 && (self.subject == 1 || (self.subject == 2 && self.detail == 1))
    }
}

impl std::fmt::Display for StatusCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.class, self.subject, self.detail)
    }
}

/// The bounce type a failure with `status` is: Permanent only for a recipient-specific
/// failure; 4.x.x, every other 5.x.x and no code at all are Transient, so a relay or
/// policy problem never unsubscribes a list.
pub fn classify(status: Option<StatusCode>) -> BounceType {
    match status {
        Some(code) if code.is_recipient_failure() => BounceType::Permanent,
        _ => BounceType::Transient,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn code(text: &str) -> Option<StatusCode> {
        StatusCode::parse(text)
    }

    #[test]
    fn only_recipient_failures_are_permanent() {
        let kind = |text: &str| classify(code(text));
        assert_eq!(kind("5.1.1"), BounceType::Permanent);
        assert_eq!(
            kind("5.1.10 (RESOLVER.ADR.RecipientNotFound)"),
            BounceType::Permanent
        );
        assert_eq!(kind("5.2.1"), BounceType::Permanent);
        assert_eq!(kind("5.2.2"), BounceType::Transient);
        assert_eq!(kind("5.7.1"), BounceType::Transient);
        assert_eq!(kind("5.4.1"), BounceType::Transient);
        assert_eq!(kind("4.1.1"), BounceType::Transient);
        assert_eq!(kind("4.2.2"), BounceType::Transient);
        assert_eq!(classify(None), BounceType::Transient);
    }

    #[test]
    fn status_fields_parse_strictly() {
        assert_eq!(
            code("5.1.1 (bad destination mailbox address)"),
            Some(StatusCode {
                class: 5,
                subject: 1,
                detail: 1
            })
        );
        assert_eq!(
            code("2.0.0"),
            Some(StatusCode {
                class: 2,
                subject: 0,
                detail: 0
            })
        );
        assert_eq!(code("3.1.1"), None);
        assert_eq!(code("5.1"), None);
        assert_eq!(code("5.1.1.1"), None);
        assert_eq!(code("x"), None);
        assert_eq!(code(""), None);
    }

    #[test]
    fn codes_are_found_in_text_but_not_in_versions_or_addresses() {
        let find = |t: &str| StatusCode::find_in(t).map(|c| c.to_string());
        assert_eq!(
            find("smtp; 550 5.1.1 <a@b.test>: User unknown").as_deref(),
            Some("5.1.1")
        );
        assert_eq!(
            find("550-5.1.1 The email account").as_deref(),
            Some("5.1.1")
        );
        assert_eq!(find("#5.2.2 mailbox full").as_deref(), Some("5.2.2"));
        assert_eq!(
            find("reply: 452 4.2.2 Mailbox full.").as_deref(),
            Some("4.2.2")
        );
        assert_eq!(find("ended with 5.7.1.").as_deref(), Some("5.7.1"));
        assert_eq!(find("Postfix 3.5.10.4 at 10.5.1.2"), None);
        assert_eq!(find("550 Unrouteable address"), None);
        assert_eq!(find("version 2.1.1"), None);
    }

    proptest! {
        #[test]
        fn parsing_never_panics(text in "\\PC{0,60}") {
            let _ = StatusCode::parse(&text);
            let _ = StatusCode::find_in(&text);
        }
    }
}
