//! Standard Webhooks signing: `webhook-id`, `webhook-timestamp` and `webhook-signature`.
//!
//! The signature is `v1,` + base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}")), where the
//! key is the base64-decoded part of a `whsec_...` secret, exactly as the Standard Webhooks
//! libraries (and Svix's) verify it. During a key rotation the header carries one signature
//! per active secret, separated by spaces; receivers accept the request when any matches.

use std::fmt;

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine as _;
use chrono::{DateTime, Duration as ChronoDuration, Utc};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// The prefix of every signing secret.
pub const SECRET_PREFIX: &str = "whsec_";
/// Header naming the message; stable across the retries of one delivery.
pub const WEBHOOK_ID_HEADER: &str = "webhook-id";
/// Header with the attempt's Unix time in seconds.
pub const WEBHOOK_TIMESTAMP_HEADER: &str = "webhook-timestamp";
/// Header with the space-separated `v1,<base64>` signatures.
pub const WEBHOOK_SIGNATURE_HEADER: &str = "webhook-signature";

/// Shortest and longest decoded key the Standard Webhooks specification recommends.
const KEY_BYTES: std::ops::RangeInclusive<usize> = 24..=64;
/// Length of the keys Posthorn generates.
const GENERATED_KEY_BYTES: usize = 32;

/// Why a text is not a signing secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// The text does not start with `whsec_`.
    #[error("a signing secret starts with \"whsec_\"")]
    MissingPrefix,
    /// The part after the prefix is not base64.
    #[error("the part after \"whsec_\" is not valid base64")]
    NotBase64,
    /// The decoded key is shorter than 24 or longer than 64 bytes.
    #[error("a signing key has 24 to 64 bytes, this one has {0}")]
    BadLength(usize),
}

/// A Standard Webhooks signing secret (`whsec_` + base64 of 24 to 64 bytes), kept decoded.
/// `Debug` never shows the key.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret {
    key: Vec<u8>,
}

impl WebhookSecret {
    /// Parses `whsec_<base64>`; the HMAC key is the decoded bytes.
    pub fn parse(text: &str) -> Result<Self, SecretError> {
        let encoded = text
            .trim()
            .strip_prefix(SECRET_PREFIX)
            .ok_or(SecretError::MissingPrefix)?;
        let key = STANDARD
            .decode(encoded)
            .or_else(|_| STANDARD_NO_PAD.decode(encoded))
            .map_err(|_| SecretError::NotBase64)?;
        Self::from_key(key)
    }

    /// Wraps raw key bytes (24 to 64 of them).
    pub fn from_key(key: Vec<u8>) -> Result<Self, SecretError> {
        if KEY_BYTES.contains(&key.len()) {
            Ok(Self { key })
        } else {
            Err(SecretError::BadLength(key.len()))
        }
    }

    /// A fresh random 32-byte secret.
    pub fn generate<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        let mut key = vec![0u8; GENERATED_KEY_BYTES];
        rng.fill_bytes(&mut key);
        Self { key }
    }

    /// The `whsec_...` text, to store or to show the workspace owner once.
    pub fn expose(&self) -> String {
        format!("{SECRET_PREFIX}{}", STANDARD.encode(&self.key))
    }

    /// The decoded key bytes.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// `v1,` + base64 of this key's HMAC-SHA256 over `{id}.{timestamp}.{body}`.
    fn signature(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        // HMAC-SHA256 accepts keys of any length: this cannot fail.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WebhookSecret(whsec_***)")
    }
}

/// The `webhook-signature` value: one `v1,<base64>` per secret, in order, space-separated.
pub fn sign<'a>(
    id: &str,
    timestamp: i64,
    body: &[u8],
    secrets: impl IntoIterator<Item = &'a WebhookSecret>,
) -> String {
    secrets
        .into_iter()
        .map(|secret| secret.signature(id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The three Standard Webhooks headers for one attempt. `id` stays the same across retries;
/// `timestamp` (Unix seconds) is the attempt's own, so each attempt is signed afresh.
pub fn signature_headers<'a>(
    id: &str,
    timestamp: i64,
    body: &[u8],
    secrets: impl IntoIterator<Item = &'a WebhookSecret>,
) -> [(&'static str, String); 3] {
    [
        (WEBHOOK_ID_HEADER, id.to_string()),
        (WEBHOOK_TIMESTAMP_HEADER, timestamp.to_string()),
        (WEBHOOK_SIGNATURE_HEADER, sign(id, timestamp, body, secrets)),
    ]
}

/// A workspace's signing secrets: the current one, and during a rotation the previous one
/// until it expires, so receivers can switch to the new secret without rejecting requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningKeys {
    current: WebhookSecret,
    previous: Option<(WebhookSecret, DateTime<Utc>)>,
}

impl SigningKeys {
    /// How long a replaced secret keeps signing after a rotation.
    pub const ROTATION_OVERLAP: ChronoDuration = ChronoDuration::hours(24);

    /// Signing with one secret only.
    pub fn new(current: WebhookSecret) -> Self {
        Self {
            current,
            previous: None,
        }
    }

    /// Keys restored from storage: `previous` signs too until `until`.
    pub fn with_previous(
        current: WebhookSecret,
        previous: WebhookSecret,
        until: DateTime<Utc>,
    ) -> Self {
        Self {
            current,
            previous: Some((previous, until)),
        }
    }

    /// Replaces the current secret by `next` at `now`; the replaced one keeps signing for
    /// [`Self::ROTATION_OVERLAP`] (an older previous secret is dropped).
    pub fn rotate(self, next: WebhookSecret, now: DateTime<Utc>) -> Self {
        Self::with_previous(next, self.current, now + Self::ROTATION_OVERLAP)
    }

    /// The current secret.
    pub fn current(&self) -> &WebhookSecret {
        &self.current
    }

    /// The previous secret and when it stops signing, if a rotation is recent.
    pub fn previous(&self) -> Option<(&WebhookSecret, DateTime<Utc>)> {
        self.previous.as_ref().map(|(s, until)| (s, *until))
    }

    /// The secrets that sign at `now`: the current one, then the previous one if unexpired.
    pub fn active(&self, now: DateTime<Utc>) -> Vec<&WebhookSecret> {
        let mut secrets = vec![&self.current];
        if let Some((previous, until)) = &self.previous {
            if now < *until {
                secrets.push(previous);
            }
        }
        secrets
    }

    /// The Standard Webhooks headers for an attempt made at `now`.
    pub fn headers(
        &self,
        id: &str,
        body: &[u8],
        now: DateTime<Utc>,
    ) -> [(&'static str, String); 3] {
        signature_headers(id, now.timestamp(), body, self.active(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use proptest::prelude::*;

    /// HMAC-SHA256 written out from RFC 2104 on top of SHA-256, independent of the `hmac`
    /// crate the signer uses.
    fn reference_hmac(key: &[u8], message: &[u8]) -> [u8; 32] {
        use sha2::Digest;
        let mut block = [0u8; 64];
        if key.len() > 64 {
            block[..32].copy_from_slice(&Sha256::digest(key));
        } else {
            block[..key.len()].copy_from_slice(key);
        }
        let inner_pad: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
        let outer_pad: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
        let inner = Sha256::new()
            .chain_update(&inner_pad)
            .chain_update(message)
            .finalize();
        Sha256::new()
            .chain_update(&outer_pad)
            .chain_update(inner)
            .finalize()
            .into()
    }

    fn secret(text: &str) -> WebhookSecret {
        WebhookSecret::parse(text).expect("valid secret")
    }

    #[test]
    fn the_standard_webhooks_test_vector_reproduces() {
        // Published with the Standard Webhooks reference libraries: a receiver's library
        // accepts what we send only if this matches byte for byte.
        let s = secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        assert_eq!(
            sign(
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                br#"{"test": 2432232314}"#,
                [&s]
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn secrets_need_the_prefix_base64_and_a_sane_length() {
        assert_eq!(
            WebhookSecret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
            Err(SecretError::MissingPrefix)
        );
        assert_eq!(
            WebhookSecret::parse("whsec_not base64!"),
            Err(SecretError::NotBase64)
        );
        assert_eq!(
            WebhookSecret::parse("whsec_c2hvcnQ="),
            Err(SecretError::BadLength(5))
        );
        assert_eq!(
            WebhookSecret::from_key(vec![0; 65]),
            Err(SecretError::BadLength(65))
        );
        let s = secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        assert_eq!(s.key().len(), 24);
        assert_eq!(s.expose(), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        assert_eq!(format!("{s:?}"), "WebhookSecret(whsec_***)");
    }

    #[test]
    fn a_rotation_signs_with_both_secrets_for_a_day() {
        let t0 = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let old = WebhookSecret::from_key(vec![1; 32]).expect("valid");
        let new = WebhookSecret::from_key(vec![2; 32]).expect("valid");
        let keys = SigningKeys::new(old.clone()).rotate(new.clone(), t0);
        assert_eq!(keys.active(t0), vec![&new, &old]);
        let just_before = t0 + ChronoDuration::hours(24) - ChronoDuration::seconds(1);
        assert_eq!(keys.active(just_before).len(), 2);
        assert_eq!(keys.active(t0 + ChronoDuration::hours(24)), vec![&new]);

        let [(_, id), (_, ts), (_, sig)] = keys.headers("msg_1", b"{}", t0);
        assert_eq!((id.as_str(), ts), ("msg_1", t0.timestamp().to_string()));
        let parts: Vec<&str> = sig.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], sign("msg_1", t0.timestamp(), b"{}", [&new]));
        assert_eq!(parts[1], sign("msg_1", t0.timestamp(), b"{}", [&old]));
    }

    proptest! {
        #[test]
        fn every_signature_is_v1_base64_of_the_reference_hmac(
            keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 24..=64), 1..4),
            id in "[A-Za-z0-9_-]{1,40}",
            timestamp in 0i64..4_000_000_000,
            body in proptest::collection::vec(any::<u8>(), 0..512),
        ) {
            let secrets: Vec<WebhookSecret> = keys
                .iter()
                .map(|k| WebhookSecret::parse(&format!("whsec_{}", STANDARD.encode(k))).expect("valid"))
                .collect();
            let header = sign(&id, timestamp, &body, &secrets);
            let parts: Vec<&str> = header.split(' ').collect();
            prop_assert_eq!(parts.len(), keys.len());
            let mut message = format!("{id}.{timestamp}.").into_bytes();
            message.extend_from_slice(&body);
            for (part, key) in parts.iter().zip(&keys) {
                let encoded = part.strip_prefix("v1,").expect("v1 prefix");
                let mac = STANDARD.decode(encoded).expect("base64");
                let expected = reference_hmac(key, &message);
                prop_assert_eq!(mac.as_slice(), expected.as_slice());
            }
        }

        #[test]
        fn a_signature_changes_with_any_signed_field(
            key in proptest::collection::vec(any::<u8>(), 24..=64),
            id in "[a-z0-9]{1,20}",
            timestamp in 0i64..4_000_000_000,
            body in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let s = WebhookSecret::from_key(key).expect("valid");
            let base = sign(&id, timestamp, &body, [&s]);
            prop_assert_eq!(&base, &sign(&id, timestamp, &body, [&s]));
            prop_assert_ne!(&base, &sign(&format!("{id}x"), timestamp, &body, [&s]));
            prop_assert_ne!(&base, &sign(&id, timestamp + 1, &body, [&s]));
            let mut other = body.clone();
            other.push(b'!');
            prop_assert_ne!(&base, &sign(&id, timestamp, &other, [&s]));
        }

        #[test]
        fn a_secret_round_trips_through_its_text(key in proptest::collection::vec(any::<u8>(), 24..=64)) {
            let s = WebhookSecret::from_key(key.clone()).expect("valid");
            let text = s.expose();
            prop_assert!(text.starts_with(SECRET_PREFIX));
            let parsed = WebhookSecret::parse(&text).expect("parses");
            prop_assert_eq!(parsed.key(), key.as_slice());
        }
    }
}
