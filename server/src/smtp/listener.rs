//! The accept loop shared by both listeners: a connection limit, implicit TLS or STARTTLS
//! upgrades, and a graceful stop that lets sessions finish the message they are reading.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use super::session::{self, End, Handler, Peer, SessionConfig};

/// Longest a TLS handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest a stop waits for sessions to finish what they are doing.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// How one listener runs.
#[derive(Clone)]
pub struct ListenerOptions {
    /// Session behaviour.
    pub session: SessionConfig,
    /// The certificate, when configured (STARTTLS, or implicit TLS).
    pub tls: Option<TlsAcceptor>,
    /// TLS from the first byte (port 465) instead of STARTTLS.
    pub implicit_tls: bool,
    /// Most sessions at once; more are answered 421 and closed.
    pub max_connections: usize,
}

/// Serves `listener` with `handler` until `stop` turns true, then waits (a bounded time)
/// for open sessions to end.
pub fn spawn<H: Handler>(
    listener: TcpListener,
    handler: Arc<H>,
    options: ListenerOptions,
    stop: watch::Receiver<bool>,
) -> JoinHandle<()> {
    tokio::spawn(serve(listener, handler, options, stop))
}

async fn serve<H: Handler>(
    listener: TcpListener,
    handler: Arc<H>,
    mut options: ListenerOptions,
    mut stop: watch::Receiver<bool>,
) {
    options.session.starttls = options.tls.is_some() && !options.implicit_tls;
    let options = Arc::new(options);
    let limit = options.max_connections.max(1);
    let slots = Arc::new(Semaphore::new(limit));
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|stopped| *stopped) => break,
        };
        let (stream, addr) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                // Out of file descriptors and the like: wait a moment instead of spinning.
                tracing::warn!(error = %e, "SMTP accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tokio::spawn(refuse_busy(stream));
            continue;
        };
        let handler = handler.clone();
        let options = options.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            connection(stream, addr, &*handler, &options, stop).await;
            drop(slot);
        });
    }
    drop(listener);
    // Every slot back means every session has ended.
    let drained = tokio::time::timeout(DRAIN_TIMEOUT, slots.acquire_many(limit as u32)).await;
    if drained.is_err() {
        tracing::warn!("SMTP sessions still open after the shutdown grace period");
    }
}

async fn refuse_busy(mut stream: TcpStream) {
    let _ = stream
        .write_all(b"421 4.7.0 Too many connections, try again later\r\n")
        .await;
    let _ = stream.shutdown().await;
}

async fn connection<H: Handler>(
    mut stream: TcpStream,
    addr: SocketAddr,
    handler: &H,
    options: &ListenerOptions,
    stop: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let peer = Peer {
        ip: Some(addr.ip()),
        tls: false,
    };
    let session = &options.session;
    let result = match (&options.tls, options.implicit_tls) {
        (Some(tls), true) => match handshake(tls, stream).await {
            Some(mut tls_stream) => {
                let peer = Peer { tls: true, ..peer };
                session::run(&mut tls_stream, handler, session, peer, true, stop).await
            }
            None => return,
        },
        _ => match session::run(&mut stream, handler, session, peer, true, stop.clone()).await {
            Ok(End::StartTls) => match &options.tls {
                Some(tls) => match handshake(tls, stream).await {
                    Some(mut tls_stream) => {
                        let peer = Peer { tls: true, ..peer };
                        session::run(&mut tls_stream, handler, session, peer, false, stop).await
                    }
                    None => return,
                },
                None => return,
            },
            other => other,
        },
    };
    if let Err(e) = result {
        tracing::debug!(client = %addr, error = %e, "SMTP session ended with an I/O error");
    }
}

async fn handshake(
    tls: &TlsAcceptor,
    stream: TcpStream,
) -> Option<tokio_rustls::server::TlsStream<TcpStream>> {
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, tls.accept(stream)).await {
        Ok(Ok(stream)) => Some(stream),
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "SMTP TLS handshake failed");
            None
        }
        Err(_) => None,
    }
}
