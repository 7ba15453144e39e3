//! DKIM signing (RFC 6376) of a built message with its sender domain's key, by mail-auth.

use mail_auth::common::headers::HeaderWriter;
use mail_auth::dkim::{Canonicalization, DkimSigner};
use posthorn_core::ports::DkimSigning;

use crate::mime::BuildError;

mod key;

use key::RsaSha256Key;

/// The headers signed, when present: those a recipient sees and relies on, and the MIME
/// structure, so that none can be changed or added in transit without breaking the
/// signature.
const SIGNED_HEADERS: [&str; 11] = [
    "From",
    "To",
    "Subject",
    "Date",
    "Message-ID",
    "Reply-To",
    "MIME-Version",
    "Content-Type",
    "List-Unsubscribe",
    "List-Unsubscribe-Post",
    "X-Posthorn-Email-Id",
];

/// `message` with a `DKIM-Signature` header (rsa-sha256, relaxed/relaxed) in front.
pub(crate) fn sign(message: Vec<u8>, signing: &DkimSigning) -> Result<Vec<u8>, BuildError> {
    let key = RsaSha256Key::from_pkcs1_der(signing.key.private_key_der())
        .map_err(|e| BuildError::Dkim(format!("unusable key for {}: {e}", signing.domain)))?;
    let signature = DkimSigner::from_key(key)
        .domain(signing.domain.as_str())
        .selector(signing.selector.as_str())
        .headers(SIGNED_HEADERS)
        .header_canonicalization(Canonicalization::Relaxed)
        .body_canonicalization(Canonicalization::Relaxed)
        .sign(&message)
        .map_err(|e| BuildError::Dkim(format!("signing for {} failed: {e}", signing.domain)))?;
    let mut out = signature.to_header().into_bytes();
    out.extend_from_slice(&message);
    Ok(out)
}

#[cfg(test)]
mod tests;
