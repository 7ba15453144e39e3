//! The SMTP listeners beside the HTTP API: the submission relay (`submission`) and, once
//! configured, the inbound MX. Both share the session machinery (`session`, on Stalwart's
//! `smtp-proto`), the TLS certificate (`tls`) and the accept loop (`listener`); each is off
//! unless its `POSTHORN_SMTP_*_LISTEN` address is set.

pub mod inbound;
pub mod listener;
pub mod refusal;
pub mod reply;
pub mod sasl;
pub mod session;
pub mod submission;
pub mod tls;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use posthorn_runtime::RequestGauge;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::Config;
use crate::http::AppState;
pub use inbound::Inbound;
pub use listener::ListenerOptions;
pub use reply::Reply;
pub use session::SessionConfig;
pub use submission::Submission;

/// Unknown, malformed or refused commands a session tolerates before it is closed.
pub const MAX_BAD_COMMANDS: usize = 20;

/// Commands that move no mail (NOOP, RSET, VRFY, HELP, a repeated EHLO or HELO) a session
/// may send before it is closed, counted afresh after each accepted message; as Postfix's
/// `smtpd_junk_command_limit`.
pub const MAX_JUNK_COMMANDS: usize = 100;

/// Why the SMTP listeners cannot start.
#[derive(Debug, thiserror::Error)]
pub enum SmtpStartError {
    /// The certificate or key cannot be used.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    /// Only one of the certificate and key is set, or implicit TLS lacks them.
    #[error("{0}")]
    Settings(String),
    /// A listen address cannot be bound.
    #[error("cannot listen on {addr} ({setting}): {source}")]
    Bind {
        /// The setting naming the address.
        setting: &'static str,
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// Session settings of a listener on `addr`, from the configuration; its messages in flight
/// are counted on `requests`.
pub fn session_config(
    config: &Config,
    addr: SocketAddr,
    auth_required: bool,
    requests: &RequestGauge,
) -> SessionConfig {
    SessionConfig {
        hostname: config.smtp_hostname(),
        max_message_bytes: config.max_body_bytes,
        max_recipients: submission::SUBMISSION_MAX_RECIPIENTS,
        command_timeout: Duration::from_secs(config.smtp_timeout_secs),
        max_bad_commands: MAX_BAD_COMMANDS,
        max_junk_commands: MAX_JUNK_COMMANDS,
        starttls: false,
        auth_without_tls: addr.ip().is_loopback(),
        auth_required,
        requests: requests.clone(),
    }
}

/// Binds and starts the configured SMTP listeners; each stops (after its sessions) when
/// `stop` turns true. No listener is configured: nothing starts.
pub async fn start(
    config: &Config,
    state: AppState,
    stop: watch::Receiver<bool>,
) -> Result<Vec<JoinHandle<()>>, SmtpStartError> {
    let tls =
        match (&config.smtp_tls_cert, &config.smtp_tls_key) {
            (Some(cert), Some(key)) => Some(tls::acceptor_from_files(cert, key)?),
            (None, None) => None,
            _ => return Err(SmtpStartError::Settings(
                "POSTHORN_SMTP_TLS_CERT and POSTHORN_SMTP_TLS_KEY go together: set both or neither"
                    .into(),
            )),
        };
    let mut handles = Vec::new();
    if let Some(addr) = config.smtp_submission_listen {
        if config.smtp_submission_implicit_tls && tls.is_none() {
            return Err(SmtpStartError::Settings(
                "POSTHORN_SMTP_SUBMISSION_IMPLICIT_TLS=true needs POSTHORN_SMTP_TLS_CERT and POSTHORN_SMTP_TLS_KEY".into(),
            ));
        }
        let listener = bind("POSTHORN_SMTP_SUBMISSION_LISTEN", addr).await?;
        let options = ListenerOptions {
            session: session_config(config, addr, true, &state.requests),
            tls: tls.clone(),
            implicit_tls: config.smtp_submission_implicit_tls,
            max_connections: config.smtp_max_connections,
            max_connections_per_client: config.smtp_max_connections_per_client,
        };
        tracing::info!(
            listen = %addr,
            tls = if options.implicit_tls { "implicit" } else if tls.is_some() { "starttls" } else { "none" },
            "SMTP submission relay is listening"
        );
        if tls.is_none() && !addr.ip().is_loopback() {
            tracing::warn!(
                listen = %addr,
                "SMTP submission without a certificate on a non-loopback address: AUTH is never offered, so no client can submit; set POSTHORN_SMTP_TLS_CERT and POSTHORN_SMTP_TLS_KEY"
            );
        }
        handles.push(listener::spawn(
            listener,
            Arc::new(Submission::new(state.clone())),
            options,
            stop.clone(),
        ));
    }
    if let Some(addr) = config.smtp_inbound_listen {
        let listener = bind("POSTHORN_SMTP_INBOUND_LISTEN", addr).await?;
        let mut session = session_config(config, addr, false, &state.requests);
        session.max_recipients = state.engine.settings.inbound.max_recipients;
        let options = ListenerOptions {
            session,
            tls: tls.clone(),
            implicit_tls: false,
            max_connections: config.smtp_max_connections,
            max_connections_per_client: config.smtp_max_connections_per_client,
        };
        tracing::info!(listen = %addr, starttls = tls.is_some(), "SMTP inbound MX is listening");
        let handler = Inbound::new(state.engine.clone(), state.request_time_limit)
            .with_postmaster(config.postmaster.clone())
            .with_hostname(options.session.hostname.clone());
        handles.push(listener::spawn(
            listener,
            Arc::new(handler),
            options,
            stop.clone(),
        ));
    }
    Ok(handles)
}

async fn bind(setting: &'static str, addr: SocketAddr) -> Result<TcpListener, SmtpStartError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| SmtpStartError::Bind {
            setting,
            addr,
            source,
        })
}
