use chrono::TimeZone;
use ring::digest::{digest, SHA1_FOR_LEGACY_USE_ONLY, SHA256};
use rsa::pkcs8::EncodePrivateKey;
use rsa::{Pkcs1v15Sign, RsaPrivateKey};

use super::*;
use crate::sns::envelope::SnsKind;

/// An RSA-2048 key and a self-signed certificate of it (PEM).
fn key_and_cert() -> (RsaPrivateKey, String) {
    let mut rng = rand::thread_rng();
    let key = RsaPrivateKey::new(&mut rng, 2048).expect("key");
    let der = key.to_pkcs8_der().expect("pkcs8").as_bytes().to_vec();
    let pair =
        rcgen::KeyPair::from_pkcs8_der_and_sign_algo(&der.clone().into(), &rcgen::PKCS_RSA_SHA256)
            .expect("rcgen key");
    let params = rcgen::CertificateParams::new(vec!["sns.test".to_string()]).expect("params");
    let cert = params.self_signed(&pair).expect("cert");
    (key, cert.pem())
}

fn envelope(version: SignatureVersion) -> SnsEnvelope {
    SnsEnvelope {
        kind: SnsKind::Notification {
            subject: Some("s".into()),
        },
        message_id: "m-1".into(),
        topic_arn: "arn:aws:sns:us-east-1:1:t".into(),
        message: "{\"a\":1}".into(),
        timestamp: "2026-11-21T10:00:00.000Z".into(),
        signature_version: version,
        signature: Vec::new(),
        signing_cert_url: "https://sns.us-east-1.amazonaws.com/c.pem".into(),
    }
}

/// Signs independently of ring's verifier: the DER DigestInfo of RFC 8017 (9.2) signed
/// with the `rsa` crate.
fn sign(key: &RsaPrivateKey, env: &mut SnsEnvelope) {
    const SHA1_INFO: &[u8] = &[
        0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14,
    ];
    const SHA256_INFO: &[u8] = &[
        0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01,
        0x05, 0x00, 0x04, 0x20,
    ];
    let text = env.string_to_sign();
    let (info, hash) = match env.signature_version {
        SignatureVersion::V1 => (
            SHA1_INFO,
            digest(&SHA1_FOR_LEGACY_USE_ONLY, text.as_bytes()),
        ),
        SignatureVersion::V2 => (SHA256_INFO, digest(&SHA256, text.as_bytes())),
    };
    let mut digest_info = info.to_vec();
    digest_info.extend_from_slice(hash.as_ref());
    env.signature = key
        .sign(Pkcs1v15Sign::new_unprefixed(), &digest_info)
        .expect("sign");
}

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0)
        .single()
        .expect("date")
}

#[test]
fn both_versions_verify_and_any_change_is_refused() {
    let (key, pem) = key_and_cert();
    for version in [SignatureVersion::V1, SignatureVersion::V2] {
        let mut env = envelope(version);
        sign(&key, &mut env);
        assert_eq!(verify_signature(&env, pem.as_bytes(), now()), Ok(()));

        let mut tampered = env.clone();
        tampered.message.push(' ');
        assert_eq!(
            verify_signature(&tampered, pem.as_bytes(), now()),
            Err(SignatureError::Mismatch)
        );
        let mut other_version = env.clone();
        other_version.signature_version = match version {
            SignatureVersion::V1 => SignatureVersion::V2,
            SignatureVersion::V2 => SignatureVersion::V1,
        };
        assert_eq!(
            verify_signature(&other_version, pem.as_bytes(), now()),
            Err(SignatureError::Mismatch)
        );
    }
    // A signature by another key.
    let (other_key, _) = key_and_cert();
    let mut env = envelope(SignatureVersion::V2);
    sign(&other_key, &mut env);
    assert_eq!(
        verify_signature(&env, pem.as_bytes(), now()),
        Err(SignatureError::Mismatch)
    );
}

#[test]
fn unreadable_non_rsa_and_expired_certificates_are_refused() {
    let env = envelope(SignatureVersion::V2);
    assert!(matches!(
        verify_signature(&env, b"not a certificate", now()),
        Err(SignatureError::BadCertificate(_))
    ));
    let ec = rcgen::KeyPair::generate().expect("ec key");
    let ec_cert = rcgen::CertificateParams::new(vec!["x".to_string()])
        .expect("params")
        .self_signed(&ec)
        .expect("cert");
    assert_eq!(
        verify_signature(&env, ec_cert.pem().as_bytes(), now()),
        Err(SignatureError::NotRsa)
    );
    let (_, pem) = key_and_cert();
    let far = Utc
        .with_ymd_and_hms(5000, 1, 1, 0, 0, 0)
        .single()
        .expect("date");
    assert_eq!(
        verify_signature(&env, pem.as_bytes(), far),
        Err(SignatureError::NotValidNow)
    );
}
