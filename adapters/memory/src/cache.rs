//! `MemoryCache`: a key-value cache with expiry by the caller's clock.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};
use posthorn_core::ports::{Cache, PortError};

/// How many writes may pass between two sweeps of expired values, at least.
const MIN_WRITES_BETWEEN_SWEEPS: usize = 1024;

/// A cache for one process. Expiry is judged by the `now` each call passes; expired values
/// are dropped when read and swept every so often, in amortised constant time per write.
#[derive(Debug, Default)]
pub struct MemoryCache {
    entries: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    /// Value and the instant it expires.
    values: HashMap<String, (Vec<u8>, DateTime<Utc>)>,
    writes_since_sweep: usize,
}

impl MemoryCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many values are held, live or not yet swept (for tests of the pruning).
    pub fn held_values(&self) -> usize {
        self.lock().values.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Entries {
    fn live(&self, key: &str, now: DateTime<Utc>) -> Option<&Vec<u8>> {
        self.values
            .get(key)
            .filter(|(_, expires)| *expires > now)
            .map(|(value, _)| value)
    }

    fn write(&mut self, key: &str, value: Vec<u8>, ttl: Duration, now: DateTime<Utc>) {
        self.writes_since_sweep += 1;
        if self.writes_since_sweep >= self.values.len().max(MIN_WRITES_BETWEEN_SWEEPS) {
            self.values.retain(|_, (_, expires)| *expires > now);
            self.writes_since_sweep = 0;
        }
        let expires = TimeDelta::from_std(ttl)
            .ok()
            .and_then(|ttl| now.checked_add_signed(ttl))
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
        self.values.insert(key.to_string(), (value, expires));
    }
}

#[async_trait]
impl Cache for MemoryCache {
    async fn get(&self, key: &str, now: DateTime<Utc>) -> Result<Option<Vec<u8>>, PortError> {
        let mut entries = self.lock();
        let value = entries.live(key, now).cloned();
        if value.is_none() {
            entries.values.remove(key);
        }
        Ok(value)
    }

    async fn put(
        &self,
        key: &str,
        value: Vec<u8>,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<(), PortError> {
        self.lock().write(key, value, ttl, now);
        Ok(())
    }

    async fn put_if_absent(
        &self,
        key: &str,
        value: Vec<u8>,
        ttl: Duration,
        now: DateTime<Utc>,
    ) -> Result<bool, PortError> {
        let mut entries = self.lock();
        if entries.live(key, now).is_some() {
            return Ok(false);
        }
        entries.write(key, value, ttl, now);
        Ok(true)
    }

    async fn delete(&self, key: &str) -> Result<(), PortError> {
        self.lock().values.remove(key);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn expired_values_are_swept() {
        let cache = MemoryCache::new();
        let start = Utc::now();
        for i in 0..5000 {
            let now = start + TimeDelta::seconds(i);
            let put = cache
                .put(&format!("k{i}"), vec![1], Duration::from_secs(1), now)
                .await;
            assert!(put.is_ok());
        }
        assert!(cache.held_values() <= 2 * MIN_WRITES_BETWEEN_SWEEPS);
    }

    #[tokio::test]
    async fn reading_an_expired_value_drops_it() {
        let cache = MemoryCache::new();
        let now = Utc::now();
        let put = cache.put("k", vec![1], Duration::from_secs(1), now).await;
        assert!(put.is_ok());
        let later = now + TimeDelta::seconds(2);
        assert_eq!(cache.get("k", later).await, Ok(None));
        assert_eq!(cache.held_values(), 0);
    }
}
