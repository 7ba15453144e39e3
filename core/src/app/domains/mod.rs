//! The workspace's domains: create, list, verify through DNS, inbound switch, delete, and
//! their DKIM keys (made when first needed).

mod checks;
mod keys;
mod records;

pub use checks::{RECHECK_INTERVAL, UNVERIFY_AFTER};
pub use keys::generate_dkim_key;
pub use records::{dkim_name, published_records, PublishedRecord};

use super::Caller;
use crate::error::{Error, Resource, Result};
use crate::model::{parse_domain_name, CampaignStatus, Domain, DomainId, WorkspaceId};
use crate::ports::{ChangeSet, StoreError, TemplateQuery, Write};
use crate::Engine;

/// `POST /domains {domain}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateDomain {
    /// The domain name as given; stored in canonical form (lower case, A-labels).
    pub domain: String,
}

/// `PATCH /domains/{id}`: each field left alone when `None`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DomainPatch {
    /// Accept inbound mail for the domain (in one workspace only).
    pub inbound_enabled: Option<bool>,
}

/// A domain as the API shows it: the record and the DNS entries to publish.
#[derive(Debug, Clone, PartialEq)]
pub struct DomainView {
    /// The domain (its private key never leaves through a view).
    pub domain: Domain,
    /// The DNS records to publish, with their last status.
    pub records: Vec<PublishedRecord>,
}

impl Caller {
    /// Domain management needs an unscoped secret key, as key management does: a key
    /// limited to some sender domains could otherwise add itself others.
    fn may_manage_domains(&self) -> Result<()> {
        self.may_manage_keys().map_err(|_| {
            Error::Forbidden("Domain management needs a secret key without domain limits".into())
        })
    }
}

impl Engine {
    /// `POST /domains`: an unverified domain with its token and DKIM key.
    pub async fn create_domain(&self, caller: &Caller, cmd: CreateDomain) -> Result<DomainView> {
        caller.may_manage_domains()?;
        let name = parse_domain_name(&cmd.domain).map_err(|_| {
            Error::field(
                "domain",
                "invalid_domain",
                format!("'{}' is not a domain name", cmd.domain),
            )
        })?;
        let domain = Domain::new(
            &*self.clock,
            caller.workspace_id().clone(),
            name,
            self.clock.now(),
        );
        let domain = self.insert_domain(domain).await?;
        self.domain_view(domain).await
    }

    /// Stores a new domain; a name the workspace already has is a conflict.
    pub(crate) async fn insert_domain(&self, domain: Domain) -> Result<Domain> {
        let mut changes = ChangeSet::new();
        changes.push(Write::InsertDomain(domain.clone()));
        match self.store.commit(changes).await {
            Ok(()) => {
                if !domain.verified_by_operator {
                    // DNS decides for this domain from now on: make sure the hourly
                    // re-check runs (a no-op when it is queued already).
                    let at = self.clock.now() + RECHECK_INTERVAL;
                    self.schedule_domain_recheck(at).await?;
                }
                Ok(domain)
            }
            Err(StoreError::Conflict(_)) => Err(Error::Conflict(format!(
                "the workspace already has the domain {}, or another workspace receives its \
                 inbound mail",
                domain.domain
            ))),
            Err(e) => Err(e.into()),
        }
    }

    /// `GET /domains`: every domain of the workspace, oldest first.
    pub async fn list_domains(&self, caller: &Caller) -> Result<Vec<DomainView>> {
        caller.may_manage_domains()?;
        let mut out = Vec::new();
        for domain in self.store.domains(caller.workspace_id()).await? {
            out.push(self.domain_view(domain).await?);
        }
        Ok(out)
    }

    /// `GET /domains/{id}`.
    pub async fn domain(&self, caller: &Caller, id: &DomainId) -> Result<DomainView> {
        caller.may_manage_domains()?;
        let domain = self.find_domain(caller, id).await?;
        self.domain_view(domain).await
    }

    /// `POST /domains/{id}/verify`: checks the records now and stores what was found.
    pub async fn verify_domain(&self, caller: &Caller, id: &DomainId) -> Result<DomainView> {
        caller.may_manage_domains()?;
        let domain = self.find_domain(caller, id).await?;
        let domain = self.ensure_dkim_key(domain).await?;
        let domain = self.check_domain(domain).await?;
        self.domain_view(domain).await
    }

    /// `PATCH /domains/{id} {inboundEnabled}`.
    pub async fn patch_domain(
        &self,
        caller: &Caller,
        id: &DomainId,
        patch: DomainPatch,
    ) -> Result<DomainView> {
        caller.may_manage_domains()?;
        // Under a guard on `updated_at`, so that a DNS check finishing meanwhile keeps its
        // findings rather than having them overwritten by the copy read here.
        self.on_conflict_retry(|| async {
            let mut domain = self.find_domain(caller, id).await?;
            let read_at = domain.updated_at;
            if let Some(inbound) = patch.inbound_enabled {
                if inbound && !domain.inbound_enabled {
                    let owner = self.store.inbound_domain(&domain.domain).await?;
                    if owner.is_some_and(|d| d.id != domain.id) {
                        return Err(inbound_taken(&domain.domain).into());
                    }
                }
                domain.inbound_enabled = inbound;
            }
            domain.updated_at = crate::model::updated_after(read_at, self.clock.now());
            let mut changes = ChangeSet::new();
            changes.push(Write::GuardDomain {
                workspace_id: domain.workspace_id.clone(),
                id: domain.id.clone(),
                updated_at: read_at,
            });
            changes.push(Write::UpdateDomain(domain.clone()));
            match self.store.commit(changes).await {
                Ok(()) => Ok(()),
                // Unchanged since the read: the conflict is another domain's inbound claim.
                Err(StoreError::Conflict(why)) => {
                    let now = self.stored_domain(&domain.workspace_id, &domain.id).await?;
                    if now.updated_at == read_at {
                        Err(inbound_taken(&domain.domain).into())
                    } else {
                        Err(StoreError::Conflict(why).into())
                    }
                }
                Err(e) => Err(e.into()),
            }
        })
        .await?;
        let domain = self.find_domain(caller, id).await?;
        self.domain_view(domain).await
    }

    /// `DELETE /domains/{id}`: refused while a template sends from it or a SCHEDULED or
    /// SENDING campaign does.
    pub async fn delete_domain(&self, caller: &Caller, id: &DomainId) -> Result<()> {
        caller.may_manage_domains()?;
        let domain = self.find_domain(caller, id).await?;
        let ws = caller.workspace_id();
        if let Some(name) = self.template_sending_from(caller, &domain).await? {
            return Err(Error::Conflict(format!(
                "the template '{name}' sends from {}; change its from address first",
                domain.domain
            )));
        }
        for status in [CampaignStatus::Scheduled, CampaignStatus::Sending] {
            let mut offset = 0;
            loop {
                let (page, _) = self.store.campaigns(ws, Some(status), offset, 100).await?;
                if let Some(c) = page
                    .iter()
                    .find(|c| domain.name_is(address_domain(&c.from)))
                {
                    return Err(Error::Conflict(format!(
                        "the campaign '{}' ({:?}) sends from {}; wait for it or cancel it first",
                        c.name, c.status, domain.domain
                    )));
                }
                if page.len() < 100 {
                    break;
                }
                offset += page.len();
            }
        }
        let mut changes = ChangeSet::new();
        changes.push(Write::DeleteDomain {
            workspace_id: ws.clone(),
            id: domain.id,
        });
        self.store.commit(changes).await?;
        Ok(())
    }

    /// The name of a template of the caller's workspace whose from address is at `domain`.
    async fn template_sending_from(
        &self,
        caller: &Caller,
        domain: &Domain,
    ) -> Result<Option<String>> {
        let mut query = TemplateQuery {
            limit: 100,
            ..TemplateQuery::default()
        };
        loop {
            let (page, _) = self.store.templates(caller.workspace_id(), &query).await?;
            let hit = page.iter().find(|t| {
                t.from
                    .as_deref()
                    .is_some_and(|from| domain.name_is(address_domain(from)))
            });
            if let Some(t) = hit {
                return Ok(Some(t.name.clone()));
            }
            if page.len() < query.limit {
                return Ok(None);
            }
            query.offset += page.len();
        }
    }

    /// A domain of the caller's workspace by id, or 404.
    async fn find_domain(&self, caller: &Caller, id: &DomainId) -> Result<Domain> {
        self.stored_domain(caller.workspace_id(), id).await
    }

    /// The domain `id` of workspace `ws` as stored, or 404.
    pub(crate) async fn stored_domain(&self, ws: &WorkspaceId, id: &DomainId) -> Result<Domain> {
        self.store
            .domains(ws)
            .await?
            .into_iter()
            .find(|d| d.id == *id)
            .ok_or(Error::NotFound(Resource::Domain))
    }

    /// The view of `domain`, its DKIM key made first if it has none.
    async fn domain_view(&self, domain: Domain) -> Result<DomainView> {
        let domain = self.ensure_dkim_key(domain).await?;
        let records = published_records(&domain, self.settings.mx_host.as_deref());
        Ok(DomainView { domain, records })
    }
}

/// The domain part of an address (`a@b.test`, `Name <a@b.test>`), as written.
fn address_domain(from: &str) -> &str {
    from.rsplit_once('@')
        .map_or("", |(_, d)| d.trim().trim_end_matches('>').trim())
}

fn inbound_taken(name: &str) -> Error {
    Error::Conflict(format!(
        "{name} already receives inbound mail in another workspace"
    ))
}

#[cfg(test)]
mod tests {
    use super::address_domain;

    #[test]
    fn address_domains() {
        assert_eq!(address_domain("a@b.test"), "b.test");
        assert_eq!(address_domain("Ann <a@B.test>"), "B.test");
        assert_eq!(address_domain("nobody"), "");
    }
}
