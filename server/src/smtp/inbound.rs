//! The inbound MX (port 25): recipients are checked at RCPT against the verified,
//! inbound-enabled domains, and DATA is handed to `Engine::receive_inbound` behind the
//! `Return-Path` and `Received` fields of a final delivery; 250 only once the message is
//! durable.

use std::net::IpAddr;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use posthorn_core::app::inbound::{InboundMessage, RecipientCheck};
use posthorn_core::model::ProviderVerdicts;
use posthorn_core::Engine;

use super::refusal;
use super::reply::Reply;
use super::sasl::Credentials;
use super::session::{Envelope, Handler};

/// The inbound MX's handler.
pub struct Inbound {
    engine: Engine,
    time_limit: Duration,
    postmaster: Option<String>,
    hostname: String,
}

impl Inbound {
    /// An MX on `engine`; each store call may take up to `time_limit` (then 451).
    pub fn new(engine: Engine, time_limit: Duration) -> Self {
        Self {
            engine,
            time_limit,
            postmaster: None,
            hostname: "localhost".to_string(),
        }
    }

    /// The name this server gives itself in the `Received` field of each message (the
    /// listener's greeting name); `localhost` until set, or when `hostname` is not one word
    /// of printable ASCII.
    pub fn with_hostname(mut self, hostname: impl Into<String>) -> Self {
        let hostname = hostname.into();
        if !hostname.is_empty() && hostname.bytes().all(|b| b.is_ascii_graphic()) {
            self.hostname = hostname;
        }
        self
    }

    /// Mail for the bare `Postmaster` recipient (no domain; RFC 5321 §4.5.1) goes to
    /// `address`, which is checked like any recipient. Without it that recipient is refused.
    pub fn with_postmaster(mut self, address: Option<String>) -> Self {
        self.postmaster = address;
        self
    }

    /// The address a recipient as given stands for: the postmaster's for a bare
    /// `Postmaster`, itself otherwise.
    fn resolve<'a>(&'a self, recipient: &'a str) -> Result<&'a str, Reply> {
        // The SMTP parser gives `<Postmaster>` as the empty path (RCPT has no other).
        if !(recipient.is_empty() || recipient.eq_ignore_ascii_case("postmaster")) {
            return Ok(recipient);
        }
        self.postmaster.as_deref().ok_or_else(|| {
            Reply::new(
                550,
                [5, 1, 1],
                "Recipient refused: this server has no postmaster without a domain; write to postmaster@<domain>",
            )
        })
    }
}

#[async_trait]
impl Handler for Inbound {
    type Identity = ();

    fn offers_auth(&self) -> bool {
        false
    }

    async fn authenticate(&self, _: Credentials) -> Result<(), Reply> {
        Err(Reply::new(502, [5, 5, 1], "AUTH not offered here"))
    }

    async fn mail_from(&self, _: Option<&()>, envelope: &Envelope) -> Result<(), Reply> {
        // The sender goes into the Return-Path field: none of it may break that line.
        let from = envelope.from.as_deref().unwrap_or("");
        if !from.chars().all(address_char) {
            return Err(Reply::new(
                553,
                [5, 1, 7],
                "Sender address contains control characters",
            ));
        }
        Ok(())
    }

    async fn rcpt_to(&self, _: Option<&()>, _: &Envelope, recipient: &str) -> Result<(), Reply> {
        let recipient = self.resolve(recipient)?;
        let checked = tokio::time::timeout(
            self.time_limit,
            self.engine.check_inbound_recipient(recipient),
        )
        .await;
        match checked {
            Ok(Ok(RecipientCheck::Accept)) => Ok(()),
            Ok(Ok(RecipientCheck::Refuse { reason })) => Err(Reply::new(
                550,
                [5, 1, 1],
                format!("Recipient refused: {reason}"),
            )),
            Ok(Err(e)) => Err(refusal::from_error(&e)),
            Err(_) => Err(Reply::try_later()),
        }
    }

    async fn data(&self, _: Option<&()>, envelope: Envelope, message: Vec<u8>) -> Reply {
        // Accepted recipients resolve: a bare `Postmaster` was checked as the postmaster.
        let mut recipients: Vec<String> = Vec::with_capacity(envelope.recipients.len());
        for given in &envelope.recipients {
            let address = self.resolve(given).unwrap_or(given);
            if !recipients.iter().any(|r| r.eq_ignore_ascii_case(address)) {
                recipients.push(address.to_string());
            }
        }
        let trace = trace_fields(&envelope, &self.hostname, self.engine.clock.now());
        let raw = with_trace(&trace, &message);
        // Not held twice while the intake commits (a message may be megabytes).
        drop(message);
        let inbound = InboundMessage {
            envelope_from: envelope.from,
            recipients,
            raw,
            client_ip: envelope.client_ip,
            helo: envelope.helo,
            provider_verdicts: ProviderVerdicts::default(),
        };
        let received =
            tokio::time::timeout(self.time_limit, self.engine.receive_inbound(inbound)).await;
        match received {
            Ok(Ok(receipt)) => {
                let ids: Vec<String> = receipt.accepted.iter().map(|a| a.id.to_string()).collect();
                Reply::new(250, [2, 0, 0], format!("Queued as {}", ids.join(" ")))
            }
            Ok(Err(e)) => refusal::from_error(&e),
            Err(_) => {
                tracing::warn!("inbound message outran the time limit");
                Reply::try_later()
            }
        }
    }
}

/// The trace fields RFC 5321 §4.4 has the server making the final delivery put before the
/// message: `Return-Path` with the envelope sender (`<>` for the null sender), then
/// `Received` with the client's EHLO name and address, this server, the protocol (RFC 3848)
/// and the time.
fn trace_fields(envelope: &Envelope, hostname: &str, now: DateTime<Utc>) -> String {
    // What the client sent goes in only where it fits the syntax: a CR or LF (or any
    // control character) would let it write fields of its own.
    let sender: String = envelope
        .from
        .as_deref()
        .unwrap_or("")
        .chars()
        .filter(|c| address_char(*c))
        .collect();
    let helo = envelope
        .helo
        .as_deref()
        .filter(|h| is_helo_name(h))
        .unwrap_or("unknown");
    let client = match envelope.client_ip.map(|ip| ip.to_canonical()) {
        Some(IpAddr::V4(ip)) => format!(" ([{ip}])"),
        Some(IpAddr::V6(ip)) => format!(" ([IPv6:{ip}])"),
        None => String::new(),
    };
    // The MX offers no AUTH, so never ESMTPA; RFC 3848 names no TLS variant of plain SMTP.
    let protocol = match (envelope.esmtp, envelope.tls) {
        (true, true) => "ESMTPS",
        (true, false) => "ESMTP",
        (false, _) => "SMTP",
    };
    format!(
        "Return-Path: <{sender}>\r\nReceived: from {helo}{client}\r\n\tby {hostname} with {protocol};\r\n\t{}\r\n",
        now.to_rfc2822()
    )
}

/// `message` with the trace fields before it. A message whose first line starts with
/// white space has no header field to begin with (that line would fold into the `Received`
/// date): a blank line after the trace fields then makes all of it the body, as Postfix
/// does with a header section it cannot read.
fn with_trace(trace: &str, message: &[u8]) -> Vec<u8> {
    let folds = matches!(message.first(), Some(b' ' | b'\t'));
    let mut raw = Vec::with_capacity(trace.len() + 2 + message.len());
    raw.extend_from_slice(trace.as_bytes());
    if folds {
        raw.extend_from_slice(b"\r\n");
    }
    raw.extend_from_slice(message);
    raw
}

/// Whether `c` may stand in an envelope address written into a header field: printable
/// ASCII, or UTF-8 (SMTPUTF8) that is neither a control character nor a line or other
/// separator.
fn address_char(c: char) -> bool {
    c == ' ' || c.is_ascii_graphic() || (!c.is_ascii() && !c.is_control() && !c.is_whitespace())
}

/// Whether an EHLO or HELO argument looks like a domain or an address literal (`[192.0.2.1]`,
/// `[IPv6:2001:db8::1]`), and so can be named in `Received`.
fn is_helo_name(name: &str) -> bool {
    (1..=255).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:[]".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_noon() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-21T12:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default()
    }

    fn envelope(from: Option<&str>, helo: &str, ip: &str) -> Envelope {
        Envelope {
            from: from.map(str::to_string),
            helo: Some(helo.to_string()),
            esmtp: true,
            client_ip: ip.parse().ok(),
            ..Envelope::default()
        }
    }

    #[test]
    fn the_trace_fields_name_the_sender_the_client_and_this_server() {
        let fields = trace_fields(
            &envelope(
                Some("ada@sender.example"),
                "mail.sender.example",
                "192.0.2.7",
            ),
            "mx.posthorn.test",
            at_noon(),
        );
        assert_eq!(
            fields,
            "Return-Path: <ada@sender.example>\r\n\
             Received: from mail.sender.example ([192.0.2.7])\r\n\
             \tby mx.posthorn.test with ESMTP;\r\n\
             \tSat, 21 Nov 2026 12:00:00 +0000\r\n"
        );
        let mut bounce = envelope(None, "[IPv6:2001:db8::1]", "::ffff:192.0.2.7");
        bounce.tls = true;
        let fields = trace_fields(&bounce, "mx", at_noon());
        assert!(
            fields.starts_with(
                "Return-Path: <>\r\nReceived: from [IPv6:2001:db8::1] ([192.0.2.7])\r\n\tby mx with ESMTPS;"
            ),
            "{fields}"
        );
        let mut helo = envelope(Some("a@b.example"), "b.example", "2001:db8::5");
        helo.esmtp = false;
        let fields = trace_fields(&helo, "mx", at_noon());
        assert!(
            fields.contains("from b.example ([IPv6:2001:db8::5])\r\n\tby mx with SMTP;"),
            "{fields}"
        );
    }

    #[test]
    fn a_first_line_that_would_fold_into_received_starts_the_body() {
        let trace = "Return-Path: <>\r\nReceived: from a\r\n\tby mx with ESMTP;\r\n\tdate\r\n";
        let raw = with_trace(trace, b" X-Sly: 1\r\nSubject: hi\r\n\r\nbody\r\n");
        let parsed = mail_parser::MessageParser::default().parse(&raw);
        let received = parsed
            .as_ref()
            .and_then(|m| m.header_raw("Received"))
            .unwrap_or_default();
        assert!(!received.contains("X-Sly"), "{received:?}");
        assert!(raw.starts_with(trace.as_bytes()));
        assert_eq!(&raw[trace.len()..trace.len() + 4], b"\r\n X");
        // A message with a header field first gets the trace fields and nothing else.
        let message = b"Subject: hi\r\n\r\nbody\r\n";
        assert_eq!(
            with_trace(trace, message),
            [trace.as_bytes(), message].concat()
        );
    }

    #[test]
    fn nothing_the_client_sent_can_add_a_field() {
        let sly = envelope(
            Some("a@b.example>\r\nX-Injected: 1\r\n"),
            "evil\r\nX-Injected: 2",
            "192.0.2.7",
        );
        let fields = trace_fields(&sly, "mx", at_noon());
        assert!(!fields.contains("\r\nX-Injected"), "{fields}");
        assert_eq!(fields.matches("\r\n").count(), 4, "{fields}");
        assert!(
            fields.contains("Received: from unknown ([192.0.2.7])"),
            "{fields}"
        );
        for helo in ["a b", "a;b", "a(b)", "", "é.example"] {
            assert!(!is_helo_name(helo), "{helo:?}");
        }
        assert!(address_char('é') && address_char(' '));
        for c in ['\r', '\n', '\0', '\t', '\u{85}', '\u{2028}', '\u{7f}'] {
            assert!(!address_char(c), "{c:?}");
        }
    }
}
