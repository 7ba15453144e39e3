//! A bounded in-memory cache of DNS answers, each kept until its own expiry.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use posthorn_core::ports::{DnsError, RecordKind};

/// A lookup's outcome as the port reports it.
pub(crate) type Answer = Result<Vec<String>, DnsError>;

type Key = (String, RecordKind);

/// Answers keyed by name and record kind. Callers pass the current time, so tests can move
/// it without sleeping.
pub(crate) struct AnswerCache {
    entries: HashMap<Key, (Answer, Instant)>,
    capacity: usize,
}

impl AnswerCache {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            entries: HashMap::new(),
            capacity,
        }
    }

    /// The answer for `key` if it has not expired at `now`.
    pub(crate) fn get(&mut self, key: &Key, now: Instant) -> Option<Answer> {
        match self.entries.get(key) {
            Some((answer, expires)) if *expires > now => Some(answer.clone()),
            Some(_) => {
                self.entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Keeps `answer` for `ttl`; when full, drops expired entries first, then the entry
    /// closest to expiry.
    pub(crate) fn insert(&mut self, key: Key, answer: Answer, ttl: Duration, now: Instant) {
        if self.capacity == 0 || ttl.is_zero() {
            return;
        }
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            self.entries.retain(|_, (_, expires)| *expires > now);
        }
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            let soonest = self
                .entries
                .iter()
                .min_by_key(|(_, (_, expires))| *expires)
                .map(|(k, _)| k.clone());
            if let Some(soonest) = soonest {
                self.entries.remove(&soonest);
            }
        }
        self.entries.insert(key, (answer, now + ttl));
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> Key {
        (name.to_string(), RecordKind::Mx)
    }

    #[test]
    fn answers_expire_after_their_ttl() {
        let (mut cache, t0) = (AnswerCache::new(8), Instant::now());
        let answer: Answer = Ok(vec!["mx.a.test".into()]);
        cache.insert(key("a.test"), answer.clone(), Duration::from_secs(30), t0);
        assert_eq!(
            cache.get(&key("a.test"), t0 + Duration::from_secs(29)),
            Some(answer)
        );
        assert_eq!(
            cache.get(&key("a.test"), t0 + Duration::from_secs(31)),
            None
        );
        assert_eq!(cache.len(), 0, "expired entries are dropped when seen");
    }

    #[test]
    fn stays_within_capacity() {
        let (mut cache, t0) = (AnswerCache::new(2), Instant::now());
        cache.insert(key("a.test"), Ok(vec![]), Duration::from_secs(10), t0);
        cache.insert(key("b.test"), Ok(vec![]), Duration::from_secs(50), t0);
        cache.insert(
            key("c.test"),
            Err(DnsError::NoSuchDomain),
            Duration::from_secs(50),
            t0,
        );
        assert_eq!(cache.len(), 2);
        assert_eq!(
            cache.get(&key("a.test"), t0),
            None,
            "the soonest to expire goes first"
        );
        assert_eq!(
            cache.get(&key("c.test"), t0),
            Some(Err(DnsError::NoSuchDomain))
        );
    }

    #[test]
    fn expired_entries_make_room_first() {
        let (mut cache, t0) = (AnswerCache::new(2), Instant::now());
        cache.insert(key("a.test"), Ok(vec![]), Duration::from_secs(10), t0);
        cache.insert(key("b.test"), Ok(vec![]), Duration::from_secs(50), t0);
        let later = t0 + Duration::from_secs(20);
        cache.insert(key("c.test"), Ok(vec![]), Duration::from_secs(50), later);
        assert!(cache.get(&key("b.test"), later).is_some());
        assert!(cache.get(&key("c.test"), later).is_some());
    }

    #[test]
    fn zero_ttl_is_not_kept() {
        let (mut cache, t0) = (AnswerCache::new(2), Instant::now());
        cache.insert(key("a.test"), Ok(vec![]), Duration::ZERO, t0);
        assert_eq!(cache.get(&key("a.test"), t0), None);
    }
}
