//! Which share of a workspace's sending rate a delivery draws on.
//!
//! Campaign mail and all other mail (sends through the API, workflow steps, SMTP
//! submissions) share the workspace's `sendRatePerSecond`. A campaign of 100,000 emails fills
//! every coming second of that budget for hours; a password reset sent meanwhile must not
//! wait behind it. So campaign mail takes at most [`bulk_quota`] of each window, leaving the
//! rest to other mail, and each class is paced on its own (see `send_pacer`).

use crate::model::EmailRecord;
use crate::ports::Quota;

/// The share of the sending rate a delivery draws on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SendClass {
    /// Mail one request, event or submission asked for: the whole budget, first come.
    Direct,
    /// Campaign mail: at most [`bulk_quota`] of each window.
    Bulk,
}

impl SendClass {
    /// The class of `email`: [`SendClass::Bulk`] for campaign mail.
    pub fn of(email: &EmailRecord) -> Self {
        if email.campaign_id.is_some() {
            Self::Bulk
        } else {
            Self::Direct
        }
    }

    /// The rate-limiter key of this class's own share in `workspace`'s budget, if it has
    /// one (direct mail draws on the whole budget only).
    pub fn share_key(self, workspace: &str) -> Option<String> {
        match self {
            Self::Direct => None,
            Self::Bulk => Some(format!("send-bulk:{workspace}")),
        }
    }

    /// The part of `quota` this class may take in one window.
    pub fn quota(self, quota: Quota) -> Quota {
        match self {
            Self::Direct => quota,
            Self::Bulk => bulk_quota(quota),
        }
    }
}

/// The part of a workspace's sending budget campaign mail may take in one window: all but a
/// tenth of it (rounded up), kept for other mail. A budget of one email per window is not
/// split, or campaigns could never send.
pub fn bulk_quota(quota: Quota) -> Quota {
    let reserve = if quota.limit >= 2 {
        quota.limit.div_ceil(10)
    } else {
        0
    };
    Quota {
        limit: quota.limit - reserve,
        window: quota.window,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn quota(limit: u32) -> Quota {
        Quota {
            limit,
            window: Duration::from_secs(1),
        }
    }

    #[test]
    fn campaigns_leave_a_tenth_rounded_up_to_other_mail() {
        let limits: Vec<u32> = [1, 2, 3, 10, 11, 14, 100, 1000]
            .into_iter()
            .map(|l| bulk_quota(quota(l)).limit)
            .collect();
        assert_eq!(limits, [1, 1, 2, 9, 9, 12, 90, 900]);
    }

    #[test]
    fn the_window_is_kept() {
        let slow = Quota {
            limit: 5,
            window: Duration::from_secs(7),
        };
        assert_eq!(bulk_quota(slow).window, slow.window);
        assert_eq!(SendClass::Direct.quota(slow), slow);
    }

    #[test]
    fn only_campaign_mail_has_a_share_key() {
        assert_eq!(SendClass::Direct.share_key("ws"), None);
        assert_eq!(
            SendClass::Bulk.share_key("ws").as_deref(),
            Some("send-bulk:ws")
        );
    }
}
