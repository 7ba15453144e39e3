//! One SMTP session over any byte stream: `smtp-proto` parses the commands and receives
//! DATA; this loop keeps the state (greeting, transaction, authentication), enforces the
//! limits (size, recipients, time-outs, bad commands) and asks a [`Handler`] what to answer.
//!
//! Replies are buffered and written when the input runs dry, which is what PIPELINING
//! needs. STARTTLS ends the loop so the caller can wrap the stream and run a new session
//! (anything the client pipelined after STARTTLS is dropped, as RFC 3207 requires).

use std::net::IpAddr;
use std::time::Duration;

use async_trait::async_trait;
use posthorn_runtime::RequestGauge;
use smtp_proto::request::receiver::{
    DataReceiver, DummyDataReceiver, DummyLineReceiver, LineReceiver, RequestReceiver,
};
use smtp_proto::{EhloResponse, Error as ProtoError, Request};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::watch;
use tokio::time::Instant;

use super::reply::Reply;
use super::sasl::{self, Credentials, SaslError};

/// What a transaction carries to [`Handler::data`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Envelope {
    /// `MAIL FROM` address; `None` for the null sender `<>` (bounces).
    pub from: Option<String>,
    /// Accepted `RCPT TO` addresses, in order.
    pub recipients: Vec<String>,
    /// The name the client gave in EHLO or HELO.
    pub helo: Option<String>,
    /// Whether that was EHLO (the client speaks ESMTP), not HELO.
    pub esmtp: bool,
    /// The client's address.
    pub client_ip: Option<IpAddr>,
    /// Whether the session runs over TLS.
    pub tls: bool,
}

/// What a listener does with the commands: the submission relay and the inbound MX differ
/// only here.
#[async_trait]
pub trait Handler: Send + Sync + 'static {
    /// What a successful AUTH proves, kept for the rest of the session.
    type Identity: Send + Sync + Clone;

    /// Whether AUTH is offered at all (where the session allows it).
    fn offers_auth(&self) -> bool;

    /// Checks credentials given with AUTH.
    async fn authenticate(&self, credentials: Credentials) -> Result<Self::Identity, Reply>;

    /// Decides `MAIL FROM`; `None` when no AUTH happened.
    async fn mail_from(
        &self,
        identity: Option<&Self::Identity>,
        envelope: &Envelope,
    ) -> Result<(), Reply>;

    /// Decides one `RCPT TO` (already lower-case-insensitive as given).
    async fn rcpt_to(
        &self,
        identity: Option<&Self::Identity>,
        envelope: &Envelope,
        recipient: &str,
    ) -> Result<(), Reply>;

    /// Takes the message; a 2xx answer means it is safely accepted.
    async fn data(
        &self,
        identity: Option<&Self::Identity>,
        envelope: Envelope,
        message: Vec<u8>,
    ) -> Reply;
}

/// How a session behaves, the same for every connection of a listener.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The name this server gives in its greeting and EHLO answer.
    pub hostname: String,
    /// Largest message in bytes (advertised as SIZE; 552 above).
    pub max_message_bytes: usize,
    /// Most recipients per message (452 past it).
    pub max_recipients: usize,
    /// Longest time for a whole command line (from the previous reply), for each read of
    /// DATA, and for the client to take in a reply. The whole of DATA has
    /// [`SessionConfig::data_timeout`].
    pub command_timeout: Duration,
    /// Unknown, malformed or refused commands tolerated before the connection is closed.
    pub max_bad_commands: usize,
    /// Commands that move no mail (NOOP, RSET, VRFY, HELP, a repeated EHLO or HELO)
    /// tolerated since the session began or last had a message accepted; past them the
    /// connection is closed (each answer restarts the time-out, so they could hold a
    /// session forever).
    pub max_junk_commands: usize,
    /// Whether STARTTLS can be offered (a certificate is configured).
    pub starttls: bool,
    /// Whether AUTH may be offered without TLS (a loopback listener).
    pub auth_without_tls: bool,
    /// Whether MAIL needs AUTH first (the submission relay).
    pub auth_required: bool,
    /// Where messages being taken in (from the end of DATA to the reply) are counted, as
    /// the HTTP API counts its requests: the job workers of the process give way to SMTP
    /// load as they do to HTTP load.
    pub requests: RequestGauge,
}

/// The least time a message (from `354` to the final `.`) is given: RFC 5321 §4.5.3.2
/// suggests 10 minutes for the data block.
const DATA_TIMEOUT_FLOOR: Duration = Duration::from_secs(600);

impl SessionConfig {
    /// Longest time from `354` to the final `.`: twice `command_timeout` and at least 10
    /// minutes, so a slow but steady client gets its message in, and one that trickles a
    /// byte now and then cannot keep the session forever.
    pub fn data_timeout(&self) -> Duration {
        self.command_timeout
            .saturating_mul(2)
            .max(DATA_TIMEOUT_FLOOR)
    }
}

/// Per-connection facts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Peer {
    /// The client's address.
    pub ip: Option<IpAddr>,
    /// Whether the stream is already TLS.
    pub tls: bool,
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// QUIT, the client hung up, a time-out, too many errors or shutdown.
    Closed,
    /// The client asked for TLS and was told to go ahead: wrap the stream now.
    StartTls,
}

/// The phase the input is read in.
enum Phase {
    Command(RequestReceiver),
    /// The rest of a command line past the length limit, dropped up to its LF: it was
    /// answered once, and none of it is a command.
    LongLine(DummyLineReceiver),
    Data(DataReceiver),
    /// A message past the size limit: read to its end, then refuse it.
    DataTooBig(DummyDataReceiver),
    /// BDAT is not offered; its chunk is read and dropped to stay in step.
    Bdat(DummyDataReceiver),
    /// Waiting for a SASL response line.
    Sasl(LineReceiver<SaslStep>),
}

impl Phase {
    /// How long the input of this phase may take from the reply that opened it.
    fn time_limit(&self, config: &SessionConfig) -> Duration {
        match self {
            Phase::Data(_) | Phase::DataTooBig(_) => config.data_timeout(),
            // A BDAT chunk is not offered, so it gets no more than a command line.
            Phase::Command(_) | Phase::LongLine(_) | Phase::Bdat(_) | Phase::Sasl(_) => {
                config.command_timeout
            }
        }
    }
}

#[derive(Debug, Clone, Default)]
enum SaslStep {
    #[default]
    Plain,
    LoginUser,
    LoginPassword(String),
}

/// What a command asks of the loop.
enum Next {
    Continue,
    Close,
    StartTls,
}

struct Session<'a, H: Handler> {
    handler: &'a H,
    config: &'a SessionConfig,
    peer: Peer,
    helo: Option<String>,
    esmtp: bool,
    identity: Option<H::Identity>,
    transaction: Option<Envelope>,
    message: Vec<u8>,
    bad_commands: usize,
    junk_commands: usize,
    out: Vec<u8>,
}

/// Runs one session on `stream` until it ends; writes the 220 greeting first when `greet`
/// (not after STARTTLS). `stop` turning true closes the session (421) at once, or once the
/// message being read has been answered.
pub async fn run<S, H>(
    stream: &mut S,
    handler: &H,
    config: &SessionConfig,
    peer: Peer,
    greet: bool,
    mut stop: watch::Receiver<bool>,
) -> std::io::Result<End>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
    H: Handler,
{
    let mut session = Session {
        handler,
        config,
        peer,
        helo: None,
        esmtp: false,
        identity: None,
        transaction: None,
        message: Vec::new(),
        bad_commands: 0,
        junk_commands: 0,
        out: Vec::new(),
    };
    if greet {
        let line = format!("220 {} ESMTP Posthorn\r\n", config.hostname);
        session.out.extend_from_slice(line.as_bytes());
    }
    let limit = config.command_timeout;
    let mut phase = Phase::Command(RequestReceiver::default());
    let mut buf = vec![0u8; 8192];
    let mut deadline = Instant::now() + limit;
    loop {
        if !session.out.is_empty() {
            if !write_within(stream, &session.out, limit).await? {
                return Ok(End::Closed);
            }
            session.out.clear();
            // The client was answered: what it sends next (a command line, or the message
            // after 354) is timed from here, however it is cut into reads.
            deadline = Instant::now() + phase.time_limit(config);
        }
        // Only a message is worth waiting for; a client halfway through AUTH (or anything
        // else) can say it again to the next server.
        let stoppable = !matches!(phase, Phase::Data(_) | Phase::DataTooBig(_));
        let read_until = deadline.min(Instant::now() + limit);
        let read = tokio::select! {
            read = tokio::time::timeout_at(read_until, stream.read(&mut buf)) => read,
            _ = stopped(&mut stop), if stoppable => {
                Reply::new(421, [4, 3, 2], "Server shutting down, try again later")
                    .write_to(&mut session.out);
                let _ = write_within(stream, &session.out, limit).await;
                return Ok(End::Closed);
            }
        };
        let n = match read {
            Ok(read) => read?,
            Err(_) => {
                Reply::new(421, [4, 4, 2], "Timeout, closing connection")
                    .write_to(&mut session.out);
                let _ = write_within(stream, &session.out, limit).await;
                return Ok(End::Closed);
            }
        };
        if n == 0 {
            return Ok(End::Closed);
        }
        let mut bytes = buf[..n].iter();
        while bytes.len() > 0 {
            let next = session.step(&mut phase, &mut bytes).await;
            match next {
                Next::Continue => {}
                Next::Close => {
                    let _ = write_within(stream, &session.out, limit).await;
                    return Ok(End::Closed);
                }
                Next::StartTls => {
                    if !write_within(stream, &session.out, limit).await? {
                        return Ok(End::Closed);
                    }
                    return Ok(End::StartTls);
                }
            }
        }
    }
}

impl<H: Handler> Session<'_, H> {
    /// Consumes some of `bytes` in the current phase.
    async fn step(&mut self, phase: &mut Phase, bytes: &mut std::slice::Iter<'_, u8>) -> Next {
        match phase {
            Phase::Command(receiver) => {
                let request = match receiver.ingest(bytes) {
                    Ok(request) => Ok(request.into_owned()),
                    Err(e) => Err(e),
                };
                match request {
                    Ok(request) => self.command(request, phase).await,
                    Err(ProtoError::NeedsMoreData { .. }) => {
                        // Whatever was left is buffered inside the receiver.
                        *bytes = [].iter();
                        Next::Continue
                    }
                    Err(ProtoError::ResponseTooLong) => {
                        // Parsing on from the middle of the line would run its tail (or
                        // each 4 KiB of it) as a command of its own.
                        *phase = Phase::LongLine(DummyLineReceiver::default());
                        self.bad_command(protocol_error_reply(&ProtoError::ResponseTooLong))
                    }
                    Err(e) => self.bad_command(protocol_error_reply(&e)),
                }
            }
            Phase::LongLine(receiver) => {
                if receiver.ingest(bytes) {
                    *phase = Phase::Command(RequestReceiver::default());
                }
                Next::Continue
            }
            Phase::Data(receiver) => {
                let done = receiver.ingest(bytes, &mut self.message);
                if done {
                    *phase = Phase::Command(RequestReceiver::default());
                    return self.finish_data().await;
                } else if self.message.len() > self.config.max_message_bytes {
                    self.message = Vec::new();
                    *phase = Phase::DataTooBig(DummyDataReceiver::new_data(receiver));
                }
                Next::Continue
            }
            Phase::DataTooBig(receiver) => {
                if receiver.ingest(bytes) {
                    *phase = Phase::Command(RequestReceiver::default());
                    self.transaction = None;
                    // A permanent refusal like any other: a client sending oversized
                    // messages again and again runs out of its error budget.
                    return self.bad_command(self.too_big());
                }
                Next::Continue
            }
            Phase::Bdat(receiver) => {
                if receiver.ingest(bytes) {
                    *phase = Phase::Command(RequestReceiver::default());
                    return self.bad_command(Reply::new(
                        502,
                        [5, 5, 1],
                        "BDAT is not offered here; use DATA",
                    ));
                }
                Next::Continue
            }
            Phase::Sasl(receiver) => {
                if !receiver.ingest(bytes) {
                    return Next::Continue;
                }
                let line = String::from_utf8_lossy(&receiver.buf).into_owned();
                let step = std::mem::take(&mut receiver.state);
                *phase = Phase::Command(RequestReceiver::default());
                self.sasl_line(step, &line, phase).await
            }
        }
    }

    fn reply(&mut self, reply: Reply) {
        reply.write_to(&mut self.out);
    }

    /// Answers a refused or malformed command; too many of them end the session.
    fn bad_command(&mut self, reply: Reply) -> Next {
        self.reply(reply);
        self.bad_commands += 1;
        if self.bad_commands >= self.config.max_bad_commands {
            self.reply(Reply::new(
                421,
                [4, 7, 0],
                "Too many errors, closing connection",
            ));
            return Next::Close;
        }
        Next::Continue
    }

    /// Counts a command that moves no mail; `true` when that was one too many and the
    /// session is to be closed (answered 421 instead).
    fn too_much_junk(&mut self) -> bool {
        self.junk_commands += 1;
        if self.junk_commands <= self.config.max_junk_commands {
            return false;
        }
        self.reply(Reply::new(
            421,
            [4, 7, 0],
            "Too many commands without mail, closing connection",
        ));
        true
    }

    fn too_big(&self) -> Reply {
        Reply::new(
            552,
            [5, 3, 4],
            format!(
                "Message too big: at most {} bytes are accepted",
                self.config.max_message_bytes
            ),
        )
    }

    fn auth_allowed(&self) -> bool {
        self.handler.offers_auth() && (self.peer.tls || self.config.auth_without_tls)
    }

    fn envelope(&self) -> Envelope {
        Envelope {
            helo: self.helo.clone(),
            esmtp: self.esmtp,
            client_ip: self.peer.ip,
            tls: self.peer.tls,
            ..Envelope::default()
        }
    }

    async fn command(&mut self, request: Request<String>, phase: &mut Phase) -> Next {
        // MAIL, RCPT, DATA, AUTH and STARTTLS do not count: they lead to a message, and a
        // 5xx refusal of one counts as a bad command.
        let junk = match &request {
            Request::Noop { .. } | Request::Rset | Request::Vrfy { .. } | Request::Help { .. } => {
                true
            }
            Request::Ehlo { .. } | Request::Helo { .. } => self.helo.is_some(),
            _ => false,
        };
        if junk && self.too_much_junk() {
            return Next::Close;
        }
        match request {
            Request::Ehlo { host } => {
                self.helo = Some(host);
                self.esmtp = true;
                self.transaction = None;
                self.ehlo();
                Next::Continue
            }
            Request::Helo { host } => {
                self.helo = Some(host);
                self.esmtp = false;
                self.transaction = None;
                let hostname = self.config.hostname.clone();
                self.reply(Reply::new(250, [2, 0, 0], hostname));
                Next::Continue
            }
            Request::Mail { from } => self.mail(from).await,
            Request::Rcpt { to } => self.rcpt(to.address).await,
            Request::Data => self.data(phase),
            Request::Bdat { chunk_size, .. } => {
                *phase = Phase::Bdat(DummyDataReceiver::new_bdat(chunk_size));
                if chunk_size == 0 {
                    *phase = Phase::Command(RequestReceiver::default());
                    return self.bad_command(Reply::new(
                        502,
                        [5, 5, 1],
                        "BDAT is not offered here; use DATA",
                    ));
                }
                Next::Continue
            }
            Request::Auth {
                mechanism,
                initial_response,
            } => self.auth(mechanism, initial_response, phase).await,
            Request::StartTls => {
                if self.peer.tls {
                    return self.bad_command(Reply::bad_sequence("TLS is already active"));
                }
                if !self.config.starttls {
                    return self.bad_command(Reply::new(502, [5, 5, 1], "STARTTLS not offered"));
                }
                self.out
                    .extend_from_slice(b"220 2.0.0 Ready to start TLS\r\n");
                Next::StartTls
            }
            Request::Rset => {
                self.transaction = None;
                self.reply(Reply::ok());
                Next::Continue
            }
            Request::Noop { .. } => {
                self.reply(Reply::ok());
                Next::Continue
            }
            Request::Quit => {
                self.reply(Reply::new(221, [2, 0, 0], "Bye"));
                Next::Close
            }
            Request::Vrfy { .. } => {
                self.reply(Reply::new(
                    252,
                    [2, 5, 0],
                    "Cannot VRFY user, but will accept message",
                ));
                Next::Continue
            }
            Request::Help { .. } => {
                self.reply(Reply::new(
                    214,
                    [2, 0, 0],
                    "Posthorn: EHLO, MAIL, RCPT, DATA, RSET, NOOP, QUIT, STARTTLS, AUTH",
                ));
                Next::Continue
            }
            Request::Lhlo { .. }
            | Request::Expn { .. }
            | Request::Etrn { .. }
            | Request::Atrn { .. }
            | Request::Burl { .. } => {
                self.bad_command(Reply::new(502, [5, 5, 1], "Command not implemented"))
            }
        }
    }

    fn ehlo(&mut self) {
        let mut ehlo = EhloResponse::new(self.config.hostname.as_str());
        ehlo.capabilities = smtp_proto::EXT_PIPELINING
            | smtp_proto::EXT_8BIT_MIME
            | smtp_proto::EXT_ENHANCED_STATUS_CODES
            | smtp_proto::EXT_SMTP_UTF8
            | smtp_proto::EXT_SIZE;
        ehlo.size = self.config.max_message_bytes;
        if self.config.starttls && !self.peer.tls {
            ehlo.capabilities |= smtp_proto::EXT_START_TLS;
        }
        if self.auth_allowed() && self.identity.is_none() {
            ehlo.capabilities |= smtp_proto::EXT_AUTH;
            ehlo.auth_mechanisms = smtp_proto::AUTH_PLAIN | smtp_proto::AUTH_LOGIN;
        }
        // Writing to a Vec cannot fail.
        let _ = ehlo.write(&mut self.out);
    }

    async fn mail(&mut self, from: smtp_proto::MailFrom<String>) -> Next {
        if self.helo.is_none() {
            return self.bad_command(Reply::bad_sequence("Say EHLO first"));
        }
        if self.transaction.is_some() {
            return self.bad_command(Reply::bad_sequence("Nested MAIL command"));
        }
        if self.config.auth_required && self.identity.is_none() {
            let text = if self.auth_allowed() {
                "Authentication required: AUTH with a secret API key as the password"
            } else {
                "Authentication required: STARTTLS, then AUTH with a secret API key"
            };
            return self.bad_command(Reply::new(530, [5, 7, 0], text));
        }
        if from.size > self.config.max_message_bytes {
            self.reply(self.too_big());
            return Next::Continue;
        }
        let mut envelope = self.envelope();
        let address = from.address.trim();
        envelope.from = (!address.is_empty()).then(|| address.to_string());
        match self
            .handler
            .mail_from(self.identity.as_ref(), &envelope)
            .await
        {
            Ok(()) => {
                self.transaction = Some(envelope);
                self.reply(Reply::new(250, [2, 1, 0], "Sender OK"));
                Next::Continue
            }
            Err(reply) => self.refusal(reply),
        }
    }

    async fn rcpt(&mut self, address: String) -> Next {
        let Some(envelope) = &self.transaction else {
            return self.bad_command(Reply::bad_sequence("Need MAIL before RCPT"));
        };
        // Recipients past the limit and repeated ones move no mail: they count as junk,
        // so that a client cannot hold the session open with them for ever.
        if envelope.recipients.len() >= self.config.max_recipients {
            if self.too_much_junk() {
                return Next::Close;
            }
            self.reply(Reply::new(
                452,
                [4, 5, 3],
                format!(
                    "Too many recipients: at most {} per message; send the rest in another",
                    self.config.max_recipients
                ),
            ));
            return Next::Continue;
        }
        let recipient = address.trim().to_string();
        if envelope
            .recipients
            .iter()
            .any(|r| r.eq_ignore_ascii_case(&recipient))
        {
            if self.too_much_junk() {
                return Next::Close;
            }
            self.reply(Reply::new(250, [2, 1, 5], "Recipient OK (duplicate)"));
            return Next::Continue;
        }
        let decision = self
            .handler
            .rcpt_to(self.identity.as_ref(), envelope, &recipient)
            .await;
        match decision {
            Ok(()) => {
                if let Some(envelope) = &mut self.transaction {
                    envelope.recipients.push(recipient);
                }
                self.reply(Reply::new(250, [2, 1, 5], "Recipient OK"));
                Next::Continue
            }
            Err(reply) => self.refusal(reply),
        }
    }

    /// Sends a handler's refusal; permanent ones count as bad commands (harvesting).
    fn refusal(&mut self, reply: Reply) -> Next {
        if reply.code >= 500 {
            self.bad_command(reply)
        } else {
            self.reply(reply);
            Next::Continue
        }
    }

    fn data(&mut self, phase: &mut Phase) -> Next {
        match &self.transaction {
            None => self.bad_command(Reply::bad_sequence("Need MAIL before DATA")),
            Some(envelope) if envelope.recipients.is_empty() => {
                self.bad_command(Reply::new(554, [5, 5, 1], "No valid recipients"))
            }
            Some(_) => {
                self.message = Vec::new();
                *phase = Phase::Data(message_receiver());
                self.out
                    .extend_from_slice(b"354 Start mail input; end with <CRLF>.<CRLF>\r\n");
                Next::Continue
            }
        }
    }

    async fn finish_data(&mut self) -> Next {
        let message = std::mem::take(&mut self.message);
        let Some(envelope) = self.transaction.take() else {
            return Next::Continue;
        };
        if message.len() > self.config.max_message_bytes {
            return self.bad_command(self.too_big());
        }
        let reply = {
            let _counted = self.config.requests.enter();
            self.handler
                .data(self.identity.as_ref(), envelope, message)
                .await
        };
        if reply.is_positive() {
            // A client delivering mail may reset or check the session between messages.
            self.junk_commands = 0;
        }
        self.reply(reply);
        Next::Continue
    }

    async fn auth(&mut self, mechanism: u64, initial: String, phase: &mut Phase) -> Next {
        if !self.handler.offers_auth() {
            return self.bad_command(Reply::new(502, [5, 5, 1], "AUTH not offered here"));
        }
        if !self.auth_allowed() {
            return self.bad_command(Reply::new(
                538,
                [5, 7, 11],
                "Encryption required: STARTTLS first",
            ));
        }
        if self.identity.is_some() {
            return self.bad_command(Reply::bad_sequence("Already authenticated"));
        }
        if self.transaction.is_some() {
            return self.bad_command(Reply::bad_sequence("AUTH not allowed during a transaction"));
        }
        let initial = initial.trim().to_string();
        if mechanism == smtp_proto::AUTH_PLAIN {
            if initial.is_empty() {
                self.out.extend_from_slice(b"334 \r\n");
                *phase = Phase::Sasl(LineReceiver::new(SaslStep::Plain));
                return Next::Continue;
            }
            return self.finish_auth(sasl::plain(&initial)).await;
        }
        if mechanism == smtp_proto::AUTH_LOGIN {
            if initial.is_empty() {
                self.challenge(sasl::LOGIN_USER_CHALLENGE);
                *phase = Phase::Sasl(LineReceiver::new(SaslStep::LoginUser));
                return Next::Continue;
            }
            return match sasl::decode(&initial) {
                Ok(user) => {
                    self.challenge(sasl::LOGIN_PASSWORD_CHALLENGE);
                    *phase = Phase::Sasl(LineReceiver::new(SaslStep::LoginPassword(user)));
                    Next::Continue
                }
                Err(e) => self.finish_auth(Err(e)).await,
            };
        }
        self.bad_command(Reply::new(
            504,
            [5, 5, 4],
            "Unrecognized authentication type: use PLAIN or LOGIN",
        ))
    }

    fn challenge(&mut self, text: &str) {
        self.out.extend_from_slice(b"334 ");
        self.out.extend_from_slice(text.as_bytes());
        self.out.extend_from_slice(b"\r\n");
    }

    async fn sasl_line(&mut self, step: SaslStep, line: &str, phase: &mut Phase) -> Next {
        match step {
            SaslStep::Plain => self.finish_auth(sasl::plain(line)).await,
            SaslStep::LoginUser => match sasl::decode(line) {
                Ok(user) => {
                    self.challenge(sasl::LOGIN_PASSWORD_CHALLENGE);
                    *phase = Phase::Sasl(LineReceiver::new(SaslStep::LoginPassword(user)));
                    Next::Continue
                }
                Err(e) => self.finish_auth(Err(e)).await,
            },
            SaslStep::LoginPassword(user) => {
                let credentials = sasl::decode(line).and_then(|secret| {
                    if secret.is_empty() {
                        Err(SaslError::Malformed)
                    } else {
                        Ok(Credentials { user, secret })
                    }
                });
                self.finish_auth(credentials).await
            }
        }
    }

    async fn finish_auth(&mut self, credentials: Result<Credentials, SaslError>) -> Next {
        let credentials = match credentials {
            Ok(c) => c,
            Err(SaslError::Cancelled) => {
                return self.bad_command(Reply::new(501, [5, 7, 0], "Authentication cancelled"))
            }
            Err(SaslError::Malformed) => {
                return self.bad_command(Reply::new(
                    501,
                    [5, 5, 2],
                    "Malformed authentication response",
                ))
            }
        };
        match self.handler.authenticate(credentials).await {
            Ok(identity) => {
                self.identity = Some(identity);
                self.reply(Reply::new(235, [2, 7, 0], "Authentication successful"));
                Next::Continue
            }
            Err(reply) => self.refusal(reply),
        }
    }
}

/// A receiver for the message that follows `354`. The CRLF ending the DATA line puts the
/// message at the start of a line (a first line `.` ends it, `..x` is unstuffed), but
/// `DataReceiver::new()` starts mid-line and its state is private: it is fed that CRLF into
/// a scratch buffer, so it is not part of the message.
fn message_receiver() -> DataReceiver {
    let mut receiver = DataReceiver::new();
    let mut scratch = Vec::with_capacity(2);
    receiver.ingest(&mut b"\r\n".iter(), &mut scratch);
    receiver
}

/// Writes and flushes `bytes`, giving the client `limit` to take them in; `Ok(false)` when it
/// did not (a client that never reads must not hold the session).
async fn write_within<S>(stream: &mut S, bytes: &[u8], limit: Duration) -> std::io::Result<bool>
where
    S: AsyncWrite + Unpin,
{
    let write = async {
        stream.write_all(bytes).await?;
        stream.flush().await
    };
    match tokio::time::timeout(limit, write).await {
        Ok(written) => written.map(|()| true),
        Err(_) => Ok(false),
    }
}

/// Resolves once `stop` is true; never when its sender is gone without saying so.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|stopped| *stopped).await.is_err() {
        std::future::pending::<()>().await;
    }
}

fn protocol_error_reply(e: &ProtoError) -> Reply {
    match e {
        ProtoError::UnknownCommand => Reply::new(500, [5, 5, 2], "Unknown command"),
        ProtoError::InvalidSenderAddress => Reply::new(501, [5, 1, 7], "Invalid sender address"),
        ProtoError::InvalidRecipientAddress => {
            Reply::new(501, [5, 1, 3], "Invalid recipient address")
        }
        ProtoError::SyntaxError { syntax } => {
            Reply::new(501, [5, 5, 2], format!("Syntax error, expected: {syntax}"))
        }
        ProtoError::InvalidParameter { param } => {
            Reply::new(501, [5, 5, 4], format!("Invalid parameter {param}"))
        }
        ProtoError::UnsupportedParameter { param } => {
            Reply::new(504, [5, 5, 4], format!("Unsupported parameter {param}"))
        }
        ProtoError::ResponseTooLong => Reply::new(500, [5, 5, 2], "Line too long"),
        ProtoError::NeedsMoreData { .. } | ProtoError::InvalidResponse { .. } => {
            Reply::new(500, [5, 5, 2], "Syntax error")
        }
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
