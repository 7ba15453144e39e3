//! Name servers on loopback for tests: one that answers TXT questions from a table, and
//! one that never answers. Point `HickoryDns`/`MailAuthenticator` (or the server's
//! `POSTHORN_DNS_SERVERS`) at their addresses.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use hickory_resolver::proto::op::{Edns, Message, MessageType, ResponseCode};
use hickory_resolver::proto::rr::rdata::TXT;
use hickory_resolver::proto::rr::{RData, Record, RecordType};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};

/// The largest UDP answer the server sends, whatever the asker offers (hickory reads 4096).
const MAX_UDP_PAYLOAD: usize = 4096;

/// Serves the TXT records of `records` (name without the final dot, lower-case → values)
/// on 127.0.0.1 until the runtime ends, over UDP and TCP on the same port, as a real name
/// server does: a UDP answer longer than the asker can take (512 bytes, or its EDNS size)
/// goes out truncated (TC set, no records), and TCP gives it whole. Other names are
/// NXDOMAIN, other types of known names empty. Values longer than 255 bytes are split
/// into character-strings, as DNS requires (DKIM keys).
pub async fn txt_server(records: HashMap<String, Vec<String>>) -> std::io::Result<SocketAddr> {
    Ok(serve(records).await?.0)
}

/// [`txt_server`], with the number of questions it took over TCP.
#[cfg(test)]
pub(crate) async fn txt_server_counting_tcp(
    records: HashMap<String, Vec<String>>,
) -> std::io::Result<(SocketAddr, Arc<AtomicUsize>)> {
    serve(records).await
}

async fn serve(
    records: HashMap<String, Vec<String>>,
) -> std::io::Result<(SocketAddr, Arc<AtomicUsize>)> {
    let (socket, listener) = bind_udp_and_tcp().await?;
    let addr = socket.local_addr()?;
    let records = Arc::new(records);
    let tcp_questions = Arc::new(AtomicUsize::new(0));
    let udp_records = Arc::clone(&records);
    tokio::spawn(async move {
        let mut buf = vec![0u8; 4096];
        while let Ok((n, peer)) = socket.recv_from(&mut buf).await {
            if let Some(reply) = answer(&udp_records, &buf[..n], Transport::Udp) {
                let _ = socket.send_to(&reply, peer).await;
            }
        }
    });
    let counter = Arc::clone(&tcp_questions);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let records = Arc::clone(&records);
            let counter = Arc::clone(&counter);
            tokio::spawn(async move {
                let _ = serve_tcp(stream, &records, &counter).await;
            });
        }
    });
    Ok((addr, tcp_questions))
}

/// A UDP socket and a TCP listener on one port of 127.0.0.1 (a port free for UDP can be
/// taken for TCP, so a few are tried).
async fn bind_udp_and_tcp() -> std::io::Result<(UdpSocket, TcpListener)> {
    let mut last = None;
    for _ in 0..16 {
        let socket = UdpSocket::bind("127.0.0.1:0").await?;
        match TcpListener::bind(socket.local_addr()?).await {
            Ok(listener) => return Ok((socket, listener)),
            Err(err) => last = Some(err),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no port free for both UDP and TCP")))
}

/// Answers DNS-over-TCP questions (each framed by a two-byte length) until the peer leaves.
async fn serve_tcp(
    mut stream: TcpStream,
    records: &HashMap<String, Vec<String>>,
    questions: &AtomicUsize,
) -> std::io::Result<()> {
    loop {
        let len = match stream.read_u16().await {
            Ok(len) => usize::from(len),
            Err(_) => return Ok(()),
        };
        let mut query = vec![0u8; len];
        stream.read_exact(&mut query).await?;
        questions.fetch_add(1, Ordering::SeqCst);
        let Some(reply) = answer(records, &query, Transport::Tcp) else {
            return Ok(());
        };
        let Ok(reply_len) = u16::try_from(reply.len()) else {
            return Ok(());
        };
        stream.write_u16(reply_len).await?;
        stream.write_all(&reply).await?;
    }
}

/// A UDP port on 127.0.0.1 that takes questions and never answers (a DNS outage), kept
/// open until the runtime ends.
pub async fn silent_server() -> std::io::Result<SocketAddr> {
    let socket = UdpSocket::bind("127.0.0.1:0").await?;
    let addr = socket.local_addr()?;
    tokio::spawn(async move {
        let mut buf = [0u8; 512];
        while socket.recv_from(&mut buf).await.is_ok() {}
    });
    Ok(addr)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Transport {
    Udp,
    Tcp,
}

fn answer(
    records: &HashMap<String, Vec<String>>,
    query: &[u8],
    transport: Transport,
) -> Option<Vec<u8>> {
    let request = Message::from_vec(query).ok()?;
    let mut response = Message::new();
    response
        .set_id(request.id())
        .set_message_type(MessageType::Response)
        .set_op_code(request.op_code())
        .set_recursion_desired(request.recursion_desired())
        .set_recursion_available(true)
        .set_authoritative(true);
    if request.extensions().is_some() {
        // An EDNS question gets an EDNS answer (RFC 6891 §7), saying what this server takes.
        let mut edns = Edns::new();
        edns.set_max_payload(4096);
        response.set_edns(edns);
    }
    let mut known = true;
    for query in request.queries() {
        response.add_query(query.clone());
        let name = query.name().to_ascii().trim_end_matches('.').to_lowercase();
        match records.get(&name) {
            None => known = false,
            Some(values) if query.query_type() == RecordType::TXT => {
                for value in values {
                    let parts = value
                        .as_bytes()
                        .chunks(255)
                        .map(|c| String::from_utf8_lossy(c).into_owned())
                        .collect();
                    response.add_answer(Record::from_rdata(
                        query.name().clone(),
                        60,
                        RData::TXT(TXT::new(parts)),
                    ));
                }
            }
            Some(_) => {}
        }
    }
    if !known {
        response.set_response_code(ResponseCode::NXDomain);
    }
    let full = response.to_vec().ok()?;
    // Message::max_payload is 512 without EDNS, the asker's EDNS size otherwise.
    let limit = usize::from(request.max_payload()).min(MAX_UDP_PAYLOAD);
    if transport == Transport::Tcp || full.len() <= limit {
        return Some(full);
    }
    // Too long for the asker over UDP: the header and question only, with TC set, so it
    // asks again over TCP (RFC 7766 §5).
    response.take_answers();
    response.set_truncated(true);
    response.to_vec().ok()
}
