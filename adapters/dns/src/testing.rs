//! Name servers on loopback for tests: one that answers TXT questions from a table, and
//! one that never answers. Point `HickoryDns`/`MailAuthenticator` (or the server's
//! `POSTHORN_DNS_SERVERS`) at their addresses.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use hickory_resolver::proto::op::{Message, MessageType, ResponseCode};
use hickory_resolver::proto::rr::rdata::TXT;
use hickory_resolver::proto::rr::{RData, Record, RecordType};
use tokio::net::UdpSocket;

/// Serves the TXT records of `records` (name without the final dot, lower-case → values)
/// over UDP on 127.0.0.1 until the runtime ends; other names are NXDOMAIN, other types of
/// known names empty. Values longer than 255 bytes are split into character-strings, as
/// DNS requires (DKIM keys).
pub async fn txt_server(records: HashMap<String, Vec<String>>) -> std::io::Result<SocketAddr> {
    let socket = UdpSocket::bind("127.0.0.1:0").await?;
    let addr = socket.local_addr()?;
    let records = Arc::new(records);
    tokio::spawn(async move {
        let mut buf = vec![0u8; 4096];
        while let Ok((n, peer)) = socket.recv_from(&mut buf).await {
            if let Some(reply) = answer(&records, &buf[..n]) {
                let _ = socket.send_to(&reply, peer).await;
            }
        }
    });
    Ok(addr)
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

fn answer(records: &HashMap<String, Vec<String>>, query: &[u8]) -> Option<Vec<u8>> {
    let request = Message::from_vec(query).ok()?;
    let mut response = Message::new();
    response
        .set_id(request.id())
        .set_message_type(MessageType::Response)
        .set_op_code(request.op_code())
        .set_recursion_desired(request.recursion_desired())
        .set_recursion_available(true)
        .set_authoritative(true);
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
    response.to_vec().ok()
}
