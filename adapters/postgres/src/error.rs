//! Maps sqlx errors onto the ports' error enums.

use posthorn_core::ports::{PortError, StoreError};

/// SQLSTATE of a unique-constraint violation.
const UNIQUE_VIOLATION: &str = "23505";
/// SQLSTATEs of a transaction the server gave up to keep concurrent ones consistent:
/// `serialization_failure` and `deadlock_detected`. Running it again may succeed.
const RETRYABLE: [&str; 2] = ["40001", "40P01"];

/// Whether `err` is a unique-constraint violation (a guarded insert lost).
pub(crate) fn is_unique_violation(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.code().as_deref() == Some(UNIQUE_VIOLATION))
}

/// A driver error as a store error: unique violations, serialization failures and
/// deadlocks are conflicts (the use case re-reads and tries again), the rest is
/// infrastructure failure.
pub(crate) fn store(err: sqlx::Error) -> StoreError {
    if let sqlx::Error::Database(db) = &err {
        if db
            .code()
            .is_some_and(|code| RETRYABLE.contains(&code.as_ref()))
        {
            return StoreError::Conflict(format!("transaction given up by the database: {db}"));
        }
    }
    if is_unique_violation(&err) {
        let what = match &err {
            sqlx::Error::Database(db) => db.constraint().unwrap_or("unique key").to_string(),
            _ => String::from("unique key"),
        };
        StoreError::Conflict(format!("{what} already exists"))
    } else {
        StoreError::Unavailable(err.to_string())
    }
}

/// A driver error as a generic port error.
pub(crate) fn port(err: sqlx::Error) -> PortError {
    PortError::Unavailable(err.to_string())
}

/// A stored value that does not decode into the model (a corrupt or foreign row): an
/// internal error, never an outage.
pub(crate) fn corrupt(what: &str, err: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("stored {what} does not decode: {err}"))
}
