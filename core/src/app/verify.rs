//! `POST /v1/verify`: checks an address offline and through DNS.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::validate::Checker;
use crate::verify::{verify_email, VerificationResult};
use crate::Engine;

impl Engine {
    /// Verifies the body's `email`. A missing or non-string `email` is a validation error;
    /// a malformed address is an answer (`valid: false`), not an error.
    pub async fn verify(&self, body: &Value) -> Result<VerificationResult> {
        let obj = Checker::body(body)?;
        let mut c = Checker::new();
        let raw = c.string(obj, "email", "", true).map(str::to_string);
        c.finish()?;
        let raw = raw.ok_or_else(|| Error::Internal("email checked above".into()))?;
        if raw.len() > 512 {
            return Err(Error::field(
                "email",
                "too_long",
                "email must be at most 512 characters",
            ));
        }
        Ok(verify_email(&*self.dns, &raw).await)
    }
}
