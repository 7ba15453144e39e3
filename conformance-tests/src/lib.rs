//! One suite of port checks that every Posthorn adapter must pass.
//!
//! Each check is a plain `pub async fn` that takes the ports of one fresh, empty adapter
//! instance and panics with a message saying what broke. An adapter runs the whole list
//! with one macro per port in its integration tests:
//!
//! ```ignore
//! async fn make() -> posthorn_conformance::StorePorts { /* a fresh instance */ }
//! posthorn_conformance::store_suite!(make);
//! ```
//!
//! A few checks look below the ports (a job row this version cannot read, the rows left
//! after deletes, a listener that must be subscribed before one commit can wake a worker).
//! They take a [`ProbedStore`], whose probes the adapter provides, and run with
//! [`store_probe_suite!`]. A probe an adapter cannot have is `None`: an explicit
//! capability flag, documented on the field, never a silent skip.
//!
//! The macros need `tokio` (with `macros` and `rt-multi-thread`) among the caller's
//! dev-dependencies.

#![warn(missing_docs)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use posthorn_core::ports::{Jobs, Store};

#[doc(hidden)]
pub use posthorn_core as __core;

pub mod cache;
pub mod fixtures;
pub mod rate_limiter;
pub mod store;
pub mod timestamps;

/// The URL of a test service named by the environment variable `var` (a test database,
/// a test Redis), for suites compiled in only when it was set at build time (see the
/// adapters' `build.rs`). Panics when it is unset now, saying why: under `CI=true` the
/// service is required.
pub fn test_service_url(var: &str) -> String {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => url,
        _ if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("{var} is required when CI=true")
        }
        _ => panic!(
            "{var} was set when these tests were built but is unset now; \
             run `eval \"$(scripts/services.sh start)\"` and rerun"
        ),
    }
}

/// The `Store` and `Jobs` ports of one adapter instance, fresh and empty.
///
/// Both must be backed by the same instance: jobs enqueued through `store.commit` are
/// claimed through `jobs`.
#[derive(Clone)]
pub struct StorePorts {
    /// The store.
    pub store: Arc<dyn Store>,
    /// The job queue fed by the store's commits.
    pub jobs: Arc<dyn Jobs>,
}

impl StorePorts {
    /// Both ports of one adapter instance that implements both.
    pub fn of<S: Store + Jobs + 'static>(instance: Arc<S>) -> Self {
        Self {
            store: instance.clone(),
            jobs: instance,
        }
    }
}

/// An adapter-provided look below the ports: called once per use, returns a future.
pub type Probe<T> = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = T> + Send>> + Send + Sync>;

/// A [`Probe`] that runs `f` on a clone of `state` at each call.
pub fn probe<S, T, F, Fut>(state: S, f: F) -> Probe<T>
where
    S: Clone + Send + Sync + 'static,
    F: Fn(S) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = T> + Send + 'static,
{
    Arc::new(move || Box::pin(f(state.clone())))
}

/// The ports of one fresh, empty adapter instance, with probes of that same instance for
/// the checks that need to see (or do) what the ports cannot.
///
/// Each probe is a capability: `None` says the adapter has no such thing, and the check
/// then asserts what it can through the ports (it says so in its doc comment). The
/// flags say what an adapter cannot do, and the checks assert that it refuses it.
#[derive(Clone)]
pub struct ProbedStore {
    /// The ports.
    pub ports: StorePorts,
    /// Returns once a commit that enqueues a job is sure to wake a worker already waiting
    /// in `wait_for_work` (a PostgreSQL listener has subscribed). `None`: commits are
    /// heard at once (an in-process signal).
    pub commits_heard: Option<Probe<()>>,
    /// Stores a job that is due (one second ago) and whose payload this version cannot
    /// read. `None`: the adapter keeps payloads typed, so none can be unreadable.
    pub plant_unreadable_job: Option<Probe<()>>,
    /// How many segment membership rows are stored, in every workspace. `None`: the
    /// adapter has no rows to count apart from what the ports show.
    pub membership_rows: Option<Probe<u64>>,
    /// Whether strings holding NUL (`\0`) can be stored in contact data. PostgreSQL
    /// cannot store NUL in text or jsonb: there a commit of such data fails.
    pub stores_nul: bool,
}

/// Emits one `#[tokio::test]` per check of a module; used by the suite macros.
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_tests {
    ($module:ident, $make:path; $($check:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                $crate::$module::$check(&$make().await).await;
            }
        )+
    };
}

/// Runs every `Store` + `Jobs` check against `$make`, an `async fn() -> StorePorts` that
/// returns an isolated, empty adapter instance on each call.
///
/// Expands to a function `__posthorn_store_ports` and a module `store_conformance` with one
/// test per check, so it can sit beside the other suite macros in one file.
#[macro_export]
macro_rules! store_suite {
    ($make:path) => {
        async fn __posthorn_store_ports() -> $crate::StorePorts {
            $make().await
        }

        mod store_conformance {
            $crate::__conformance_tests!(store, super::__posthorn_store_ports;
                contact_insert_and_read,
                contact_concurrent_inserts_of_one_email_one_winner,
                contact_concurrent_updates_at_one_version_one_winner,
                contact_search_is_literal_and_ignores_case,
                template_search_is_literal_and_unicode_case_insensitive,
                contact_insert_of_taken_email_conflicts,
                contact_update_with_stale_version_conflicts,
                contact_update_bumps_version,
                contact_update_of_missing_contact_conflicts,
                contact_update_to_taken_email_conflicts,
                contact_concurrent_upserts_keep_one,
                contact_delete,
                contacts_listed_newest_first_by_keyset,
                contacts_filtered_and_counted,
                subscription_counts_follow_changes,
                contacts_pagination_stable_under_inserts,
                contacts_pending_oldest_first_and_active_count,
                commit_is_all_or_nothing,
                commit_rollback_covers_every_record_kind,
                commit_rollback_restores_replaced_records,
                commit_applies_writes_in_order,
                commit_empty_change_set,
                job_claimable_when_due_not_before,
                jobs_claimed_oldest_first_up_to_max,
                job_claim_is_exclusive,
                job_lease_expiry_makes_claimable_and_old_token_stale,
                job_claims_count_unsettled_leases_and_retry_resets,
                job_retry_counts_failed_attempts_and_delays,
                job_dead_letter_shows_in_stats,
                job_dead_listed_and_revived,
                job_dead_listed_by_id_up_to_limit,
                job_complete_removes,
                job_concurrent_completions_honour_their_leases,
                job_stale_and_current_leases_settle_apart,
                job_concurrent_retries_honour_their_leases_and_times,
                job_stale_token_changes_nothing,
                job_extend_keeps_lease_past_original_end,
                job_extend_with_stale_token_changes_nothing,
                job_extend_of_settled_job_is_refused,
                job_enqueue_of_known_id_conflicts,
                job_enqueue_unless_pending_keeps_one,
                job_enqueue_unless_pending_replaces_dead,
                job_enqueue_unless_pending_concurrently_one_job,
                job_wait_for_work_wakes_on_commit,
                workspaces_put_get_list,
                key_sets_by_hash_and_delete,
                access_generation_moves_on_key_and_workspace_changes,
                domains_insert_update_and_uniqueness,
                domain_dkim_key_set_once_and_kept,
                domain_delete,
                domain_guard_on_updated_at,
                domain_inbound_unique_across_workspaces,
                templates_put_get_list,
                template_guard_on_updated_at,
                emails_insert_update_get,
                email_updates_write_the_state_only,
                emails_read_without_content,
                email_lifecycle_fields_round_trip,
                email_guard_refuses_a_stale_read,
                emails_found_by_provider_and_message_id,
                emails_found_by_id_in_any_workspace,
                email_stats_count_outcomes,
                deployment_secret_created_once,
                idempotency_record_committed_once_per_key,
                idempotency_record_all_or_nothing,
                idempotency_records_expire_and_are_purged,
                sns_message_recorded_once,
                sns_messages_purged_by_age,
                events_newest_first_with_filters,
                event_names_distinct_sorted,
                isolation_between_workspaces,
                revoking_the_last_key_set_conflicts,
                active_limit_guard_refuses_commits_over_the_limit,
                active_limit_guard_holds_under_racing_commits,
                segment_put_get_list_delete,
                segments_tracked_only_dynamic_with_tracking,
                segment_snapshot_state_kept_by_store,
                segment_members_guarded_and_rolled_back,
                segment_member_of_missing_contact_or_segment_conflicts,
                segment_members_paged,
                segment_memberships_of_contact,
                contact_delete_removes_memberships,
                campaign_insert_update_get_delete,
                campaigns_listed_newest_first_by_status,
                campaign_email_unique_per_contact,
                campaign_email_counts_follow_status,
                commit_rollback_covers_segments_and_campaigns,
                contact_event_facts_of_contact,
                matching_respects_bounds_and_audience,
                matching_equals_pure_evaluator,
                conditions_match_as_documented,
                conditions_generated_and_hand_built_equal_evaluator,
                matching_keyset_walk_within_bounds,
                conditions_read_back_exactly,
                isolation_of_segments_and_campaigns,
                workflow_put_get_list_delete,
                workflow_steps_and_transitions,
                workflow_delete_cascades,
                event_workflows_enabled_by_name,
                has_event_interest_cases,
                event_reads_equal_the_reads_one_by_one,
                feedback_reads_equal_the_reads_one_by_one,
                suppression_facts_are_the_newest_of_each,
                template_in_workflows_cases,
                signing_keys_round_trip,
                first_signing_keys_are_never_replaced,
                workflow_isolation_between_workspaces,
                workflow_commit_is_all_or_nothing,
                execution_insert_update_get,
                execution_reentry_rules,
                execution_racing_inserts_one_winner,
                execution_racing_updates_one_winner,
                executions_newest_first_and_active_count,
                waiting_executions_of_contact,
                step_runs_once_per_step,
                event_by_id_in_its_workspace,
                inbound_email_round_trip,
                inbound_processed_once,
                inbound_purge_drops_only_expired_processed_raw,
            );
        }
    };
}

/// Runs every check that needs probes below the ports against `$make`, an
/// `async fn() -> ProbedStore` that returns an isolated, empty adapter instance with
/// probes of it on each call.
///
/// Expands to a function `__posthorn_probed_store` and a module `store_probe_conformance`.
#[macro_export]
macro_rules! store_probe_suite {
    ($make:path) => {
        async fn __posthorn_probed_store() -> $crate::ProbedStore {
            $make().await
        }

        mod store_probe_conformance {
            $crate::__conformance_tests!(store, super::__posthorn_probed_store;
                job_one_commit_wakes_a_waiting_worker,
                job_unreadable_payload_parked_not_handed_out,
                memberships_go_with_their_contact_or_segment,
                conditions_on_quoted_data_keys_equal_evaluator,
            );
        }
    };
}

/// Runs every `RateLimiter` check against `$make`, an `async fn() -> Arc<dyn RateLimiter>`.
///
/// Expands to `__posthorn_rate_limiter` and a module `rate_limiter_conformance`.
#[macro_export]
macro_rules! rate_limiter_suite {
    ($make:path) => {
        async fn __posthorn_rate_limiter(
        ) -> ::std::sync::Arc<dyn $crate::__core::ports::RateLimiter> {
            $make().await
        }

        mod rate_limiter_conformance {
            $crate::__conformance_tests!(rate_limiter, super::__posthorn_rate_limiter;
                allows_limit_then_refuses,
                refused_take_consumes_nothing,
                new_window_resets,
                keys_are_independent,
                window_lengths_are_independent,
                concurrent_takes_never_exceed_limit,
            );
        }
    };
}

/// Runs every `Cache` check against `$make`, an `async fn() -> Arc<dyn Cache>`.
///
/// Expands to `__posthorn_cache` and a module `cache_conformance`.
#[macro_export]
macro_rules! cache_suite {
    ($make:path) => {
        async fn __posthorn_cache() -> ::std::sync::Arc<dyn $crate::__core::ports::Cache> {
            $make().await
        }

        mod cache_conformance {
            $crate::__conformance_tests!(cache, super::__posthorn_cache;
                get_put_and_expiry,
                put_replaces,
                put_if_absent_writes_only_when_absent,
                put_if_absent_has_one_winner,
                delete_removes,
            );
        }
    };
}
