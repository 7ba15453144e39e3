//! Mail transports for Posthorn: `.eml` files for development and SMTP relays via lettre.
//! Both build their MIME with [`build_mime`].

mod dkim;
mod file;
mod mime;
mod smtp;

use std::path::PathBuf;
use std::sync::Arc;

use posthorn_core::ports::MailTransport;

pub use file::FileTransport;
pub use mime::{build_mime, BuildError, EMAIL_ID_HEADER};
pub use smtp::{SmtpTransport, TlsMode};

/// Why a transport specification was refused; never contains the password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Neither `file:`, `smtp://` nor `smtps://`.
    #[error("unsupported mail transport {0:?}: use file:DIR, smtp://… or smtps://…")]
    UnknownScheme(String),
    /// The URL or path does not parse or holds an unknown option.
    #[error("invalid mail transport: {0}")]
    InvalidUrl(String),
    /// TLS could not be set up (for instance no usable root certificates).
    #[error("TLS setup failed: {0}")]
    Tls(String),
}

/// Builds the transport named by `POSTHORN_TRANSPORT`: `file:DIR`, `smtp://…` or `smtps://…`.
pub fn transport_from_spec(spec: &str) -> Result<Arc<dyn MailTransport>, ConfigError> {
    let spec = spec.trim();
    if let Some(dir) = spec.strip_prefix("file:") {
        if dir.is_empty() {
            return Err(ConfigError::InvalidUrl(
                "file: needs a directory, as in file:/var/lib/posthorn/mail".to_owned(),
            ));
        }
        return Ok(Arc::new(FileTransport::new(PathBuf::from(dir))));
    }
    if spec.starts_with("smtp://") || spec.starts_with("smtps://") {
        return Ok(Arc::new(SmtpTransport::from_url(spec)?));
    }
    // Only the scheme is echoed: the rest may carry a password.
    let scheme = spec.split_once(':').map_or("", |(scheme, _)| scheme);
    Err(ConfigError::UnknownScheme(scheme.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert!(transport_from_spec("file:/tmp/posthorn-mail").is_ok());
        assert!(transport_from_spec(" smtp://localhost:2525 ").is_ok());
        assert!(transport_from_spec("smtps://u:p@mail.example.test").is_ok());
        assert_eq!(
            transport_from_spec("file:").err(),
            Some(ConfigError::InvalidUrl(
                "file: needs a directory, as in file:/var/lib/posthorn/mail".to_owned()
            ))
        );
        assert_eq!(
            transport_from_spec("ses://key:secret@x").err(),
            Some(ConfigError::UnknownScheme("ses".to_owned()))
        );
        assert!(transport_from_spec("").is_err());
    }
}
