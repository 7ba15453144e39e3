//! Signed tokens of the tracking and unsubscribe links: which email (or contact) a request
//! is about, and for a click where it goes. Only ids and the link travel, never an address;
//! the HMAC makes them unforgeable, so the click endpoint is no open redirect.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::model::{ContactId, EmailId, WorkspaceId};

/// Bytes of the HMAC-SHA256 tag kept in a token (128 bits).
const TAG_BYTES: usize = 16;
/// Separates the fields of a token's payload (never in ids; a URL cannot hold it raw).
const SEP: char = '\u{1f}';

/// What a token stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkToken {
    /// The open pixel of an email.
    Open {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// The email.
        email_id: EmailId,
    },
    /// A tracked link of an email.
    Click {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// The email.
        email_id: EmailId,
        /// The original URL.
        url: String,
    },
    /// The unsubscribe link of a contact, in one email.
    Unsubscribe {
        /// Owning workspace.
        workspace_id: WorkspaceId,
        /// The contact.
        contact_id: ContactId,
        /// The email the link was sent in (`None` in links made before it was carried): its
        /// recipient address finds the contact when the one named was deleted since.
        email_id: Option<EmailId>,
    },
}

impl LinkToken {
    fn payload(&self) -> String {
        match self {
            Self::Open {
                workspace_id,
                email_id,
            } => format!("o{SEP}{workspace_id}{SEP}{email_id}"),
            Self::Click {
                workspace_id,
                email_id,
                url,
            } => format!("c{SEP}{workspace_id}{SEP}{email_id}{SEP}{url}"),
            Self::Unsubscribe {
                workspace_id,
                contact_id,
                email_id: None,
            } => format!("u{SEP}{workspace_id}{SEP}{contact_id}"),
            Self::Unsubscribe {
                workspace_id,
                contact_id,
                email_id: Some(email_id),
            } => format!("u{SEP}{workspace_id}{SEP}{contact_id}{SEP}{email_id}"),
        }
    }

    fn from_payload(payload: &str) -> Option<Self> {
        let mut parts = payload.splitn(4, SEP);
        let kind = parts.next()?;
        let workspace_id = WorkspaceId::from(parts.next()?);
        let id = parts.next()?;
        let rest = parts.next();
        match (kind, rest) {
            ("o", None) => Some(Self::Open {
                workspace_id,
                email_id: id.into(),
            }),
            ("c", Some(url)) => Some(Self::Click {
                workspace_id,
                email_id: id.into(),
                url: url.to_owned(),
            }),
            ("u", email_id) => Some(Self::Unsubscribe {
                workspace_id,
                contact_id: id.into(),
                email_id: email_id.map(EmailId::from),
            }),
            _ => None,
        }
    }

    /// The token text: base64url payload, a dot, base64url truncated HMAC-SHA256 of it.
    pub fn sign(&self, key: &[u8]) -> String {
        let payload = URL_SAFE_NO_PAD.encode(self.payload());
        let tag = mac(key, payload.as_bytes()).finalize().into_bytes();
        format!("{payload}.{}", URL_SAFE_NO_PAD.encode(&tag[..TAG_BYTES]))
    }

    /// The token `text` stands for, when its tag is `key`'s; `None` for anything tampered,
    /// truncated or signed with another key.
    pub fn verify(key: &[u8], text: &str) -> Option<Self> {
        let (payload, tag) = text.split_once('.')?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        if tag.len() != TAG_BYTES {
            return None;
        }
        mac(key, payload.as_bytes())
            .verify_truncated_left(&tag)
            .ok()?;
        let payload = String::from_utf8(URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
        Self::from_payload(&payload)
    }
}

fn mac(key: &[u8], data: &[u8]) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(data);
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    fn click() -> LinkToken {
        LinkToken::Click {
            workspace_id: "w1".into(),
            email_id: "e1".into(),
            url: "https://example.com/a?b=c&d=e".into(),
        }
    }

    #[test]
    fn tokens_round_trip_and_refuse_tampering() {
        let key = b"secret";
        let token = click().sign(key);
        assert_eq!(LinkToken::verify(key, &token), Some(click()));
        assert_eq!(LinkToken::verify(b"other", &token), None);
        let (payload, tag) = token.split_once('.').unwrap_or_default();
        let evil = LinkToken::Click {
            workspace_id: "w1".into(),
            email_id: "e1".into(),
            url: "https://evil.example".into(),
        };
        let forged = format!("{}.{tag}", evil.sign(b"x").split('.').next().unwrap_or(""));
        assert_eq!(LinkToken::verify(key, &forged), None);
        assert_eq!(LinkToken::verify(key, payload), None);
        assert_eq!(LinkToken::verify(key, &format!("{payload}.")), None);
        assert!(!token.contains('@'));
    }

    #[test]
    fn unsubscribe_tokens_carry_their_email_and_old_ones_stay_valid() {
        let key = b"secret";
        let with_email = LinkToken::Unsubscribe {
            workspace_id: "w1".into(),
            contact_id: "c1".into(),
            email_id: Some("e1".into()),
        };
        let token = with_email.sign(key);
        assert_eq!(LinkToken::verify(key, &token), Some(with_email));
        // A link sent before the email was carried: its payload has three parts.
        let old = format!("u{SEP}w1{SEP}c1");
        let payload = URL_SAFE_NO_PAD.encode(&old);
        let tag = mac(key, payload.as_bytes()).finalize().into_bytes();
        let token = format!("{payload}.{}", URL_SAFE_NO_PAD.encode(&tag[..TAG_BYTES]));
        assert_eq!(
            LinkToken::verify(key, &token),
            Some(LinkToken::Unsubscribe {
                workspace_id: "w1".into(),
                contact_id: "c1".into(),
                email_id: None,
            })
        );
    }
}
