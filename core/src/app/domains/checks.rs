//! Checking a domain's records through DNS, now (verify) and every hour (re-check job).

use chrono::{DateTime, Duration, Timelike, Utc};

use super::records::{check, published_records, Finding};
use crate::error::{Error, Result};
use crate::model::{Domain, DomainRecord, JobId, RecordStatus};
use crate::ports::{ChangeSet, ClaimedJob, JobPayload, NewJob, StoreError, Write};
use crate::Engine;

/// How often the maintenance job re-checks every domain.
pub const RECHECK_INTERVAL: Duration = Duration::hours(1);
/// How long the required records of a verified domain must stay missing (in every check
/// over that span) before it is un-verified: one failed lookup never does it.
pub const UNVERIFY_AFTER: Duration = Duration::hours(1);

/// How often a check's findings are applied again to a domain that changed meanwhile.
const CHECK_COMMIT_TRIES: usize = 5;

/// Records whose presence makes a domain verified.
const REQUIRED: [DomainRecord; 2] = [DomainRecord::Ownership, DomainRecord::Dkim];

/// Applies the findings of one check at `now` to `domain`.
///
/// Every record found or definitely absent gets its status; a record DNS gave no answer for
/// keeps its last one. With every required record present the domain is verified. With one
/// definitely absent, an unverified domain stays so, and a verified one (unless the
/// operator verified it) is un-verified only once the records have been missing for
/// [`UNVERIFY_AFTER`]; an unknown answer decides nothing.
pub(crate) fn apply_findings(
    domain: &mut Domain,
    findings: &[(DomainRecord, Finding)],
    now: DateTime<Utc>,
) {
    for (record, finding) in findings {
        let status = match finding {
            Finding::Present => RecordStatus::Verified,
            Finding::Absent => RecordStatus::Failed,
            Finding::Unknown => continue,
        };
        domain.checks.records.insert(*record, status);
    }
    let required: Vec<Finding> = REQUIRED
        .iter()
        .map(|r| {
            findings
                .iter()
                .find(|(rec, _)| rec == r)
                .map_or(Finding::Unknown, |(_, f)| *f)
        })
        .collect();
    if required.iter().all(|f| *f == Finding::Present) {
        domain.verified = true;
        domain.checks.failing_since = None;
        domain.checks.checked_at = Some(now);
    } else if required.contains(&Finding::Absent) {
        domain.checks.checked_at = Some(now);
        if domain.verified && !domain.verified_by_operator {
            let since = *domain.checks.failing_since.get_or_insert(now);
            if now - since >= UNVERIFY_AFTER {
                domain.verified = false;
                domain.checks.failing_since = None;
            }
        }
    }
}

impl Engine {
    /// Looks every record of `domain` up, applies the findings and stores the domain.
    ///
    /// The lookups may take seconds (a few per record when a name server is slow); the
    /// findings are applied to the domain as stored once they are in, under a guard on its
    /// `updated_at`, so a change made meanwhile (`PATCH` of `inboundEnabled`, another check)
    /// is kept rather than overwritten by the copy read before the lookups.
    pub(crate) async fn check_domain(&self, domain: Domain) -> Result<Domain> {
        let records = published_records(&domain, self.settings.mx_host.as_deref());
        let mut findings = Vec::with_capacity(records.len());
        for record in &records {
            findings.push((record.record, check(&*self.dns, record).await));
        }
        for _ in 0..CHECK_COMMIT_TRIES {
            let mut stored = self.stored_domain(&domain.workspace_id, &domain.id).await?;
            let read_at = stored.updated_at;
            let now = self.clock.now();
            apply_findings(&mut stored, &findings, now);
            stored.updated_at = crate::model::updated_after(read_at, now);
            let mut changes = ChangeSet::new();
            changes.push(Write::GuardDomain {
                workspace_id: stored.workspace_id.clone(),
                id: stored.id.clone(),
                updated_at: read_at,
            });
            changes.push(Write::UpdateDomain(stored.clone()));
            match self.store.commit(changes).await {
                Ok(()) => return Ok(stored),
                Err(StoreError::Conflict(_)) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(Error::Conflict(format!(
            "domain {} kept changing while its check was stored",
            domain.domain
        )))
    }

    /// Handles `RecheckDomains`: checks every domain of every workspace, then, while some
    /// domain's verification rests on DNS (not on the operator's word), enqueues the next
    /// run an hour on; with none the chain stops until such a domain is added. A domain
    /// that fails to check is logged and left for next time.
    pub(crate) async fn recheck_domains(&self, job: &ClaimedJob) -> Result<()> {
        let mut watched = false;
        for ws in self.store.workspaces().await? {
            for domain in self.store.domains(&ws.id).await? {
                watched |= !domain.verified_by_operator;
                let id = domain.id.clone();
                let checked = match self.ensure_dkim_key(domain).await {
                    Ok(domain) => self.check_domain(domain).await.map(|_| ()),
                    Err(e) => Err(e),
                };
                if let Err(e) = checked {
                    tracing::warn!(domain_id = %id, error = %e, "domain re-check failed");
                }
            }
        }
        if watched {
            self.schedule_domain_recheck(self.clock.now() + RECHECK_INTERVAL)
                .await?;
        }
        self.jobs.complete(job).await?;
        Ok(())
    }

    /// Enqueues the domain re-check for the hour slot holding `at`, unless it is queued
    /// already: the job id names the slot, so every process seeding or rescheduling the
    /// same slot enqueues one job between them. Adding a domain verified through DNS calls
    /// it, and so does each run while such domains exist.
    pub async fn schedule_domain_recheck(&self, at: DateTime<Utc>) -> Result<()> {
        let slot = at
            .with_nanosecond(0)
            .and_then(|t| t.with_second(0))
            .and_then(|t| t.with_minute(0))
            .unwrap_or(at);
        let job = NewJob {
            id: JobId::from(format!("domain-recheck-{}", slot.format("%Y%m%d%H"))),
            payload: JobPayload::RecheckDomains,
            run_at: at,
        };
        let mut changes = ChangeSet::new();
        changes.push(Write::EnqueueJob(job));
        match self.store.commit(changes).await {
            Ok(()) | Err(StoreError::Conflict(_)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DomainId, WorkspaceId};

    fn domain(verified: bool) -> Domain {
        let now = Utc::now();
        Domain {
            id: DomainId::from("d"),
            workspace_id: WorkspaceId::from("w"),
            domain: "a.test".into(),
            verified,
            inbound_enabled: false,
            created_at: now,
            updated_at: now,
            verification_token: "t".into(),
            dkim_selector: "s".into(),
            dkim: None,
            verified_by_operator: false,
            checks: Default::default(),
        }
    }

    fn all(f: Finding) -> Vec<(DomainRecord, Finding)> {
        vec![(DomainRecord::Ownership, f), (DomainRecord::Dkim, f)]
    }

    #[test]
    fn present_records_verify() {
        let mut d = domain(false);
        apply_findings(&mut d, &all(Finding::Present), Utc::now());
        assert!(d.verified);
        assert_eq!(d.checks.status(DomainRecord::Dkim), RecordStatus::Verified);
    }

    #[test]
    fn failures_unverify_only_after_an_hour() {
        let t0 = Utc::now();
        let mut d = domain(true);
        apply_findings(&mut d, &all(Finding::Absent), t0);
        assert!(d.verified, "one failure keeps it verified");
        apply_findings(&mut d, &all(Finding::Absent), t0 + Duration::minutes(59));
        assert!(d.verified);
        apply_findings(&mut d, &all(Finding::Absent), t0 + Duration::minutes(60));
        assert!(!d.verified);
    }

    #[test]
    fn a_success_between_failures_starts_the_hour_again() {
        let t0 = Utc::now();
        let mut d = domain(true);
        apply_findings(&mut d, &all(Finding::Absent), t0);
        apply_findings(&mut d, &all(Finding::Present), t0 + Duration::minutes(30));
        apply_findings(&mut d, &all(Finding::Absent), t0 + Duration::minutes(61));
        assert!(d.verified);
    }

    #[test]
    fn unknown_answers_change_nothing() {
        let t0 = Utc::now();
        let mut d = domain(true);
        apply_findings(&mut d, &all(Finding::Unknown), t0);
        apply_findings(&mut d, &all(Finding::Unknown), t0 + Duration::hours(5));
        assert!(d.verified);
        assert_eq!(
            d.checks.status(DomainRecord::Ownership),
            RecordStatus::Pending
        );
    }

    #[test]
    fn operator_verified_domains_stay_verified() {
        let t0 = Utc::now();
        let mut d = domain(true);
        d.verified_by_operator = true;
        apply_findings(&mut d, &all(Finding::Absent), t0);
        apply_findings(&mut d, &all(Finding::Absent), t0 + Duration::hours(3));
        assert!(d.verified);
        assert_eq!(d.checks.status(DomainRecord::Dkim), RecordStatus::Failed);
    }
}
