//! Job workers: claim due jobs, run their handlers, and wake on new work.

use std::sync::Arc;
use std::time::Duration;

use posthorn_core::Engine;
use tokio::sync::{watch, Semaphore};

/// How long an idle worker waits for a wake-up before polling again.
const IDLE_POLL: Duration = Duration::from_millis(500);
/// How often workspace maintenance (PENDING contacts) runs.
const MAINTENANCE_EVERY: Duration = Duration::from_secs(60);

/// Runs jobs until `shutdown` turns true; in-flight jobs finish before it returns.
pub async fn run(engine: Engine, concurrency: usize, mut shutdown: watch::Receiver<bool>) {
    let permits = Arc::new(Semaphore::new(concurrency.max(1)));
    let mut last_maintenance = tokio::time::Instant::now();
    loop {
        if *shutdown.borrow() {
            break;
        }
        if last_maintenance.elapsed() >= MAINTENANCE_EVERY {
            last_maintenance = tokio::time::Instant::now();
            maintain(&engine).await;
        }
        let free = permits.available_permits();
        let claimed = if free == 0 {
            Vec::new()
        } else {
            match engine
                .jobs
                .claim(engine.clock.now(), engine.settings.job_lease, free)
                .await
            {
                Ok(jobs) => jobs,
                Err(e) => {
                    tracing::error!(error = %e, "claiming jobs failed");
                    Vec::new()
                }
            }
        };
        if claimed.is_empty() {
            tokio::select! {
                _ = engine.jobs.wait_for_work(IDLE_POLL) => {}
                _ = shutdown.changed() => {}
            }
            continue;
        }
        for job in claimed {
            let Ok(permit) = permits.clone().acquire_owned().await else {
                break;
            };
            let engine = engine.clone();
            tokio::spawn(async move {
                if let Err(e) = engine.run_job(&job).await {
                    // The lease expires and another claim retries the job.
                    tracing::error!(job_id = %job.id, error = %e, "job failed");
                }
                drop(permit);
            });
        }
    }
    // Wait for in-flight jobs: every permit back means every job settled.
    let _ = permits.acquire_many(concurrency.max(1) as u32).await;
}

async fn maintain(engine: &Engine) {
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
}
