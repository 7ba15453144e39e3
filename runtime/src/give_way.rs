//! Requests first: while the API is saturated, background jobs run at a reduced
//! concurrency, so the machine's cores go to accepting requests (durably) and the jobs they
//! queue are worked off at full concurrency once the burst has passed.
//!
//! A delivery costs several times what accepting it costs (a DKIM signature, the transport,
//! several store round trips), so sixteen in flight take most of a small machine's cores
//! from the requests that queue them (measured in docs/performance.md). Under saturation the
//! backlog grows either way; giving way keeps clients' requests fast instead of slow or
//! timed out, and never stops the jobs: they keep [`GiveWay::concurrency`] slots.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

/// Requests in flight, counted by whoever serves them (the bundled server counts every
/// request with a key, the tracking and provider routes, and the messages its SMTP
/// listeners are taking in).
#[derive(Debug, Clone, Default)]
pub struct RequestGauge(Arc<AtomicUsize>);

impl RequestGauge {
    /// Counts one request in flight until the returned guard drops.
    #[must_use = "the request is counted only while the guard lives"]
    pub fn enter(&self) -> InFlight<'_> {
        // Relaxed: a count read a little late only moves when jobs give way.
        self.0.fetch_add(1, Ordering::Relaxed);
        InFlight(&self.0)
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

/// One request counted by a [`RequestGauge`]; dropping it ends the count.
#[derive(Debug)]
pub struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// When and how far the job workers give way to requests.
#[derive(Debug, Clone)]
pub struct GiveWay {
    /// The requests to watch.
    pub requests: RequestGauge,
    /// From this many requests in flight on, the API counts as saturated.
    pub busy_at: usize,
    /// Jobs run at once while it is (at least 1, at most the workers' concurrency).
    pub concurrency: usize,
}

/// How long the API counts as saturated after the last time it was seen so: a closed loop
/// of clients dips under the threshold each time a group commit answers many requests at
/// once, and the workers should not take every slot in those dips.
const HOLD: Duration = Duration::from_millis(500);

/// The workers' view of a [`GiveWay`]: when they last saw the API saturated, and whether
/// they are giving way (logged when it changes).
#[derive(Debug)]
pub(crate) struct Yielding {
    give_way: GiveWay,
    saturated_at: Option<Instant>,
    giving_way: bool,
}

impl Yielding {
    pub(crate) fn new(give_way: GiveWay) -> Self {
        Self {
            give_way,
            saturated_at: None,
            giving_way: false,
        }
    }

    /// How many jobs may run at once at `now`, for workers of `concurrency`: the reduced
    /// number from the moment requests in flight reach the threshold until [`HOLD`] after
    /// they were last seen there.
    pub(crate) fn allowed(&mut self, concurrency: usize, now: Instant) -> usize {
        let in_flight = self.give_way.requests.in_flight();
        if in_flight >= self.give_way.busy_at.max(1) {
            self.saturated_at = Some(now);
        }
        let saturated = self
            .saturated_at
            .is_some_and(|at| now.saturating_duration_since(at) < HOLD);
        if saturated != self.giving_way {
            self.giving_way = saturated;
            // Debug: under a load that hovers at the threshold this changes every HOLD.
            tracing::debug!(
                requests_in_flight = in_flight,
                "job workers {} to requests",
                if saturated {
                    "give way"
                } else {
                    "no longer give way"
                }
            );
        }
        if saturated {
            self.give_way.concurrency.clamp(1, concurrency)
        } else {
            concurrency
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workers' view of `requests`, saturated from `busy_at` on, then running `concurrency`.
    fn yielding(requests: &RequestGauge, busy_at: usize, concurrency: usize) -> Yielding {
        Yielding::new(GiveWay {
            requests: requests.clone(),
            busy_at,
            concurrency,
        })
    }

    #[test]
    fn guards_count_requests_in_flight() {
        let gauge = RequestGauge::default();
        let a = gauge.enter();
        let b = gauge.enter();
        assert_eq!(gauge.in_flight(), 2);
        drop(a);
        assert_eq!(gauge.in_flight(), 1);
        drop(b);
        assert_eq!(gauge.in_flight(), 0);
    }

    #[test]
    fn jobs_give_way_while_the_api_is_saturated_and_shortly_after() {
        let requests = RequestGauge::default();
        let mut yielding = yielding(&requests, 3, 4);
        let start = Instant::now();
        let mut held = vec![requests.enter(), requests.enter()];
        assert_eq!(
            yielding.allowed(16, start),
            16,
            "two in flight: not saturated"
        );
        held.push(requests.enter());
        assert_eq!(yielding.allowed(16, start), 4, "three in flight: saturated");
        assert_eq!(
            yielding.allowed(2, start),
            2,
            "never more than the workers have"
        );
        held.clear();
        let dip = start + HOLD / 2;
        assert_eq!(yielding.allowed(16, dip), 4, "a dip between answers");
        let passed = start + HOLD;
        assert_eq!(yielding.allowed(16, passed), 16, "the burst has passed");
    }

    #[test]
    fn jobs_keep_at_least_one_slot() {
        let requests = RequestGauge::default();
        let mut yielding = yielding(&requests, 0, 0);
        assert_eq!(
            yielding.allowed(16, Instant::now()),
            16,
            "idle: not saturated"
        );
        let _one = requests.enter();
        assert_eq!(yielding.allowed(16, Instant::now()), 1);
    }
}
