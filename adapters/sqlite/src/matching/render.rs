//! [`Pred`] as SQLite SQL: fixed text from this file, every value bound.
//!
//! Data paths are JSON paths of quoted labels (`$."a"."b"`), bound as parameters: a label
//! never indexes into an array, and a key holding `"` or `\` is written with JSON escapes,
//! which SQLite decodes before comparing labels.

use std::fmt::Write as _;

use posthorn_core::segment::TIMESTAMP_PATTERN;
use sqlx::{QueryBuilder, Sqlite};

use super::{Cmp, Pred, TimeColumn};
use crate::records::case_insensitive_substring;
use crate::rows::micros;

impl Cmp {
    fn sql(self) -> &'static str {
        match self {
            Cmp::Eq => " = ",
            Cmp::Gt => " > ",
            Cmp::Lt => " < ",
            Cmp::Ge => " >= ",
            Cmp::Le => " <= ",
        }
    }
}

/// `path` as a SQLite JSON path of quoted object labels.
pub(crate) fn json_path(path: &[String]) -> String {
    let mut out = String::from("$");
    for key in path {
        out.push_str(".\"");
        for c in key.chars() {
            match c {
                // A quote would end the label (SQLite scans to the next `"`): escape it.
                '"' => out.push_str("\\u0022"),
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => {
                    // Writing to a String cannot fail.
                    let _ = write!(out, "\\u{:04x}", u32::from(c));
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
    out
}

/// `json_type(c.data, path)`: `NULL` when the path is missing.
fn push_type(sql: &mut QueryBuilder<Sqlite>, path: &[String]) {
    sql.push("json_type(c.data, ")
        .push_bind(json_path(path))
        .push(")");
}

/// `json_extract(c.data, path)`: the SQL value at the path.
fn push_value(sql: &mut QueryBuilder<Sqlite>, path: &[String]) {
    sql.push("json_extract(c.data, ")
        .push_bind(json_path(path))
        .push(")");
}

/// `EXISTS` a top-level element of the array at `path` satisfying `element` (on `j`).
fn push_element(
    sql: &mut QueryBuilder<Sqlite>,
    path: &[String],
    element: impl FnOnce(&mut QueryBuilder<Sqlite>),
) {
    // `json_each` of an object or scalar yields rows too: only an array counts.
    sql.push("(COALESCE(");
    push_type(sql, path);
    sql.push(" = 'array', 0) AND EXISTS (SELECT 1 FROM json_each(c.data, ")
        .push_bind(json_path(path))
        .push(") AS j WHERE ");
    element(sql);
    sql.push("))");
}

/// The instant a timestamp string names, in microseconds since the epoch, or `NULL` when
/// `text` (an SQL expression, evaluated several times) is not one: exactly the strings
/// `posthorn_core::segment::parse_timestamp` accepts. The shape is checked with the
/// core's `TIMESTAMP_PATTERN` (the same regex engine), the date by a round trip through
/// `date()` (which moves `02-30` to March) and a year above 0; the instant is then integer
/// arithmetic on the parts, independent of any time zone setting.
pub(crate) fn push_timestamp(sql: &mut QueryBuilder<Sqlite>, text: &str) {
    let t = text;
    sql.push(format_args!("(CASE WHEN {t} REGEXP "))
        .push_bind(TIMESTAMP_PATTERN)
        .push(format_args!(
            " AND substr({t}, 1, 4) <> '0000' \
             AND date(substr({t}, 1, 10)) = substr({t}, 1, 10) \
             THEN (unixepoch(substr({t}, 1, 10) || ' ' || substr({t}, 12, 8)) \
                   - CASE WHEN substr({t}, -1) IN ('Z', 'z') THEN 0 \
                          ELSE (CASE WHEN substr({t}, -6, 1) = '-' THEN -1 ELSE 1 END) \
                               * (CAST(substr({t}, -5, 2) AS INTEGER) * 3600 \
                                  + CAST(substr({t}, -2, 2) AS INTEGER) * 60) END) \
                  * 1000000 \
                  + CASE WHEN substr({t}, 20, 1) = '.' \
                         THEN CAST(substr(substr({t}, 21, length({t}) - 20 \
                                  - CASE WHEN substr({t}, -1) IN ('Z', 'z') THEN 1 ELSE 6 END) \
                                  || '00000', 1, 6) AS INTEGER) \
                         ELSE 0 END \
             END)"
        ));
}

impl Pred {
    /// Appends this predicate as a parenthesised SQL boolean (`1` or `0`).
    pub(crate) fn render(&self, sql: &mut QueryBuilder<Sqlite>) {
        match self {
            Pred::Const(true) => {
                sql.push("1");
            }
            Pred::Const(false) => {
                sql.push("0");
            }
            Pred::Not(inner) => {
                sql.push("(NOT ");
                inner.render(sql);
                sql.push(")");
            }
            Pred::And(items) | Pred::Or(items) => {
                let joiner = if matches!(self, Pred::And(_)) {
                    " AND "
                } else {
                    " OR "
                };
                sql.push("(");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        sql.push(joiner);
                    }
                    item.render(sql);
                }
                sql.push(")");
            }
            Pred::EmailEquals(address) => {
                sql.push("(c.email = ").push_bind(address.clone()).push(")");
            }
            Pred::EmailContains(needle) => {
                // Stored emails are lower case and the needle is folded: a byte-exact
                // substring test (`instr` of an empty needle is 1, as `contains("")`).
                sql.push("(instr(c.email, ")
                    .push_bind(needle.clone())
                    .push(") > 0)");
            }
            Pred::Subscribed(value) => {
                sql.push("(c.subscribed = ").push_bind(*value).push(")");
            }
            Pred::ContactTime(column, cmp, at) => {
                sql.push(match column {
                    TimeColumn::CreatedAt => "(c.created_at",
                    TimeColumn::UpdatedAt => "(c.updated_at",
                });
                sql.push(cmp.sql()).push_bind(micros(*at)).push(")");
            }
            Pred::DataExists(path) => {
                sql.push("COALESCE(");
                push_type(sql, path);
                sql.push(" <> 'null', 0)");
            }
            Pred::DataText(path, text) => {
                sql.push("COALESCE(");
                push_type(sql, path);
                sql.push(" = 'text' AND ");
                push_value(sql, path);
                sql.push(" = ").push_bind(text.clone()).push(", 0)");
            }
            Pred::DataBool(path, value) => {
                sql.push("COALESCE(");
                push_type(sql, path);
                sql.push(if *value {
                    " = 'true', 0)"
                } else {
                    " = 'false', 0)"
                });
            }
            Pred::DataNumber(path, cmp, value) => {
                sql.push("COALESCE(");
                push_type(sql, path);
                sql.push(" IN ('integer', 'real') AND CAST(");
                push_value(sql, path);
                sql.push(" AS REAL)")
                    .push(cmp.sql())
                    .push_bind(*value)
                    .push(", 0)");
            }
            Pred::DataTime(path, cmp, at) => {
                // The string is read once into `t`; no row (not a string) gives NULL.
                sql.push("COALESCE((SELECT ");
                push_timestamp(sql, "t");
                sql.push(" FROM (SELECT ");
                push_value(sql, path);
                sql.push(" AS t WHERE ");
                push_type(sql, path);
                sql.push(" = 'text'))")
                    .push(cmp.sql())
                    .push_bind(micros(*at))
                    .push(", 0)");
            }
            Pred::DataSubstring(path, needle) => {
                sql.push("COALESCE(");
                push_type(sql, path);
                sql.push(" = 'text' AND ");
                push_value(sql, path);
                sql.push(" REGEXP ")
                    .push_bind(case_insensitive_substring(needle))
                    .push(", 0)");
            }
            Pred::DataElementText(path, text) => {
                let text = text.clone();
                push_element(sql, path, |sql| {
                    sql.push("j.type = 'text' AND j.value = ").push_bind(text);
                });
            }
            Pred::DataElementBool(path, value) => {
                let kind = if *value {
                    "j.type = 'true'"
                } else {
                    "j.type = 'false'"
                };
                push_element(sql, path, |sql| {
                    sql.push(kind);
                });
            }
            Pred::DataElementNumber(path, value) => {
                let value = *value;
                push_element(sql, path, |sql| {
                    sql.push("j.type IN ('integer', 'real') AND CAST(j.value AS REAL) = ")
                        .push_bind(value);
                });
            }
            Pred::Occurred(names, window) => {
                sql.push(
                    "EXISTS (SELECT 1 FROM events e WHERE e.workspace_id = c.workspace_id \
                     AND e.contact_id = c.id AND e.name IN (",
                );
                for (i, name) in names.iter().enumerate() {
                    if i > 0 {
                        sql.push(", ");
                    }
                    sql.push_bind(name.clone());
                }
                sql.push(")");
                if let Some((cmp, at)) = window {
                    sql.push(" AND e.created_at")
                        .push(cmp.sql())
                        .push_bind(micros(*at));
                }
                sql.push(")");
            }
            Pred::Member(segment_id) => {
                sql.push(
                    "EXISTS (SELECT 1 FROM segment_members m \
                     WHERE m.workspace_id = c.workspace_id AND m.segment_id = ",
                )
                .push_bind(segment_id.clone())
                .push(" AND m.contact_id = c.id)");
            }
        }
    }
}
