//! Job workers: claim due jobs, run their handlers, and wake on new work or a freed slot.

use std::sync::Arc;
use std::time::Duration;

use posthorn_core::Engine;
use tokio::sync::{watch, Notify, OwnedSemaphorePermit, Semaphore};

use crate::give_way::{GiveWay, Yielding};

/// How long an idle worker waits for a wake-up before polling again.
const IDLE_POLL: Duration = Duration::from_millis(500);
/// While the queue is busy, how long a worker with one free slot waits for more slots to
/// free before it claims: one claim for several jobs instead of one per finished job.
const GATHER: Duration = Duration::from_millis(10);
/// How often maintenance (PENDING contacts, time-based segments, expired idempotency
/// records, old SNS message records) runs.
const MAINTENANCE_EVERY: Duration = Duration::from_secs(60);
/// While the workers give way to requests with every allowed slot taken, how often they
/// look again whether the burst has passed (a finishing job wakes them sooner).
const RECHECK: Duration = Duration::from_millis(20);

/// How workers run.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// Jobs run at once (at least 1).
    pub concurrency: usize,
    /// Fewer jobs at once while the API is saturated ([`GiveWay`]); `None` never gives way.
    pub give_way: Option<GiveWay>,
}

impl Default for WorkerOptions {
    /// 16 jobs at once, never giving way.
    fn default() -> Self {
        Self {
            concurrency: 16,
            give_way: None,
        }
    }
}

/// Runs the engine's jobs until `shutdown` turns true: then it claims nothing more and
/// returns once the jobs in flight have settled. Idle workers wake on new work (the job
/// queue's `wait_for_work`), not only by polling; workspace maintenance (PENDING contacts,
/// time-based segments) runs once a minute. Each job's lease is renewed while it runs
/// (`Engine::run_job` does it), so a job that outlasts `Settings::job_lease` is not claimed
/// again by another worker.
pub async fn run_workers(
    engine: Engine,
    options: WorkerOptions,
    mut shutdown: watch::Receiver<bool>,
) {
    let concurrency = options.concurrency.max(1);
    let permits = Arc::new(Semaphore::new(concurrency));
    let job_done = Arc::new(Notify::new());
    let mut yielding = options.give_way.map(Yielding::new);
    let mut last_maintenance = tokio::time::Instant::now();
    // The last claim filled every free slot, so more jobs are likely waiting.
    let mut busy = false;
    loop {
        if *shutdown.borrow() {
            break;
        }
        if last_maintenance.elapsed() >= MAINTENANCE_EVERY {
            last_maintenance = tokio::time::Instant::now();
            maintain(&engine).await;
        }
        // Wait for a free slot: a finishing job wakes this at once.
        let first = tokio::select! {
            permit = permits.clone().acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = shutdown.changed() => continue,
        };
        // Jobs in flight, besides the slot just taken.
        let running = |first: &OwnedSemaphorePermit| {
            concurrency - permits.available_permits() - first.num_permits()
        };
        let allowed = yielding.as_mut().map_or(concurrency, |y| {
            y.allowed(concurrency, tokio::time::Instant::now())
        });
        if running(&first) >= allowed {
            // Giving way to requests: wait for a job to finish or the burst to pass.
            drop(first);
            tokio::select! {
                _ = job_done.notified() => {}
                _ = tokio::time::sleep(RECHECK) => {}
                _ = shutdown.changed() => {}
            }
            continue;
        }
        let first = match (busy, allowed < concurrency) {
            (false, _) => first,
            (true, false) => gather(&permits, first, concurrency / 2).await,
            (true, true) => {
                // Giving way with the queue busy: one claim for all the allowed slots if
                // they free within GATHER, not one claim per finished job.
                let all_free = async {
                    while running(&first) > 0 {
                        job_done.notified().await;
                    }
                };
                let _ = tokio::time::timeout(GATHER, all_free).await;
                first
            }
        };
        let room = allowed.saturating_sub(running(&first)).max(1);
        let free = (permits.available_permits() + first.num_permits()).min(room);
        let claimed = match engine
            .jobs
            .claim(engine.clock.now(), engine.settings.job_lease, free)
            .await
        {
            Ok(jobs) => jobs,
            Err(e) => {
                tracing::error!(error = %e, "claiming jobs failed");
                Vec::new()
            }
        };
        busy = claimed.len() == free;
        if claimed.is_empty() {
            drop(first);
            tokio::select! {
                _ = engine.jobs.wait_for_work(IDLE_POLL) => {}
                _ = shutdown.changed() => {}
            }
            continue;
        }
        let mut held = first;
        for job in claimed {
            let permit = match held.split(1) {
                Some(p) => p,
                // Counted as free above; nothing else takes permits, so this is immediate.
                None => match permits.clone().acquire_owned().await {
                    Ok(p) => p,
                    Err(_) => break,
                },
            };
            let engine = engine.clone();
            let job_done = job_done.clone();
            tokio::spawn(async move {
                if let Err(e) = engine.run_job(&job).await {
                    // `run_job` has put the job back with a backoff.
                    tracing::error!(job_id = %job.id, error = %e, "job failed");
                }
                drop(permit);
                job_done.notify_one();
            });
        }
    }
    // Every permit back means every job in flight has settled.
    let _ = permits.acquire_many(concurrency as u32).await;
}

/// `first` plus `want - 1` more slots if that many free within [`GATHER`], else `first`
/// alone (the claim counts every free slot either way): under a burst each claim is a
/// statement that walks the queue's index (on PostgreSQL past the entries of jobs just
/// taken), so one claim per finished job costs more than the jobs.
async fn gather(
    permits: &Arc<Semaphore>,
    mut first: OwnedSemaphorePermit,
    want: usize,
) -> OwnedSemaphorePermit {
    let more = want.saturating_sub(1);
    if more == 0 || permits.available_permits() >= more {
        return first;
    }
    let more = u32::try_from(more).unwrap_or(u32::MAX);
    if let Ok(Ok(extra)) =
        tokio::time::timeout(GATHER, permits.clone().acquire_many_owned(more)).await
    {
        first.merge(extra);
    }
    first
}

async fn maintain(engine: &Engine) {
    if let Err(e) = engine.purge_idempotency_records().await {
        tracing::error!(error = %e, "purging expired idempotency records failed");
    }
    if let Err(e) = engine.purge_sns_messages().await {
        tracing::error!(error = %e, "purging old SNS message records failed");
    }
    let workspaces = match engine.workspaces().await {
        Ok(ws) => ws,
        Err(e) => {
            tracing::error!(error = %e, "maintenance could not list workspaces");
            return;
        }
    };
    for ws in workspaces
        .iter()
        .filter(|ws| ws.active_contact_limit.is_some())
    {
        if let Err(e) = engine.promote_pending_contacts(ws).await {
            tracing::error!(workspace = %ws.id, error = %e, "pending contact sweep failed");
        }
    }
    for ws in &workspaces {
        if let Err(e) = engine.sweep_time_based_segments(&ws.id).await {
            tracing::error!(workspace = %ws.id, error = %e, "segment sweep failed");
        }
    }
}
