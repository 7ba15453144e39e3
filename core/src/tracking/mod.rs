//! Open and click tracking and unsubscribe links: the signed tokens, the rewriting of HTML
//! bodies, and the headers of RFC 8058 one-click unsubscribe.

mod rewrite;
mod token;

pub use rewrite::{rewrite_html, NO_TRACK_ATTRIBUTE};
pub use token::LinkToken;

use crate::model::{ContactId, EmailId, EmailRecord, WorkspaceId};

/// Name of the deployment secret that signs link tokens.
pub const TRACKING_SECRET: &str = "link-tokens";

/// How the links of one send are built: the key, the public base URL and what to track.
#[derive(Clone)]
pub struct Tracker {
    key: Vec<u8>,
    base_url: String,
    /// Add the open pixel.
    pub opens: bool,
    /// Rewrite links through the click redirect.
    pub clicks: bool,
}

impl std::fmt::Debug for Tracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracker")
            .field("base_url", &self.base_url)
            .field("opens", &self.opens)
            .field("clicks", &self.clicks)
            .finish_non_exhaustive()
    }
}

impl Tracker {
    /// A tracker signing with `key` under `base_url` (its trailing `/` ignored).
    pub fn new(key: Vec<u8>, base_url: &str, opens: bool, clicks: bool) -> Self {
        Self {
            key,
            base_url: base_url.trim_end_matches('/').to_owned(),
            opens,
            clicks,
        }
    }

    /// The one-click unsubscribe URL of a contact in the email `email_id`.
    pub fn unsubscribe_url(
        &self,
        workspace_id: &WorkspaceId,
        contact_id: &ContactId,
        email_id: &EmailId,
    ) -> String {
        let token = LinkToken::Unsubscribe {
            workspace_id: workspace_id.clone(),
            contact_id: contact_id.clone(),
            email_id: Some(email_id.clone()),
        };
        format!("{}/unsubscribe/{}", self.base_url, token.sign(&self.key))
    }

    /// Adds what `email` carries for tracking and unsubscribing: for marketing mail
    /// (`unsubscribe` is the URL the body was rendered with) the `List-Unsubscribe` headers,
    /// in place of any the caller gave, and a footer link when the body does not show the URL; then the click redirects and
    /// the open pixel, as switched on. Needs the email's final id.
    pub fn decorate(&self, email: &mut EmailRecord, unsubscribe: Option<&str>) {
        if let Some(url) = unsubscribe {
            // Posthorn's one-click pair is the one that unsubscribes the contact: a caller's
            // own pair would be sent beside it (two of each) and could take its place.
            email.headers.retain(|(name, _)| {
                !name.eq_ignore_ascii_case("List-Unsubscribe")
                    && !name.eq_ignore_ascii_case("List-Unsubscribe-Post")
            });
            email
                .headers
                .push(("List-Unsubscribe".to_owned(), format!("<{url}>")));
            email.headers.push((
                "List-Unsubscribe-Post".to_owned(),
                "List-Unsubscribe=One-Click".to_owned(),
            ));
            if !email.html.contains(url) && !email.html.contains(&url.replace('&', "&amp;")) {
                let footer = format!(
                    "<p style=\"font-size:12px;color:#666\"><a href=\"{url}\" {NO_TRACK_ATTRIBUTE}>Unsubscribe</a></p>"
                );
                match email.html.to_ascii_lowercase().rfind("</body") {
                    Some(at) => email.html.insert_str(at, &footer),
                    None => email.html.push_str(&footer),
                }
            }
        }
        if !self.opens && !self.clicks {
            return;
        }
        let ws = &email.workspace_id;
        let id = &email.id;
        let pixel = self.opens.then(|| {
            let token = LinkToken::Open {
                workspace_id: ws.clone(),
                email_id: id.clone(),
            };
            format!(
                "<img src=\"{}/t/o/{}\" width=\"1\" height=\"1\" alt=\"\" style=\"display:none\">",
                self.base_url,
                token.sign(&self.key)
            )
        });
        let rewrite = |url: &str| -> Option<String> {
            let lower = url.to_ascii_lowercase();
            let web = lower.starts_with("http://") || lower.starts_with("https://");
            // Unsubscribe links (the footer's or `{{unsubscribeUrl}}` in any mail) stay
            // direct: one-click must not depend on the redirect.
            let own_unsubscribe = url.starts_with(&format!("{}/unsubscribe/", self.base_url));
            if !self.clicks || !web || own_unsubscribe {
                return None;
            }
            let token = LinkToken::Click {
                workspace_id: ws.clone(),
                email_id: id.clone(),
                url: url.to_owned(),
            };
            Some(format!("{}/t/c/{}", self.base_url, token.sign(&self.key)))
        };
        email.html = rewrite_html(&email.html, pixel.as_deref(), &rewrite);
    }

    /// The token `text` stands for, if this tracker's key signed it.
    pub fn verify(&self, text: &str) -> Option<LinkToken> {
        LinkToken::verify(&self.key, text)
    }
}
