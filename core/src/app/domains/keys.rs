//! DKIM key pairs: made when a domain first needs one, stored once.

use rsa::pkcs1::EncodeRsaPrivateKey;
use rsa::pkcs8::EncodePublicKey;
use rsa::{RsaPrivateKey, RsaPublicKey};

use base64::Engine as _;

use crate::error::{Error, Result};
use crate::model::{DkimKeyPair, Domain};
use crate::ports::{ChangeSet, Write};
use crate::Engine;

/// Bits of every DKIM key Posthorn makes.
const DKIM_KEY_BITS: usize = 2048;

/// A fresh RSA-2048 key pair (CPU-bound: run it off the async threads).
pub fn generate_dkim_key() -> Result<DkimKeyPair> {
    let private = RsaPrivateKey::new(&mut rand::thread_rng(), DKIM_KEY_BITS)
        .map_err(|e| Error::Internal(format!("DKIM key generation failed: {e}")))?;
    let der = private
        .to_pkcs1_der()
        .map_err(|e| Error::Internal(format!("DKIM key encoding failed: {e}")))?;
    let public = RsaPublicKey::from(&private)
        .to_public_key_der()
        .map_err(|e| Error::Internal(format!("DKIM key encoding failed: {e}")))?;
    Ok(DkimKeyPair::from_parts(
        der.as_bytes().to_vec(),
        base64::engine::general_purpose::STANDARD.encode(public.as_bytes()),
    ))
}

impl Engine {
    /// `domain` with its DKIM key: made and stored now if it has none. Concurrent first
    /// uses agree: the store keeps the first key written and this returns the stored one.
    pub async fn ensure_dkim_key(&self, domain: Domain) -> Result<Domain> {
        if domain.dkim.is_some() {
            return Ok(domain);
        }
        let key = tokio::task::spawn_blocking(generate_dkim_key)
            .await
            .map_err(|e| Error::Internal(format!("DKIM key generation stopped: {e}")))??;
        let mut changes = ChangeSet::new();
        changes.push(Write::SetDomainDkimKey {
            workspace_id: domain.workspace_id.clone(),
            id: domain.id.clone(),
            key,
        });
        self.store.commit(changes).await?;
        let stored = self
            .store
            .domains(&domain.workspace_id)
            .await?
            .into_iter()
            .find(|d| d.id == domain.id);
        match stored {
            Some(d) if d.dkim.is_some() => Ok(d),
            _ => Err(Error::NotFound(crate::error::Resource::Domain)),
        }
    }
}
