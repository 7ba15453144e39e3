//! Checks specific to the PostgreSQL adapter: migrations, the SQL timestamp function, the
//! workflow tables (corrupt rows, indexes).
//! Everything else every store must do is in the shared conformance suites.

mod migrations;
mod timestamps;
mod workflows;

use chrono::{DateTime, Utc};
use posthorn_core::model::Workspace;
use posthorn_core::ports::{ChangeSet, Write};

/// Now, in whole milliseconds (PostgreSQL keeps microseconds).
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

/// A change set of `writes`.
pub fn changes(writes: Vec<Write>) -> ChangeSet {
    ChangeSet { writes }
}
