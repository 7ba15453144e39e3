//! `GET /stats` (secret key): the workspace's sending reputation at a glance.

use crate::http::answer::JsonAnswer;
use axum::extract::{Extension, State};
use posthorn_core::app::Caller;
use posthorn_core::model::EmailStats;
use serde_json::{json, Map, Value};
use std::sync::Arc;

use crate::http::error::{ApiResult, ErrorResponse};
use crate::http::AppState;

/// Sending statistics
///
/// For the last 24 hours, 7 days and 30 days: the emails sent in the window and how many
/// of them were delivered, opened, clicked, bounced (permanently) and complained about,
/// each with its rate (count / sent, 0 to 1, four decimals; 0 when nothing was sent).
#[utoipa::path(
    get, path = "/stats", operation_id = "getStats", tag = "Stats",
    responses(
        (status = 200, description = "`{last24h, last7d, last30d}`, each `{sent, delivered, opened, clicked, bounced, complained, deliveryRate, openRate, clickRate, bounceRate, complaintRate}`", body = Object),
        (status = 403, description = "A public key (`FORBIDDEN`)", body = ErrorResponse),
    ),
)]
pub async fn stats(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
) -> ApiResult<JsonAnswer<Value>> {
    let windows = state.engine.workspace_stats(&caller).await?;
    let mut out = Map::new();
    for (name, stats) in windows {
        out.insert(name.to_owned(), window_json(&stats));
    }
    Ok(JsonAnswer(Value::Object(out)))
}

fn window_json(s: &EmailStats) -> Value {
    let rate = |n: u64| {
        if s.sent == 0 {
            0.0
        } else {
            (n as f64 / s.sent as f64 * 10_000.0).round() / 10_000.0
        }
    };
    json!({
        "sent": s.sent,
        "delivered": s.delivered,
        "opened": s.opened,
        "clicked": s.clicked,
        "bounced": s.bounced,
        "complained": s.complained,
        "deliveryRate": rate(s.delivered),
        "openRate": rate(s.opened),
        "clickRate": rate(s.clicked),
        "bounceRate": rate(s.bounced),
        "complaintRate": rate(s.complained),
    })
}
