//! A deployment secret (the bounce-token key, the link-signing key) once read from the
//! store, so that using it costs no read.

use std::sync::{Arc, OnceLock};

use rand::RngCore;

use crate::ports::{Store, StoreError};

/// A deployment secret, filled on first use and shared by every clone of the settings
/// holding it: the store creates each secret once (`Store::ensure_secret`) and never
/// changes it, so every process keeps the same value. `Debug` never shows it.
#[derive(Clone, Default)]
pub struct SecretCell(Arc<OnceLock<Vec<u8>>>);

impl SecretCell {
    /// The key, when it was loaded.
    pub fn get(&self) -> Option<&[u8]> {
        self.0.get().map(Vec::as_slice)
    }

    /// Keeps `key` (the first one kept wins; every process reads the same stored key).
    pub fn set(&self, key: Vec<u8>) {
        let _ = self.0.set(key);
    }

    /// The kept secret, else the store's secret `name` (created from 32 random bytes on
    /// first use), which is then kept.
    pub async fn get_or_load(&self, store: &dyn Store, name: &str) -> Result<Vec<u8>, StoreError> {
        if let Some(key) = self.get() {
            return Ok(key.to_vec());
        }
        let mut candidate = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut candidate);
        let key = store.ensure_secret(name, &candidate).await?;
        self.set(key.clone());
        Ok(key)
    }
}

impl std::fmt::Debug for SecretCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.get().is_some() {
            "SecretCell(loaded)"
        } else {
            "SecretCell(empty)"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_key_and_debug_never_shows_it() {
        let cell = SecretCell::default();
        let clone = cell.clone();
        assert_eq!(format!("{cell:?}"), "SecretCell(empty)");
        clone.set(b"secret-bytes".to_vec());
        cell.set(b"another".to_vec());
        assert_eq!(cell.get(), Some(&b"secret-bytes"[..]));
        assert_eq!(format!("{cell:?}"), "SecretCell(loaded)");
    }
}
