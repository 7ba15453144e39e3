//! Verifying an SNS message's signature against the certificate from its `SigningCertURL`:
//! RSA PKCS#1 v1.5 over [`SnsEnvelope::string_to_sign`], with SHA1 (`SignatureVersion` 1)
//! or SHA256 (2).

use chrono::{DateTime, Utc};
use ring::signature::{
    UnparsedPublicKey, VerificationAlgorithm, RSA_PKCS1_2048_8192_SHA1_FOR_LEGACY_USE_ONLY,
    RSA_PKCS1_2048_8192_SHA256,
};
use x509_parser::oid_registry::OID_PKCS1_RSAENCRYPTION;
use x509_parser::pem::parse_x509_pem;
use x509_parser::time::ASN1Time;

use super::envelope::{SignatureVersion, SnsEnvelope};

/// Why a message's signature is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// The fetched document is not a PEM X.509 certificate.
    #[error("the signing certificate cannot be read: {0}")]
    BadCertificate(String),
    /// The certificate's key is not RSA.
    #[error("the signing certificate's key is not RSA")]
    NotRsa,
    /// The certificate is not valid now.
    #[error("the signing certificate is expired or not yet valid")]
    NotValidNow,
    /// The signature does not match the message.
    #[error("the SNS signature does not match the message")]
    Mismatch,
}

/// Checks that `envelope` was signed by the key of the PEM certificate `cert_pem`, valid at
/// `now`.
pub fn verify_signature(
    envelope: &SnsEnvelope,
    cert_pem: &[u8],
    now: DateTime<Utc>,
) -> Result<(), SignatureError> {
    let (_, pem) =
        parse_x509_pem(cert_pem).map_err(|e| SignatureError::BadCertificate(e.to_string()))?;
    let cert = pem
        .parse_x509()
        .map_err(|e| SignatureError::BadCertificate(e.to_string()))?;
    let at = ASN1Time::from_timestamp(now.timestamp())
        .map_err(|e| SignatureError::BadCertificate(e.to_string()))?;
    if !cert.validity().is_valid_at(at) {
        return Err(SignatureError::NotValidNow);
    }
    let spki = cert.public_key();
    if spki.algorithm.algorithm != OID_PKCS1_RSAENCRYPTION {
        return Err(SignatureError::NotRsa);
    }
    let algorithm: &'static dyn VerificationAlgorithm = match envelope.signature_version {
        SignatureVersion::V1 => &RSA_PKCS1_2048_8192_SHA1_FOR_LEGACY_USE_ONLY,
        SignatureVersion::V2 => &RSA_PKCS1_2048_8192_SHA256,
    };
    // For rsaEncryption the bit string holds the PKCS#1 RSAPublicKey, the form ring reads.
    UnparsedPublicKey::new(algorithm, spki.subject_public_key.data.as_ref())
        .verify(envelope.string_to_sign().as_bytes(), &envelope.signature)
        .map_err(|_| SignatureError::Mismatch)
}

#[cfg(test)]
mod tests;
