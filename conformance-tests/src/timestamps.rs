//! Strings for the adapters' own tests of their SQL timestamp recognition, which must
//! agree with `segment::parse_timestamp` (what each adapter runs them through is its own:
//! a PostgreSQL function, a SQLite expression).

use chrono::{DateTime, FixedOffset, SecondsFormat, TimeZone, Utc};
use posthorn_core::segment::parse_timestamp;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Strings near the timestamp pattern from `seed`: valid ones with one character changed,
/// dropped or repeated, and some fixed awkward cases.
pub fn candidates(seed: u64) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out: Vec<String> = [
        "2024-02-29T00:00:00Z",
        "2023-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z",
        "2000-02-29T23:59:59.999999+14:59",
        "0001-01-01T00:00:00+14:00",
        "0000-12-31T00:00:00Z",
        "9999-12-31T23:59:59-14:59",
        "2024-04-31T00:00:00Z",
        "2024-06-31T00:00:00z",
        "2024-11-31T00:00:00Z",
        "2024-12-31t00:00:00Z",
        "2024-00-10T00:00:00Z",
        "2024-01-00T00:00:00Z",
        "2024-01-01T00:00:00.Z",
        "2024-01-01T00:00:00.1234567Z",
        "2024-01-01T00:00:00+1500",
        "2024-01-01T00:00:00-00:00",
        "2024-01-01T00:00:00Z\n",
        "\n2024-01-01T00:00:00Z",
        "２０２４-01-01T00:00:00Z",
        "2024-01-01T00:00:00+02:60",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let alphabet: Vec<char> = "0123456789-+:.TtZz \n9".chars().collect();
    for _ in 0..3000 {
        let secs = rng.gen_range(-62_000_000_000i64..253_000_000_000i64);
        let base = Utc
            .timestamp_opt(secs, rng.gen_range(0..1_000_000) * 1000)
            .single()
            .unwrap_or_else(|| panic!("{secs} s is in chrono's range"));
        let s = match rng.gen_range(0..3) {
            0 => base.to_rfc3339_opts(SecondsFormat::Secs, true),
            1 => base.to_rfc3339_opts(SecondsFormat::Micros, false),
            _ => {
                let offset = rng.gen_range(-15 * 3600..15 * 3600);
                let zone = FixedOffset::east_opt(offset)
                    .unwrap_or_else(|| panic!("{offset} s is a valid offset"));
                base.with_timezone(&zone)
                    .to_rfc3339_opts(SecondsFormat::AutoSi, false)
            }
        };
        let mut chars: Vec<char> = s.chars().collect();
        match rng.gen_range(0..4) {
            0 => {}
            1 => {
                let i = rng.gen_range(0..chars.len());
                chars[i] = alphabet[rng.gen_range(0..alphabet.len())];
            }
            2 => {
                chars.remove(rng.gen_range(0..chars.len()));
            }
            _ => {
                let i = rng.gen_range(0..chars.len());
                chars.insert(i, alphabet[rng.gen_range(0..alphabet.len())]);
            }
        }
        out.push(chars.into_iter().collect());
    }
    out
}

/// Asserts that `got[i]`, what the adapter's SQL made of `candidates[i]`, equals
/// `parse_timestamp(candidates[i])` for every candidate, and that the candidates were
/// neither nearly all valid nor nearly all invalid.
pub fn assert_equal_parse_timestamp(candidates: &[String], got: &[Option<DateTime<Utc>>]) {
    assert_eq!(
        got.len(),
        candidates.len(),
        "one result per candidate expected"
    );
    let mut valid = 0;
    for (s, got) in candidates.iter().zip(got) {
        let expected = parse_timestamp(s);
        valid += usize::from(expected.is_some());
        assert_eq!(*got, expected, "{s:?}");
    }
    assert!(
        valid > 300 && valid + 300 < candidates.len(),
        "{valid} of {} valid: the candidates are too one-sided",
        candidates.len()
    );
}
