//! The accept loop shared by both listeners: connection limits (in all and per client),
//! implicit TLS or STARTTLS upgrades, and a graceful stop: sessions are answered 421 at
//! once, except those reading a message, which get `DRAIN_TIMEOUT` to finish it.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use super::session::{self, End, Handler, Peer, SessionConfig};

/// Longest a TLS handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest a stop waits for sessions to finish the message they are reading. Far less than
/// a message may take (`SessionConfig::data_timeout`): a service manager kills a process
/// that takes longer to stop anyway. A message cut off was not answered, so its client
/// keeps it and retries.
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
    /// Most sessions at once from one client (an IPv4 address, or an IPv6 /64); more are
    /// answered 421 and closed, so one host cannot take every slot of `max_connections`.
    pub max_connections_per_client: usize,
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
    let per_client = options.max_connections_per_client.max(1);
    let slots = Arc::new(Semaphore::new(limit));
    let clients = Arc::new(Clients::default());
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
            tokio::spawn(refuse(stream, BUSY));
            continue;
        };
        let Some(client_slot) = clients.take(addr.ip(), per_client) else {
            tracing::debug!(client = %addr, "SMTP client over its connection limit");
            tokio::spawn(refuse(stream, CLIENT_BUSY));
            continue;
        };
        let handler = handler.clone();
        let options = options.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            connection(stream, addr, &*handler, &options, stop).await;
            drop(client_slot);
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

/// The answer at connect when every session slot is taken.
const BUSY: &[u8] = b"421 4.7.0 Too many connections, try again later\r\n";
/// The answer at connect when the client already has its share of the slots.
const CLIENT_BUSY: &[u8] = b"421 4.7.0 Too many connections from your address, try again later\r\n";

async fn refuse(mut stream: TcpStream, reply: &'static [u8]) {
    let _ = stream.write_all(reply).await;
    let _ = stream.shutdown().await;
}

/// Sessions open per client.
#[derive(Default)]
struct Clients {
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl Clients {
    /// A slot for a session from `ip`, unless its client already has `limit` open.
    fn take(self: &Arc<Self>, ip: IpAddr, limit: usize) -> Option<ClientSlot> {
        let key = client_key(ip);
        // Counting only: a panic elsewhere cannot leave the map inconsistent.
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let count = open.entry(key).or_insert(0);
        if *count >= limit {
            return None;
        }
        *count += 1;
        Some(ClientSlot {
            clients: self.clone(),
            key,
        })
    }
}

/// One session's place in its client's count, given back when dropped.
struct ClientSlot {
    clients: Arc<Clients>,
    key: IpAddr,
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut open = self.clients.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = open.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                // Forget clients with nothing open, so the map stays as small as the load.
                open.remove(&self.key);
            }
        }
    }
}

/// The client an address counts against: an IPv4 address (also when it reaches a
/// dual-stack socket as `::ffff:a.b.c.d`), or the /64 of an IPv6 address, since one host is
/// usually given a whole /64 and could otherwise open sessions from as many addresses.
fn client_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let network = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(network))
        }
        v4 => v4,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn clients_are_counted_by_ipv4_address_and_ipv6_slash_64() {
        let clients = Arc::new(Clients::default());
        let first = clients.take(ip("192.0.2.1"), 2);
        let second = clients.take(ip("::ffff:192.0.2.1"), 2);
        assert!(first.is_some() && second.is_some());
        assert!(
            clients.take(ip("192.0.2.1"), 2).is_none(),
            "the mapped address is the same client"
        );
        assert!(clients.take(ip("192.0.2.2"), 2).is_some());
        drop(first);
        assert!(
            clients.take(ip("192.0.2.1"), 2).is_some(),
            "a slot given back is free again"
        );

        let _one = clients.take(ip("2001:db8:1:2::1"), 1);
        assert!(clients.take(ip("2001:db8:1:2:ffff::9"), 1).is_none());
        assert!(clients.take(ip("2001:db8:1:3::1"), 1).is_some());
    }

    #[test]
    fn a_client_with_nothing_open_is_forgotten() {
        let clients = Arc::new(Clients::default());
        let slot = clients.take(ip("198.51.100.7"), 4);
        assert!(slot.is_some());
        drop(slot);
        let open = clients.open.lock().unwrap_or_else(|e| e.into_inner());
        assert!(open.is_empty());
    }
}
