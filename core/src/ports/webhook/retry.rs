//! What an attempt's outcome means, and when to try again.

use std::time::Duration;

use chrono::{DateTime, Utc};
use rand::Rng;

use super::{WebhookError, WebhookResponse};

/// The meaning of one attempt for the WEBHOOK step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptVerdict {
    /// A 2xx: the step succeeded.
    Delivered,
    /// The attempt failed but another may succeed: a time-out, a connection error, a 429, a
    /// 5xx, or a 3xx (redirects are never followed, so a redirect is a failed attempt).
    Retry,
    /// Retrying cannot help: any other 4xx, or a request refused or invalid before sending.
    Fail,
}

/// Classifies a response status: 2xx delivered; 429, 5xx and 3xx retried; other 4xx failed.
/// Statuses outside 200–599 (never final in HTTP) count as failed attempts and are retried.
pub fn classify_status(status: u16) -> AttemptVerdict {
    match status {
        200..=299 => AttemptVerdict::Delivered,
        429 => AttemptVerdict::Retry,
        400..=499 => AttemptVerdict::Fail,
        _ => AttemptVerdict::Retry,
    }
}

/// Classifies the result of one [`super::WebhookSink::deliver`] call.
pub fn classify_attempt(result: &Result<WebhookResponse, WebhookError>) -> AttemptVerdict {
    match result {
        Ok(response) => classify_status(response.status),
        Err(err) if err.is_retryable() => AttemptVerdict::Retry,
        Err(_) => AttemptVerdict::Fail,
    }
}

/// Reads a `Retry-After` value: delay-seconds (`120`) or an HTTP-date
/// (`Wed, 21 Oct 2015 07:28:00 GMT`, measured from `now`; a past date means no wait).
/// Anything else gives `None`.
pub fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Saturate absurdly long numbers instead of ignoring them: the schedule caps them.
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let at = DateTime::parse_from_rfc2822(value)
        .ok()?
        .with_timezone(&Utc);
    Some((at - now).to_std().unwrap_or(Duration::ZERO))
}

/// The schedule was built with settings that make no sense.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScheduleError {
    /// Jitter is a fraction of each delay: it must lie in `[0, 1)`.
    #[error("jitter must be at least 0 and below 1, got {0}")]
    JitterOutOfRange(f64),
}

/// When to retry a failed webhook: a list of delays, each counted from the end of the
/// previous failed attempt, spread by a random jitter, stretched by a longer `Retry-After`.
///
/// The standard schedule is the Standard Webhooks one: 8 attempts, retried after about 5 s,
/// 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (a little over a day in all), each ±20 %.
/// Tests build short ones with [`RetrySchedule::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct RetrySchedule {
    delays: Vec<Duration>,
    jitter: f64,
    max_retry_after: Duration,
}

impl RetrySchedule {
    /// The delays of the standard schedule, before attempts 2 to 8.
    pub const STANDARD_DELAYS: [Duration; 7] = [
        Duration::from_secs(5),
        Duration::from_secs(5 * 60),
        Duration::from_secs(30 * 60),
        Duration::from_secs(2 * 3600),
        Duration::from_secs(5 * 3600),
        Duration::from_secs(10 * 3600),
        Duration::from_secs(10 * 3600),
    ];
    /// The jitter of the standard schedule: each delay varies by up to this fraction.
    pub const STANDARD_JITTER: f64 = 0.2;
    /// The longest wait a `Retry-After` can impose, unless configured otherwise.
    pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

    /// The standard schedule (see the type's documentation).
    pub fn standard() -> Self {
        Self {
            delays: Self::STANDARD_DELAYS.to_vec(),
            jitter: Self::STANDARD_JITTER,
            max_retry_after: Self::DEFAULT_MAX_RETRY_AFTER,
        }
    }

    /// A schedule with these delays (one per retry, so `delays.len() + 1` attempts) and a
    /// jitter fraction in `[0, 1)`.
    pub fn new(delays: Vec<Duration>, jitter: f64) -> Result<Self, ScheduleError> {
        if !(0.0..1.0).contains(&jitter) {
            return Err(ScheduleError::JitterOutOfRange(jitter));
        }
        Ok(Self {
            delays,
            jitter,
            max_retry_after: Self::DEFAULT_MAX_RETRY_AFTER,
        })
    }

    /// Caps the wait a `Retry-After` can impose (a receiver must not park a step for weeks).
    pub fn with_max_retry_after(mut self, max: Duration) -> Self {
        self.max_retry_after = max;
        self
    }

    /// How many attempts the schedule allows in all, the first included.
    pub fn max_attempts(&self) -> u32 {
        u32::try_from(self.delays.len()).map_or(u32::MAX, |n| n.saturating_add(1))
    }

    /// The nominal delays, before jitter.
    pub fn delays(&self) -> &[Duration] {
        &self.delays
    }

    /// The jitter fraction.
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// The cap on a `Retry-After` wait.
    pub fn max_retry_after(&self) -> Duration {
        self.max_retry_after
    }

    /// The wait before the next attempt after `attempts_made` attempts all failed, or `None`
    /// when no attempt is left (or none was made). `jitter_sample` in `[0, 1]` picks the point
    /// in the jitter range (0.5 is the nominal delay). A `retry_after` longer than the
    /// jittered delay wins, up to [`Self::max_retry_after`].
    pub fn delay_after(
        &self,
        attempts_made: u32,
        retry_after: Option<Duration>,
        jitter_sample: f64,
    ) -> Option<Duration> {
        let index = usize::try_from(attempts_made.checked_sub(1)?).ok()?;
        let nominal = *self.delays.get(index)?;
        let sample = if jitter_sample.is_nan() {
            0.5
        } else {
            jitter_sample.clamp(0.0, 1.0)
        };
        let factor = 1.0 + self.jitter * (2.0 * sample - 1.0);
        // Saturate rather than panic on absurd configured delays.
        let jittered =
            Duration::try_from_secs_f64(nominal.as_secs_f64() * factor).unwrap_or(Duration::MAX);
        let asked = retry_after.map_or(Duration::ZERO, |d| d.min(self.max_retry_after));
        Some(jittered.max(asked))
    }

    /// [`Self::delay_after`] with the jitter drawn from `rng`.
    pub fn next_delay<R: Rng + ?Sized>(
        &self,
        attempts_made: u32,
        retry_after: Option<Duration>,
        rng: &mut R,
    ) -> Option<Duration> {
        self.delay_after(attempts_made, retry_after, rng.gen_range(0.0..=1.0))
    }
}

impl Default for RetrySchedule {
    fn default() -> Self {
        Self::standard()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use proptest::prelude::*;

    fn response(status: u16) -> Result<WebhookResponse, WebhookError> {
        Ok(WebhookResponse {
            status,
            body_excerpt: String::new(),
            body_truncated: false,
            retry_after: None,
            location: None,
            latency: Duration::from_millis(1),
        })
    }

    #[test]
    fn statuses_classify_as_the_step_rules_say() {
        for s in [200, 201, 204, 299] {
            assert_eq!(
                classify_attempt(&response(s)),
                AttemptVerdict::Delivered,
                "{s}"
            );
        }
        for s in [429, 500, 502, 503, 504, 599, 300, 301, 302, 307, 308] {
            assert_eq!(classify_attempt(&response(s)), AttemptVerdict::Retry, "{s}");
        }
        for s in [400, 401, 403, 404, 405, 409, 410, 413, 422, 428, 431, 499] {
            assert_eq!(classify_attempt(&response(s)), AttemptVerdict::Fail, "{s}");
        }
    }

    #[test]
    fn errors_classify_by_retryability() {
        let retry = [
            WebhookError::Timeout(Duration::from_secs(10)),
            WebhookError::Connect("refused".into()),
            WebhookError::Network("reset".into()),
        ];
        for err in retry {
            assert_eq!(classify_attempt(&Err(err)), AttemptVerdict::Retry);
        }
        for err in [
            WebhookError::Refused("loopback".into()),
            WebhookError::Invalid("bad url".into()),
        ] {
            assert_eq!(classify_attempt(&Err(err)), AttemptVerdict::Fail);
        }
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = Utc.with_ymd_and_hms(2015, 10, 21, 7, 0, 0).unwrap();
        assert_eq!(
            parse_retry_after(" 120 ", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after("0", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
            Some(Duration::from_secs(28 * 60))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 06:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        for bad in ["", "-5", "1.5", "soon", "120s"] {
            assert_eq!(parse_retry_after(bad, now), None, "{bad:?}");
        }
        assert!(parse_retry_after("99999999999999999999999", now).is_some());
    }

    #[test]
    fn the_standard_schedule_has_eight_attempts_over_about_a_day() {
        let s = RetrySchedule::standard();
        assert_eq!(s.max_attempts(), 8);
        let total: Duration = s.delays().iter().sum();
        assert_eq!(total, Duration::from_secs(27 * 3600 + 35 * 60 + 5));
        assert_eq!(s.delay_after(1, None, 0.5), Some(Duration::from_secs(5)));
        assert_eq!(
            s.delay_after(7, None, 0.5),
            Some(Duration::from_secs(36_000))
        );
        assert_eq!(s.delay_after(8, None, 0.5), None);
        assert_eq!(s.delay_after(0, None, 0.5), None);
    }

    #[test]
    fn a_longer_retry_after_wins_and_is_capped() {
        let s = RetrySchedule::standard().with_max_retry_after(Duration::from_secs(3600));
        let ra = Some(Duration::from_secs(120));
        assert_eq!(s.delay_after(1, ra, 0.5), Some(Duration::from_secs(120)));
        // Shorter than the scheduled 5 minutes: the schedule wins.
        assert_eq!(s.delay_after(2, ra, 0.5), Some(Duration::from_secs(300)));
        let huge = Some(Duration::from_secs(30 * 86_400));
        assert_eq!(s.delay_after(1, huge, 0.5), Some(Duration::from_secs(3600)));
    }

    #[test]
    fn jitter_outside_zero_to_one_is_refused() {
        assert!(RetrySchedule::new(vec![], -0.1).is_err());
        assert!(RetrySchedule::new(vec![], 1.0).is_err());
        assert!(RetrySchedule::new(vec![], f64::NAN).is_err());
        let s = RetrySchedule::new(vec![], 0.0).expect("valid");
        assert_eq!(s.max_attempts(), 1);
        assert_eq!(s.delay_after(1, None, 0.3), None);
    }

    proptest! {
        #[test]
        fn every_delay_stays_within_its_jitter_band(
            delays in proptest::collection::vec(1u64..200_000, 0..12),
            jitter in 0.0f64..0.99,
            attempts in 0u32..16,
            sample in 0.0f64..=1.0,
        ) {
            let delays: Vec<Duration> = delays.into_iter().map(Duration::from_millis).collect();
            let s = RetrySchedule::new(delays.clone(), jitter).expect("valid jitter");
            let got = s.delay_after(attempts, None, sample);
            if attempts == 0 || attempts as usize > delays.len() {
                prop_assert_eq!(got, None);
            } else {
                let nominal = delays[attempts as usize - 1].as_secs_f64();
                let got = got.expect("an attempt is left").as_secs_f64();
                prop_assert!(got >= nominal * (1.0 - jitter) - 1e-6, "{} < band", got);
                prop_assert!(got <= nominal * (1.0 + jitter) + 1e-6, "{} > band", got);
            }
        }

        #[test]
        fn retry_after_is_a_floor_up_to_the_cap(
            attempts in 1u32..=7,
            retry_after in 0u64..200_000,
            cap in 0u64..100_000,
            sample in 0.0f64..=1.0,
        ) {
            let s = RetrySchedule::standard().with_max_retry_after(Duration::from_secs(cap));
            let plain = s.delay_after(attempts, None, sample).expect("attempt left");
            let got = s
                .delay_after(attempts, Some(Duration::from_secs(retry_after)), sample)
                .expect("attempt left");
            prop_assert!(got >= plain);
            prop_assert!(got >= Duration::from_secs(retry_after.min(cap)));
            prop_assert_eq!(got, plain.max(Duration::from_secs(retry_after.min(cap))));
        }

        #[test]
        fn random_jitter_never_leaves_the_standard_band(attempts in 1u32..=7, seed in any::<u64>()) {
            use rand::SeedableRng;
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let s = RetrySchedule::standard();
            let nominal = RetrySchedule::STANDARD_DELAYS[attempts as usize - 1];
            let got = s.next_delay(attempts, None, &mut rng).expect("attempt left");
            prop_assert!(got >= nominal.mul_f64(0.8) && got <= nominal.mul_f64(1.2));
        }
    }
}
