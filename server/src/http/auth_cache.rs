//! A short-lived in-process cache of authenticated keys, so the hot paths do not read the
//! key and its workspace from the store on every request.
//!
//! The cache is dropped whenever the store's access generation moves (a key set created or
//! revoked, a workspace disabled or changed, in this process or another one sharing the
//! store), so a revoked key stops working within a second everywhere. Entries also expire
//! after a few seconds, a bound for stores that could not announce a change.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use posthorn_core::app::Caller;

/// How long an authenticated key is trusted without asking the store again.
pub const AUTH_CACHE_TTL: Duration = Duration::from_secs(5);
/// Most keys kept; the cache is cleared when it is full (cheap, and rare).
const CAPACITY: usize = 10_000;

/// Authenticated callers by clear key.
#[derive(Debug, Default)]
pub struct AuthCache {
    entries: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    /// The store's access generation the entries were read under.
    generation: u64,
    by_key: HashMap<String, (Instant, Arc<Caller>)>,
}

impl Entries {
    /// Drops every entry read under an older access generation.
    fn at(&mut self, generation: u64) -> &mut HashMap<String, (Instant, Arc<Caller>)> {
        if self.generation != generation {
            self.generation = generation;
            self.by_key.clear();
        }
        &mut self.by_key
    }
}

impl AuthCache {
    /// The cached caller of `key`, if still fresh and read under `generation`.
    pub fn get(&self, key: &str, generation: u64) -> Option<Arc<Caller>> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .at(generation)
            .get(key)
            .filter(|(at, _)| at.elapsed() < AUTH_CACHE_TTL)
            .map(|(_, caller)| Arc::clone(caller))
    }

    /// Remembers `caller` for `key`, read from the store under `generation` (read before
    /// the store was asked, so a change committed meanwhile is not cached as current).
    pub fn put(&self, key: &str, caller: Arc<Caller>, generation: u64) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if generation < entries.generation {
            // Read before a change that is already known: it may be stale.
            return;
        }
        let by_key = entries.at(generation);
        if by_key.len() >= CAPACITY {
            by_key.clear();
        }
        by_key.insert(key.to_string(), (Instant::now(), caller));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use posthorn_core::model::{ApiKey, KeyKind, NewKeySet, Workspace};

    fn caller() -> Caller {
        let now = Utc::now();
        let clock = posthorn_core::ports::SystemClock;
        let workspace = Workspace::new(&clock, "w".into(), now);
        let set = NewKeySet::generate(&clock, &workspace.id, None, vec![], now);
        Caller {
            workspace,
            key: ApiKey {
                key_set: set.record,
                kind: KeyKind::Secret,
            },
        }
    }

    #[test]
    fn a_new_generation_drops_every_entry() {
        let cache = AuthCache::default();
        cache.put("k", Arc::new(caller()), 1);
        assert!(cache.get("k", 1).is_some());
        assert!(cache.get("k", 2).is_none());
        assert!(
            cache.get("k", 1).is_none(),
            "dropped entries do not come back"
        );
    }

    #[test]
    fn a_read_older_than_the_entries_is_not_cached() {
        let cache = AuthCache::default();
        cache.put("a", Arc::new(caller()), 3);
        cache.put("b", Arc::new(caller()), 2);
        assert!(cache.get("b", 3).is_none());
        assert!(cache.get("a", 3).is_some());
    }
}
