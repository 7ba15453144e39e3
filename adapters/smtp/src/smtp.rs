//! Delivery to an SMTP relay with lettre, configured from one URL.

use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use lettre::address::Envelope;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use lettre::transport::smtp::{AsyncSmtpTransportBuilder, PoolConfig};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use posthorn_core::ports::{MailTransport, OutgoingMessage, TransportError};

use crate::mime::build_mime;
use crate::ConfigError;

/// Limit on connecting and on each SMTP command.
const TIMEOUT: Duration = Duration::from_secs(30);
const SMTP_PORT: u16 = 25;
const SMTPS_PORT: u16 = 465;

/// How the connection is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsMode {
    /// Plain text (`smtp://`, `?tls=none`).
    None,
    /// STARTTLS when the server offers it, plain text otherwise (`?tls=opportunistic`).
    /// Anyone on the path can strip the offer, so it is refused with credentials.
    Opportunistic,
    /// STARTTLS or no delivery (`?tls=starttls`, or its alias `?tls=required`).
    Required,
    /// TLS from the first byte (`smtps://`).
    Implicit,
}

/// Sends through an SMTP relay over a pool of connections.
///
/// URL: `smtp[s]://[user:pass@]host[:port][/ehlo-name][?tls=none|starttls|opportunistic]`.
/// `smtp://` is plain unless `tls` says otherwise and defaults to port 25; `tls=starttls`
/// (or `required`) refuses to go on when the server does not offer STARTTLS, and
/// `tls=opportunistic` goes on in clear text, so it is refused with a user name; `smtps://`
/// is implicit TLS on port 465. User and password are percent-decoded.
///
/// Contract: `Ok` means the relay accepted the message (250 after DATA); the provider id is
/// the message's Message-ID. 5xx replies are [`TransportError::Rejected`], classified by
/// [`TransportError::rejected`]; an address with a Unicode local part to a relay without
/// SMTPUTF8 is [`TransportError::Permanent`]; 4xx replies, connection, time-out and TLS
/// failures are [`TransportError::Transient`].
pub struct SmtpTransport {
    builder: AsyncSmtpTransportBuilder,
    /// Built on first send: lettre's pool starts a task and so needs a running Tokio runtime.
    transport: OnceLock<AsyncSmtpTransport<Tokio1Executor>>,
    host: String,
    port: u16,
    tls: TlsMode,
    password_in_clear: bool,
}

impl fmt::Debug for SmtpTransport {
    /// Never shows credentials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpTransport")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .finish_non_exhaustive()
    }
}

impl SmtpTransport {
    /// Parses an `smtp://` or `smtps://` URL; no connection is made until the first send.
    pub fn from_url(url: &str) -> Result<Self, ConfigError> {
        // Error messages never echo the URL: it may carry a password.
        let parsed = url::Url::parse(url)
            .map_err(|err| ConfigError::InvalidUrl(format!("cannot parse SMTP URL: {err}")))?;
        let scheme_tls = match parsed.scheme() {
            "smtp" => TlsMode::None,
            "smtps" => TlsMode::Implicit,
            other => return Err(ConfigError::UnknownScheme(other.to_owned())),
        };
        let mut tls = scheme_tls;
        for (key, value) in parsed.query_pairs() {
            match (key.as_ref(), value.as_ref(), scheme_tls) {
                ("tls", "none", TlsMode::None) => tls = TlsMode::None,
                ("tls", "opportunistic", TlsMode::None) => tls = TlsMode::Opportunistic,
                ("tls", "starttls" | "required", TlsMode::None) => tls = TlsMode::Required,
                ("tls", "implicit" | "wrapper", _) => tls = TlsMode::Implicit,
                ("tls", _, _) => {
                    return Err(ConfigError::InvalidUrl(format!(
                        "tls={value} is not valid here: use none, starttls or opportunistic \
                         with smtp://, or smtps:// for implicit TLS"
                    )))
                }
                _ => {
                    return Err(ConfigError::InvalidUrl(format!(
                        "unknown SMTP URL parameter {key:?}"
                    )))
                }
            }
        }
        let host = match parsed.host_str() {
            Some(host) if !host.is_empty() => host.trim_start_matches('[').trim_end_matches(']'),
            _ => return Err(ConfigError::InvalidUrl("SMTP URL has no host".to_owned())),
        };
        let port = parsed.port().unwrap_or(match tls {
            TlsMode::Implicit => SMTPS_PORT,
            _ => SMTP_PORT,
        });

        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host)
            .port(port)
            .timeout(Some(TIMEOUT))
            .pool_config(PoolConfig::new());
        if tls != TlsMode::None {
            let params = TlsParameters::new(host.to_owned())
                .map_err(|err| ConfigError::Tls(err.to_string()))?;
            builder = builder.tls(match tls {
                TlsMode::Opportunistic => Tls::Opportunistic(params),
                TlsMode::Required => Tls::Required(params),
                _ => Tls::Wrapper(params),
            });
        }
        if !parsed.username().is_empty() {
            // A man in the middle that strips the STARTTLS offer would get the password.
            if tls == TlsMode::Opportunistic {
                return Err(ConfigError::InvalidUrl(
                    "tls=opportunistic falls back to clear text when STARTTLS is not offered, \
                     which would expose the SMTP password: use tls=starttls (STARTTLS \
                     required) or smtps://"
                        .to_owned(),
                ));
            }
            if tls == TlsMode::None && !is_loopback(host) {
                tracing::warn!(
                    host,
                    "the SMTP password goes to the relay in clear text (smtp:// without tls=): \
                     use tls=starttls or smtps:// unless the network to it is trusted"
                );
            }
            let user = percent_decode(parsed.username())?;
            let password = percent_decode(parsed.password().unwrap_or(""))?;
            builder = builder.credentials(Credentials::new(user, password));
        }
        let ehlo = parsed.path().trim_matches('/');
        if !ehlo.is_empty() {
            builder = builder.hello_name(ClientId::Domain(percent_decode(ehlo)?));
        }
        Ok(Self {
            builder,
            transport: OnceLock::new(),
            host: host.to_owned(),
            port,
            tls,
            password_in_clear: tls == TlsMode::None && !parsed.username().is_empty(),
        })
    }

    /// Whether AUTH goes to the relay without TLS (`smtp://user:pass@…` with no `tls=`): by
    /// choice for a relay on a trusted network, warned about at start-up unless it is on
    /// loopback.
    pub fn sends_password_in_clear(&self) -> bool {
        self.password_in_clear
    }

    /// The relay host name or address.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The relay port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// How the connection is secured.
    pub fn tls(&self) -> TlsMode {
        self.tls
    }

    fn transport(&self) -> &AsyncSmtpTransport<Tokio1Executor> {
        self.transport.get_or_init(|| self.builder.clone().build())
    }
}

#[async_trait]
impl MailTransport for SmtpTransport {
    async fn send(&self, message: &OutgoingMessage) -> Result<String, TransportError> {
        let bytes = build_mime(message, Utc::now())
            .map_err(|err| TransportError::Permanent(err.to_string()))?;
        // MAIL FROM is the envelope sender (a bounce address when bounces are collected).
        let from = message
            .envelope_from
            .parse()
            .map_err(|err| TransportError::Permanent(format!("invalid envelope sender: {err}")))?;
        let to = message.to.email.parse().map_err(|err| {
            TransportError::Permanent(format!("invalid recipient address: {err}"))
        })?;
        let envelope = Envelope::new(Some(from), vec![to])
            .map_err(|err| TransportError::Permanent(format!("invalid envelope: {err}")))?;
        match self.transport().send_raw(&envelope, &bytes).await {
            Ok(response) => {
                tracing::debug!(
                    host = %self.host,
                    code = %response.code(),
                    email_id = %message.email_id,
                    "relay accepted message"
                );
                Ok(message.message_id.clone())
            }
            Err(err) if err.is_permanent() => Err(TransportError::rejected(reply_text(&err))),
            Err(err) if needs_smtputf8(&envelope, &err) => Err(TransportError::Permanent(format!(
                "the address {} needs SMTPUTF8, which the relay does not offer",
                message.to.email
            ))),
            Err(err) => Err(TransportError::Transient(err.to_string())),
        }
    }
}

/// Whether lettre refused `envelope` for its non-ASCII addresses (after canonicalisation
/// only a Unicode local part) because the relay does not offer SMTPUTF8: retrying cannot
/// help, the relay will refuse it every time. lettre gives this refusal no kind of its
/// own; it is a client error naming SMTPUTF8 (a test pins the wording).
fn needs_smtputf8(envelope: &Envelope, err: &lettre::transport::smtp::Error) -> bool {
    let ascii = |address: &lettre::Address| AsRef::<str>::as_ref(address).is_ascii();
    let non_ascii = envelope.from().is_some_and(|a| !ascii(a)) || !envelope.to().iter().all(ascii);
    non_ascii && err.is_client() && err.to_string().contains("SMTPUTF8")
}

/// A permanent reply as the server gave it, code first (`550 5.1.1 no such user`).
fn reply_text(err: &lettre::transport::smtp::Error) -> String {
    let text = std::error::Error::source(err)
        .map(|source| source.to_string())
        .unwrap_or_default();
    match err.status() {
        Some(code) => format!("{code} {text}").trim_end().to_owned(),
        None => text,
    }
}

/// Decodes `%XX` escapes in URL user info and path.
fn percent_decode(raw: &str) -> Result<String, ConfigError> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = raw
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| ConfigError::InvalidUrl("bad percent escape".to_owned()))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| ConfigError::InvalidUrl("percent escapes are not UTF-8".to_owned()))
}

#[cfg(test)]
mod tests;

/// Whether `host` (a name or an address, without brackets) is this machine.
fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.to_canonical().is_loopback())
}
