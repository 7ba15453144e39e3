//! Lookups in a map keyed like the contacts, made while walking the contacts in id order.
//!
//! A segment count walks every contact of a workspace in id order and needs, for each, its
//! entry in another map keyed by contact id (its event facts, its segments). Searching that
//! map once per contact costs a B-tree descent each time; walking it alongside costs one
//! step, and reads it in order.

use std::collections::btree_map::{self, BTreeMap};
use std::iter::Peekable;
use std::ops::Bound;

/// A forward-only cursor over `map` for keys asked in ascending order.
pub(crate) struct Alongside<'a, K: Ord, V> {
    map: &'a BTreeMap<K, V>,
    rest: Peekable<btree_map::Range<'a, K, V>>,
    /// The last key stepped over: a key at or before it is looked up in the map instead.
    passed: Option<&'a K>,
}

impl<'a, K: Ord, V> Alongside<'a, K, V> {
    /// A cursor over the entries of `map` after `from` (the walk's own lower bound).
    pub(crate) fn new(map: &'a BTreeMap<K, V>, from: Bound<&K>) -> Self {
        Self {
            map,
            rest: map.range((from, Bound::Unbounded)).peekable(),
            passed: None,
        }
    }

    /// The entry of `key`. Keys asked in ascending order are found by stepping forward;
    /// one asked out of order is still found, by a search.
    pub(crate) fn get(&mut self, key: &K) -> Option<&'a V> {
        if self.passed.is_some_and(|p| key <= p) {
            return self.map.get(key);
        }
        while let Some((k, _)) = self.rest.peek() {
            if *k >= key {
                break;
            }
            self.passed = self.rest.next().map(|(k, _)| k);
        }
        match self.rest.peek() {
            Some((k, v)) if *k == key => Some(*v),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn finds_what_the_map_finds(
            keys in proptest::collection::btree_set(0u16..500, 0..80),
            asked in proptest::collection::vec(0u16..520, 0..120),
            sorted in any::<bool>(),
            from in proptest::option::of(0u16..500),
        ) {
            let map: BTreeMap<u16, u16> = keys.iter().map(|&k| (k, k * 2)).collect();
            let mut asked = asked;
            if sorted {
                asked.sort_unstable();
            }
            let bound = from.as_ref().map_or(Bound::Unbounded, Bound::Excluded);
            let mut cursor = Alongside::new(&map, bound);
            for key in asked {
                if from.is_some_and(|f| key <= f) {
                    // Before the walk's lower bound: not a key the walk asks for.
                    continue;
                }
                prop_assert_eq!(cursor.get(&key), map.get(&key), "key {}", key);
            }
        }
    }

    #[test]
    fn steps_forward_and_falls_back_to_a_search() {
        let map: BTreeMap<u8, &str> = [(1, "a"), (3, "c"), (5, "e")].into_iter().collect();
        let mut cursor = Alongside::new(&map, Bound::Unbounded);
        assert_eq!(cursor.get(&2), None);
        assert_eq!(cursor.get(&3), Some(&"c"));
        assert_eq!(cursor.get(&3), Some(&"c"));
        assert_eq!(cursor.get(&5), Some(&"e"));
        // Out of order: found by a search.
        assert_eq!(cursor.get(&1), Some(&"a"));
        assert_eq!(cursor.get(&6), None);
    }
}
