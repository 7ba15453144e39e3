//! The TLS side of both listeners: one certificate (PEM files) for STARTTLS and implicit
//! TLS, on rustls with the ring provider the rest of the tree uses.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// Why the certificate cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The certificate file is missing or holds no PEM certificate.
    #[error("POSTHORN_SMTP_TLS_CERT {path}: {reason}")]
    Certificate {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The key file is missing or holds no PEM private key.
    #[error("POSTHORN_SMTP_TLS_KEY {path}: {reason}")]
    Key {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The key does not fit the certificate, or rustls refused them.
    #[error("SMTP TLS certificate and key: {0}")]
    Config(String),
}

/// A TLS acceptor for the certificate chain in `cert` and the private key in `key`.
pub fn acceptor_from_files(cert: &Path, key: &Path) -> Result<TlsAcceptor, TlsError> {
    let cert_error = |reason: String| TlsError::Certificate {
        path: cert.display().to_string(),
        reason,
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| cert_error(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| cert_error(e.to_string()))?;
    if chain.is_empty() {
        return Err(cert_error("no PEM certificate found".into()));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| TlsError::Key {
        path: key.display().to_string(),
        reason: e.to_string(),
    })?;
    acceptor(chain, key)
}

/// A TLS acceptor for a certificate chain and key already in memory.
pub fn acceptor(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<TlsAcceptor, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| TlsError::Config(e.to_string()))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}
