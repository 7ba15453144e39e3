//! Opening a database file: the lock beside it, the writer, the readers, the migrations;
//! and the online backup.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fs4::fs_std::FileExt;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, SqlitePool};

use crate::error::{self, SqliteError};
use crate::options::{Durability, SqliteOptions};
use crate::point::PointReads;
use crate::{wake, SqliteStore};

/// `<db>.lock`, beside the database file.
pub(crate) fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SqliteError {
    let path = path.to_path_buf();
    move |source| SqliteError::Io {
        action,
        path,
        source,
    }
}

/// Creates the parent directory of `path` if it has one that is missing.
fn create_parent(path: &Path) -> Result<(), SqliteError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).map_err(io("cannot create directory", dir))
        }
        _ => Ok(()),
    }
}

/// Takes the exclusive advisory lock on `<path>.lock` (held while the file stays open).
fn lock(path: &Path) -> Result<File, SqliteError> {
    let lock_path = lock_path(path);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(io("cannot open lock file", &lock_path))?;
    match file.try_lock_exclusive() {
        Ok(true) => Ok(file),
        Ok(false) => Err(SqliteError::Locked {
            path: path.to_path_buf(),
        }),
        Err(source) => Err(SqliteError::Io {
            action: "cannot lock",
            path: lock_path,
            source,
        }),
    }
}

/// Prepared statements kept by the writer connection (sqlx's default is 100).
const WRITER_STATEMENTS: usize = 400;

/// Options every connection shares.
fn base(path: &Path, options: &SqliteOptions) -> SqliteConnectOptions {
    SqliteConnectOptions::new()
        .filename(path)
        .busy_timeout(options.busy_timeout)
        // The Store port applies writes as given (no foreign keys), like the memory adapter.
        .foreign_keys(false)
        .with_regexp()
}

/// Read-only connections (reads never take the write lock, and never wait for the writer).
async fn readers(path: &Path, options: &SqliteOptions) -> Result<SqlitePool, SqliteError> {
    SqlitePoolOptions::new()
        .max_connections(options.readers.max(1))
        .acquire_timeout(options.busy_timeout)
        .idle_timeout(None)
        .max_lifetime(None)
        .test_before_acquire(false)
        .connect_with(base(path, options).read_only(true))
        .await
        .map_err(error::open)
}

/// [`SqliteStore::open`].
pub(crate) async fn open(
    path: &Path,
    options: &SqliteOptions,
    temp_dir: Option<Arc<tempfile::TempDir>>,
) -> Result<SqliteStore, SqliteError> {
    create_parent(path)?;
    let lock = lock(path)?;
    let synchronous = match options.durability {
        Durability::Full => SqliteSynchronous::Full,
        Durability::Normal => SqliteSynchronous::Normal,
    };
    let writer = SqlitePoolOptions::new()
        .max_connections(1)
        .min_connections(1)
        .acquire_timeout(options.busy_timeout)
        .idle_timeout(None)
        .max_lifetime(None)
        .test_before_acquire(false)
        // A connection handed back inside one of sqlx's transactions (a cancelled future
        // whose rollback failed) is closed, not reused: the next commit would not start.
        .after_release(|conn, _| Box::pin(async move { Ok(!conn.is_in_transaction()) }))
        .connect_with(
            base(path, options)
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(synchronous)
                // Temporary files (the statement journal of a group's multi-row inserts,
                // sorts) stay in memory: on disk each group created, wrote and unlinked
                // one, a few system calls per request on the writer's one thread.
                .pragma("temp_store", "memory")
                // A small group of plain inserts is one prepared statement per shape (its
                // row counts per table): room for those of `/v1/track` and `/v1/send`, at
                // every group size that stays prepared, besides the other writes.
                .statement_cache_capacity(WRITER_STATEMENTS)
                // Keeps the planner's statistics fresh, bounded in work, when it closes.
                .optimize_on_close(true, 400),
        )
        .await
        .map_err(error::open)?;
    sqlx::migrate!("./migrations")
        .run(&writer)
        .await
        .map_err(|e| SqliteError::Database(format!("migration failed: {e}")))?;
    // Names left recent by the last run are filed now, before any group counts its own.
    // Reads by name take both parts, so one that fails leaves them recent a while longer.
    if let Err(err) = crate::group::file_event_names(&writer).await {
        tracing::warn!(error = %err, "filing event names at start-up failed");
    }
    let readers = readers(path, options).await?;
    Ok(SqliteStore {
        writer: Some(writer),
        readers,
        wake: Arc::new(wake::Wake::default()),
        group: Arc::default(),
        derived: Some(Arc::default()),
        point: Arc::new(PointReads::new(path, options.busy_timeout)),
        path: path.to_path_buf(),
        _lock: Some(Arc::new(lock)),
        _temp_dir: temp_dir,
    })
}

/// [`SqliteStore::open_read_only`].
pub(crate) async fn open_read_only(
    path: &Path,
    options: &SqliteOptions,
) -> Result<SqliteStore, SqliteError> {
    if !path.is_file() {
        return Err(SqliteError::Io {
            action: "cannot open",
            path: path.to_path_buf(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        });
    }
    let readers = readers(path, options).await?;
    Ok(SqliteStore {
        writer: None,
        readers,
        wake: Arc::new(wake::Wake::default()),
        group: Arc::default(),
        // Another process writes the file: nothing read here may be kept.
        derived: None,
        point: Arc::new(PointReads::new(path, options.busy_timeout)),
        path: path.to_path_buf(),
        _lock: None,
        _temp_dir: None,
    })
}

/// [`SqliteStore::backup_to`].
pub(crate) async fn backup_to(readers: &SqlitePool, dest: &Path) -> Result<(), SqliteError> {
    if dest.exists() {
        return Err(SqliteError::DestinationExists {
            path: dest.to_path_buf(),
        });
    }
    create_parent(dest)?;
    let Some(target) = dest.to_str() else {
        return Err(SqliteError::Io {
            action: "cannot back up to",
            path: dest.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "path is not UTF-8"),
        });
    };
    sqlx::query("VACUUM INTO ?")
        .bind(target)
        .execute(readers)
        .await
        .map_err(|e| SqliteError::Database(format!("backup to {} failed: {e}", dest.display())))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::options::{Durability, SqliteOptions};
    use crate::testing;

    #[tokio::test]
    async fn durability_sets_synchronous_on_the_writer() {
        let store = testing::temporary().await.expect("open");
        let writer = store.writer.as_ref().expect("a writer");
        let full: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(writer)
            .await
            .expect("pragma");
        assert_eq!(full, 2, "FULL by default");
        let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(writer)
            .await
            .expect("pragma");
        assert_eq!(mode, "wal");
        store.close().await;

        let options = SqliteOptions::default().with_durability(Durability::Normal);
        let store = testing::temporary_with(options).await.expect("open");
        let writer = store.writer.as_ref().expect("a writer");
        let normal: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(writer)
            .await
            .expect("pragma");
        assert_eq!(normal, 1, "NORMAL when chosen");
        store.close().await;
    }

    /// `.cargo/config.toml` builds the bundled SQLite without the global page-cache lock
    /// and the allocation statistics (see docs/performance.md); a build that lost those
    /// flags (say, the file moved) fails here instead of silently running slower.
    #[tokio::test]
    async fn the_bundled_sqlite_is_built_with_the_workspace_flags() {
        let store = testing::temporary().await.expect("open");
        let writer = store.writer.as_ref().expect("a writer");
        let options: Vec<String> = sqlx::query_scalar("PRAGMA compile_options")
            .fetch_all(writer)
            .await
            .expect("pragma");
        store.close().await;
        assert!(
            options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
            "allocation statistics are off: {options:?}"
        );
        assert!(
            !options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT"),
            "one page cache per connection, not a shared one behind a lock: {options:?}"
        );
    }
}
