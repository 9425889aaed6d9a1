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
//! | `retry_jitter_give_ups_total` | counter | `function`, `reason` | calls that ended in an error; `reason` ∈ `attempts`, `elapsed`, `budget_empty`, `stopped`, `hint_beyond_cap`, `throttled`, `circuit_open`, `cancelled` |
//! | `retry_jitter_retry_delay_seconds` | histogram | `function` | each wait, in seconds |
//! | `retry_jitter_throttled_total` | counter | `function` | attempts the adaptive throttle rejected |
//! | `retry_jitter_breaker_open_total` | counter | `function` | times a circuit breaker opened, by the function whose call opened it |
//! | `retry_jitter_breaker_state` | gauge | `function` | a breaker's state as the function that changed it last saw it: 0 closed, 1 open, 2 half-open |
//!
//! A first-call success reports nothing: the success path stays free.
//!
//! ```
//! use retry_jitter::GiveUpReason;
//! // The `reason` label of `retry_jitter_give_ups_total`.
//! assert_eq!(GiveUpReason::BudgetEmpty.label(), "budget_empty");
//! ```

use core::cell::Cell;
use core::time::Duration;
use std::collections::BTreeMap;
use std::sync::Mutex;

use ::metrics::{Key, Label, Level, Metadata};

use crate::policy::GiveUpReason;

/// Counter: one per retry (a wait started after an error).
pub(crate) const RETRIES_TOTAL: &str = "retry_jitter_retries_total";
/// Counter: one per hedge started.
pub(crate) const HEDGES_TOTAL: &str = "retry_jitter_hedges_total";
/// Counter: calls that succeeded after at least one failed (or hedged) call.
pub(crate) const RECOVERED_TOTAL: &str = "retry_jitter_recovered_total";
/// Counter: calls that ended in an error, by `reason`.
pub(crate) const GIVE_UPS_TOTAL: &str = "retry_jitter_give_ups_total";
/// Histogram: each wait, in seconds.
pub(crate) const RETRY_DELAY_SECONDS: &str = "retry_jitter_retry_delay_seconds";
/// Counter: attempts the adaptive throttle rejected, by `function`.
pub(crate) const THROTTLED_TOTAL: &str = "retry_jitter_throttled_total";
/// Counter: times a circuit breaker opened, by the `function` whose call opened it.
pub(crate) const BREAKER_OPEN_TOTAL: &str = "retry_jitter_breaker_open_total";
/// Gauge: a circuit breaker's state as the `function` that changed it last saw it: 0 closed, 1
/// open, 2 half-open.
pub(crate) const BREAKER_STATE: &str = "retry_jitter_breaker_state";

/// What `metrics::counter!` and `histogram!` would give: the target and module are this
/// module's, the level INFO.
static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// A retry of `function` waits `delay`.
#[inline]
pub(crate) fn retry(function: &'static str, delay: Duration) {
    with_keys(function, |keys| {
        ::metrics::with_recorder(|recorder| {
            recorder
                .register_counter(&keys.retries, &METADATA)
                .increment(1);
            recorder
                .register_histogram(&keys.delay, &METADATA)
                .record(delay.as_secs_f64());
        });
    });
}

/// A hedge of `function` starts.
#[inline]
pub(crate) fn hedge(function: &'static str) {
    with_keys(function, |keys| {
        ::metrics::with_recorder(|recorder| {
            recorder
                .register_counter(&keys.hedges, &METADATA)
                .increment(1);
        });
    });
}

/// A call of `function` succeeded after retries or hedges.
#[inline]
pub(crate) fn recovered(function: &'static str) {
    with_keys(function, |keys| {
        ::metrics::with_recorder(|recorder| {
            recorder
                .register_counter(&keys.recovered, &METADATA)
                .increment(1);
        });
    });
}

/// A call of `function` ended in an error, for `reason`.
#[inline]
pub(crate) fn give_up(function: &'static str, reason: GiveUpReason) {
    with_keys(function, |keys| {
        ::metrics::with_recorder(|recorder| {
            recorder
                .register_counter(&keys.give_ups[reason_index(reason)], &METADATA)
                .increment(1);
        });
    });
}

/// An attempt of `function` was throttled.
pub(crate) fn throttled(function: &'static str) {
    ::metrics::counter!(THROTTLED_TOTAL, "function" => function).increment(1);
}

/// A call of `function` changed its breaker's state to `state`.
pub(crate) fn breaker(function: &'static str, state: crate::fleet::BreakerState) {
    if state == crate::fleet::BreakerState::Open {
        ::metrics::counter!(BREAKER_OPEN_TOTAL, "function" => function).increment(1);
    }
    ::metrics::gauge!(BREAKER_STATE, "function" => function).set(state.gauge());
}

/// The reasons, in the order of [`Keys::give_ups`].
const REASONS: [GiveUpReason; 8] = [
    GiveUpReason::Attempts,
    GiveUpReason::Elapsed,
    GiveUpReason::BudgetEmpty,
    GiveUpReason::Stopped,
    GiveUpReason::HintBeyondCap,
    GiveUpReason::Throttled,
    GiveUpReason::CircuitOpen,
    GiveUpReason::Cancelled,
];

fn reason_index(reason: GiveUpReason) -> usize {
    match reason {
        GiveUpReason::Attempts => 0,
        GiveUpReason::Elapsed => 1,
        GiveUpReason::BudgetEmpty => 2,
        GiveUpReason::Stopped => 3,
        GiveUpReason::HintBeyondCap => 4,
        GiveUpReason::Throttled => 5,
        GiveUpReason::CircuitOpen => 6,
        GiveUpReason::Cancelled => 7,
    }
}

/// Every key one function reports under, built (labels allocated, hashes computed) once.
///
/// The keys are what the `counter!`/`histogram!` macros build at each call (the same names,
/// labels and hashes), and the recorder is looked up at each call as they do: a recorder
/// installed later, or one local to a thread, hears of everything. Only the building is
/// saved: a label vector allocated and freed, and a key hashed, twice per retry.
struct Keys {
    retries: Key,
    hedges: Key,
    recovered: Key,
    delay: Key,
    give_ups: [Key; 8],
}

impl Keys {
    fn of(function: &'static str) -> Keys {
        let key =
            |name: &'static str| Key::from_parts(name, vec![Label::new("function", function)]);
        Keys {
            retries: key(RETRIES_TOTAL),
            hedges: key(HEDGES_TOTAL),
            recovered: key(RECOVERED_TOTAL),
            delay: key(RETRY_DELAY_SECONDS),
            give_ups: REASONS.map(|reason| {
                Key::from_parts(
                    GIVE_UPS_TOTAL,
                    vec![
                        Label::new("function", function),
                        Label::new("reason", reason.label()),
                    ],
                )
            }),
        }
    }
}

/// A function's name, as its `&'static str` (address and length: the same text, the same
/// keys; the same text at another address has its own, equal, keys).
type Name = (usize, usize);

fn name(function: &'static str) -> Name {
    (function.as_ptr() as usize, function.len())
}

/// The most functions whose keys are kept: names come from `#[retry]` functions and the
/// closure API's `name`, a set fixed by the program; a program that made names without end
/// would have the keys of the others built at each call, as before, not kept without end.
const KEPT: usize = 1024;

/// The kept keys of every function, for the process's life.
static KEPT_KEYS: Mutex<BTreeMap<Name, &'static Keys>> = Mutex::new(BTreeMap::new());

/// The keys of one function this thread used lately.
type Near = Cell<Option<(Name, &'static Keys)>>;

thread_local! {
    /// The keys this thread used last, most recent first: no lock on the way to them.
    static NEAR: [Near; 4] = const { [const { Cell::new(None) }; 4] };
}

/// `f` with `function`'s keys.
#[inline]
fn with_keys(function: &'static str, f: impl FnOnce(&Keys)) {
    let id = name(function);
    let near = NEAR.with(|near| {
        near.iter()
            .find_map(|entry| entry.get().filter(|(name, _)| *name == id))
            .map(|(_, keys)| keys)
    });
    match near.or_else(|| far_keys(function)) {
        Some(keys) => f(keys),
        None => f(&Keys::of(function)),
    }
}

/// `function`'s keys from the process's, made and kept if there is room; remembered as this
/// thread's nearest.
#[cold]
#[inline(never)]
fn far_keys(function: &'static str) -> Option<&'static Keys> {
    let id = name(function);
    let keys = {
        let mut kept = KEPT_KEYS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match kept.get(&id) {
            Some(keys) => *keys,
            None if kept.len() < KEPT => {
                let keys: &'static Keys = Box::leak(Box::new(Keys::of(function)));
                kept.insert(id, keys);
                keys
            }
            None => return None,
        }
    };
    // Drops `NEAR` silently while the thread's locals are being destroyed: only speed is lost.
    let _ = NEAR.try_with(|near| {
        let mut entry = Some((id, keys));
        for slot in near {
            entry = slot.replace(entry);
        }
    });
    Some(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept keys are the ones the facade's macros build at each call: equal, and hashed alike.
    #[test]
    fn the_kept_keys_are_the_macros_keys() {
        let function: &'static str = "fetch";
        let keys = Keys::of(function);
        let by_macro = |name: &'static str| {
            let key = Key::from_parts(name, vec![Label::new("function", function)]);
            (key.get_hash(), key)
        };
        for (kept, name) in [
            (&keys.retries, RETRIES_TOTAL),
            (&keys.hedges, HEDGES_TOTAL),
            (&keys.recovered, RECOVERED_TOTAL),
            (&keys.delay, RETRY_DELAY_SECONDS),
        ] {
            assert_eq!((kept.get_hash(), kept.clone()), by_macro(name));
        }
        for reason in REASONS {
            let key = Key::from_parts(
                GIVE_UPS_TOTAL,
                vec![
                    Label::new("function", function),
                    Label::new("reason", reason.label()),
                ],
            );
            assert_eq!(keys.give_ups[reason_index(reason)], key);
        }
    }

    /// Each name gets its keys, whatever the order the functions report in.
    #[test]
    fn each_name_reports_under_its_own_keys() {
        let names: Vec<&'static str> = (0..10)
            .map(|i| &*Box::leak(format!("f{i}").into_boxed_str()))
            .collect();
        for round in 0..3 {
            for (i, function) in names.iter().enumerate().rev().skip(round) {
                with_keys(function, |keys| {
                    let label = keys.retries.labels().next().map(|l| l.value().to_owned());
                    assert_eq!(label, Some(format!("f{i}")));
                });
            }
        }
    }
}
