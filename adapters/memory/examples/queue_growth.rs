//! How long a commit that enqueues jobs holds the memory store as its job queue grows to a
//! campaign's size: 2,400 commits of 500 `DeliverEmail` jobs each (1.2 million jobs), each
//! timed. Jobs join the queue under the store's write lock, so a slow commit holds every
//! request for as long (docs/performance.md, "The memory job queue grows a node at a time").
//!
//! ```sh
//! cargo run --release -p posthorn-memory --example queue_growth
//! ```

use std::time::Instant;

use posthorn_core::model::{EmailId, JobId, WorkspaceId};
use posthorn_core::ports::{ChangeSet, JobPayload, NewJob, Store, Write};
use posthorn_memory::MemoryStore;

const COMMITS: usize = 2400;
const JOBS_PER_COMMIT: usize = 500;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let store = MemoryStore::new();
    let now = chrono::Utc::now();
    let workspace_id = WorkspaceId::from("ws".to_string());
    let mut millis = Vec::with_capacity(COMMITS);
    for commit in 0..COMMITS {
        let mut changes = ChangeSet::new();
        for job in 0..JOBS_PER_COMMIT {
            changes.push(Write::EnqueueJob(NewJob {
                id: JobId::from(uuid::Uuid::now_v7().to_string()),
                payload: JobPayload::DeliverEmail {
                    workspace_id: workspace_id.clone(),
                    email_id: EmailId::from(format!("e{commit}-{job}")),
                },
                run_at: now,
            }));
        }
        let started = Instant::now();
        store.commit(changes).await?;
        millis.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    let total: f64 = millis.iter().sum();
    let slow: Vec<String> = millis
        .iter()
        .enumerate()
        .filter(|(_, ms)| **ms > 20.0)
        .map(|(i, ms)| format!("commit {i}: {ms:.0} ms"))
        .collect();
    millis.sort_by(f64::total_cmp);
    let at = |q: f64| millis[((millis.len() - 1) as f64 * q) as usize];
    println!(
        "{} jobs in {COMMITS} commits of {JOBS_PER_COMMIT}: total {total:.0} ms, median {:.2} ms, \
         p99 {:.2} ms, max {:.1} ms; over 20 ms: {slow:?}",
        COMMITS * JOBS_PER_COMMIT,
        at(0.5),
        at(0.99),
        at(1.0),
    );
    Ok(())
}
