//! Real SMTP listeners on 127.0.0.1 in front of a test app, and a line-level client that
//! shows the exact reply codes.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use posthorn_runtime::RequestGauge;
use posthorn_server::smtp::{self, Inbound, ListenerOptions, SessionConfig, Submission};
use posthorn_server::AppState;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use crate::harness::{TestApp, ADMIN};

/// A running listener; dropping it stops it.
pub struct Listener {
    pub addr: SocketAddr,
    _stop: watch::Sender<bool>,
}

pub fn session(max_message_bytes: usize, auth_without_tls: bool) -> SessionConfig {
    SessionConfig {
        hostname: "posthorn.test".into(),
        max_message_bytes,
        max_recipients: 50,
        command_timeout: Duration::from_secs(10),
        max_bad_commands: 20,
        max_junk_commands: smtp::MAX_JUNK_COMMANDS,
        starttls: false,
        auth_without_tls,
        auth_required: true,
        requests: RequestGauge::default(),
    }
}

/// A listener's settings without TLS: 16 sessions at once, all of them open to one client.
pub fn options(session: SessionConfig) -> ListenerOptions {
    ListenerOptions {
        session,
        tls: None,
        implicit_tls: false,
        max_connections: 16,
        max_connections_per_client: 16,
    }
}

async fn bind() -> TcpListener {
    TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1")
}

/// The submission relay on the app's engine.
pub async fn submission(
    app: &TestApp,
    session: SessionConfig,
    tls: Option<(TlsAcceptor, bool)>,
) -> Listener {
    let listener = bind().await;
    let addr = listener.local_addr().expect("addr");
    let (stop_tx, stop) = watch::channel(false);
    let state = AppState::new(app.engine.clone(), Some(ADMIN.to_string()));
    let (tls, implicit_tls) = match tls {
        Some((acceptor, implicit)) => (Some(acceptor), implicit),
        None => (None, false),
    };
    let options = ListenerOptions {
        tls,
        implicit_tls,
        ..options(session)
    };
    smtp::listener::spawn(listener, Arc::new(Submission::new(state)), options, stop);
    Listener {
        addr,
        _stop: stop_tx,
    }
}

/// The inbound MX on the app's engine.
pub async fn mx(app: &TestApp, max_message_bytes: usize) -> Listener {
    mx_with_postmaster(app, max_message_bytes, None).await
}

/// The inbound MX on the app's engine, the bare `Postmaster` going to `postmaster`.
pub async fn mx_with_postmaster(
    app: &TestApp,
    max_message_bytes: usize,
    postmaster: Option<&str>,
) -> Listener {
    mx_with(app, mx_options(max_message_bytes), postmaster).await
}

/// The MX's listener settings in these tests.
pub fn mx_options(max_message_bytes: usize) -> ListenerOptions {
    let mut session = session(max_message_bytes, false);
    session.auth_required = false;
    options(session)
}

/// The inbound MX on the app's engine with `options`, the bare `Postmaster` going to
/// `postmaster`.
pub async fn mx_with(
    app: &TestApp,
    options: ListenerOptions,
    postmaster: Option<&str>,
) -> Listener {
    let listener = bind().await;
    let addr = listener.local_addr().expect("addr");
    let (stop_tx, stop) = watch::channel(false);
    let handler = Inbound::new(app.engine.clone(), Duration::from_secs(10))
        .with_postmaster(postmaster.map(str::to_string))
        .with_hostname(options.session.hostname.clone());
    smtp::listener::spawn(listener, Arc::new(handler), options, stop);
    Listener {
        addr,
        _stop: stop_tx,
    }
}

/// A certificate for `localhost`, made now: (acceptor, PEM of the certificate).
pub fn test_certificate() -> (TlsAcceptor, String) {
    let certified =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("certificate");
    let pem = certified.cert.pem();
    let dir = tempfile::tempdir().expect("tempdir");
    let cert_path = dir.path().join("cert.pem");
    let key_path = dir.path().join("key.pem");
    std::fs::write(&cert_path, &pem).expect("write cert");
    std::fs::write(&key_path, certified.key_pair.serialize_pem()).expect("write key");
    // Through the files, as POSTHORN_SMTP_TLS_CERT / _KEY are read.
    let acceptor = smtp::tls::acceptor_from_files(&cert_path, &key_path).expect("acceptor");
    (acceptor, pem)
}

/// A client speaking SMTP line by line.
pub struct RawClient {
    reader: BufReader<TcpStream>,
}

impl RawClient {
    /// Connects and returns the greeting.
    pub async fn connect(addr: SocketAddr) -> (Self, String) {
        let stream = TcpStream::connect(addr).await.expect("connect");
        let mut client = Self {
            reader: BufReader::new(stream),
        };
        let greeting = client.reply().await;
        (client, greeting)
    }

    /// Reads one (possibly multi-line) reply.
    pub async fn reply(&mut self) -> String {
        let mut all = String::new();
        loop {
            let mut line = String::new();
            let n = tokio::time::timeout(Duration::from_secs(10), self.reader.read_line(&mut line))
                .await
                .expect("a reply in time")
                .expect("read");
            assert!(n > 0, "connection closed; so far: {all}");
            all.push_str(&line);
            if line.as_bytes().get(3) != Some(&b'-') {
                return all;
            }
        }
    }

    /// Sends `line` and returns the reply.
    pub async fn cmd(&mut self, line: &str) -> String {
        self.send(line).await;
        self.reply().await
    }

    /// Whether the server closed the connection with nothing more to say.
    pub async fn closed(&mut self) -> bool {
        let mut rest = String::new();
        let read =
            tokio::time::timeout(Duration::from_secs(10), self.reader.read_line(&mut rest)).await;
        matches!(read, Ok(Ok(0)))
    }

    /// Sends raw bytes with no reply expected.
    pub async fn send(&mut self, line: &str) {
        let stream = self.reader.get_mut();
        stream
            .write_all(format!("{line}\r\n").as_bytes())
            .await
            .expect("write");
    }
}

/// Asserts the reply's code.
#[track_caller]
pub fn code(reply: &str, expected: &str) {
    assert!(
        reply.starts_with(expected),
        "expected {expected}, got {reply:?}"
    );
}
