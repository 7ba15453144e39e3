//! `/contacts` bodies and query strings into typed commands.

use std::collections::HashMap;

use posthorn_core::app::contacts::{
    decode_cursor, invalid_cursor, ContactPatch, ListContacts, UpsertContact, MAX_CONTACT_PAGE,
};
use posthorn_core::app::Patch;
use posthorn_core::validate::Checker;
use posthorn_core::{Error, Result};
use serde_json::Value;

/// `POST /contacts {email, subscribed?, data?}`.
pub fn upsert(body: &Value) -> Result<UpsertContact> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let email = c.email(obj, "email", "", true);
    let subscribed = c.boolean(obj, "subscribed", "", false);
    let data = c.object(obj, "data", "", false).cloned();
    c.finish()?;
    Ok(UpsertContact {
        email: email.ok_or_else(|| Error::Internal("email checked above".into()))?,
        subscribed,
        data,
    })
}

/// `PATCH /contacts/{id} {subscribed?, data?: object|null, email?}`.
pub fn patch(body: &Value) -> Result<ContactPatch> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let subscribed = c.boolean(obj, "subscribed", "", false);
    let clear_data = matches!(obj.get("data"), Some(Value::Null));
    let data = c.object(obj, "data", "", false).cloned();
    let email = c.email(obj, "email", "", false);
    c.finish()?;
    let data = match (clear_data, data) {
        (true, _) => Patch::Clear,
        (false, Some(data)) => Patch::Set(data),
        (false, None) => Patch::Keep,
    };
    Ok(ContactPatch {
        subscribed,
        data,
        email,
    })
}

/// `GET /contacts?limit&cursor&subscribed&search` (`email` is an alias of `search`).
pub fn list(query: &HashMap<String, String>) -> Result<ListContacts> {
    let mut c = Checker::new();
    let limit = c.query_int(query, "limit", 1, MAX_CONTACT_PAGE as i64, 20) as usize;
    let subscribed = c.query_bool(query, "subscribed");
    let cursor = query
        .get("cursor")
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    if cursor
        .as_deref()
        .is_some_and(|raw| decode_cursor(raw).is_none())
    {
        if let Error::Validation(errors) = invalid_cursor() {
            for e in errors {
                c.fail(e.field, &e.code, e.message);
            }
        }
    }
    let search = query.get("search").or_else(|| query.get("email")).cloned();
    c.finish()?;
    Ok(ListContacts {
        limit,
        subscribed,
        search,
        cursor,
    })
}
