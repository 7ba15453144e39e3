//! Point reads on the calling thread: the lookups every `/v1/track` and `/v1/send` makes
//! (a contact by address), on read-only rusqlite connections, without a trip to another
//! thread.
//!
//! sqlx runs each SQLite connection on a thread of its own, so every query is a hand-off
//! there and back: two thread switches, and on a busy machine a wait for a core, which cost
//! more than the lookup itself (a B-tree descent of a few microseconds on cached pages).
//! A lookup by a unique key is short enough to run on the async worker that asks, as an
//! in-memory map would be; anything that scans (pages, counts, segments) stays on sqlx's
//! reader pool.
//!
//! The connections are opened read-only on first use and kept for reuse; in WAL mode a
//! reader never waits for the writer, so a lookup blocks for no longer than its own work.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use posthorn_core::model::Contact;
use posthorn_core::ports::StoreError;
use rusqlite::{Connection, OpenFlags, OptionalExtension};

use crate::rows::{self, contact_cols};

/// Most idle connections kept: one per async worker is all that can be in use at once.
const MAX_IDLE: usize = 16;

/// Read-only connections for lookups on the calling thread.
pub(crate) struct PointReads {
    path: PathBuf,
    busy_timeout: Duration,
    idle: Mutex<Vec<Connection>>,
}

impl std::fmt::Debug for PointReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PointReads")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl PointReads {
    /// Lookups on the database at `path`; no connection is opened until the first.
    pub(crate) fn new(path: &Path, busy_timeout: Duration) -> Self {
        Self {
            path: path.to_path_buf(),
            busy_timeout,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// The contact of `workspace_id` with this address (already lowercased).
    pub(crate) fn contact_by_email(
        &self,
        workspace_id: &str,
        email: &str,
    ) -> Result<Option<Contact>, StoreError> {
        self.with(|conn| {
            let mut stmt = conn.prepare_cached(concat!(
                "SELECT ",
                contact_cols!(),
                " FROM contacts c WHERE c.workspace_id = ?1 AND c.email = ?2"
            ))?;
            stmt.query_row((workspace_id, email), |row| Ok(rows::contact(row)))
                .optional()
        })?
        .transpose()
    }

    /// Runs `read` on an idle connection (or a new one), which is kept afterwards unless
    /// the read failed (a connection in an unknown state is not reused).
    fn with<T>(
        &self,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let conn = match self.lock().pop() {
            Some(conn) => conn,
            None => self.open().map_err(unavailable)?,
        };
        let out = read(&conn).map_err(unavailable)?;
        let mut idle = self.lock();
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
        Ok(out)
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Connection>> {
        // A panic inside `read` holds no lock; the list stays consistent.
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(self.busy_timeout)?;
        Ok(conn)
    }
}

fn unavailable(err: rusqlite::Error) -> StoreError {
    StoreError::Unavailable(format!("SQLite point read: {err}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_unavailable_not_a_panic() {
        let dir = tempfile::tempdir().expect("temp dir");
        let reads = PointReads::new(&dir.path().join("absent.db"), Duration::from_millis(10));
        let err = reads
            .contact_by_email("ws", "a@example.com")
            .expect_err("no database");
        assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    }
}
