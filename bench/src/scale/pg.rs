//! PostgreSQL helpers: `COPY` loading, `ANALYZE`, table sizes, and `EXPLAIN ANALYZE` of the
//! queries the adapter builds (reproduced here statement for statement from
//! `adapters/postgres/src/{matching,jobs}.rs`, with the same parameters).

use posthorn_core::ports::{Clock, SystemClock};
use std::fmt::Write as _;
use std::time::Instant;

use chrono::{DateTime, SecondsFormat, Utc};
use posthorn_core::jobs::CampaignMessage;
use posthorn_postgres::PgStore;
use serde_json::Value;
use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::types::Json;
use sqlx::{AssertSqlSafe, Postgres, Row};

use crate::data::Generator;
use crate::{BoxError, Loaded};

/// Bytes buffered before each `COPY` send.
const COPY_CHUNK: usize = 4 << 20;

/// A value in `COPY` text format: backslash, tab, newline and carriage return escaped.
fn copy_text(out: &mut String, raw: &str) {
    for c in raw.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}

fn time(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Loads the generated contacts and events with `COPY ... FROM STDIN` (text format),
/// bypassing the `Store` port; the rows are exactly what `InsertContact` and `AppendEvent`
/// would write.
pub async fn copy_load(pg: &PgStore, generator: Generator) -> Result<Loaded, BoxError> {
    let mut loaded = Loaded::default();
    let mut conn = pg.pool().acquire().await?;
    let mut events = String::new();
    {
        let mut copy = conn
            .copy_in_raw(
                "COPY contacts (workspace_id, id, email, subscribed, data, status, expires_at, \
                 created_at, updated_at, version) FROM STDIN",
            )
            .await?;
        let mut buf = String::with_capacity(COPY_CHUNK + 4096);
        for generated in generator {
            let c = &generated.contact;
            loaded.contacts += 1;
            loaded.subscribed += usize::from(c.subscribed);
            let data = serde_json::to_string(&c.data)?;
            for (i, field) in [
                c.workspace_id.as_str(),
                c.id.as_str(),
                c.email.as_str(),
                if c.subscribed { "t" } else { "f" },
                data.as_str(),
                "ACTIVE",
            ]
            .iter()
            .enumerate()
            {
                if i > 0 {
                    buf.push('\t');
                }
                copy_text(&mut buf, field);
            }
            let _ = writeln!(
                buf,
                "\t\\N\t{}\t{}\t0",
                time(&c.created_at),
                time(&c.updated_at)
            );
            for e in &generated.events {
                loaded.events += 1;
                for field in [e.workspace_id.as_str(), e.id.as_str(), &e.name] {
                    copy_text(&mut events, field);
                    events.push('\t');
                }
                copy_text(&mut events, &serde_json::to_string(&e.data)?);
                events.push('\t');
                copy_text(
                    &mut events,
                    e.contact_id.as_ref().map_or("", |id| id.as_str()),
                );
                let _ = writeln!(events, "\t\\N\t{}", time(&e.created_at));
            }
            if buf.len() >= COPY_CHUNK {
                copy.send(buf.as_bytes()).await?;
                buf.clear();
            }
        }
        copy.send(buf.as_bytes()).await?;
        copy.finish().await?;
    }
    let mut copy = conn
        .copy_in_raw(
            "COPY events (workspace_id, id, name, data, contact_id, email_id, created_at) \
             FROM STDIN",
        )
        .await?;
    for chunk in events.as_bytes().chunks(COPY_CHUNK) {
        copy.send(chunk).await?;
    }
    copy.finish().await?;
    // COPY went around the store, which counts the contacts it inserts itself.
    posthorn_postgres::contact_counts::rebuild(&mut conn).await?;
    Ok(loaded)
}

/// `ANALYZE` of the whole database (what autovacuum would do after a bulk load).
pub async fn analyze(pg: &PgStore) -> Result<(), BoxError> {
    sqlx::query("ANALYZE").execute(pg.pool()).await?;
    Ok(())
}

/// Total size (heap, indexes, TOAST) of the tables the benchmark fills.
pub async fn sizes(pg: &PgStore) -> Result<String, BoxError> {
    let rows = sqlx::query(
        "SELECT relname::text AS name, pg_size_pretty(pg_total_relation_size(oid)) AS size, \
         reltuples::bigint AS est_rows FROM pg_class \
         WHERE relname IN ('contacts', 'events', 'emails', 'jobs') AND relkind = 'r' \
         ORDER BY relname",
    )
    .fetch_all(pg.pool())
    .await?;
    let mut parts = Vec::new();
    for row in rows {
        let name: String = row.try_get("name")?;
        let size: String = row.try_get("size")?;
        parts.push(format!("{name} {size}"));
    }
    Ok(parts.join(", "))
}

/// A bind parameter of a reproduced query.
#[derive(Debug, Clone)]
pub enum Bind {
    Text(String),
    Json(Value),
    Float(f64),
    Int(i64),
    Time(DateTime<Utc>),
}

fn bind_all<'q>(
    mut query: Query<'q, Postgres, PgArguments>,
    binds: &[Bind],
) -> Query<'q, Postgres, PgArguments> {
    for b in binds {
        query = match b {
            Bind::Text(s) => query.bind(s.clone()),
            Bind::Json(v) => query.bind(Json(v.clone())),
            Bind::Float(f) => query.bind(*f),
            Bind::Int(n) => query.bind(*n),
            Bind::Time(t) => query.bind(*t),
        };
    }
    query
}

/// `EXPLAIN (ANALYZE, BUFFERS)` of `sql` with `binds`, as text.
async fn explain(
    conn: &mut sqlx::PgConnection,
    sql: &str,
    binds: &[Bind],
) -> Result<String, BoxError> {
    let text = format!("EXPLAIN (ANALYZE, BUFFERS) {sql}");
    let rows = bind_all(sqlx::query(AssertSqlSafe(text)), binds)
        .fetch_all(&mut *conn)
        .await?;
    let mut out = format!("{sql}\n\n");
    for row in rows {
        let line: String = row.try_get(0)?;
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

/// The `WHERE` predicate `matching.rs` renders for a condition, with its parameters
/// numbered from `$2` (`$1` is the workspace).
#[derive(Debug, Clone)]
pub struct Predicate {
    pub sql: String,
    pub binds: Vec<Bind>,
}

/// `count_matching`'s statement for `predicate`, explained.
pub async fn explain_count(
    pg: &PgStore,
    workspace_id: &str,
    predicate: &Predicate,
    audience_only: bool,
) -> Result<String, BoxError> {
    let mut sql = String::from("SELECT count(*) FROM contacts c WHERE c.workspace_id = $1");
    if audience_only {
        sql.push_str(" AND c.subscribed AND c.status = 'ACTIVE'");
    }
    sql.push_str(" AND ");
    sql.push_str(&predicate.sql);
    let mut binds = vec![Bind::Text(workspace_id.to_string())];
    binds.extend(predicate.binds.iter().cloned());
    let mut conn = pg.pool().acquire().await?;
    explain(&mut conn, &sql, &binds).await
}

/// One expansion batch of a campaign to ALL, halfway through the audience:
/// `contacts_matching` with `after_id`, `until_id` and `LIMIT` one batch.
pub async fn explain_expansion(pg: &PgStore, workspace_id: &str) -> Result<String, BoxError> {
    let mut conn = pg.pool().acquire().await?;
    let total: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM contacts WHERE workspace_id = $1 AND subscribed AND status = 'ACTIVE'",
    )
    .bind(workspace_id)
    .fetch_one(&mut *conn)
    .await?;
    let after: String = sqlx::query_scalar(
        "SELECT id FROM contacts WHERE workspace_id = $1 AND subscribed AND status = 'ACTIVE' \
         ORDER BY id OFFSET $2 LIMIT 1",
    )
    .bind(workspace_id)
    .bind(total / 2)
    .fetch_one(&mut *conn)
    .await?;
    let until = SystemClock.new_uuid().to_string();
    let sql = "SELECT workspace_id, id, email, subscribed, data, status, expires_at, \
               created_at, updated_at, version FROM contacts c WHERE c.workspace_id = $1 \
               AND c.subscribed AND c.status = 'ACTIVE' AND TRUE AND c.id > $2 \
               AND c.id <= $3 ORDER BY c.id LIMIT $4";
    let binds = [
        Bind::Text(workspace_id.to_string()),
        Bind::Text(after),
        Bind::Text(until),
        Bind::Int(posthorn_core::jobs::EXPANSION_BATCH as i64),
    ];
    explain(&mut conn, sql, &binds).await
}

/// The workers' claim statement (`adapters/postgres/src/jobs.rs`) with every parked
/// delivery job made due, as after an expansion that ran ahead of delivery; in a
/// transaction that is rolled back.
pub async fn explain_claim_backlog(pg: &PgStore) -> Result<String, BoxError> {
    const CLAIM: &str = "WITH due AS ( \
        SELECT id FROM jobs \
        WHERE (state = 'queued' AND run_at <= $1) \
           OR (state = 'running' AND lease_until <= $1) \
        ORDER BY run_at, id \
        LIMIT $3 \
        FOR UPDATE SKIP LOCKED) \
    UPDATE jobs AS j \
    SET state = 'running', lease_token = gen_random_uuid()::text, lease_until = $2 \
    FROM due WHERE j.id = due.id \
    RETURNING j.id, j.payload, j.attempts, j.lease_token, j.run_at";
    let mut tx = pg.pool().begin().await?;
    let begin = Instant::now();
    let due = sqlx::query(
        "UPDATE jobs SET state = 'queued', lease_token = NULL, lease_until = NULL, \
         run_at = now() - interval '1 minute' WHERE payload->>'kind' = 'deliver_email'",
    )
    .execute(&mut *tx)
    .await?
    .rows_affected();
    let made_due = begin.elapsed().as_secs_f64();
    // Planner statistics as a worker would see them once autovacuum has analyzed.
    sqlx::query("ANALYZE jobs").execute(&mut *tx).await?;
    let now = Utc::now();
    let out = explain(
        &mut tx,
        CLAIM,
        &[
            Bind::Time(now),
            Bind::Time(now + chrono::Duration::seconds(60)),
            Bind::Int(16),
        ],
    )
    .await;
    tx.rollback().await?;
    Ok(format!(
        "({due} delivery jobs made due in {made_due:.1} s, rolled back afterwards)\n\n{}",
        out?
    ))
}

/// Splits the cost of one expansion batch: reading the 500 recipients, rendering their
/// emails (`CampaignMessage`, in this process), committing them through `Store::commit` the
/// way `ExpandCampaign` does (500 `EnqueueJob` + 500 `InsertEmail`, written as multi-row
/// `INSERT ... VALUES`), and the same rows written with two `INSERT ... SELECT FROM
/// unnest(...)` statements instead. Each is run 3 times on a fresh copy of the campaign (so
/// that the unique (campaign, contact) index does not refuse the rows); medians.
pub async fn batch_cost(
    pg: &PgStore,
    engine: &posthorn_core::Engine,
    workspace_id: &str,
    campaign_id: &str,
) -> Result<String, BoxError> {
    use posthorn_core::model::{CampaignId, ContactId, WorkspaceId};
    use posthorn_core::ports::{ChangeSet, JobPayload, MatchQuery, NewJob, Write};
    use posthorn_core::segment::Condition;

    let clock = &*engine.clock;
    let workspace_id = &WorkspaceId::from(workspace_id);
    let campaign = engine
        .store
        .campaign(workspace_id, &CampaignId::from(campaign_id))
        .await?
        .ok_or("the campaign vanished")?;
    let mut read = Vec::new();
    let mut render = Vec::new();
    let mut port = Vec::new();
    let mut batched = Vec::new();
    let mut after: Option<ContactId> = None;
    for _ in 0..3 {
        let now = Utc::now();
        let t = Instant::now();
        let contacts = engine
            .store
            .contacts_matching(
                workspace_id,
                &Condition::default(),
                &MatchQuery {
                    after_id: after.clone(),
                    until_id: campaign.audience_until_id.clone(),
                    audience_only: true,
                    limit: posthorn_core::jobs::EXPANSION_BATCH,
                },
                now,
            )
            .await?;
        read.push(t.elapsed());
        after = contacts.last().map(|c| c.id.clone());

        // Through the port, as `ExpandCampaign` commits (without the campaign update).
        let mut copy = campaign.clone();
        copy.id = CampaignId::generate(clock);
        let t = Instant::now();
        let message = CampaignMessage::compile(&copy);
        let emails: Vec<_> = contacts
            .iter()
            .map(|c| message.email_for(clock, &copy, c, now))
            .collect();
        render.push(t.elapsed());
        let mut changes = ChangeSet::new();
        for email in &emails {
            changes.push(Write::EnqueueJob(NewJob::at(
                clock,
                JobPayload::DeliverEmail {
                    workspace_id: workspace_id.clone(),
                    email_id: email.id.clone(),
                },
                now,
            )));
            changes.push(Write::InsertEmail(email.clone()));
        }
        let t = Instant::now();
        engine.store.commit(changes).await?;
        port.push(t.elapsed());

        // The same rows again (another copy of the campaign), in two statements.
        copy.id = CampaignId::generate(clock);
        let emails: Vec<_> = contacts
            .iter()
            .map(|c| message.email_for(clock, &copy, c, now))
            .collect();
        let t = Instant::now();
        insert_batched(pg, &emails, now).await?;
        batched.push(t.elapsed());
    }
    let median = |mut v: Vec<std::time::Duration>| {
        v.sort();
        v[v.len() / 2].as_secs_f64() * 1000.0
    };
    Ok(format!(
        "| step | ms per batch of 500 (median of 3) |\n|---|---:|\n\
         | read the recipients (`contacts_matching`, LIMIT 500) | {:.1} |\n\
         | render 500 emails (`CampaignMessage`: compiled once, MiniJinja per recipient) | {:.1} |\n\
         | `Store::commit` of 500 `EnqueueJob` + 500 `InsertEmail` (multi-row INSERTs) | {:.1} |\n\
         | the same rows with 2 multi-row INSERTs (`unnest`), one transaction | {:.1} |\n",
        median(read),
        median(render),
        median(port),
        median(batched)
    ))
}

/// The emails and their delivery jobs in two statements (what a batched commit could send).
async fn insert_batched(
    pg: &PgStore,
    emails: &[posthorn_core::model::EmailRecord],
    now: DateTime<Utc>,
) -> Result<(), BoxError> {
    let text = |v: &dyn Fn(&posthorn_core::model::EmailRecord) -> String| -> Vec<String> {
        emails.iter().map(v).collect()
    };
    let opt =
        |v: &dyn Fn(&posthorn_core::model::EmailRecord) -> Option<String>| -> Vec<Option<String>> {
            emails.iter().map(v).collect()
        };
    let json = |v: &dyn Fn(&posthorn_core::model::EmailRecord) -> Value| -> Vec<Json<Value>> {
        emails.iter().map(|e| Json(v(e))).collect()
    };
    let enum_text = |v: Value| match v {
        Value::String(s) => s,
        other => other.to_string(),
    };
    let mut tx = pg.pool().begin().await?;
    sqlx::query(
        "INSERT INTO emails (workspace_id, id, contact_id, to_mailbox, from_mailbox, reply_to, \
         subject, html, text, headers, attachments, template_id, campaign_id, source_type, \
         status, message_id, provider_message_id, error, created_at, sent_at, updated_at) \
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::jsonb[], \
         $6::text[], $7::text[], $8::text[], $9::text[], $10::jsonb[], $11::jsonb[], \
         $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], \
         $18::text[], $19::timestamptz[], $20::timestamptz[], $21::timestamptz[])",
    )
    .bind(text(&|e| e.workspace_id.to_string()))
    .bind(text(&|e| e.id.to_string()))
    .bind(text(&|e| e.contact_id.to_string()))
    .bind(json(&|e| serde_json::to_value(&e.to).unwrap_or_default()))
    .bind(json(&|e| serde_json::to_value(&e.from).unwrap_or_default()))
    .bind(opt(&|e| e.reply_to.clone()))
    .bind(text(&|e| e.subject.clone()))
    .bind(text(&|e| e.html.clone()))
    .bind(opt(&|e| e.text.clone()))
    .bind(json(&|e| {
        serde_json::to_value(&e.headers).unwrap_or_default()
    }))
    .bind(json(&|e| {
        serde_json::to_value(&e.attachments).unwrap_or_default()
    }))
    .bind(opt(&|e| e.template_id.as_ref().map(ToString::to_string)))
    .bind(opt(&|e| e.campaign_id.as_ref().map(ToString::to_string)))
    .bind(text(&|e| {
        enum_text(serde_json::to_value(e.source_type).unwrap_or_default())
    }))
    .bind(text(&|e| {
        enum_text(serde_json::to_value(e.status).unwrap_or_default())
    }))
    .bind(text(&|e| e.message_id.clone()))
    .bind(opt(&|e| e.provider_message_id.clone()))
    .bind(opt(&|e| e.error.clone()))
    .bind(emails.iter().map(|e| e.created_at).collect::<Vec<_>>())
    .bind(emails.iter().map(|e| e.sent_at).collect::<Vec<_>>())
    .bind(emails.iter().map(|e| e.updated_at).collect::<Vec<_>>())
    .execute(&mut *tx)
    .await?;
    let ids: Vec<String> = emails
        .iter()
        .map(|_| SystemClock.new_uuid().to_string())
        .collect();
    let payloads: Vec<Json<Value>> = emails
        .iter()
        .map(|e| {
            Json(serde_json::json!({
                "kind": "deliver_email",
                "workspace_id": e.workspace_id,
                "email_id": e.id,
            }))
        })
        .collect();
    sqlx::query(
        "INSERT INTO jobs (id, payload, run_at) \
         SELECT * FROM unnest($1::text[], $2::jsonb[], $3::timestamptz[])",
    )
    .bind(ids)
    .bind(payloads)
    .bind(emails.iter().map(|_| now).collect::<Vec<_>>())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}
