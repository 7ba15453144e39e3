//! `EmailAddress`: an address that has been checked once, at the edge.

use serde::{Deserialize, Serialize};
use std::fmt;

use super::domain_name::canonical_domain;

/// A syntactically valid, trimmed, lower-cased email address whose domain is in canonical
/// (ASCII, A-label) form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct EmailAddress(String);

/// Why a string is not an email address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmailAddressError {
    /// Nothing but white space.
    #[error("email is empty")]
    Empty,
    /// Longer than RFC 5321 allows (254 characters).
    #[error("email is longer than 254 characters")]
    TooLong,
    /// Not of the form local@domain.
    #[error("'{0}' is not a valid email address")]
    Invalid(String),
}

impl EmailAddress {
    /// Most characters of an address (RFC 5321), after trimming.
    pub const MAX_LEN: usize = 254;

    /// Parses `raw`: trims it, lower-cases it and checks its syntax (dot-atom local part,
    /// a domain of at least two labels, no white space or control characters). The domain
    /// is kept in canonical form ([`canonical_domain`]: its A-labels, `jürgen@Bücher.de` →
    /// `jürgen@xn--bcher-kva.de`), so both spellings are one address for storage, lookups
    /// and matching against sending domains; the local part stays as given, lower-cased.
    /// A domain that is not valid IDNA is refused; the length limit applies to the result.
    pub fn parse(raw: &str) -> Result<Self, EmailAddressError> {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(EmailAddressError::Empty);
        }
        if trimmed.len() > Self::MAX_LEN {
            return Err(EmailAddressError::TooLong);
        }
        // The same letters either way; ASCII (nearly every address) skips Unicode's tables.
        let lowered = if trimmed.is_ascii() {
            trimmed.to_ascii_lowercase()
        } else {
            trimmed.to_lowercase()
        };
        let invalid = || EmailAddressError::Invalid(trimmed.to_string());
        let (local, domain) = lowered.rsplit_once('@').ok_or_else(invalid)?;
        if !valid_local(local) {
            return Err(invalid());
        }
        let ascii = canonical_domain(domain).map_err(|_| invalid())?;
        if !valid_domain(&ascii) {
            return Err(invalid());
        }
        if ascii == domain {
            return Ok(Self(lowered));
        }
        let address = format!("{local}@{ascii}");
        if address.len() > Self::MAX_LEN {
            return Err(EmailAddressError::TooLong);
        }
        Ok(Self(address))
    }

    /// An address read back from a store, kept exactly as stored. It must have the shape
    /// [`EmailAddress::parse`] gives, or the one it gave before domains were made canonical
    /// (a Unicode domain, even one IDNA refuses): a row written then stays readable, under
    /// the address it was stored with, rather than failing to decode.
    pub fn from_stored(stored: &str) -> Result<Self, EmailAddressError> {
        let invalid = || EmailAddressError::Invalid(stored.to_string());
        if stored.is_empty() {
            return Err(EmailAddressError::Empty);
        }
        if stored.len() > Self::MAX_LEN {
            return Err(EmailAddressError::TooLong);
        }
        let (local, domain) = stored.rsplit_once('@').ok_or_else(invalid)?;
        if valid_local(local) && valid_domain(domain) {
            Ok(Self(stored.to_owned()))
        } else {
            Err(invalid())
        }
    }

    /// The whole address.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The part before `@`.
    pub fn local_part(&self) -> &str {
        self.0.rsplit_once('@').map(|(l, _)| l).unwrap_or("")
    }

    /// The part after `@`: in canonical form ([`canonical_domain`]) for a parsed address.
    pub fn domain(&self) -> &str {
        self.0.rsplit_once('@').map(|(_, d)| d).unwrap_or("")
    }
}

fn valid_local(local: &str) -> bool {
    const SPECIALS: &str = "!#$%&'*+/=?^_`{|}~-.";
    !local.is_empty()
        && local.len() <= 64
        && !local.starts_with('.')
        && !local.ends_with('.')
        // A byte scan: `contains("..")` sets up a substring searcher for every address.
        && !local.as_bytes().windows(2).any(|pair| pair == b"..")
        && local
            .chars()
            .all(|c| c.is_alphanumeric() || SPECIALS.contains(c))
}

/// The shape of an address's domain: labels of letters, digits and inner hyphens, two or
/// more, the last of two characters or more and not all digits. A canonical domain is
/// checked with it for the last-label rules; a stored one, which may be Unicode, for all.
fn valid_domain(domain: &str) -> bool {
    let mut labels = 0;
    let mut last = "";
    for label in domain.split('.') {
        let valid = !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label.chars().all(|c| c.is_alphanumeric() || c == '-');
        if !valid {
            return false;
        }
        labels += 1;
        last = label;
    }
    domain.len() <= 253
        && labels >= 2
        && last.len() >= 2
        && !last.chars().all(|c| c.is_ascii_digit())
}

/// What [`EmailAddress::parse`] accepts, for ASCII addresses: white space around, a
/// dot-atom local part of at most 64 characters, `@`, labels of letters, digits and inner
/// hyphens (at most 63 characters), and a last label of two characters or more that is not
/// all digits.
#[cfg(feature = "openapi")]
pub const EMAIL_PATTERN: &str = concat!(
    r"^\s*(?=[^@]{1,64}@)",
    r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*",
    r"@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+",
    r"(?![0-9]+\s*$)[A-Za-z0-9][A-Za-z0-9-]{0,61}[A-Za-z0-9]\s*$"
);

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for EmailAddress {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Email)))
            .min_length(Some(3))
            .max_length(Some(Self::MAX_LEN))
            .pattern(Some(EMAIL_PATTERN))
            .description(Some(
                "An email address: a dot-atom local part of at most 64 characters, `@`, and a \
                 domain of two labels or more (letters, digits, inner hyphens) whose last label \
                 is not all digits. Trimmed and lower-cased; an internationalised domain is \
                 kept in its ASCII form (`a@bücher.de` is `a@xn--bcher-kva.de`).",
            ))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for EmailAddress {}

impl fmt::Display for EmailAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for EmailAddress {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for EmailAddress {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        Self::parse(&raw).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn normalises_case_and_space() {
        let e = EmailAddress::parse("  Ada.Lovelace@Example.COM ").expect("valid");
        assert_eq!(e.as_str(), "ada.lovelace@example.com");
        assert_eq!(e.domain(), "example.com");
        assert_eq!(e.local_part(), "ada.lovelace");
    }

    #[test]
    fn accepts_unicode_and_plus() {
        assert!(EmailAddress::parse("jürgen+news@bücher.de").is_ok());
        assert!(EmailAddress::parse("a+b@x.io").is_ok());
    }

    #[test]
    fn unicode_domains_are_kept_as_a_labels_and_local_parts_as_given() {
        let e = EmailAddress::parse(" Jürgen+News@Bücher.DE ").expect("valid");
        assert_eq!(e.as_str(), "jürgen+news@xn--bcher-kva.de");
        assert_eq!(e.domain(), "xn--bcher-kva.de");
        assert_eq!(e.local_part(), "jürgen+news");
        let same = EmailAddress::parse("jürgen+news@XN--BCHER-KVA.de").expect("valid");
        assert_eq!(e, same);
        assert_eq!(
            EmailAddress::parse("x@пример.рф").expect("valid").as_str(),
            "x@xn--e1afmkfd.xn--p1ai"
        );
    }

    #[test]
    fn invalid_idna_domains_are_refused() {
        for bad in [
            "a@xn--zz.com",
            "a@\u{0301}b.com",
            "a@a\u{05D0}.com",
            "a@b.xn--zz",
        ] {
            assert!(
                matches!(EmailAddress::parse(bad), Err(EmailAddressError::Invalid(_))),
                "{bad:?} should be refused"
            );
        }
        // Under 254 characters as given, over once the domain is an A-label.
        // Each label: 56 bytes of UTF-8, 62 characters as `xn--aaa…a-ovf`.
        let label = format!("{}ü", "a".repeat(54));
        let long = format!("{}@{label}.{label}.{label}.de", "a".repeat(64));
        assert!(long.len() <= EmailAddress::MAX_LEN);
        assert_eq!(EmailAddress::parse(&long), Err(EmailAddressError::TooLong));
    }

    #[test]
    fn stored_addresses_read_back_as_stored() {
        for stored in [
            "ada@example.com",
            "jürgen@xn--bcher-kva.de",
            "x@bücher.de",
            "x@a\u{05D0}.com",
        ] {
            assert_eq!(
                EmailAddress::from_stored(stored)
                    .expect("readable")
                    .as_str(),
                stored
            );
        }
        for bad in ["", "plain", "a@b", "a b@c.com", "a@b..com"] {
            assert!(EmailAddress::from_stored(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn refuses_bad_shapes() {
        for bad in [
            "",
            " ",
            "plain",
            "@x.com",
            "a@",
            "a@b",
            "a@@b.com",
            "a b@c.com",
            "a@b..com",
            "a..b@c.com",
            ".a@b.com",
            "a.@b.com",
            "a@-b.com",
            "a@b.c",
            "a@1.23",
            "a\r\n@b.com",
            "a\nb@c.com",
        ] {
            assert!(
                EmailAddress::parse(bad).is_err(),
                "{bad:?} should be refused"
            );
        }
    }

    proptest! {
        #[test]
        fn parse_never_panics(raw in ".{0,300}") {
            let _ = EmailAddress::parse(&raw);
        }

        #[test]
        fn parsed_addresses_are_stable(local in "[a-z0-9]{1,20}", domain in "[a-z]{1,10}\\.[a-z]{2,5}") {
            let raw = format!("{local}@{domain}");
            let once = EmailAddress::parse(&raw).expect("valid");
            let twice = EmailAddress::parse(once.as_str()).expect("still valid");
            prop_assert_eq!(once, twice);
        }

        #[test]
        fn unicode_and_a_label_spellings_are_one_address(
            local in "[a-z0-9]{1,20}",
            labels in prop::collection::vec("[a-zäöüéñ]{1,12}", 1..3),
        ) {
            let domain = format!("{}.de", labels.join("."));
            let unicode = EmailAddress::parse(&format!("{local}@{domain}")).expect("valid");
            prop_assert!(unicode.as_str().is_ascii());
            let ascii = EmailAddress::parse(unicode.as_str()).expect("still valid");
            prop_assert_eq!(&unicode, &ascii);
            prop_assert_eq!(EmailAddress::from_stored(unicode.as_str()), Ok(ascii));
        }

        #[test]
        fn parsed_addresses_have_no_space_or_control(raw in "\\PC{0,40}@\\PC{0,40}") {
            if let Ok(e) = EmailAddress::parse(&raw) {
                prop_assert!(!e.as_str().chars().any(|c| c.is_whitespace() || c.is_control()));
            }
        }
    }
}
