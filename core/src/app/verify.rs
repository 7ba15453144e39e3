//! `POST /v1/verify`: checks an address offline and through DNS.

use crate::error::{Error, Result};
use crate::verify::{verify_email, VerificationResult};
use crate::Engine;

/// Longest address `verify` looks at, in bytes.
pub const MAX_VERIFY_BYTES: usize = 512;

/// `POST /v1/verify`: the address to check, as given (a malformed one is an answer, not an
/// error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verify {
    /// The address as the user typed it.
    pub email: String,
}

impl Engine {
    /// Verifies an address. One over [`MAX_VERIFY_BYTES`] is a validation error; a malformed
    /// address is an answer (`valid: false`), not an error.
    pub async fn verify(&self, cmd: &Verify) -> Result<VerificationResult> {
        if cmd.email.len() > MAX_VERIFY_BYTES {
            return Err(Error::field(
                "email",
                "too_long",
                "email must be at most 512 characters",
            ));
        }
        Ok(verify_email(&*self.dns, &cmd.email).await)
    }
}
