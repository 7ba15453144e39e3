//! A hash map for the store's lookup-only indexes (an address to its contact, an event id
//! to its key) whose growth never holds the write lock for long.
//!
//! A search in a B-tree of a few hundred thousand text keys compares the key with a few
//! dozen others; a hash lookup compares it with one. But a plain hash map grows by moving
//! every entry at once, which stalled every request for about 250 ms at a few hundred
//! thousand entries (docs/performance.md). So the entries are spread over [`SHARDS`] tables
//! that grow one at a time, each keeping the hash of its entries: growing a table moves
//! 1/[`SHARDS`] of the entries and hashes none of them again.

use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash, RandomState};

use hashbrown::hash_table::{Entry as TableEntry, HashTable};

/// How many tables the entries are spread over.
pub(crate) const SHARDS: usize = 64;

/// One stored entry with the hash it was placed by.
#[derive(Debug)]
struct Slot<K, V> {
    hash: u64,
    key: K,
    value: V,
}

/// A map from `K` to `V` for lookups by key (no order).
///
/// Hashed with std's SipHash (`RandomState`): keys can be text a stranger chose, such as a
/// contact's address.
#[derive(Debug)]
pub(crate) struct HashIndex<K, V> {
    /// Empty until the first insert, then [`SHARDS`] tables (a workspace that never uses
    /// the index does not pay for its tables).
    shards: Vec<HashTable<Slot<K, V>>>,
    hasher: RandomState,
    len: usize,
}

impl<K, V> Default for HashIndex<K, V> {
    fn default() -> Self {
        Self {
            shards: Vec::new(),
            hasher: RandomState::new(),
            len: 0,
        }
    }
}

impl<K: Hash + Eq, V> HashIndex<K, V> {
    /// How many entries the index holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether the index holds no entry.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value of `key`.
    pub(crate) fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hasher.hash_one(key);
        let table = self.shards.get(shard_of(hash))?;
        table
            .find(hash, |slot| slot.key.borrow() == key)
            .map(|slot| &slot.value)
    }

    /// Whether `key` has a value.
    #[cfg(test)]
    pub(crate) fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.get(key).is_some()
    }

    /// Stores `value` for `key`; returns the value it replaced.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        let hash = self.hasher.hash_one(&key);
        match entry_of(&mut self.shards, hash, &key) {
            TableEntry::Occupied(mut found) => {
                Some(std::mem::replace(&mut found.get_mut().value, value))
            }
            TableEntry::Vacant(vacant) => {
                vacant.insert(Slot { hash, key, value });
                self.len += 1;
                None
            }
        }
    }

    /// A place for `key` when it has no value (`None` when it has one): the key is hashed
    /// and searched once, for a caller that checks more than one index before storing.
    pub(crate) fn vacant(&mut self, key: K) -> Option<Vacant<'_, K, V>> {
        let hash = self.hasher.hash_one(&key);
        match entry_of(&mut self.shards, hash, &key) {
            TableEntry::Occupied(_) => None,
            TableEntry::Vacant(place) => Some(Vacant {
                place,
                hash,
                key,
                len: &mut self.len,
            }),
        }
    }

    /// Removes `key`; returns its value.
    pub(crate) fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hasher.hash_one(key);
        let table = self.shards.get_mut(shard_of(hash))?;
        let found = table
            .find_entry(hash, |slot| slot.key.borrow() == key)
            .ok()?;
        self.len -= 1;
        Some(found.remove().0.value)
    }
}

/// The place of a key without a value ([`HashIndex::vacant`]).
pub(crate) struct Vacant<'a, K, V> {
    place: hashbrown::hash_table::VacantEntry<'a, Slot<K, V>>,
    hash: u64,
    key: K,
    len: &'a mut usize,
}

impl<K, V> Vacant<'_, K, V> {
    /// Stores `value` for the key.
    pub(crate) fn insert(self, value: V) {
        self.place.insert(Slot {
            hash: self.hash,
            key: self.key,
            value,
        });
        *self.len += 1;
    }
}

/// The entry of `key` (hashed to `hash`) in its table, the tables made on first use.
/// Takes the tables alone, so the caller can still count what it inserts.
fn entry_of<'a, K: Eq, V>(
    shards: &'a mut Vec<HashTable<Slot<K, V>>>,
    hash: u64,
    key: &K,
) -> TableEntry<'a, Slot<K, V>> {
    if shards.is_empty() {
        *shards = (0..SHARDS).map(|_| HashTable::new()).collect();
    }
    shards[shard_of(hash)].entry(hash, |slot| slot.key == *key, |slot| slot.hash)
}

/// The table of an entry: bits the tables themselves do not place by (they take the low
/// bits for the bucket and the top seven for the control byte).
fn shard_of(hash: u64) -> usize {
    // Truncation intended: six bits.
    (hash >> 40) as usize % SHARDS
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Step {
        Insert(u16, u32),
        Remove(u16),
        Get(u16),
        Claim(u16, u32),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0u16..300, any::<u32>()).prop_map(|(k, v)| Step::Insert(k, v)),
            (0u16..300).prop_map(Step::Remove),
            (0u16..300).prop_map(Step::Get),
            (0u16..300, any::<u32>()).prop_map(|(k, v)| Step::Claim(k, v)),
        ]
    }

    proptest! {
        #[test]
        fn answers_as_a_hash_map_does(steps in proptest::collection::vec(step(), 0..600)) {
            let mut index: HashIndex<String, u32> = HashIndex::default();
            let mut model: HashMap<String, u32> = HashMap::new();
            for step in steps {
                match step {
                    Step::Insert(k, v) => {
                        prop_assert_eq!(index.insert(k.to_string(), v), model.insert(k.to_string(), v));
                    }
                    Step::Remove(k) => {
                        prop_assert_eq!(index.remove(k.to_string().as_str()), model.remove(&k.to_string()));
                    }
                    Step::Claim(k, v) => {
                        let claimed = index.vacant(k.to_string()).map(|place| place.insert(v));
                        prop_assert_eq!(claimed.is_some(), !model.contains_key(&k.to_string()));
                        model.entry(k.to_string()).or_insert(v);
                    }
                    Step::Get(k) => {
                        let key = k.to_string();
                        prop_assert_eq!(index.get(key.as_str()), model.get(&key));
                        prop_assert_eq!(index.contains_key(key.as_str()), model.contains_key(&key));
                    }
                }
                prop_assert_eq!(index.len(), model.len());
                prop_assert_eq!(index.is_empty(), model.is_empty());
            }
        }
    }

    #[test]
    fn entries_spread_over_every_table() {
        let mut index: HashIndex<u32, u32> = HashIndex::default();
        for n in 0..10_000 {
            index.insert(n, n);
        }
        let sizes: Vec<usize> = index.shards.iter().map(HashTable::len).collect();
        assert_eq!(sizes.iter().sum::<usize>(), 10_000);
        // 156 on average; every table within a third of it.
        assert!(sizes.iter().all(|&n| (104..=208).contains(&n)), "{sizes:?}");
    }
}
