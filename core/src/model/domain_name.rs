//! Domain names in one canonical form: ASCII, lower case, each internationalised label as
//! its A-label (`bücher.de` → `xn--bcher-kva.de`).
//!
//! Posthorn keeps every domain it is given (sending domains, key-set limits, the domain part
//! of addresses) in this form before storing, comparing or looking it up, because it is the
//! form DNS answers for, SMTP carries without SMTPUTF8 and DKIM's `d=` names; so
//! `x@bücher.de` and `x@xn--bcher-kva.de` are one address. Names stored before this rule
//! may still be Unicode: [`same_domain`] and [`ascii_domain_address`] accept them.

use std::borrow::Cow;

use idna::uts46::{AsciiDenyList, DnsLength, Hyphens, Uts46};

/// Most characters of a domain name in its ASCII form (RFC 1035, without the final dot).
pub const MAX_DOMAIN_LEN: usize = 253;
/// Most characters of one label in its ASCII form (RFC 1035).
const MAX_LABEL_LEN: usize = 63;
/// Most bytes of input looked at: beyond this no name fits [`MAX_DOMAIN_LEN`] anyway
/// (UTF-8 takes at most four bytes a character), and IDNA processing stays bounded.
const MAX_INPUT_LEN: usize = 4 * MAX_DOMAIN_LEN;

/// Why a string is not a domain name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DomainNameError {
    /// Nothing at all.
    #[error("the domain is empty")]
    Empty,
    /// Longer than DNS allows once in ASCII form: the whole over 253 characters, or a
    /// label over 63.
    #[error("the domain is longer than DNS allows (253 characters, 63 a label)")]
    TooLong,
    /// An empty label (`a..b`, a leading or trailing dot) or only one label.
    #[error("the domain needs two labels or more, none of them empty")]
    Labels,
    /// A character no domain name may hold, a label starting or ending with a hyphen, or an
    /// internationalised label that is not valid IDNA (UTS #46), such as a bad `xn--` label.
    #[error("the domain is not a valid (internationalised) domain name")]
    Invalid,
}

/// The canonical form of the domain name `raw`: UTS #46 processing (non-transitional,
/// STD3 rules: letters, digits and inner hyphens only), so upper case is lowered, Unicode
/// is mapped and normalised, and each label that is not ASCII becomes its A-label
/// (`Bücher.DE` → `xn--bcher-kva.de`); an ASCII name only changes case. `xn--` labels are
/// decoded and checked, so a canonical name is its own canonical form.
///
/// Refuses (never panics on) anything else: names over 253 characters (or a label over 63)
/// in ASCII form, fewer than two labels, empty labels, and input IDNA refuses. `raw` is
/// taken as it is: trimming white space or a final dot is the caller's choice.
pub fn canonical_domain(raw: &str) -> Result<String, DomainNameError> {
    if raw.is_empty() {
        return Err(DomainNameError::Empty);
    }
    if raw.len() > MAX_INPUT_LEN {
        return Err(DomainNameError::TooLong);
    }
    let ascii = Uts46::new()
        .to_ascii(
            raw.as_bytes(),
            AsciiDenyList::STD3,
            // Hyphens only checked first and last: `ab--cd` labels exist in the wild.
            Hyphens::CheckFirstLast,
            // Lengths are checked below, to say which rule failed.
            DnsLength::Ignore,
        )
        .map_err(|_| DomainNameError::Invalid)?;
    let mut labels = 0;
    for label in ascii.split('.') {
        if label.is_empty() {
            return Err(DomainNameError::Labels);
        }
        if label.len() > MAX_LABEL_LEN {
            return Err(DomainNameError::TooLong);
        }
        labels += 1;
    }
    if ascii.len() > MAX_DOMAIN_LEN {
        return Err(DomainNameError::TooLong);
    }
    if labels < 2 {
        return Err(DomainNameError::Labels);
    }
    Ok(ascii.into_owned())
}

/// Whether `a` and `b` name the same domain: equal but for ASCII case, or with the same
/// canonical form ([`canonical_domain`]), so `Bücher.de` is `xn--bcher-kva.de`. A name that
/// has no canonical form only equals itself (but for ASCII case).
pub fn same_domain(a: &str, b: &str) -> bool {
    if a.eq_ignore_ascii_case(b) {
        return true;
    }
    // For ASCII names canonical means lower case, which the comparison above covered.
    if a.is_ascii() && b.is_ascii() {
        return false;
    }
    matches!((canonical_domain(a), canonical_domain(b)), (Ok(x), Ok(y)) if x == y)
}

/// `address` (`local@domain`) with its domain in canonical form, for the wire (SMTP
/// envelope and headers): addresses are canonical when parsed, so this only changes one
/// stored before, with a Unicode domain. An address without `@`, or whose domain has no
/// canonical form, comes back as it is.
pub fn ascii_domain_address(address: &str) -> Cow<'_, str> {
    if address.is_ascii() {
        return Cow::Borrowed(address);
    }
    let Some((local, domain)) = address.rsplit_once('@') else {
        return Cow::Borrowed(address);
    };
    match canonical_domain(domain) {
        Ok(ascii) if ascii != domain => Cow::Owned(format!("{local}@{ascii}")),
        _ => Cow::Borrowed(address),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ascii_names_only_change_case() {
        assert_eq!(
            canonical_domain("Mail.Example.COM").as_deref(),
            Ok("mail.example.com")
        );
        assert_eq!(canonical_domain("a-b--c.io").as_deref(), Ok("a-b--c.io"));
        assert_eq!(canonical_domain("1.2.3.4").as_deref(), Ok("1.2.3.4"));
    }

    #[test]
    fn unicode_labels_become_a_labels() {
        assert_eq!(
            canonical_domain("bücher.de").as_deref(),
            Ok("xn--bcher-kva.de")
        );
        assert_eq!(
            canonical_domain("BÜCHER.de").as_deref(),
            Ok("xn--bcher-kva.de")
        );
        assert_eq!(
            canonical_domain("пример.рф").as_deref(),
            Ok("xn--e1afmkfd.xn--p1ai")
        );
        assert_eq!(canonical_domain("例え.jp").as_deref(), Ok("xn--r8jz45g.jp"));
        // Non-transitional processing: ß stays a letter of its own (IDNA 2008).
        assert_eq!(
            canonical_domain("straße.de").as_deref(),
            Ok("xn--strae-oqa.de")
        );
        // Full-width letters and the ideographic full stop map to their ASCII forms.
        assert_eq!(
            canonical_domain("ＥＸＡＭＰＬＥ。com").as_deref(),
            Ok("example.com")
        );
    }

    #[test]
    fn a_labels_are_kept_and_lowered() {
        assert_eq!(
            canonical_domain("xn--bcher-kva.de").as_deref(),
            Ok("xn--bcher-kva.de")
        );
        assert_eq!(
            canonical_domain("XN--BCHER-KVA.DE").as_deref(),
            Ok("xn--bcher-kva.de")
        );
    }

    #[test]
    fn invalid_names_are_refused() {
        use DomainNameError::*;
        for (bad, why) in [
            ("", Empty),
            ("localhost", Labels),
            ("bücher", Labels),
            ("a..b.com", Labels),
            (".a.com", Labels),
            ("a.com.", Labels),
            ("-a.com", Invalid),
            ("a-.com", Invalid),
            ("a b.com", Invalid),
            ("a_b.com", Invalid),
            ("a@b.com", Invalid),
            // Not Punycode, and Punycode of plain ASCII: no valid A-label.
            ("xn--zz.com", Invalid),
            ("xn--abc-.com", Invalid),
            // A label that is a combining mark first, and one mixing right-to-left letters
            // with left-to-right ones (the bidi rule).
            ("\u{0301}a.com", Invalid),
            ("a\u{05D0}.com", Invalid),
        ] {
            assert_eq!(canonical_domain(bad), Err(why), "{bad:?}");
        }
        let long_label = format!("{}.com", "a".repeat(64));
        assert_eq!(canonical_domain(&long_label), Err(TooLong));
        let long = format!("{}com", "abcdefghi.".repeat(26));
        assert_eq!(
            canonical_domain(&long[10..]).map(|d| d.len()),
            Ok(MAX_DOMAIN_LEN)
        );
        assert_eq!(canonical_domain(&long), Err(TooLong));
        // 60 ü are 120 bytes of UTF-8 but a label of more than 63 in ASCII form.
        let long_unicode = format!("{}.de", "ü".repeat(60));
        assert_eq!(canonical_domain(&long_unicode), Err(TooLong));
        assert_eq!(canonical_domain(&"ü".repeat(2000)), Err(TooLong));
    }

    #[test]
    fn same_domain_across_forms() {
        assert!(same_domain("bücher.de", "xn--bcher-kva.de"));
        assert!(same_domain("XN--BCHER-KVA.de", "Bücher.DE"));
        assert!(same_domain("Example.com", "example.COM"));
        assert!(!same_domain("bücher.de", "bucher.de"));
        assert!(!same_domain("example.com", "example.org"));
        assert!(!same_domain("not valid", "not-valid"));
    }

    #[test]
    fn addresses_get_an_ascii_domain() {
        assert_eq!(
            ascii_domain_address("jürgen@bücher.de"),
            "jürgen@xn--bcher-kva.de"
        );
        assert!(matches!(
            ascii_domain_address("a@example.com"),
            Cow::Borrowed("a@example.com")
        ));
        assert_eq!(
            ascii_domain_address("jürgen@example.com"),
            "jürgen@example.com"
        );
        assert_eq!(ascii_domain_address("no-at-sign"), "no-at-sign");
        assert_eq!(ascii_domain_address("a@\u{0301}x.com"), "a@\u{0301}x.com");
    }

    /// A label of letters, digits and inner hyphens, never starting `xn--`.
    fn ascii_label() -> impl Strategy<Value = String> {
        "[a-zA-Z0-9]([a-zA-Z0-9-]{0,20}[a-zA-Z0-9])?".prop_filter("not an A-label", |l| {
            !l.to_ascii_lowercase().starts_with("xn--")
        })
    }

    proptest! {
        #[test]
        fn ascii_domains_are_unchanged_but_for_case(labels in prop::collection::vec(ascii_label(), 2..5)) {
            let raw = labels.join(".");
            prop_assert_eq!(canonical_domain(&raw), Ok(raw.to_ascii_lowercase()));
        }

        #[test]
        fn unicode_domains_become_ascii_a_labels(
            labels in prop::collection::vec("[a-zäöüßéèñçøåæœ]{1,15}", 1..4),
            tld in "[a-z]{2,6}",
        ) {
            let raw = format!("{}.{tld}", labels.join("."));
            let ascii = canonical_domain(&raw).expect("valid");
            prop_assert!(ascii.is_ascii(), "{}", ascii);
            for (label, unicode) in ascii.split('.').zip(&labels) {
                prop_assert_eq!(label.starts_with("xn--"), !unicode.is_ascii());
            }
            // Back to Unicode gives the input: nothing was lost.
            let (back, ok) = idna::domain_to_unicode(&ascii);
            prop_assert!(ok.is_ok());
            prop_assert_eq!(back, raw);
        }

        #[test]
        fn canonical_form_is_idempotent(raw in "\\PC{0,60}") {
            if let Ok(once) = canonical_domain(&raw) {
                prop_assert_eq!(canonical_domain(&once), Ok(once.clone()));
                prop_assert!(once.is_ascii() && !once.chars().any(|c| c.is_ascii_uppercase()));
                prop_assert!(once.len() <= MAX_DOMAIN_LEN);
            }
        }

        #[test]
        fn canonical_form_of_unicode_names_is_idempotent(
            labels in prop::collection::vec(
                "[a-zA-Z0-9äöüß\u{00C0}-\u{024F}\u{0400}-\u{04FF}\u{3040}-\u{30FF}-]{1,20}",
                2..4,
            ),
        ) {
            let raw = labels.join(".");
            if let Ok(once) = canonical_domain(&raw) {
                prop_assert_eq!(canonical_domain(&once), Ok(once.clone()));
                prop_assert!(once.is_ascii(), "{}", once);
                prop_assert!(same_domain(&raw, &once));
            }
        }

        #[test]
        fn anything_is_refused_or_canonical_never_a_panic(raw in ".{0,300}") {
            let _ = canonical_domain(&raw);
            let _ = same_domain(&raw, "example.com");
            let _ = ascii_domain_address(&raw);
        }
    }
}
