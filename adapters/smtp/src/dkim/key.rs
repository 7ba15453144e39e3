//! The RSA key a DKIM signature is made with: aws-lc's RSA behind mail-auth's `SigningKey`.
//!
//! A parsed key is kept per process: aws-lc checks an RSA key when it parses it, which costs
//! about half a signature (125 µs against 266 µs measured for 2048 bits), and every email of a
//! domain is signed with the same key.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{RsaKeyPair, RSA_PKCS1_SHA256};
use mail_auth::common::crypto::{Algorithm, Sha256, SigningKey};
use mail_auth::common::headers::Writable;

/// Parsed keys kept at most: a process signs for a few domains; past this many (key
/// rotations over a long uptime) the table starts again.
const KEPT_KEYS: usize = 256;

/// An RSA private key signing `rsa-sha256`.
pub(crate) struct RsaSha256Key {
    pair: Arc<RsaKeyPair>,
    rng: SystemRandom,
}

impl RsaSha256Key {
    /// The key of PKCS#1 `der`, parsed once per process.
    pub(crate) fn from_pkcs1_der(der: &[u8]) -> Result<Self, String> {
        static PARSED: OnceLock<Mutex<HashMap<Vec<u8>, Arc<RsaKeyPair>>>> = OnceLock::new();
        let parsed = PARSED.get_or_init(Mutex::default);
        // A panic cannot leave the table half-updated (one insert or clear), so a poisoned
        // lock is still usable.
        let kept = parsed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(der)
            .cloned();
        let pair = match kept {
            Some(pair) => pair,
            None => {
                let pair = Arc::new(RsaKeyPair::from_der(der).map_err(|e| e.to_string())?);
                let mut table = parsed.lock().unwrap_or_else(|p| p.into_inner());
                if table.len() >= KEPT_KEYS {
                    table.clear();
                }
                table.insert(der.to_vec(), Arc::clone(&pair));
                pair
            }
        };
        Ok(Self {
            pair,
            rng: SystemRandom::new(),
        })
    }
}

impl SigningKey for RsaSha256Key {
    type Hasher = Sha256;

    fn sign(&self, input: impl Writable) -> mail_auth::Result<Vec<u8>> {
        let mut data = Vec::with_capacity(512);
        input.write(&mut data);
        let mut signature = vec![0; self.pair.public_modulus_len()];
        self.pair
            .sign(&RSA_PKCS1_SHA256, &self.rng, &data, &mut signature)
            .map_err(|e| mail_auth::Error::CryptoError(e.to_string()))?;
        Ok(signature)
    }

    fn algorithm(&self) -> Algorithm {
        Algorithm::RsaSha256
    }
}

#[cfg(test)]
mod tests {
    use mail_auth::common::crypto::RsaKey;
    use posthorn_core::app::domains::generate_dkim_key;

    use super::*;

    #[test]
    fn a_key_is_parsed_once_per_process() {
        let key = generate_dkim_key().expect("a key");
        let first = RsaSha256Key::from_pkcs1_der(key.private_key_der()).expect("parsed");
        let again = RsaSha256Key::from_pkcs1_der(key.private_key_der()).expect("parsed");
        assert!(Arc::ptr_eq(&first.pair, &again.pair));
    }

    #[test]
    fn signatures_are_those_of_ring() {
        // RSASSA-PKCS1-v1_5 is deterministic: both libraries must give the same bytes.
        let key = generate_dkim_key().expect("a key");
        let ours = RsaSha256Key::from_pkcs1_der(key.private_key_der()).expect("parsed");
        let ring = RsaKey::<Sha256>::from_der(key.private_key_der()).expect("parsed by ring");
        let input: &[u8] = b"from:Ann <ann@example.test>\r\ndkim-signature:v=1; b=";
        assert_eq!(
            ours.sign(input).expect("signed"),
            ring.sign(input).expect("signed by ring")
        );
    }

    #[test]
    fn a_broken_key_is_refused() {
        assert!(RsaSha256Key::from_pkcs1_der(b"not a key").is_err());
    }
}
