//! Operator (`/admin`) and key-set bodies into typed commands.

use posthorn_core::app::keys::CreateKeySet;
use posthorn_core::app::workspaces::{AddDomain, CreateWorkspace, WorkspacePatch};
use posthorn_core::app::Patch;
use posthorn_core::model::parse_domain_name;
use posthorn_core::validate::{type_name, Checker};
use posthorn_core::Result;
use serde_json::{Map, Value};

/// The limits of a create or patch body: `(activeContactLimit, rateLimitPerMinute,
/// sendRatePerSecond)`.
fn read_limits(
    c: &mut Checker,
    obj: &Map<String, Value>,
) -> (Patch<u64>, Option<u32>, Option<f64>) {
    let active = match obj.get("activeContactLimit") {
        None => Patch::Keep,
        Some(Value::Null) => Patch::Clear,
        Some(_) => c
            .integer(obj, "activeContactLimit", "", false, 0, i64::MAX)
            .map_or(Patch::Keep, |n| Patch::Set(n as u64)),
    };
    let rate = c
        .integer(obj, "rateLimitPerMinute", "", false, 1, 10_000_000)
        .map(|n| n as u32);
    let send = c.positive_number(obj, "sendRatePerSecond", "", 100_000.0);
    (active, rate, send)
}

/// `POST /admin/workspaces {name, activeContactLimit?, rateLimitPerMinute?, sendRatePerSecond?}`.
pub fn create_workspace(body: &Value) -> Result<CreateWorkspace> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let name = c.line(obj, "name", "", true, 255).map(str::to_string);
    let (active, rate, send) = read_limits(&mut c, obj);
    c.finish()?;
    Ok(CreateWorkspace {
        name: name.unwrap_or_default(),
        active_contact_limit: match active {
            Patch::Set(n) => Some(n),
            Patch::Keep | Patch::Clear => None,
        },
        rate_limit_per_minute: rate,
        send_rate_per_second: send,
    })
}

/// `PATCH /admin/workspaces/{id} {name?, disabled?, activeContactLimit?, ...}`.
pub fn patch_workspace(body: &Value) -> Result<WorkspacePatch> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let name = c.line(obj, "name", "", false, 255).map(str::to_string);
    let disabled = c.boolean(obj, "disabled", "", false);
    let (active, rate, send) = read_limits(&mut c, obj);
    c.finish()?;
    Ok(WorkspacePatch {
        name,
        disabled,
        active_contact_limit: active,
        rate_limit_per_minute: rate,
        send_rate_per_second: send,
    })
}

/// `POST /admin/workspaces/{id}/domains {domain, verified?, inboundEnabled?}`.
pub fn add_domain(body: &Value) -> Result<AddDomain> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let domain = c.string(obj, "domain", "", true).and_then(|raw| {
        let parsed = parse_domain_name(raw);
        if parsed.is_none() {
            c.fail(
                "domain",
                "invalid_domain",
                format!("'{raw}' is not a domain name"),
            );
        }
        parsed
    });
    let verified = c.boolean(obj, "verified", "", false).unwrap_or(false);
    let inbound_enabled = c.boolean(obj, "inboundEnabled", "", false).unwrap_or(false);
    c.finish()?;
    Ok(AddDomain {
        domain: domain.unwrap_or_default(),
        verified,
        inbound_enabled,
    })
}

/// `POST /keys {name?, domains?}` and `POST /admin/workspaces/{id}/key-sets {domains?}`.
pub fn create_key_set(body: &Value) -> Result<CreateKeySet> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let name = c.line(obj, "name", "", false, 255).map(str::to_string);
    let domains = read_domains(&mut c, obj);
    c.finish()?;
    Ok(CreateKeySet { name, domains })
}

/// Reads an optional `domains` array of domain names.
fn read_domains(c: &mut Checker, obj: &Map<String, Value>) -> Vec<String> {
    let Some(value) = c.value(obj, "domains", "", false) else {
        return Vec::new();
    };
    let Value::Array(items) = value else {
        c.fail(
            "domains",
            "invalid_type",
            format!("domains must be an array, got {}", type_name(value)),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item.as_str().and_then(parse_domain_name) {
            Some(d) if !out.contains(&d) => out.push(d),
            Some(_) => {}
            None => c.fail(
                format!("domains.{i}"),
                "invalid_domain",
                "not a domain name",
            ),
        }
    }
    out
}
