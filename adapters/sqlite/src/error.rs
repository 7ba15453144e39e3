//! The adapter's own errors (opening a file) and the mapping of sqlx errors onto the ports'
//! error enums.

use std::path::PathBuf;

use posthorn_core::ports::{PortError, StoreError};
use sqlx::error::ErrorKind;

/// Why a store file could not be opened or backed up.
#[derive(Debug, thiserror::Error)]
pub enum SqliteError {
    /// Another process (or another open store in this one) holds the lock beside the file.
    #[error("another Posthorn server is using {}", path.display())]
    Locked {
        /// The database file.
        path: PathBuf,
    },
    /// A file or directory could not be created, opened or locked.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done ("cannot create directory", ...).
        action: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The backup destination exists already (a backup never overwrites a file).
    #[error("backup destination {} exists already", path.display())]
    DestinationExists {
        /// The destination given.
        path: PathBuf,
    },
    /// The store is open read-only and the operation writes.
    #[error("the store is open read-only")]
    ReadOnly,
    /// SQLite refused or failed (cannot open the file, migration failed, ...).
    #[error("{0}")]
    Database(String),
}

impl From<SqliteError> for StoreError {
    fn from(err: SqliteError) -> Self {
        StoreError::Unavailable(err.to_string())
    }
}

/// Whether `err` is a constraint violation (a guarded insert lost).
pub(crate) fn is_constraint(err: &sqlx::Error) -> bool {
    matches!(
        err,
        sqlx::Error::Database(db) if matches!(
            db.kind(),
            ErrorKind::UniqueViolation
                | ErrorKind::ForeignKeyViolation
                | ErrorKind::NotNullViolation
                | ErrorKind::CheckViolation
        )
    )
}

/// A driver error as a store error: constraint violations are conflicts, the rest
/// (I/O, a lock held past the busy timeout, a full disk) is infrastructure failure.
pub(crate) fn store(err: sqlx::Error) -> StoreError {
    if is_constraint(&err) {
        StoreError::Conflict(format!("already exists or not allowed: {err}"))
    } else {
        StoreError::Unavailable(err.to_string())
    }
}

/// A driver error as a generic port error.
pub(crate) fn port(err: sqlx::Error) -> PortError {
    PortError::Unavailable(err.to_string())
}

/// A store error as a generic port error.
pub(crate) fn store_to_port(err: StoreError) -> PortError {
    match err {
        StoreError::Conflict(m) | StoreError::Unavailable(m) | StoreError::Corrupt(m) => {
            PortError::Unavailable(m)
        }
    }
}

/// A driver error met while opening.
pub(crate) fn open(err: sqlx::Error) -> SqliteError {
    SqliteError::Database(err.to_string())
}

/// A stored value that does not decode into the model (a corrupt or foreign row): an
/// internal error, never an outage.
pub(crate) fn corrupt(what: &str, err: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("stored {what} does not decode: {err}"))
}

/// The error of a write attempted on a read-only store.
pub(crate) fn read_only() -> StoreError {
    StoreError::Unavailable(SqliteError::ReadOnly.to_string())
}
