//! What the `email.received` event shows of a raw message, read with mail-parser.

use mail_parser::{Address, MessageParser, PartType};

/// The parts of a received message its events carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageSummary {
    /// The Message-ID header, without angle brackets.
    pub message_id: Option<String>,
    /// The From header, decoded (`Name <addr>`, several joined by `, `).
    pub from_header: Option<String>,
    /// The first address of the From header, lower-case.
    pub from_address: Option<String>,
    /// The Subject header, decoded.
    pub subject: Option<String>,
    /// The first HTML body part, or the first text part when there is no HTML.
    pub body: Option<String>,
    /// Whether the message has a non-blank body or an attachment.
    pub has_content: bool,
}

/// Reads what the events need from `raw`. Never fails: what cannot be read is left out
/// (a message that is not MIME at all gives an empty summary).
pub fn summarize(raw: &[u8]) -> MessageSummary {
    let Some(message) = MessageParser::default().parse(raw) else {
        return MessageSummary::default();
    };
    let body = match message.html_part(0).map(|p| &p.body) {
        Some(PartType::Html(html)) => Some(html.to_string()),
        _ => match message.text_part(0).map(|p| &p.body) {
            Some(PartType::Text(text)) => Some(text.to_string()),
            _ => None,
        },
    };
    let has_content =
        body.as_deref().is_some_and(|b| !b.trim().is_empty()) || message.attachment_count() > 0;
    MessageSummary {
        message_id: message.message_id().map(str::to_owned),
        from_header: message
            .from()
            .and_then(render_addresses)
            .or_else(|| message.header_raw("From").map(|h| h.trim().to_owned())),
        from_address: message
            .from()
            .and_then(|a| a.first())
            .and_then(|a| a.address())
            .map(|a| a.trim().to_lowercase()),
        subject: message.subject().map(str::to_owned),
        body,
        has_content,
    }
}

/// `Name <addr>, addr2` as people write a From header.
fn render_addresses(address: &Address<'_>) -> Option<String> {
    let rendered: Vec<String> = address
        .iter()
        .filter_map(|a| match (a.name(), a.address()) {
            (Some(name), Some(addr)) => Some(format!("{name} <{addr}>")),
            (None, Some(addr)) => Some(addr.to_owned()),
            (Some(name), None) => Some(name.to_owned()),
            (None, None) => None,
        })
        .collect();
    (!rendered.is_empty()).then(|| rendered.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn html_wins_over_text() {
        let raw = b"From: \"Ada L\" <Ada@Example.org>\r\nTo: in@example.com\r\nSubject: =?utf-8?q?Hi_there?=\r\nMessage-ID: <m1@example.org>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nplain\r\n--b\r\nContent-Type: text/html\r\n\r\n<p>rich</p>\r\n--b--\r\n";
        let s = summarize(raw);
        assert_eq!(s.message_id.as_deref(), Some("m1@example.org"));
        assert_eq!(s.from_header.as_deref(), Some("Ada L <Ada@Example.org>"));
        assert_eq!(s.from_address.as_deref(), Some("ada@example.org"));
        assert_eq!(s.subject.as_deref(), Some("Hi there"));
        assert_eq!(s.body.as_deref().map(str::trim), Some("<p>rich</p>"));
        assert!(s.has_content);
    }

    #[test]
    fn text_only_is_kept_as_text() {
        let raw = b"From: a@b.example\r\nSubject: x\r\n\r\njust text\r\n";
        let s = summarize(raw);
        assert_eq!(s.body.as_deref().map(str::trim), Some("just text"));
        assert!(s.has_content);
    }

    #[test]
    fn empty_body_has_no_content() {
        let s = summarize(b"From: a@b.example\r\nSubject: x\r\n\r\n");
        assert!(!s.has_content);
        assert_eq!(summarize(b""), MessageSummary::default());
    }

    /// Every message of the checked-in corpora (received mail, bounce reports).
    fn corpus() -> Vec<(String, Vec<u8>)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut out = Vec::new();
        for dir in ["inbound", "bounces"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            for entry in entries.flatten() {
                if let Ok(bytes) = std::fs::read(entry.path()) {
                    out.push((entry.path().display().to_string(), bytes));
                }
            }
        }
        out
    }

    #[test]
    fn the_corpus_parses_and_every_cut_of_it_too() {
        let corpus = corpus();
        assert!(corpus.len() >= 7, "corpus missing: {}", corpus.len());
        for (name, raw) in &corpus {
            let whole = summarize(raw);
            assert!(
                whole.from_address.is_some()
                    || whole.from_header.is_some()
                    || name.contains("empty"),
                "{name}: {whole:?}"
            );
            // Truncated at every 7th byte, as a dropped connection leaves it.
            for cut in (0..raw.len()).step_by(7) {
                let _ = summarize(&raw[..cut]);
            }
        }
        let nested = corpus
            .iter()
            .find(|(n, _)| n.ends_with("nested-attachment.eml"))
            .map(|(_, raw)| summarize(raw))
            .expect("nested-attachment.eml");
        assert_eq!(nested.subject.as_deref(), Some("R\u{e9}sum\u{e9} attached"));
        assert_eq!(nested.body.as_deref(), Some("<p>Caf\u{e9} au lait</p>"));
        assert_eq!(nested.from_address.as_deref(), Some("zoe@example.org"));
        assert!(nested.has_content);
    }

    proptest! {
        #[test]
        fn corpus_messages_with_bytes_changed_never_panic(
            pick in any::<prop::sample::Index>(),
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16),
        ) {
            let corpus = corpus();
            let (_, raw) = &corpus[pick.index(corpus.len())];
            let mut raw = raw.clone();
            for (at, byte) in edits {
                if !raw.is_empty() {
                    let i = at.index(raw.len());
                    raw[i] = byte;
                }
            }
            let _ = summarize(&raw);
        }

        #[test]
        fn never_panics_on_any_bytes(raw in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let _ = summarize(&raw);
        }

        #[test]
        fn never_panics_on_header_like_text(
            headers in proptest::collection::vec("[A-Za-z-]{1,12}: [ -~]{0,60}", 0..12),
            body in "[ -~\r\n]{0,400}",
        ) {
            let raw = format!("{}\r\n\r\n{}", headers.join("\r\n"), body);
            let s = summarize(raw.as_bytes());
            if let Some(addr) = s.from_address {
                prop_assert_eq!(addr.clone(), addr.to_lowercase());
            }
        }
    }
}
