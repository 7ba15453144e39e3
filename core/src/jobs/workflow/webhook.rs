//! WEBHOOK: one signed attempt per job run, each recorded on the step's record; retried per
//! the engine's `RetrySchedule` (a longer `Retry-After` wins), failed at once on other 4xx.

use std::time::Instant;

use serde_json::{json, Value};

use super::settle::Decision;
use super::step::StepContext;
use crate::app::workflows::step_job;
use crate::app::StepError;
use crate::model::Contact;
use crate::ports::{
    classify_attempt, AttemptVerdict, ChangeSet, NewJob, WebhookError, WebhookResponse, Write,
};
use crate::workflow::{
    build_request, default_body, variables, webhook_id, StepAction, StepRunStatus, WebhookAttempt,
    WebhookConfig,
};
use crate::Engine;

/// A webhook attempt that is due: the step's context at the version read.
pub(super) struct WebhookCall {
    ctx: StepContext,
    contact: Contact,
}

impl WebhookCall {
    /// The call for `ctx`'s step, to `contact`'s data.
    pub(super) fn new(ctx: StepContext, contact: Contact) -> Self {
        Self { ctx, contact }
    }
}

/// What one attempt came to.
struct Attempted {
    record: WebhookAttempt,
    verdict: AttemptVerdict,
    retry_after: Option<std::time::Duration>,
    output: Value,
    failure: String,
}

impl Engine {
    /// Makes one attempt of the call and records it (with its consequence).
    pub(super) async fn webhook_attempt(&self, call: WebhookCall) -> crate::Result<()> {
        let WebhookCall { ctx, contact } = call;
        let attempted = self.attempt(&ctx, &contact).await?;
        let ws = ctx.execution.workspace_id.clone();
        let execution_id = ctx.execution.id.clone();
        let step_id = ctx.step.id.clone();
        self.on_conflict_retry(|| self.record_attempt(&ws, &execution_id, &step_id, &attempted))
            .await
    }

    /// Renders, signs and sends the request once.
    async fn attempt(&self, ctx: &StepContext, contact: &Contact) -> crate::Result<Attempted> {
        let now = self.clock.now();
        let StepAction::Webhook {
            url,
            method,
            headers,
            body,
        } = &ctx.step.action
        else {
            return Err(crate::Error::Internal("not a webhook step".into()));
        };
        let vars = variables(&ctx.workflow, &ctx.execution, contact);
        let config = WebhookConfig {
            url,
            method: method.as_deref(),
            headers,
            body: body.as_ref(),
        };
        let built = build_request(config, &vars, || {
            default_body(&ctx.workflow, &ctx.execution, contact)
        });
        let mut request = match built {
            Ok(request) => request,
            Err(e) => {
                return Ok(Attempted {
                    record: WebhookAttempt {
                        at: now,
                        status_code: None,
                        latency_ms: 0,
                        error: Some(e.to_string()),
                    },
                    verdict: AttemptVerdict::Fail,
                    retry_after: None,
                    output: Value::Null,
                    failure: e.to_string(),
                })
            }
        };
        let keys = self.signing_keys(&ctx.execution.workspace_id).await?;
        let id = webhook_id(&ctx.execution.id, &ctx.step.id);
        for (name, value) in keys.headers(&id, &request.body, now) {
            request.headers.push((name.to_string(), value));
        }
        let started = Instant::now();
        let result = self.webhooks.deliver(&request).await;
        let verdict = classify_attempt(&result);
        let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(match result {
            Ok(response) => from_response(now, &response, verdict),
            Err(e) => from_error(now, &e, elapsed, verdict),
        })
    }

    /// Records an attempt on the step and decides what follows.
    async fn record_attempt(
        &self,
        ws: &crate::model::WorkspaceId,
        execution_id: &crate::model::ExecutionId,
        step_id: &crate::model::StepId,
        attempted: &Attempted,
    ) -> Result<(), StepError> {
        let now = self.clock.now();
        let Some(mut run) = self.store.step_run(ws, execution_id, step_id).await? else {
            return Ok(());
        };
        run.attempts.push(attempted.record.clone());
        let loaded = self.step_context(ws, execution_id, step_id).await?;
        let ctx = match loaded {
            Some((ctx, _)) if run.status == StepRunStatus::Running => ctx,
            _ => {
                // Cancelled (or otherwise ended) during the attempt: keep the attempt only.
                let mut changes = ChangeSet::new();
                changes.push(Write::UpdateStepRun(run));
                self.store.commit(changes).await?;
                return Ok(());
            }
        };
        let decision = match attempted.verdict {
            AttemptVerdict::Delivered => Decision::Complete {
                output: attempted.output.clone(),
                taken: None,
                email_id: None,
            },
            AttemptVerdict::Fail => Decision::Fail(attempted.failure.clone()),
            AttemptVerdict::Retry => {
                let made = u32::try_from(run.attempts.len()).unwrap_or(u32::MAX);
                let delay = self.settings.webhook_retry.next_delay(
                    made,
                    attempted.retry_after,
                    &mut rand::thread_rng(),
                );
                match delay {
                    Some(delay) => {
                        let at = now
                            + chrono::Duration::from_std(delay)
                                .unwrap_or(chrono::Duration::days(1));
                        let mut execution = ctx.execution.clone();
                        execution.updated_at = now;
                        let mut changes = ChangeSet::new();
                        changes.push(Write::UpdateStepRun(run));
                        // Moves the version, so a cancel made meanwhile conflicts.
                        changes.push(Write::UpdateExecution(execution.clone()));
                        changes.push(Write::EnqueueJob(NewJob::at(
                            &*self.clock,
                            step_job(&execution, step_id),
                            at,
                        )));
                        self.store.commit(changes).await?;
                        return Ok(());
                    }
                    None => Decision::Fail(format!(
                        "gave up after {made} attempts; last: {}",
                        attempted.failure
                    )),
                }
            }
        };
        self.settle_decision(ctx, Some(run), decision, ChangeSet::new(), now)
            .await
    }
}

fn from_response(
    at: chrono::DateTime<chrono::Utc>,
    response: &WebhookResponse,
    verdict: AttemptVerdict,
) -> Attempted {
    let failure = match response.status {
        300..=399 => format!(
            "HTTP {} (redirects are not followed{})",
            response.status,
            response
                .location
                .as_deref()
                .map(|l| format!("; Location: {l}"))
                .unwrap_or_default()
        ),
        s => format!("HTTP {s}"),
    };
    let body = serde_json::from_str::<Value>(&response.body_excerpt)
        .unwrap_or_else(|_| Value::String(response.body_excerpt.clone()));
    Attempted {
        record: WebhookAttempt {
            at,
            status_code: Some(response.status),
            latency_ms: u64::try_from(response.latency.as_millis()).unwrap_or(u64::MAX),
            error: (verdict != AttemptVerdict::Delivered).then(|| failure.clone()),
        },
        verdict,
        retry_after: response.retry_after,
        output: json!({ "statusCode": response.status, "body": body }),
        failure,
    }
}

fn from_error(
    at: chrono::DateTime<chrono::Utc>,
    error: &WebhookError,
    latency_ms: u64,
    verdict: AttemptVerdict,
) -> Attempted {
    Attempted {
        record: WebhookAttempt {
            at,
            status_code: None,
            latency_ms,
            error: Some(error.to_string()),
        },
        verdict,
        retry_after: None,
        output: Value::Null,
        failure: error.to_string(),
    }
}
