//! Signing SNS messages as SNS does, for tests: an RSA key with a self-signed certificate,
//! and the string to sign written out from the SNS documentation (independently of the
//! server's code). Shared by the API tests and the OpenAPI test.

use std::sync::LazyLock;

use base64::Engine as _;
use ring::digest::{digest, SHA1_FOR_LEGACY_USE_ONLY, SHA256};
use rsa::pkcs8::EncodePrivateKey;
use rsa::{Pkcs1v15Sign, RsaPrivateKey};
use serde_json::{json, Value};

/// The test signing key and its self-signed certificate (PEM), made once per test binary.
pub static SIGNER: LazyLock<(RsaPrivateKey, String)> = LazyLock::new(|| {
    let key = RsaPrivateKey::new(&mut rand::thread_rng(), 2048).expect("RSA key");
    let der = key.to_pkcs8_der().expect("PKCS#8").as_bytes().to_vec();
    let pair = rcgen::KeyPair::from_pkcs8_der_and_sign_algo(&der.into(), &rcgen::PKCS_RSA_SHA256)
        .expect("rcgen key");
    let cert = rcgen::CertificateParams::new(vec!["sns.test".to_string()])
        .expect("params")
        .self_signed(&pair)
        .expect("certificate");
    (key, cert.pem())
});

/// The SNS string to sign, written out from the SNS documentation (independently of the
/// server's code): `Name\nvalue\n` for the signed keys present, in byte order.
fn string_to_sign(message: &Value) -> String {
    let keys: &[&str] = if message["Type"] == "Notification" {
        &[
            "Message",
            "MessageId",
            "Subject",
            "Timestamp",
            "TopicArn",
            "Type",
        ]
    } else {
        &[
            "Message",
            "MessageId",
            "SubscribeURL",
            "Timestamp",
            "Token",
            "TopicArn",
            "Type",
        ]
    };
    let mut out = String::new();
    for key in keys {
        if let Some(value) = message[*key].as_str() {
            out.push_str(&format!("{key}\n{value}\n"));
        }
    }
    out
}

/// Signs `message` in place (RSA PKCS#1 v1.5 over SHA1 for version 1, SHA256 for 2).
pub fn sign(message: &mut Value, version: u8) {
    const SHA1_INFO: &[u8] = &[
        0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14,
    ];
    const SHA256_INFO: &[u8] = &[
        0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01,
        0x05, 0x00, 0x04, 0x20,
    ];
    message["SignatureVersion"] = json!(version.to_string());
    let text = string_to_sign(message);
    let (info, hash) = if version == 1 {
        (
            SHA1_INFO,
            digest(&SHA1_FOR_LEGACY_USE_ONLY, text.as_bytes()),
        )
    } else {
        (SHA256_INFO, digest(&SHA256, text.as_bytes()))
    };
    let mut digest_info = info.to_vec();
    digest_info.extend_from_slice(hash.as_ref());
    let signature = SIGNER
        .0
        .sign(Pkcs1v15Sign::new_unprefixed(), &digest_info)
        .expect("sign");
    message["Signature"] = json!(base64::engine::general_purpose::STANDARD.encode(signature));
}
