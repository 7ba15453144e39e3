//! The lease heartbeat: a job that runs longer than its lease keeps it, so no other worker
//! claims it while it still runs.

use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use futures::future::{select, Either};
use tokio::time::{interval_at, Instant, MissedTickBehavior};

use crate::ports::ClaimedJob;
use crate::Engine;

/// Renewals per lease: a third leaves two beats of slack for a slow store or a busy machine.
const BEATS_PER_LEASE: u32 = 3;

impl Engine {
    /// Runs `work` while renewing `job`'s lease every third of `Settings::job_lease`.
    ///
    /// The first renewal is due a third of a lease after the start, so a job that finishes
    /// sooner costs nothing. Renewals run beside `work` in the same task (not between its
    /// polls), so a slow store delays the next beat, never the handler. A renewal refused
    /// (the lease was lost: it ran out and another worker claimed the job) is logged and
    /// ends the beats; the handler goes on (handlers are idempotent) and its settlement
    /// will be refused as stale.
    pub(super) async fn with_heartbeat<T>(
        &self,
        job: &ClaimedJob,
        work: impl Future<Output = T>,
    ) -> T {
        let lease = self.settings.job_lease;
        let every = lease / BEATS_PER_LEASE;
        if every.is_zero() {
            return work.await;
        }
        let work = std::pin::pin!(work);
        let beats = std::pin::pin!(self.heartbeat(job, lease, every));
        match select(work, beats).await {
            Either::Left((out, _)) => out,
            Either::Right((never, _)) => match never {},
        }
    }

    /// Renews `job`'s lease every `every` until the lease is lost; then waits forever.
    async fn heartbeat(&self, job: &ClaimedJob, lease: Duration, every: Duration) -> Infallible {
        let mut beats = interval_at(Instant::now() + every, every);
        // After a stall, one renewal is enough: no burst of catch-up beats.
        beats.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            beats.tick().await;
            match self.jobs.extend(job, self.clock.now(), lease).await {
                Ok(true) => {}
                Ok(false) => {
                    tracing::warn!(
                        job_id = %job.id,
                        claims = job.claims,
                        "job lease lost while it ran (it outran its lease and was claimed \
                         again, or was settled); it may run twice"
                    );
                    return std::future::pending().await;
                }
                Err(e) => {
                    // Try again at the next beat: the lease has two more beats of slack.
                    tracing::warn!(job_id = %job.id, error = %e, "could not renew a job lease");
                }
            }
        }
    }
}
