//! A heuristic for local parts that look machine-generated or keyboard-mashed.

/// Keyboard rows typed in a sweep; five keys long so that no common name contains one.
const KEYBOARD_SWEEPS: &[&str] = &[
    "qwert", "werty", "yuiop", "poiuy", "asdfg", "sdfgh", "dfghj", "fghjk", "ghjkl", "lkjhg",
    "zxcvb", "xcvbn", "cvbnm", "mnbvc",
];

/// Score at which a local part counts as random.
const THRESHOLD: u32 = 3;

/// Whether the local part of an address (the tag after `+` excluded) looks random, such as
/// `xkcdqzvbt` or `a8f3k2m9x7`, while names like `john.smith` or `j.doe42` do not.
pub fn looks_random(local: &str) -> bool {
    let local = local
        .split('+')
        .next()
        .unwrap_or(local)
        .to_ascii_lowercase();
    // The letter statistics below only make sense for the Latin alphabet.
    if !local.is_ascii() {
        return false;
    }
    let compact: Vec<char> = local.chars().filter(char::is_ascii_alphanumeric).collect();
    if compact.len() < 6 {
        return false;
    }
    let letters: Vec<char> = compact
        .iter()
        .copied()
        .filter(char::is_ascii_alphabetic)
        .collect();

    let mut score = 0;
    score += match longest_consonant_run(&local) {
        0..=4 => 0,
        5 => 1,
        _ => 2,
    };
    if letters.len() >= 6 {
        let vowels = letters.iter().filter(|c| is_vowel(**c)).count();
        let ratio = vowels as f64 / letters.len() as f64;
        score += if ratio < 0.15 {
            2
        } else if ratio < 0.25 {
            1
        } else {
            0
        };
    }
    score += match digit_letter_switches(&local) {
        0..=2 => 0,
        3..=4 => 2,
        _ => 3,
    };
    if compact.len() >= 12 && entropy(&compact) >= 3.3 {
        score += 1;
    }
    if KEYBOARD_SWEEPS.iter().any(|sweep| local.contains(sweep)) {
        score += 3;
    }
    score >= THRESHOLD
}

fn is_vowel(c: char) -> bool {
    matches!(c, 'a' | 'e' | 'i' | 'o' | 'u' | 'y')
}

/// Longest run of consecutive consonants; separators and digits end a run.
fn longest_consonant_run(s: &str) -> usize {
    let (mut longest, mut current) = (0, 0);
    for c in s.chars() {
        if c.is_ascii_alphabetic() && !is_vowel(c) {
            current += 1;
            longest = longest.max(current);
        } else {
            current = 0;
        }
    }
    longest
}

/// How often the text switches between a digit and a letter without a separator between.
fn digit_letter_switches(s: &str) -> usize {
    s.chars()
        .zip(s.chars().skip(1))
        .filter(|(a, b)| {
            (a.is_ascii_digit() && b.is_ascii_alphabetic())
                || (a.is_ascii_alphabetic() && b.is_ascii_digit())
        })
        .count()
}

/// Shannon entropy in bits per character.
fn entropy(chars: &[char]) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for c in chars {
        *counts.entry(*c).or_insert(0usize) += 1;
    }
    let total = chars.len() as f64;
    counts
        .values()
        .map(|n| {
            let p = *n as f64 / total;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_and_roles_are_not_random() {
        for local in [
            "john.smith",
            "ada",
            "mary-jane",
            "info",
            "j.doe42",
            "christopher",
            "alexander.hamilton",
            "hirschfeld",
            "krzysztof",
            "mcknight",
            "strength",
            "support",
            "noreply",
            "marketing2024",
            "bob1985",
            "jean-luc.picard",
            "o.brien",
            "firstname.lastname",
            "jürgen",
            "john.smith+newsletter",
            "wertheimer",
            "liberty.property",
        ] {
            assert!(!looks_random(local), "{local} should not look random");
        }
    }

    #[test]
    fn mashed_and_generated_parts_are_random() {
        for local in [
            "xkcdqzvbt",
            "a8f3k2m9x7",
            "qwzxplkjhg",
            "asdfghjkl",
            "bfrdxlwq",
            "dhsjkfhskjdfh",
            "lksdjfoiwejr",
            "5f4dcc3b5aa765d61d8327deb882cf99",
            "kjh34kj5h3k4j5",
        ] {
            assert!(looks_random(local), "{local} should look random");
        }
    }

    proptest! {
        #[test]
        fn never_panics(local in "\\PC{0,80}") {
            let _ = looks_random(&local);
        }
    }
}
