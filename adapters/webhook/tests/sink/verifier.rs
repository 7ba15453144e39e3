//! A Standard Webhooks verifier written from the specification, sharing no code with the
//! signer: HMAC-SHA256 spelled out from RFC 2104 over SHA-256.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use sha2::{Digest, Sha256};

fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(message);
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// Whether any `v1,` signature in `header` is the HMAC of `{id}.{timestamp}.{body}` under the
/// decoded key of `secret` (`whsec_<base64>`).
pub fn verify(secret: &str, id: &str, timestamp: &str, body: &[u8], header: &str) -> bool {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").expect("whsec_ prefix"))
        .expect("base64 secret");
    let mut message = format!("{id}.{timestamp}.").into_bytes();
    message.extend_from_slice(body);
    let expected = format!("v1,{}", STANDARD.encode(hmac_sha256(&key, &message)));
    header.split(' ').any(|signature| signature == expected)
}

#[test]
fn the_verifier_accepts_the_published_vector_and_nothing_else() {
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    let body = br#"{"test": 2432232314}"#;
    let good = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
    assert!(verify(secret, id, "1614265330", body, good));
    assert!(verify(
        secret,
        id,
        "1614265330",
        body,
        &format!("v1,bm9wZQ== {good}")
    ));
    assert!(!verify(secret, id, "1614265331", body, good));
    assert!(!verify(
        secret,
        id,
        "1614265330",
        br#"{"test": 2432232315}"#,
        good
    ));
    assert!(!verify(secret, "msg_other", "1614265330", body, good));
}
