//! The public link endpoints (open pixel, click redirect, unsubscribe) and the reputation
//! numbers of `GET /stats`.

use chrono::Duration;

use super::super::Caller;
use crate::error::{Error, Resource, Result};
use crate::model::{EmailStats, Event};
use crate::ports::{ChangeSet, EmailStatsQuery, StoreError, Write};
use crate::tracking::{LinkToken, Tracker, TRACKING_SECRET};
use crate::Engine;

/// The windows `GET /stats` reports on, with their names.
pub const STATS_WINDOWS: [(&str, i64); 3] = [("last24h", 1), ("last7d", 7), ("last30d", 30)];

impl Engine {
    /// The deployment's link-signing key: read once from the store (created on first use,
    /// shared by every process) and kept in the settings' cell, so that a send or a
    /// tracking hit reads nothing for it.
    pub async fn tracking_key(&self) -> Result<Vec<u8>, StoreError> {
        self.settings
            .tracking_key
            .get_or_load(&*self.store, TRACKING_SECRET)
            .await
    }

    /// A tracker for mail built now, tracking opens and clicks as asked.
    pub async fn tracker(&self, opens: bool, clicks: bool) -> Result<Tracker, StoreError> {
        let key = self.tracking_key().await?;
        Ok(Tracker::new(key, &self.settings.public_url, opens, clicks))
    }

    async fn link_token(&self, text: &str) -> Result<LinkToken> {
        let tracker = self.tracker(false, false).await?;
        tracker.verify(text).ok_or(Error::NotFound(Resource::Link))
    }

    /// The open pixel was fetched: records an open. `NotFound` for a token that is not
    /// ours or not an open token; an email deleted since is ignored.
    pub async fn open_by_token(&self, token: &str) -> Result<()> {
        match self.link_token(token).await? {
            LinkToken::Open {
                workspace_id,
                email_id,
            } => {
                let now = self.clock.now();
                self.record_open(&workspace_id, &email_id, now).await?;
                Ok(())
            }
            _ => Err(Error::NotFound(Resource::Link)),
        }
    }

    /// A tracked link was followed: records a click and answers the original URL (taken
    /// from the signed token only, so this is no open redirect).
    pub async fn click_by_token(&self, token: &str) -> Result<String> {
        match self.link_token(token).await? {
            LinkToken::Click {
                workspace_id,
                email_id,
                url,
            } => {
                let now = self.clock.now();
                self.record_click(&workspace_id, &email_id, &url, now)
                    .await?;
                Ok(url)
            }
            _ => Err(Error::NotFound(Resource::Link)),
        }
    }

    /// Checks an unsubscribe token without acting on it (the confirmation page).
    pub async fn check_unsubscribe_token(&self, token: &str) -> Result<()> {
        match self.link_token(token).await? {
            LinkToken::Unsubscribe { .. } => Ok(()),
            _ => Err(Error::NotFound(Resource::Link)),
        }
    }

    /// One-click unsubscribe (RFC 8058): clears the contact's flag and emits
    /// `contact.unsubscribed` once; later calls change nothing and succeed. When the contact
    /// was deleted since, the contact holding the address the email went to now is
    /// unsubscribed (a contact deleted and imported again must not get mail its owner
    /// asked to stop); with neither, nothing changes and the call succeeds.
    pub async fn unsubscribe_by_token(&self, token: &str) -> Result<()> {
        let LinkToken::Unsubscribe {
            workspace_id,
            contact_id,
            email_id,
        } = self.link_token(token).await?
        else {
            return Err(Error::NotFound(Resource::Link));
        };
        self.on_conflict_retry(|| async {
            let mut contact = self.store.contact(&workspace_id, &contact_id).await?;
            if let (None, Some(email_id)) = (&contact, &email_id) {
                let email = self
                    .store
                    .email_without_content(&workspace_id, email_id)
                    .await?;
                if let Some(email) = email {
                    contact = self
                        .store
                        .contact_by_email(&workspace_id, &email.to.email)
                        .await?;
                }
            }
            let Some(mut contact) = contact.filter(|c| c.subscribed) else {
                return Ok(());
            };
            let now = self.clock.now();
            contact.subscribed = false;
            contact.updated_at = now;
            let mut changes = ChangeSet::new();
            changes.push(Write::AppendEvent(Event::new(
                &*self.clock,
                &workspace_id,
                "contact.unsubscribed",
                serde_json::json!({}),
                Some(contact.id.clone()),
                None,
                now,
            )));
            changes.push(Write::UpdateContact(contact));
            self.commit(changes).await?;
            Ok(())
        })
        .await
    }

    /// `GET /stats`: the workspace's outcome counts over each of [`STATS_WINDOWS`], of the
    /// emails sent in that window.
    pub async fn workspace_stats(
        &self,
        caller: &Caller,
    ) -> Result<Vec<(&'static str, EmailStats)>> {
        let now = self.clock.now();
        let mut out = Vec::with_capacity(STATS_WINDOWS.len());
        for (name, days) in STATS_WINDOWS {
            let query = EmailStatsQuery {
                campaign_id: None,
                sent_since: Some(now - Duration::days(days)),
            };
            let stats = self
                .store
                .email_stats(caller.workspace_id(), &query)
                .await?;
            out.push((name, stats));
        }
        Ok(out)
    }
}
