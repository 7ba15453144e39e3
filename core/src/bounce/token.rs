//! The per-email bounce address (VERP): `bounces+<token>@<domain>`, where the token is the
//! email id and a truncated HMAC of it, so a bounce names its email without a lookup and a
//! forged address names none.

use data_encoding::BASE32_NOPAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use uuid::Uuid;

use crate::model::EmailId;

/// The local-part prefix of every bounce address.
pub const BOUNCE_PREFIX: &str = "bounces+";
/// Bytes of the HMAC-SHA256 tag kept in a token (80 bits: forging needs 2^80 tries, each
/// a delivered message).
const TAG_BYTES: usize = 10;
/// Bytes of the email id (a UUID).
const ID_BYTES: usize = 16;
/// Characters of a token: 26 bytes in unpadded base32.
pub const TOKEN_LEN: usize = 42;
/// Keeps the HMAC of bounce tokens apart from anything else the key may ever sign.
const CONTEXT: &[u8] = b"posthorn-verp-v1";

/// The bounce token of `email_id`: lower-case base32 (local parts are compared without
/// case in practice, so the alphabet must survive case folding). `None` for an id that is
/// not a UUID (Posthorn's ids always are).
pub fn sign(key: &[u8], email_id: &EmailId) -> Option<String> {
    let id = Uuid::parse_str(email_id.as_str()).ok()?;
    let mut bytes = Vec::with_capacity(ID_BYTES + TAG_BYTES);
    bytes.extend_from_slice(id.as_bytes());
    let tag = mac(key, id.as_bytes()).finalize().into_bytes();
    bytes.extend_from_slice(&tag[..TAG_BYTES]);
    Some(BASE32_NOPAD.encode(&bytes).to_ascii_lowercase())
}

/// The email a token names, when `key` signed it; `None` for anything tampered, truncated
/// or signed with another key. Case-insensitive.
pub fn verify(key: &[u8], token: &str) -> Option<EmailId> {
    let bytes = decode(token)?;
    let (id, tag) = bytes.split_at(ID_BYTES);
    mac(key, id).verify_truncated_left(tag).ok()?;
    let id = Uuid::from_slice(id).ok()?;
    Some(EmailId::from(id.to_string()))
}

/// Whether `token` has the shape of a token (length and alphabet), signature unchecked.
pub fn well_formed(token: &str) -> bool {
    decode(token).is_some()
}

fn decode(token: &str) -> Option<Vec<u8>> {
    if token.len() != TOKEN_LEN {
        return None;
    }
    let bytes = BASE32_NOPAD
        .decode(token.to_ascii_uppercase().as_bytes())
        .ok()?;
    (bytes.len() == ID_BYTES + TAG_BYTES).then_some(bytes)
}

/// The bounce address of `email_id` at `domain`.
pub fn address(key: &[u8], email_id: &EmailId, domain: &str) -> Option<String> {
    let token = sign(key, email_id)?;
    Some(format!(
        "{BOUNCE_PREFIX}{token}@{}",
        domain.to_ascii_lowercase()
    ))
}

/// Splits a bounce address into its token and domain: `Some` when the local part starts
/// with `bounces+` (any case), whatever follows.
pub fn split_address(address: &str) -> Option<(&str, &str)> {
    let address = address.trim().trim_start_matches('<').trim_end_matches('>');
    let (local, domain) = address.rsplit_once('@')?;
    let prefix = local.get(..BOUNCE_PREFIX.len())?;
    if !prefix.eq_ignore_ascii_case(BOUNCE_PREFIX) || domain.is_empty() {
        return None;
    }
    Some((&local[BOUNCE_PREFIX.len()..], domain))
}

fn mac(key: &[u8], id: &[u8]) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(CONTEXT);
    mac.update(id);
    mac
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const ID: &str = "01937a4e-8c2b-7d3e-9f10-5a6b7c8d9e0f";

    #[test]
    fn tokens_round_trip_fit_a_local_part_and_survive_case_folding() {
        let id = EmailId::from(ID);
        let address = address(b"key", &id, "Mail.Example.COM").unwrap_or_default();
        let (token, domain) = split_address(&address).unwrap_or_default();
        assert_eq!(domain, "mail.example.com");
        assert_eq!(token.len(), TOKEN_LEN);
        let local = address.split('@').next().unwrap_or_default();
        assert!(local.len() <= 64, "{local}");
        assert_eq!(verify(b"key", token), Some(id.clone()));
        assert_eq!(verify(b"key", &token.to_ascii_uppercase()), Some(id));
        let upper = address.to_ascii_uppercase();
        assert!(split_address(&upper).is_some());
    }

    #[test]
    fn forged_and_foreign_tokens_are_refused() {
        let id = EmailId::from(ID);
        let token = sign(b"key", &id).unwrap_or_default();
        assert_eq!(verify(b"other key", &token), None);
        // Another email id under the same tag.
        let other = sign(
            b"key",
            &EmailId::from("01937a4e-8c2b-7d3e-9f10-5a6b7c8d9e10"),
        )
        .unwrap_or_default();
        let forged = format!("{}{}", &other[..26], &token[26..]);
        assert_eq!(verify(b"key", &forged), None);
        assert_eq!(verify(b"key", &token[..TOKEN_LEN - 1]), None);
        assert_eq!(verify(b"key", ""), None);
        assert!(well_formed(&forged));
        assert!(!well_formed("not-a-token"));
        assert_eq!(sign(b"key", &EmailId::from("em_1")), None);
    }

    #[test]
    fn only_bounce_local_parts_split() {
        assert_eq!(split_address("BOUNCES+abc@x.test"), Some(("abc", "x.test")));
        assert_eq!(
            split_address("<bounces+abc@x.test>"),
            Some(("abc", "x.test"))
        );
        assert_eq!(split_address("bounce+abc@x.test"), None);
        assert_eq!(split_address("bounces+abc@"), None);
        assert_eq!(split_address("user@x.test"), None);
        assert_eq!(split_address("bounces"), None);
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics_or_verifies(text in "\\PC{0,80}") {
            prop_assert_eq!(verify(b"key", &text), None);
            let _ = split_address(&text);
        }
    }
}
