//! The bounce-token key once read from the store, so checking an address is cheap.

use std::sync::{Arc, OnceLock};

/// The deployment's bounce-token key, filled on first use and shared by every clone of the
/// settings holding it (the key never changes once created). `Debug` never shows it.
#[derive(Clone, Default)]
pub struct BounceKeyCell(Arc<OnceLock<Vec<u8>>>);

impl BounceKeyCell {
    /// The key, when it was loaded.
    pub fn get(&self) -> Option<&[u8]> {
        self.0.get().map(Vec::as_slice)
    }

    /// Keeps `key` (the first one kept wins; every process reads the same stored key).
    pub fn set(&self, key: Vec<u8>) {
        let _ = self.0.set(key);
    }
}

impl std::fmt::Debug for BounceKeyCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.get().is_some() {
            "BounceKeyCell(loaded)"
        } else {
            "BounceKeyCell(empty)"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_key_and_debug_never_shows_it() {
        let cell = BounceKeyCell::default();
        let clone = cell.clone();
        assert_eq!(format!("{cell:?}"), "BounceKeyCell(empty)");
        clone.set(b"secret-bytes".to_vec());
        cell.set(b"another".to_vec());
        assert_eq!(cell.get(), Some(&b"secret-bytes"[..]));
        assert_eq!(format!("{cell:?}"), "BounceKeyCell(loaded)");
    }
}
