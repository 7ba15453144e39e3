//! A short-lived in-process cache of authenticated keys, so the hot paths do not read the
//! key and its workspace from the store on every request.
//!
//! Entries live for a few seconds: revoking a key, disabling a workspace or changing its
//! limits takes effect within that time on every process.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use posthorn_core::app::Caller;

/// How long an authenticated key is trusted without asking the store again.
pub const AUTH_CACHE_TTL: Duration = Duration::from_secs(5);
/// Most keys kept; the cache is cleared when it is full (cheap, and rare).
const CAPACITY: usize = 10_000;

/// Authenticated callers by clear key.
#[derive(Debug, Default)]
pub struct AuthCache {
    entries: Mutex<HashMap<String, (Instant, Caller)>>,
}

impl AuthCache {
    /// The cached caller of `key`, if still fresh.
    pub fn get(&self, key: &str) -> Option<Caller> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .get(key)
            .filter(|(at, _)| at.elapsed() < AUTH_CACHE_TTL)
            .map(|(_, caller)| caller.clone())
    }

    /// Remembers `caller` for `key`.
    pub fn put(&self, key: &str, caller: Caller) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= CAPACITY {
            entries.clear();
        }
        entries.insert(key.to_string(), (Instant::now(), caller));
    }

    /// Forgets every entry (after a change made through this process).
    pub fn clear(&self) {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}
