//! `posthorn export --to postgres://…`: copies a SQLite store into an empty PostgreSQL
//! database, so that a deployment that outgrows one machine keeps its data.
//!
//! The two adapters keep the same tables with the same columns and values, differing only
//! in types (SQLite stores instants as integer microseconds, booleans as 0/1 and JSON as
//! text) and in one split: SQLite keeps an email's content in `email_contents`, beside
//! `emails` (it rewrites a row whole on every update, and reading columns after the content
//! walks its overflow pages), where PostgreSQL keeps it in `emails`; the export reads the
//! two joined, as the one table PostgreSQL has (`SPLIT_TABLES`).
//!
//! The copy is driven by the two schemas themselves: every table of the SQLite file is
//! read, with every column, in one read transaction (a consistent snapshot, taken read-only
//! and without the server's lock, so it works while the server runs), and written into
//! PostgreSQL in one transaction with the same ids and values, converted by each
//! PostgreSQL column's type. A table or column one side has and the other lacks stops the
//! export before anything is written, so nothing is silently left behind. Row counts are
//! compared before the PostgreSQL transaction commits.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::TryStreamExt;
use sqlx::postgres::PgConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteRow};
use sqlx::{Connection, Postgres, QueryBuilder, Row, Sqlite};

use crate::config::Config;
use crate::secret::SecretUrl;
use crate::sqlite_tools::{sqlite_path, ToolError};

/// Rows per `INSERT` (the widest table, emails, binds 21 values a row).
const CHUNK: usize = 500;
/// Tables of the migration tools, and derived tables (`contact_counts`, kept from `contacts`
/// in both stores, in different shapes, and rebuilt after the copy; the two parts of
/// SQLite's event name index, kept from `events`, an index on PostgreSQL), not Posthorn's
/// data.
const SKIPPED_TABLES: &[&str] = &[
    "_sqlx_migrations",
    "contact_counts",
    "event_names_recent",
    "event_names_filed",
];

/// Tables SQLite keeps in two parts that PostgreSQL keeps in one: (the part, the table it
/// belongs to), joined by their key `(workspace_id, id)`.
const SPLIT_TABLES: &[(&str, &str)] = &[("email_contents", "emails")];

/// The rows copied, per table.
pub type Copied = BTreeMap<String, u64>;

/// `posthorn export --to URL`: copies the SQLite store of `config` into the PostgreSQL
/// database at `to` (migrated first; refused unless every table is empty) and prints the
/// rows copied per table.
pub async fn export(config: &Config, to: &SecretUrl) -> Result<(), ToolError> {
    let path = sqlite_path(config, "export")?;
    let copied = export_to(&path, to).await?;
    let total: u64 = copied.values().sum();
    println!(
        "exported {} to {to}: {total} rows in {} tables",
        path.display(),
        copied.len()
    );
    for (table, rows) in &copied {
        println!("  {table:<16} {rows:>10}");
    }
    println!(
        "Start the server with POSTHORN_STORE set to that URL (and POSTHORN_REDIS_URL to run \
         more than one process); the keys stay the same."
    );
    Ok(())
}

/// Copies the SQLite database at `path` into the empty PostgreSQL database at `to`.
pub async fn export_to(path: &Path, to: &SecretUrl) -> Result<Copied, ToolError> {
    let url = to.expose();
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(ToolError::Other(format!(
            "--to must be a postgres:// URL, got `{to}`"
        )));
    }
    if !path.is_file() {
        return Err(ToolError::Other(format!(
            "no SQLite database at {}",
            path.display()
        )));
    }
    let pg_error = |what: &str, e: &dyn std::fmt::Display| {
        ToolError::Other(to.scrub(&format!("PostgreSQL ({what}): {e}")))
    };
    // Connecting migrates: the target has Posthorn's current schema.
    let pg_store = posthorn_postgres::PgStore::connect(url)
        .await
        .map_err(|e| pg_error("connect", &e))?;
    let mut sqlite = SqliteConnection::connect_with(
        &SqliteConnectOptions::new()
            .filename(path)
            .read_only(true)
            .busy_timeout(Duration::from_secs(30)),
    )
    .await
    .map_err(|e| ToolError::Other(format!("SQLite: cannot open {}: {e}", path.display())))?;
    let mut pg = pg_store
        .pool()
        .acquire()
        .await
        .map_err(|e| pg_error("connect", &e))?;

    // One read transaction: every table is read from the same snapshot.
    let mut snapshot = sqlite.begin().await.map_err(sqlite_error)?;
    let source = sqlite_schema(&mut snapshot).await?;
    let target = pg_schema(&mut pg)
        .await
        .map_err(|e| pg_error("schema", &e))?;
    let plan = plan(&source, &target)?;

    let mut tx = pg.begin().await.map_err(|e| pg_error("begin", &e))?;
    for table in plan.keys() {
        let sql = format!("SELECT EXISTS (SELECT 1 FROM {})", quote(table));
        let non_empty: bool = QueryBuilder::<Postgres>::new(sql)
            .build_query_scalar()
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| pg_error("check", &e))?;
        if non_empty {
            return Err(ToolError::Other(format!(
                "the PostgreSQL database {to} is not empty (table `{table}` has rows); \
                 export only into a new, empty database"
            )));
        }
    }
    let mut copied = Copied::new();
    for (table, columns) in &plan {
        let rows = copy_table(&mut snapshot, &mut tx, table, columns)
            .await
            .map_err(|e| ToolError::Other(to.scrub(&e)))?;
        copied.insert(table.clone(), rows);
    }
    // The contacts arrived around the store, which counts the ones it inserts itself.
    posthorn_postgres::contact_counts::rebuild(&mut tx)
        .await
        .map_err(|e| pg_error("contact counts", &e))?;
    // Every row arrived: the counts on both sides agree before anything is committed. (The
    // count is of the SQLite table itself, not of its join: an email whose content were
    // missing would show here rather than be left out silently.)
    for (table, rows) in &copied {
        let sql = format!("SELECT count(*) FROM {}", quote(table));
        let in_sqlite: i64 = QueryBuilder::<Sqlite>::new(sql.clone())
            .build_query_scalar()
            .fetch_one(&mut *snapshot)
            .await
            .map_err(sqlite_error)?;
        let in_pg: i64 = QueryBuilder::<Postgres>::new(sql)
            .build_query_scalar()
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| pg_error("count", &e))?;
        if in_sqlite != in_pg || u64::try_from(in_pg).ok() != Some(*rows) {
            return Err(ToolError::Other(format!(
                "table `{table}`: {in_sqlite} rows in SQLite but {in_pg} in PostgreSQL after \
                 the copy; nothing was committed"
            )));
        }
    }
    tx.commit().await.map_err(|e| pg_error("commit", &e))?;
    snapshot.rollback().await.map_err(sqlite_error)?;
    let _ = sqlite.close().await;
    // Back to the pool before it closes (closing waits for every connection).
    drop(pg);
    pg_store.close().await;
    Ok(copied)
}

fn sqlite_error(e: sqlx::Error) -> ToolError {
    ToolError::Other(format!("SQLite: {e}"))
}

/// A quoted SQL identifier (names come from the schemas; quoting keeps them names).
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A table's columns: name to declared type (SQLite) or `information_schema` data type
/// and whether it has a default (PostgreSQL).
type Schema<C> = BTreeMap<String, BTreeMap<String, C>>;

/// A PostgreSQL column: its data type and whether it fills itself (a default, an identity
/// or a generated column).
#[derive(Debug, Clone)]
struct PgColumn {
    data_type: String,
    has_default: bool,
}

async fn sqlite_schema(conn: &mut SqliteConnection) -> Result<Schema<String>, ToolError> {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         ORDER BY name",
    )
    .fetch_all(&mut *conn)
    .await
    .map_err(sqlite_error)?;
    let mut schema = Schema::new();
    for table in tables {
        if SKIPPED_TABLES.contains(&table.as_str()) {
            continue;
        }
        let columns: Vec<(String, String)> =
            sqlx::query_as("SELECT name, type FROM pragma_table_info(?) ORDER BY cid")
                .bind(&table)
                .fetch_all(&mut *conn)
                .await
                .map_err(sqlite_error)?;
        schema.insert(table, columns.into_iter().collect());
    }
    // A part's columns are its table's, read through the join of `sqlite_source`.
    for (part, table) in SPLIT_TABLES {
        if let Some(columns) = schema.remove(*part) {
            let whole = schema.entry((*table).to_string()).or_default();
            for (name, declared) in columns {
                if name != "workspace_id" && name != "id" {
                    whole.insert(name, declared);
                }
            }
        }
    }
    Ok(schema)
}

/// What to read `table`'s rows from in SQLite: the table, or the table joined with the part
/// SQLite keeps apart ([`SPLIT_TABLES`]).
fn sqlite_source(table: &str) -> String {
    match SPLIT_TABLES.iter().find(|(_, whole)| *whole == table) {
        Some((part, _)) => format!(
            "{} JOIN {} USING (workspace_id, id)",
            quote(table),
            quote(part)
        ),
        None => quote(table),
    }
}

async fn pg_schema(conn: &mut PgConnection) -> Result<Schema<PgColumn>, sqlx::Error> {
    let rows: Vec<(String, String, String, bool)> = sqlx::query_as(
        "SELECT c.table_name::text, c.column_name::text, c.data_type::text, \
                (c.column_default IS NOT NULL OR c.is_identity = 'YES' \
                 OR c.is_generated <> 'NEVER') \
         FROM information_schema.columns c \
         JOIN information_schema.tables t \
           ON t.table_schema = c.table_schema AND t.table_name = c.table_name \
         WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' \
         ORDER BY c.table_name, c.ordinal_position",
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut schema = Schema::new();
    for (table, column, data_type, has_default) in rows {
        if SKIPPED_TABLES.contains(&table.as_str()) {
            continue;
        }
        schema.entry(table).or_default().insert(
            column,
            PgColumn {
                data_type,
                has_default,
            },
        );
    }
    Ok(schema)
}

/// The columns to copy per table (with their PostgreSQL types), or why the two schemas do
/// not match.
fn plan(
    source: &Schema<String>,
    target: &Schema<PgColumn>,
) -> Result<BTreeMap<String, Vec<(String, String)>>, ToolError> {
    let source_tables: BTreeSet<&String> = source.keys().collect();
    let target_tables: BTreeSet<&String> = target.keys().collect();
    if source_tables != target_tables {
        return Err(ToolError::Other(format!(
            "the SQLite and PostgreSQL schemas differ: tables only in SQLite: {:?}, only in \
             PostgreSQL: {:?} (export with the binary that last ran on the SQLite file)",
            source_tables.difference(&target_tables).collect::<Vec<_>>(),
            target_tables.difference(&source_tables).collect::<Vec<_>>(),
        )));
    }
    let mut plan = BTreeMap::new();
    for (table, columns) in source {
        let pg_columns = &target[table];
        let mut copy = Vec::new();
        for name in columns.keys() {
            let Some(pg) = pg_columns.get(name) else {
                return Err(ToolError::Other(format!(
                    "column `{table}.{name}` of the SQLite store has no place in PostgreSQL"
                )));
            };
            copy.push((name.clone(), pg.data_type.clone()));
        }
        // A PostgreSQL-only column must fill itself (`jobs.created_at` has `now()`).
        if let Some((name, _)) = pg_columns
            .iter()
            .find(|(name, pg)| !columns.contains_key(*name) && !pg.has_default)
        {
            return Err(ToolError::Other(format!(
                "column `{table}.{name}` of PostgreSQL has no value in the SQLite store"
            )));
        }
        plan.insert(table.clone(), copy);
    }
    Ok(plan)
}

/// One value, typed for its PostgreSQL column.
#[derive(Debug)]
enum Cell {
    Text(Option<String>),
    Json(Option<String>),
    Bool(Option<bool>),
    Int8(Option<i64>),
    Int4(Option<i32>),
    Float(Option<f64>),
    Instant(Option<DateTime<Utc>>),
    Bytes(Option<Vec<u8>>),
}

/// Reads column `i` of a SQLite row as the PostgreSQL type `pg_type` wants.
fn cell(row: &SqliteRow, i: usize, pg_type: &str) -> Result<Cell, String> {
    let get_int = || row.try_get::<Option<i64>, _>(i).map_err(|e| e.to_string());
    Ok(match pg_type {
        "text" => Cell::Text(row.try_get(i).map_err(|e| e.to_string())?),
        "jsonb" | "json" => Cell::Json(row.try_get(i).map_err(|e| e.to_string())?),
        "boolean" => Cell::Bool(get_int()?.map(|v| v != 0)),
        "bigint" => Cell::Int8(get_int()?),
        "integer" => Cell::Int4(
            get_int()?
                .map(i32::try_from)
                .transpose()
                .map_err(|e| e.to_string())?,
        ),
        "double precision" => Cell::Float(row.try_get(i).map_err(|e| e.to_string())?),
        "timestamp with time zone" => Cell::Instant(
            get_int()?
                .map(|micros| {
                    DateTime::<Utc>::from_timestamp_micros(micros)
                        .ok_or_else(|| format!("{micros} µs is out of range"))
                })
                .transpose()?,
        ),
        "bytea" => Cell::Bytes(row.try_get(i).map_err(|e| e.to_string())?),
        other => return Err(format!("PostgreSQL type `{other}` is not handled")),
    })
}

/// Copies every row of `table` (the `columns`, with their PostgreSQL types); returns the
/// number of rows.
async fn copy_table(
    sqlite: &mut SqliteConnection,
    pg: &mut PgConnection,
    table: &str,
    columns: &[(String, String)],
) -> Result<u64, String> {
    let names: Vec<String> = columns.iter().map(|(name, _)| quote(name)).collect();
    let select = format!("SELECT {} FROM {}", names.join(", "), sqlite_source(table));
    let insert = format!("INSERT INTO {} ({}) ", quote(table), names.join(", "));
    let mut builder = QueryBuilder::<Sqlite>::new(select);
    let mut rows = builder.build().fetch(&mut *sqlite);
    let mut chunk: Vec<Vec<Cell>> = Vec::with_capacity(CHUNK);
    let mut copied = 0u64;
    loop {
        let next = rows
            .try_next()
            .await
            .map_err(|e| format!("reading `{table}` from SQLite: {e}"))?;
        if let Some(row) = &next {
            let mut cells = Vec::with_capacity(columns.len());
            for (i, (name, pg_type)) in columns.iter().enumerate() {
                cells.push(cell(row, i, pg_type).map_err(|e| format!("`{table}.{name}`: {e}"))?);
            }
            chunk.push(cells);
        }
        if chunk.len() == CHUNK || (next.is_none() && !chunk.is_empty()) {
            copied += chunk.len() as u64;
            insert_chunk(pg, &insert, std::mem::take(&mut chunk))
                .await
                .map_err(|e| format!("writing `{table}` to PostgreSQL: {e}"))?;
        }
        if next.is_none() {
            return Ok(copied);
        }
    }
}

async fn insert_chunk(
    pg: &mut PgConnection,
    insert: &str,
    chunk: Vec<Vec<Cell>>,
) -> Result<(), sqlx::Error> {
    let mut builder = QueryBuilder::<Postgres>::new(insert);
    builder.push_values(chunk, |mut values, row| {
        for cell in row {
            match cell {
                Cell::Text(v) => values.push_bind(v),
                Cell::Json(v) => values.push_bind(v).push_unseparated("::jsonb"),
                Cell::Bool(v) => values.push_bind(v),
                Cell::Int8(v) => values.push_bind(v),
                Cell::Int4(v) => values.push_bind(v),
                Cell::Float(v) => values.push_bind(v),
                Cell::Instant(v) => values.push_bind(v),
                Cell::Bytes(v) => values.push_bind(v),
            };
        }
    });
    builder.build().execute(&mut *pg).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite(tables: &[(&str, &[&str])]) -> Schema<String> {
        tables
            .iter()
            .map(|(t, cols)| {
                let cols = cols.iter().map(|c| (c.to_string(), "TEXT".to_string()));
                (t.to_string(), cols.collect())
            })
            .collect()
    }

    fn pg(tables: &[(&str, &[(&str, bool)])]) -> Schema<PgColumn> {
        tables
            .iter()
            .map(|(t, cols)| {
                let cols = cols.iter().map(|(c, has_default)| {
                    let column = PgColumn {
                        data_type: "text".to_string(),
                        has_default: *has_default,
                    };
                    (c.to_string(), column)
                });
                (t.to_string(), cols.collect())
            })
            .collect()
    }

    #[test]
    fn every_sqlite_column_is_copied_and_postgres_defaults_fill_the_rest() {
        let plan = plan(
            &sqlite(&[("jobs", &["id", "payload"])]),
            &pg(&[(
                "jobs",
                &[("id", false), ("payload", false), ("created_at", true)],
            )]),
        )
        .expect("a plan");
        let columns: Vec<&str> = plan["jobs"].iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(columns, ["id", "payload"]);
    }

    #[test]
    fn schemas_that_differ_stop_the_export() {
        let only_sqlite = plan(
            &sqlite(&[("jobs", &["id"]), ("extra", &["id"])]),
            &pg(&[("jobs", &[("id", false)])]),
        );
        assert!(matches!(only_sqlite, Err(ToolError::Other(m)) if m.contains("extra")));
        let column_lost = plan(
            &sqlite(&[("jobs", &["id", "claims"])]),
            &pg(&[("jobs", &[("id", false)])]),
        );
        assert!(matches!(column_lost, Err(ToolError::Other(m)) if m.contains("jobs.claims")));
        let column_unfilled = plan(
            &sqlite(&[("jobs", &["id"])]),
            &pg(&[("jobs", &[("id", false), ("claims", false)])]),
        );
        assert!(matches!(column_unfilled, Err(ToolError::Other(m)) if m.contains("jobs.claims")));
    }
}
