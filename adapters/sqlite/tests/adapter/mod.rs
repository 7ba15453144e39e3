//! Checks specific to the SQLite adapter: the file (lock, read-only opens, backups,
//! reopening), one writer beside claimers and readers, the SQL timestamp recognition, the
//! workflow tables (corrupt rows, indexes).
//! Everything else every store must do is in the shared conformance suites.

mod file;
mod jobs;
mod kept_facts;
mod timestamps;
mod workflows;

use chrono::{DateTime, Utc};
use posthorn_core::model::WorkspaceId;
use posthorn_core::model::{Contact, EmailAddress, Workspace};
use posthorn_core::ports::{ChangeSet, Write};
use serde_json::Map;

/// Now, in whole milliseconds (SQLite keeps microseconds).
pub fn now() -> DateTime<Utc> {
    let now = Utc::now();
    DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now)
}

/// A new workspace record.
pub fn workspace() -> Workspace {
    Workspace::new(
        &posthorn_core::ports::SystemClock,
        "adapter-test".into(),
        now(),
    )
}

/// A new ACTIVE contact with `email` in `workspace_id`.
pub fn contact(workspace_id: &WorkspaceId, email: &str) -> Contact {
    let email = EmailAddress::parse(email).expect("valid test address");
    Contact::new(
        &posthorn_core::ports::SystemClock,
        workspace_id,
        email,
        true,
        Map::new(),
        false,
        now(),
    )
}

/// A change set of `writes`.
pub fn changes(writes: Vec<Write>) -> ChangeSet {
    ChangeSet { writes }
}
