//! SMTP replies: a code, an enhanced status code (RFC 3463) and one line of text, written
//! by `smtp-proto`.

use std::fmt;

/// Longest reply text sent; longer reasons are cut (RFC 5321 allows 512-byte lines).
const MAX_TEXT: usize = 400;

/// One SMTP reply line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Three-digit reply code.
    pub code: u16,
    /// Enhanced status code, e.g. `[5, 7, 1]`.
    pub esc: [u8; 3],
    /// Printable ASCII, one line.
    pub text: String,
}

impl Reply {
    /// A reply; `text` is reduced to one line of printable ASCII, so a reason taken from
    /// user input can never break the protocol.
    pub fn new(code: u16, esc: [u8; 3], text: impl AsRef<str>) -> Self {
        let mut clean: String = text
            .as_ref()
            .chars()
            .map(|c| {
                if c.is_ascii_graphic() || c == ' ' {
                    c
                } else {
                    ' '
                }
            })
            .collect();
        if clean.len() > MAX_TEXT {
            clean.truncate(MAX_TEXT - 3);
            clean.push_str("...");
        }
        let text = clean.split_whitespace().collect::<Vec<_>>().join(" ");
        Self { code, esc, text }
    }

    /// Whether the reply is a success (2xx).
    pub fn is_positive(&self) -> bool {
        (200..300).contains(&self.code)
    }

    /// Appends the reply line to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        let [a, b, c] = self.esc;
        // Writing to a Vec cannot fail.
        let _ = smtp_proto::Response::new(self.code, a, b, c, &self.text).write(out);
    }

    /// 250 2.0.0 OK.
    pub fn ok() -> Self {
        Self::new(250, [2, 0, 0], "OK")
    }

    /// 451 4.3.0: a backing service failed; the client keeps the message and retries.
    pub fn try_later() -> Self {
        Self::new(
            451,
            [4, 3, 0],
            "Temporary failure: the mail service is unavailable, try again later",
        )
    }

    /// 503 5.5.1: a command out of order.
    pub fn bad_sequence(text: &str) -> Self {
        Self::new(503, [5, 5, 1], text)
    }
}

impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c] = self.esc;
        write!(f, "{} {a}.{b}.{c} {}", self.code, self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_become_one_printable_line() {
        let reply = Reply::new(550, [5, 7, 1], "bad\r\n250 injected\u{0}é");
        let mut out = Vec::new();
        reply.write_to(&mut out);
        assert_eq!(out, b"550 5.7.1 bad 250 injected\r\n");
        let long = Reply::new(554, [5, 6, 0], "x".repeat(2000));
        assert!(long.text.len() <= MAX_TEXT);
    }
}
