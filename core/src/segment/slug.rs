//! Segment slugs, as used in the event names `segment.<slug>.entry` and `.exit`.

use std::sync::LazyLock;

use regex::Regex;

static NOT_WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[^\w\s-]+").expect("constant pattern"));
static SEPARATORS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[\s_-]+").expect("constant pattern"));

/// The slug of a segment name: lower-cased; characters that are not word characters
/// (Unicode `\w`: letters, marks, digits, connectors), white space or `-` dropped; each run
/// of white space, `-` and `_` turned into one `-`; leading and trailing `-` removed
/// ("VIP Customers!" → "vip-customers"). May be empty (a name of only punctuation), in
/// which case callers pick a fallback.
pub fn slug(name: &str) -> String {
    let lower = name.to_lowercase();
    let kept = NOT_WORD.replace_all(&lower, "");
    let joined = SEPARATORS.replace_all(&kept, "-");
    joined.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn examples() {
        for (name, expected) in [
            ("VIP Customers!", "vip-customers"),
            ("  Früh  Kunden ", "früh-kunden"),
            ("Fru\u{308}h", "fru\u{308}h"),
            ("a - b__c", "a-b-c"),
            ("--Hello--World--", "hello-world"),
            ("Q3 2024: (re)engaged", "q3-2024-reengaged"),
            ("日本 ユーザー", "日本-ユーザー"),
            ("!!!", ""),
            ("", ""),
        ] {
            assert_eq!(slug(name), expected, "{name:?}");
        }
    }

    proptest! {
        #[test]
        fn slugs_are_clean_and_stable(name in "\\PC{0,40}") {
            let s = slug(&name);
            prop_assert!(!s.starts_with('-') && !s.ends_with('-'));
            prop_assert!(!s.contains("--"));
            prop_assert!(!s.chars().any(|c| c.is_whitespace() || c == '_'));
            prop_assert_eq!(slug(&s), s.clone());
        }
    }
}
