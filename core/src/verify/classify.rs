//! Offline classification of a domain: disposable, alias service, personal provider, typo.

use std::collections::HashSet;
use std::sync::OnceLock;

use super::lists::{
    ALIAS_DOMAINS, PERSONAL_DOMAINS, PERSONAL_FAMILIES, POPULAR_DOMAINS, TLD_TYPOS,
};

/// Whether `domain` (or a parent of it) is a disposable, throw-away mail service.
///
/// Alias services are excluded even though `mailchecker` lists many of them: they forward to
/// a lasting mailbox, so they are reported as aliases rather than as disposable.
pub fn is_disposable_domain(domain: &str) -> bool {
    // `mailchecker::is_valid` would also say false for syntax it dislikes (IDNs, for one),
    // and scans its list linearly on every call; a set built once answers for the domain only.
    static DISPOSABLE: OnceLock<HashSet<&'static str>> = OnceLock::new();
    let set = DISPOSABLE.get_or_init(|| mailchecker::blacklist().into_iter().collect());
    !is_alias_domain(domain) && registrable_suffixes(domain).any(|d| set.contains(d))
}

/// Whether `domain` belongs to an email alias or forwarding service.
pub fn is_alias_domain(domain: &str) -> bool {
    registrable_suffixes(domain).any(|d| ALIAS_DOMAINS.contains(&d))
}

/// Whether `domain` is a free personal mailbox provider (gmail.com, hotmail.fr, ...).
pub fn is_personal_domain(domain: &str) -> bool {
    if PERSONAL_DOMAINS.contains(&domain) || POPULAR_DOMAINS.contains(&domain) {
        return true;
    }
    let Some((first, rest)) = domain.split_once('.') else {
        return false;
    };
    // `rest` must look like a public suffix (`fr`, `co.uk`, `com.br`), so that
    // `yahoo.example.com` is not taken for Yahoo.
    PERSONAL_FAMILIES.contains(&first)
        && rest.split('.').count() <= 2
        && rest.split('.').all(|label| (2..=3).contains(&label.len()))
}

/// Suggests the domain the writer probably meant, or `None` when `domain` looks intended.
///
/// Never returns `domain` itself.
pub fn suggest_domain(domain: &str) -> Option<String> {
    if is_personal_domain(domain) || is_alias_domain(domain) {
        return None;
    }
    let (name, tld) = domain.rsplit_once('.')?;
    let fixed_tld = TLD_TYPOS
        .iter()
        .find(|(typo, _)| *typo == tld)
        .map(|(_, right)| *right);
    let candidate = match fixed_tld {
        Some(right) => format!("{name}.{right}"),
        None => domain.to_string(),
    };
    let suggestion = nearest_popular(&candidate)
        .map(str::to_string)
        .or_else(|| fixed_tld.map(|_| candidate));
    suggestion.filter(|s| s != domain)
}

/// The popular domain within the edit distance allowed for it, nearest first.
fn nearest_popular(domain: &str) -> Option<&'static str> {
    if let Some(exact) = POPULAR_DOMAINS.iter().find(|p| **p == domain) {
        return Some(exact);
    }
    let input: Vec<char> = domain.chars().collect();
    POPULAR_DOMAINS
        .iter()
        .filter_map(|popular| {
            let allowed = allowed_distance(popular);
            let target: Vec<char> = popular.chars().collect();
            if allowed == 0 || input.len().abs_diff(target.len()) > allowed {
                return None;
            }
            let distance = edit_distance(&input, &target);
            (distance <= allowed).then_some((distance, *popular))
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, popular)| popular)
}

/// How many edits may separate a typo from `popular`: short names (`aol`, `me`, `live`)
/// are one edit away from too many real domains to guess safely.
fn allowed_distance(popular: &str) -> usize {
    match popular.split('.').next().map_or(0, str::len) {
        0..=4 => 0,
        5..=7 => 1,
        _ => 2,
    }
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
/// two neighbours, the usual shapes of a typing slip.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

/// `a.b.example.com`, `b.example.com`, `example.com`: the domain and its parents, down to
/// two labels.
fn registrable_suffixes(domain: &str) -> impl Iterator<Item = &str> {
    let starts = std::iter::once(0).chain(domain.match_indices('.').map(|(i, _)| i + 1));
    starts
        .map(move |start| &domain[start..])
        .filter(|suffix| suffix.contains('.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn disposable_domains_and_their_subdomains() {
        assert!(is_disposable_domain("mailinator.com"));
        assert!(is_disposable_domain("yopmail.com"));
        assert!(is_disposable_domain("x.guerrillamailblock.com"));
        assert!(!is_disposable_domain("gmail.com"));
        assert!(!is_disposable_domain("example.com"));
        assert!(!is_disposable_domain("bücher.de"));
    }

    #[test]
    fn alias_services_are_not_disposable() {
        for d in [
            "duck.com",
            "mozmail.com",
            "addy.io",
            "someone.anonaddy.com",
            "aleeas.com",
        ] {
            assert!(is_alias_domain(d), "{d}");
            assert!(!is_disposable_domain(d), "{d}");
        }
        assert!(is_alias_domain("privaterelay.appleid.com"));
        assert!(!is_alias_domain("appleid.com"));
        assert!(!is_alias_domain("gmail.com"));
    }

    #[test]
    fn personal_providers() {
        for d in [
            "gmail.com",
            "hotmail.fr",
            "yahoo.co.jp",
            "gmx.at",
            "web.de",
            "icloud.com",
        ] {
            assert!(is_personal_domain(d), "{d}");
        }
        for d in ["example.com", "yahoo.example.com", "gmailx.com", "hotmail"] {
            assert!(!is_personal_domain(d), "{d}");
        }
    }

    #[test]
    fn suggests_popular_domains_and_fixes_tlds() {
        let cases = [
            ("gmial.com", "gmail.com"),
            ("gmai.com", "gmail.com"),
            ("gmail.con", "gmail.com"),
            ("gmaill.cmo", "gmail.com"),
            ("hotmial.com", "hotmail.com"),
            ("yahooo.com", "yahoo.com"),
            ("outlok.com", "outlook.com"),
            ("gogglemail.com", "googlemail.com"),
            ("example.con", "example.com"),
            ("example.comm", "example.com"),
            ("example.ogr", "example.org"),
        ];
        for (typo, meant) in cases {
            assert_eq!(suggest_domain(typo).as_deref(), Some(meant), "{typo}");
        }
    }

    #[test]
    fn leaves_real_domains_alone() {
        for d in [
            "gmail.com",
            "ymail.com",
            "mail.com",
            "email.com",
            "hotmail.fr",
            "example.com",
            "example.co",
            "aon.com",
            "love.com",
            "mx.com",
            "hotmart.com",
            "duck.com",
            "a.io",
        ] {
            assert_eq!(suggest_domain(d), None, "{d}");
        }
    }

    #[test]
    fn edit_distance_counts_swaps_once() {
        let chars = |s: &str| s.chars().collect::<Vec<_>>();
        assert_eq!(edit_distance(&chars("gmial"), &chars("gmail")), 1);
        assert_eq!(edit_distance(&chars(""), &chars("abc")), 3);
        assert_eq!(edit_distance(&chars("kitten"), &chars("sitting")), 3);
    }

    proptest! {
        #[test]
        fn never_suggests_the_same_domain(domain in "[a-z0-9.-]{0,30}") {
            prop_assert_ne!(suggest_domain(&domain), Some(domain.clone()));
        }

        #[test]
        fn never_suggests_a_popular_domain_itself(i in 0..POPULAR_DOMAINS.len()) {
            prop_assert_eq!(suggest_domain(POPULAR_DOMAINS[i]), None);
        }
    }
}
