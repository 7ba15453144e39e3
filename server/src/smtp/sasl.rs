//! The two SASL mechanisms the submission relay offers (RFC 4616 PLAIN, and LOGIN): only
//! the base64 and NUL-separated fields; the SMTP side is `smtp-proto`'s.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

/// `334` challenge of AUTH LOGIN asking for the user name ("Username:").
pub const LOGIN_USER_CHALLENGE: &str = "VXNlcm5hbWU6";
/// `334` challenge of AUTH LOGIN asking for the password ("Password:").
pub const LOGIN_PASSWORD_CHALLENGE: &str = "UGFzc3dvcmQ6";

/// A user name and secret a client offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    /// Any name; Posthorn does not use it.
    pub user: String,
    /// The secret (an `sk_` key).
    pub secret: String,
}

/// Why a SASL response cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SaslError {
    /// The client sent `*`.
    #[error("authentication cancelled")]
    Cancelled,
    /// Not base64, not UTF-8, or not the mechanism's fields.
    #[error("malformed authentication response")]
    Malformed,
}

/// Decodes one base64 response line (`=` stands for an empty response).
pub fn decode(line: &str) -> Result<String, SaslError> {
    let line = line.trim();
    if line == "*" {
        return Err(SaslError::Cancelled);
    }
    if line == "=" || line.is_empty() {
        return Ok(String::new());
    }
    let bytes = STANDARD.decode(line).map_err(|_| SaslError::Malformed)?;
    String::from_utf8(bytes).map_err(|_| SaslError::Malformed)
}

/// Reads a PLAIN response: `authzid NUL authcid NUL password`.
pub fn plain(line: &str) -> Result<Credentials, SaslError> {
    let decoded = decode(line)?;
    let mut fields = decoded.split('\0');
    let (Some(_authzid), Some(user), Some(secret), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(SaslError::Malformed);
    };
    if secret.is_empty() {
        return Err(SaslError::Malformed);
    }
    Ok(Credentials {
        user: user.to_string(),
        secret: secret.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_reads_the_three_fields() {
        let line = STANDARD.encode("\0me\0sk_123");
        assert_eq!(
            plain(&line),
            Ok(Credentials {
                user: "me".into(),
                secret: "sk_123".into()
            })
        );
        assert_eq!(plain("*"), Err(SaslError::Cancelled));
        assert_eq!(plain("not base64!"), Err(SaslError::Malformed));
        assert_eq!(plain(&STANDARD.encode("me\0sk")), Err(SaslError::Malformed));
        assert_eq!(decode(&STANDARD.encode("user")), Ok("user".into()));
        assert_eq!(decode("="), Ok(String::new()));
    }

    proptest! {
        #[test]
        fn any_line_is_an_answer_not_a_panic(line in ".{0,300}") {
            let _ = plain(&line);
            let _ = decode(&line);
        }

        #[test]
        fn plain_round_trips(user in "[^\0]{0,40}", secret in "[^\0]{1,80}") {
            let line = STANDARD.encode(format!("\0{user}\0{secret}"));
            prop_assert_eq!(plain(&line), Ok(Credentials { user, secret }));
        }
    }
}
