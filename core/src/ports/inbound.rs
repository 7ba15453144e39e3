//! Ports that judge received mail: sender authentication (SPF, DKIM, DMARC) and content
//! scanning (spam, viruses). Each answers a [`Verdict`] and never fails: a check that cannot
//! be carried out answers [`Verdict::ProcessingFailed`].

use std::net::IpAddr;
use std::sync::Arc;

use async_trait::async_trait;

use crate::model::Verdict;

/// What the checks of one received message look at.
#[derive(Debug, Clone, Copy)]
pub struct InboundContext<'a> {
    /// The message as received.
    pub raw: &'a [u8],
    /// The client that handed it over, when known (SPF needs it).
    pub client_ip: Option<IpAddr>,
    /// The client's HELO/EHLO name, when known.
    pub helo: Option<&'a str>,
    /// The envelope sender; `None` for `<>`.
    pub envelope_from: Option<&'a str>,
    /// The envelope recipients.
    pub recipients: &'a [String],
}

/// SPF, DKIM and DMARC verdicts of one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthVerdicts {
    /// SPF of the envelope sender (or HELO name for `<>`) against the client address.
    pub spf: Verdict,
    /// PASS when at least one DKIM signature verifies, FAIL when signatures exist and none
    /// does, GRAY when the message is not signed.
    pub dkim: Verdict,
    /// DMARC of the From domain.
    pub dmarc: Verdict,
}

impl AuthVerdicts {
    /// Every verdict the same.
    pub fn all(verdict: Verdict) -> Self {
        Self {
            spf: verdict,
            dkim: verdict,
            dmarc: verdict,
        }
    }
}

/// Checks who sent a message (SPF, DKIM, DMARC).
///
/// Contract: answers within the adapter's time limit; DNS that does not answer in time
/// gives `ProcessingFailed` for the checks that needed it, never an error.
#[async_trait]
pub trait InboundAuthenticator: Send + Sync {
    /// The verdicts of the message in `ctx`.
    async fn authenticate(&self, ctx: &InboundContext<'_>) -> AuthVerdicts;
}

/// Judges a message's content.
///
/// Contract: answers within the adapter's time limit; a scanner that cannot be reached or
/// answers nonsense gives `ProcessingFailed`, never an error.
#[async_trait]
pub trait ContentScanner: Send + Sync {
    /// FAIL when the message is spam (or infected, for a virus scanner), PASS when it is
    /// not, GRAY when the scanner cannot tell.
    async fn scan(&self, ctx: &InboundContext<'_>) -> Verdict;
}

/// Answers the same verdicts for every message: the default where no real checker is
/// configured (GRAY: "not checked"), and a test double.
#[derive(Debug, Clone, Copy)]
pub struct StaticVerdicts {
    /// What `authenticate` answers.
    pub auth: AuthVerdicts,
    /// What `scan` answers.
    pub content: Verdict,
}

impl StaticVerdicts {
    /// GRAY for every check.
    pub fn unchecked() -> Self {
        Self {
            auth: AuthVerdicts::all(Verdict::Gray),
            content: Verdict::Gray,
        }
    }
}

#[async_trait]
impl InboundAuthenticator for StaticVerdicts {
    async fn authenticate(&self, _ctx: &InboundContext<'_>) -> AuthVerdicts {
        self.auth
    }
}

#[async_trait]
impl ContentScanner for StaticVerdicts {
    async fn scan(&self, _ctx: &InboundContext<'_>) -> Verdict {
        self.content
    }
}

/// The checkers of received mail an engine uses.
#[derive(Clone)]
pub struct InboundCheckers {
    /// SPF, DKIM, DMARC.
    pub authenticator: Arc<dyn InboundAuthenticator>,
    /// Spam (rspamd when configured).
    pub spam: Arc<dyn ContentScanner>,
    /// Viruses.
    pub virus: Arc<dyn ContentScanner>,
}

impl Default for InboundCheckers {
    /// Nothing checked: every verdict GRAY.
    fn default() -> Self {
        let unchecked = Arc::new(StaticVerdicts::unchecked());
        Self {
            authenticator: unchecked.clone(),
            spam: unchecked.clone(),
            virus: unchecked,
        }
    }
}

impl std::fmt::Debug for InboundCheckers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InboundCheckers").finish_non_exhaustive()
    }
}
