//! The state `GET /health` answers from, refreshed at most once a second: a load balancer
//! polling it, or a benchmark using it as the cheapest endpoint, costs the store nothing
//! more however large the job backlog grows.

use posthorn_core::model::WorkspaceId;
use std::sync::RwLock;
use std::time::Duration;

// Tokio's clock, so tests can pause and move it.
use tokio::time::Instant;

use posthorn_core::ports::JobStats;
use posthorn_core::Engine;

/// How long a probe's result is served before the next request probes again.
pub const HEALTH_TTL: Duration = Duration::from_secs(1);

/// Key read (and never found) to check that the store and the limits backend (Redis, when
/// configured) answer.
const PROBE_KEY: &str = "health-probe";

/// What one probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// Every part answers; the queue's counts.
    Ok(JobStats),
    /// These parts (`store`, `queue`, `limits`) failed.
    Unavailable(Vec<&'static str>),
}

/// The last probe and when it was taken; refreshes are single-flight.
#[derive(Debug, Default)]
pub struct HealthCache {
    last: RwLock<Option<(Instant, Health)>>,
    refresh: tokio::sync::Mutex<()>,
}

impl HealthCache {
    /// The state at most [`HEALTH_TTL`] old, probing the store, the queue and the limits
    /// backend when it is older. Concurrent requests share one probe.
    pub async fn current(&self, engine: &Engine) -> Health {
        if let Some(fresh) = self.fresh() {
            return fresh;
        }
        let _one_probe = self.refresh.lock().await;
        if let Some(fresh) = self.fresh() {
            return fresh;
        }
        let health = probe(engine).await;
        *self.last.write().unwrap_or_else(|e| e.into_inner()) =
            Some((Instant::now(), health.clone()));
        health
    }

    fn fresh(&self) -> Option<Health> {
        let last = self.last.read().unwrap_or_else(|e| e.into_inner());
        last.as_ref()
            .filter(|(at, _)| at.elapsed() < HEALTH_TTL)
            .map(|(_, health)| health.clone())
    }
}

async fn probe(engine: &Engine) -> Health {
    let now = engine.clock.now();
    // A lookup by primary key answers as well as a list and stays cheap with many workspaces.
    let probe_id = WorkspaceId::from(PROBE_KEY);
    let (store, jobs, limits) = tokio::join!(
        engine.store.workspace(&probe_id),
        engine.jobs.stats(now),
        engine.cache.get(PROBE_KEY, now),
    );
    match (store, jobs, limits) {
        (Ok(_), Ok(stats), Ok(_)) => Health::Ok(stats),
        (store, jobs, limits) => Health::Unavailable(
            [
                ("store", store.is_err()),
                ("queue", jobs.is_err()),
                ("limits", limits.is_err()),
            ]
            .into_iter()
            .filter_map(|(part, failed)| failed.then_some(part))
            .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use posthorn_core::ports::{ChangeSet, JobPayload, NewJob, Store, SystemClock, Write};
    use posthorn_core::Settings;
    use posthorn_memory::{CapturingTransport, MemoryCache, MemoryRateLimiter, MemoryStore};

    use super::*;

    fn engine(store: Arc<MemoryStore>) -> Engine {
        Engine {
            store: store.clone(),
            jobs: store,
            transport: Arc::new(CapturingTransport::new()),
            clock: Arc::new(SystemClock),
            dns: Arc::new(posthorn_dns::StaticDns::new()),
            rate_limiter: Arc::new(MemoryRateLimiter::new()),
            cache: Arc::new(MemoryCache::new()),
            webhooks: std::sync::Arc::new(posthorn_core::ports::RefusingWebhookSink),
            inbound: Default::default(),
            settings: Settings::default(),
        }
    }

    fn queued(health: Health) -> u64 {
        match health {
            Health::Ok(stats) => stats.queued,
            Health::Unavailable(parts) => panic!("unavailable: {parts:?}"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn probed_at_most_once_a_second() {
        let store = Arc::new(MemoryStore::new());
        let engine = engine(store.clone());
        let cache = HealthCache::default();
        assert_eq!(queued(cache.current(&engine).await), 0);
        let mut changes = ChangeSet::new();
        let job = JobPayload::StartCampaign {
            workspace_id: "w".into(),
            campaign_id: "c".into(),
        };
        changes.push(Write::EnqueueJob(NewJob::at(
            &*engine.clock,
            job,
            engine.clock.now(),
        )));
        store.commit(changes).await.expect("enqueue");
        assert_eq!(
            queued(cache.current(&engine).await),
            0,
            "within a second: cached"
        );
        tokio::time::advance(Duration::from_millis(1001)).await;
        assert_eq!(queued(cache.current(&engine).await), 1, "then probed again");
    }
}
