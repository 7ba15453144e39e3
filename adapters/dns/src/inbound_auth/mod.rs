//! `MailAuthenticator`: the `InboundAuthenticator` port on mail-auth (SPF, DKIM, DMARC),
//! resolving through the same name servers as the `Dns` port.

use std::net::SocketAddr;
use std::time::Duration;

use async_trait::async_trait;
use hickory_resolver::config::{ResolveHosts, ResolverOpts};
use mail_auth::{
    AuthenticatedMessage, DkimOutput, DkimResult, DmarcResult, MessageAuthenticator, SpfOutput,
    SpfResult,
};
use posthorn_core::model::Verdict;
use posthorn_core::ports::{AuthVerdicts, InboundAuthenticator, InboundContext};

use crate::hickory::explicit_servers;

/// The name SPF macros expand `%{r}` to: the receiving host.
const HOST_DOMAIN: &str = "localhost";

/// Checks SPF, DKIM and DMARC with mail-auth. Each stage (DKIM, SPF, DMARC) is bounded by
/// its own time limit; a stage that runs out, or whose DNS answers fail temporarily,
/// gives `PROCESSING_FAILED`.
pub struct MailAuthenticator {
    /// `None` when no name server is configured: every verdict is then PROCESSING_FAILED.
    auth: Option<MessageAuthenticator>,
    timeout: Duration,
}

impl MailAuthenticator {
    /// Uses the name servers of the system configuration (`/etc/resolv.conf`).
    pub fn from_system_conf(timeout: Duration) -> Self {
        let auth = match hickory_resolver::system_conf::read_system_conf() {
            Ok((config, _)) if !config.name_servers().is_empty() => {
                MessageAuthenticator::new(config, options(timeout)).ok()
            }
            _ => None,
        };
        if auth.is_none() {
            tracing::warn!("no usable system DNS configuration: inbound SPF/DKIM/DMARC checks will report PROCESSING_FAILED");
        }
        Self { auth, timeout }
    }

    /// Asks only the name servers at `addrs` (over UDP with EDNS, and over TCP when an
    /// answer is too long for UDP), never the system's and never `/etc/hosts`: what
    /// `POSTHORN_DNS_SERVERS` configures.
    pub fn with_nameservers(addrs: &[SocketAddr], timeout: Duration) -> Self {
        let auth = if addrs.is_empty() {
            None
        } else {
            let mut opts = options(timeout);
            // Explicit servers are the whole truth: SPF's `a` and `mx` go to them too.
            opts.use_hosts_file = ResolveHosts::Never;
            MessageAuthenticator::new(explicit_servers(addrs), opts).ok()
        };
        Self { auth, timeout }
    }

    /// Runs `stage` within the time limit.
    async fn bounded<T>(&self, stage: impl std::future::Future<Output = T>) -> Option<T> {
        tokio::time::timeout(self.timeout, stage).await.ok()
    }
}

fn options(timeout: Duration) -> ResolverOpts {
    let mut opts = ResolverOpts::default();
    opts.timeout = timeout;
    opts.attempts = 1;
    // DKIM keys make answers longer than plain DNS's 512 bytes.
    opts.edns0 = true;
    opts
}

#[async_trait]
impl InboundAuthenticator for MailAuthenticator {
    async fn authenticate(&self, ctx: &InboundContext<'_>) -> AuthVerdicts {
        let Some(auth) = &self.auth else {
            return AuthVerdicts::all(Verdict::ProcessingFailed);
        };
        // mail-auth lower-cases the From: domain and DKIM's d= and compares case-sensitively,
        // so the SMTP identities are lower-cased too (an `EHLO MX.Example.COM` aligns).
        let helo = ctx.helo.unwrap_or("unknown").to_ascii_lowercase();
        let helo = helo.as_str();
        let mail_from_domain = ctx
            .envelope_from
            .and_then(|f| f.rsplit_once('@'))
            .map_or(helo, |(_, d)| d)
            .to_ascii_lowercase();
        let mail_from_domain = mail_from_domain.as_str();
        let spf_output = match ctx.client_ip {
            // Without the client's address (a relayed message) there is nothing to check.
            None => None,
            Some(ip) => {
                let params = match ctx.envelope_from {
                    Some(sender) => mail_auth::spf::verify::SpfParameters::verify_mail_from(
                        ip,
                        helo,
                        HOST_DOMAIN,
                        sender,
                    ),
                    None => {
                        mail_auth::spf::verify::SpfParameters::verify_ehlo(ip, helo, HOST_DOMAIN)
                    }
                };
                Some(
                    self.bounded(auth.verify_spf(params))
                        .await
                        .unwrap_or_else(|| {
                            SpfOutput::new(mail_from_domain.to_owned())
                                .with_result(SpfResult::TempError)
                        }),
                )
            }
        };
        let spf = spf_output
            .as_ref()
            .map_or(Verdict::Gray, |o| spf_verdict(o.result()));
        let Some(message) = AuthenticatedMessage::parse(ctx.raw) else {
            // Not a message mail-auth can read: no signature, no From domain to align.
            return AuthVerdicts {
                spf,
                dkim: Verdict::Gray,
                dmarc: Verdict::Gray,
            };
        };
        let Some(dkim_output) = self.bounded(auth.verify_dkim(&message)).await else {
            return AuthVerdicts {
                spf,
                dkim: Verdict::ProcessingFailed,
                dmarc: Verdict::ProcessingFailed,
            };
        };
        let dkim = dkim_verdict(&dkim_output);
        let none = SpfOutput::new(mail_from_domain.to_owned());
        let spf_for_dmarc = spf_output.as_ref().unwrap_or(&none);
        let dmarc = match self
            .bounded(
                auth.verify_dmarc(
                    mail_auth::dmarc::verify::DmarcParameters::new(
                        &message,
                        &dkim_output,
                        mail_from_domain,
                        spf_for_dmarc,
                    )
                    // Without it mail-auth compares whole domains, making relaxed alignment strict.
                    .with_domain_suffix_fn(organizational_domain),
                ),
            )
            .await
        {
            None => Verdict::ProcessingFailed,
            Some(output) => dmarc_verdict(
                output.dkim_result(),
                output.spf_result(),
                output.dmarc_record().is_some(),
            ),
        };
        AuthVerdicts { spf, dkim, dmarc }
    }
}

/// The organizational domain of a lower-case `domain` (RFC 7489 §3.2): its registrable
/// domain by the public suffix list (`mail.example.co.uk` → `example.co.uk`), or `domain`
/// itself when it has none (a public suffix, a single label). Relaxed DMARC alignment
/// compares these.
fn organizational_domain(domain: &str) -> &str {
    psl::domain_str(domain).unwrap_or(domain)
}

/// SPF: pass; fail and softfail; neutral or no policy; a temporary DNS failure.
fn spf_verdict(result: SpfResult) -> Verdict {
    match result {
        SpfResult::Pass => Verdict::Pass,
        SpfResult::Fail | SpfResult::SoftFail | SpfResult::PermError => Verdict::Fail,
        SpfResult::Neutral | SpfResult::None => Verdict::Gray,
        SpfResult::TempError => Verdict::ProcessingFailed,
    }
}

/// DKIM: PASS when one signature verifies; otherwise a temporary failure is
/// PROCESSING_FAILED, and a signature that does not verify (a changed body is "neutral"
/// to mail-auth) is FAIL; no signature is GRAY.
fn dkim_verdict(outputs: &[DkimOutput<'_>]) -> Verdict {
    let results = || outputs.iter().map(DkimOutput::result);
    if results().any(|r| matches!(r, DkimResult::Pass)) {
        Verdict::Pass
    } else if results().any(|r| matches!(r, DkimResult::TempError(_))) {
        Verdict::ProcessingFailed
    } else if results().any(|r| {
        matches!(
            r,
            DkimResult::Fail(_) | DkimResult::PermError(_) | DkimResult::Neutral(_)
        )
    }) {
        Verdict::Fail
    } else {
        Verdict::Gray
    }
}

/// DMARC: aligned DKIM or SPF passes; a published policy that neither meets fails; no
/// DMARC record (or no single From domain) is GRAY.
fn dmarc_verdict(dkim: &DmarcResult, spf: &DmarcResult, has_record: bool) -> Verdict {
    let both = [dkim, spf];
    if both.iter().any(|r| matches!(r, DmarcResult::Pass)) {
        Verdict::Pass
    } else if both.iter().any(|r| matches!(r, DmarcResult::TempError(_))) {
        Verdict::ProcessingFailed
    } else if has_record || both.iter().any(|r| !matches!(r, DmarcResult::None)) {
        Verdict::Fail
    } else {
        Verdict::Gray
    }
}

#[cfg(test)]
mod tests;
