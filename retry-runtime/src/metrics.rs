//! Metrics through the [`metrics`](https://docs.rs/metrics) facade (feature `metrics`): install
//! any exporter (Prometheus, StatsD…) and every retried function reports, labelled with
//! `function` (its name, as in [`RetryEvent::function`](crate::RetryEvent::function); the
//! closure API's name for it):
//!
//! | metric | kind | labels | what |
//! |---|---|---|---|
//! | `retry_jitter_retries_total` | counter | `function` | one per retry: a wait started after an error |
//! | `retry_jitter_hedges_total` | counter | `function` | one per hedge started (`hedge = …`) |
//! | `retry_jitter_recovered_total` | counter | `function` | calls that succeeded after at least one failed or hedged call |
//! | `retry_jitter_give_ups_total` | counter | `function`, `reason` | calls that ended in an error; `reason` ∈ `attempts`, `elapsed`, `budget_empty`, `stopped`, `hint_beyond_cap` |
//! | `retry_jitter_retry_delay_seconds` | histogram | `function` | each wait, in seconds |
//!
//! A first-call success reports nothing: the success path stays free.
//!
//! ```
//! use retry_runtime::{metrics, GiveUpReason};
//! assert_eq!(metrics::RETRIES_TOTAL, "retry_jitter_retries_total");
//! assert_eq!(GiveUpReason::BudgetEmpty.label(), "budget_empty");
//! ```

use core::time::Duration;

use crate::GiveUpReason;

/// Counter: one per retry (a wait started after an error).
pub const RETRIES_TOTAL: &str = "retry_jitter_retries_total";
/// Counter: one per hedge started.
pub const HEDGES_TOTAL: &str = "retry_jitter_hedges_total";
/// Counter: calls that succeeded after at least one failed (or hedged) call.
pub const RECOVERED_TOTAL: &str = "retry_jitter_recovered_total";
/// Counter: calls that ended in an error, by `reason`.
pub const GIVE_UPS_TOTAL: &str = "retry_jitter_give_ups_total";
/// Histogram: each wait, in seconds.
pub const RETRY_DELAY_SECONDS: &str = "retry_jitter_retry_delay_seconds";

/// A retry of `function` waits `delay`.
#[inline]
pub(crate) fn retry(function: &'static str, delay: Duration) {
    ::metrics::counter!(RETRIES_TOTAL, "function" => function).increment(1);
    ::metrics::histogram!(RETRY_DELAY_SECONDS, "function" => function).record(delay.as_secs_f64());
}

/// A hedge of `function` starts.
#[inline]
pub(crate) fn hedge(function: &'static str) {
    ::metrics::counter!(HEDGES_TOTAL, "function" => function).increment(1);
}

/// A call of `function` succeeded after retries or hedges.
#[inline]
pub(crate) fn recovered(function: &'static str) {
    ::metrics::counter!(RECOVERED_TOTAL, "function" => function).increment(1);
}

/// A call of `function` ended in an error, for `reason`.
#[inline]
pub(crate) fn give_up(function: &'static str, reason: GiveUpReason) {
    ::metrics::counter!(GIVE_UPS_TOTAL, "function" => function, "reason" => reason.label())
        .increment(1);
}
