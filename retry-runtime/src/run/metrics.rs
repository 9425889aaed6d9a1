//! Metrics through the [`metrics`](https://docs.rs/metrics) facade (feature `metrics`).
//!
//! Install any exporter (Prometheus, StatsD…) and every retried function reports.
//!
//! Each metric is labelled with `function`: its name, as in
//! [`RetryEvent::function`](crate::RetryEvent::function).
//!
//! The guide's `observability` page shows them in use.
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
//! In an optimized build, neither does a failing call while no recorder is installed.
//!
//! Whether a recorder listens is asked once per failing call, when its first attempt fails,
//! on the thread it fails on.
//!
//! A recorder installed mid-call hears of later failing calls, not of that one.
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

use ::metrics::{Key, Label, Level, Metadata, NoopRecorder, Recorder};

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

/// Whether a recorder listens now, other than the facade's no-op.
///
/// The recorder may be this thread's (`metrics::with_local_recorder`) or the process's
/// (`metrics::set_global_recorder`).
///
/// Asked afresh each time: the loops ask once per call and keep the answer for that call.
///
/// Asking at each event would cost some 18 instructions an event with no recorder: over the
/// 10 % budget of feature `metrics`.
///
/// The facade cannot say this: [`::metrics::with_recorder`] hands out its own [`NoopRecorder`]
/// when no recorder is set.
///
/// That no-op is told by its vtable (see [`is_noop`]): skipping its methods loses nothing.
///
/// Inlined (an optimized build), the comparison is decided at compile time.
///
/// Vtables are made per codegen unit: where the facade's is a copy of ours, this says `true`.
/// That is slower, never wrong.
///
/// An unoptimized build is such a case; a unit test under `--release` checks the optimized one.
///
/// A `NoopRecorder` a program installs has its own vtable, and is listened to.
#[inline]
pub(crate) fn listening() -> bool {
    ::metrics::with_recorder(|recorder| !is_noop(recorder))
}

/// Whether `recorder`'s vtable is [`NoopRecorder`]'s.
///
/// Its pointer, with our `NoopRecorder`'s vtable put at its address, is the same pointer.
///
/// No `unsafe`: the pointers are compared, never read.
#[inline]
#[allow(ambiguous_wide_pointer_comparisons)] // The vtable is what is compared.
fn is_noop(recorder: &dyn Recorder) -> bool {
    let given: *const dyn Recorder = recorder;
    let noop: *const dyn Recorder = &NoopRecorder;
    core::ptr::eq(noop.with_addr(given.addr()), given)
}

/// A retry of `function` waits `delay` (`listening`: what [`listening`] said for the call).
#[inline]
pub(crate) fn retry(listening: bool, function: &'static str, delay: Duration) {
    if listening {
        record_retry(function, delay);
    }
}

/// [`retry`], told to the recorder.
#[cold]
#[inline(never)]
fn record_retry(function: &'static str, delay: Duration) {
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
pub(crate) fn hedge(listening: bool, function: &'static str) {
    if listening {
        count(function, |keys| &keys.hedges);
    }
}

/// A call of `function` succeeded after retries or hedges.
#[inline]
pub(crate) fn recovered(listening: bool, function: &'static str) {
    if listening {
        count(function, |keys| &keys.recovered);
    }
}

/// A call of `function` ended in an error, for `reason`.
#[inline]
pub(crate) fn give_up(listening: bool, function: &'static str, reason: GiveUpReason) {
    if listening {
        record_give_up(function, reason);
    }
}

/// [`give_up`], told to the recorder.
#[cold]
#[inline(never)]
fn record_give_up(function: &'static str, reason: GiveUpReason) {
    count(function, |keys| &keys.give_ups[reason_index(reason)]);
}

/// An attempt of `function` was throttled (asked before any retry state: whether a recorder
/// listens is asked here).
pub(crate) fn throttled(function: &'static str) {
    if listening() {
        count(function, |keys| &keys.throttled);
    }
}

/// A call of `function` changed its breaker's state to `state`.
pub(crate) fn breaker(function: &'static str, state: crate::fleet::BreakerState) {
    if !listening() {
        return;
    }
    with_keys(function, |keys| {
        ::metrics::with_recorder(|recorder| {
            if state == crate::fleet::BreakerState::Open {
                recorder
                    .register_counter(&keys.breaker_open, &METADATA)
                    .increment(1);
            }
            recorder
                .register_gauge(&keys.breaker_state, &METADATA)
                .set(state.gauge());
        });
    });
}

/// One more on the counter `which` of `function`'s keys.
///
/// Cold, as the other reports: the loops' layout is the no-recorder one.
///
/// With a recorder, the recording is most of the cost.
#[cold]
#[inline(never)]
fn count(function: &'static str, which: impl FnOnce(&Keys) -> &Key) {
    with_keys(function, |keys| {
        ::metrics::with_recorder(|recorder| {
            recorder
                .register_counter(which(keys), &METADATA)
                .increment(1);
        });
    });
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
/// The keys are what the `counter!`/`histogram!`/`gauge!` macros build at each call: the same
/// names, labels and hashes.
///
/// The recorder is looked up at each event as they do: a recorder local to a thread hears of
/// its events.
///
/// Only the building is saved: a label vector allocated and freed, and a key hashed, twice per
/// retry.
struct Keys {
    retries: Key,
    hedges: Key,
    recovered: Key,
    delay: Key,
    give_ups: [Key; 8],
    throttled: Key,
    breaker_open: Key,
    breaker_state: Key,
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
            throttled: key(THROTTLED_TOTAL),
            breaker_open: key(BREAKER_OPEN_TOTAL),
            breaker_state: key(BREAKER_STATE),
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

/// A function's name, as its `&'static str`: address and length.
///
/// The same text gives the same keys; the same text at another address has its own, equal,
/// keys.
type Name = (usize, usize);

fn name(function: &'static str) -> Name {
    (function.as_ptr() as usize, function.len())
}

/// The most functions whose keys are kept.
///
/// Names come from `#[retry]` functions and the closure API's `name`: a set fixed by the
/// program.
///
/// A program that made names without end would have the others' keys built at each call, not
/// kept without end.
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
    use ::metrics::{Counter, Gauge, Histogram, KeyName, SharedString, Unit};
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A recorder that counts the metrics registered with it (and records nothing).
    #[derive(Default)]
    struct Registrations(AtomicU32);

    impl Registrations {
        fn count(&self) -> u32 {
            self.0.load(Ordering::SeqCst)
        }
    }

    impl Recorder for Registrations {
        fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
            self.0.fetch_add(1, Ordering::SeqCst);
            Counter::noop()
        }
        fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
            self.0.fetch_add(1, Ordering::SeqCst);
            Gauge::noop()
        }
        fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
            self.0.fetch_add(1, Ordering::SeqCst);
            Histogram::noop()
        }
    }

    /// With no recorder set, an optimized build tells the facade's no-op apart.
    ///
    /// That build's instruction counts say what feature `metrics` costs
    /// (`scripts/instructions.sh`).
    ///
    /// Were it not told apart, each failing call would pay for reports to nobody, silently.
    ///
    /// Unoptimized, `listening` says `true`, only slower.
    #[test]
    #[cfg_attr(
        debug_assertions,
        ignore = "an optimized build's: cargo test --release -p retry-jitter-runtime --features metrics --lib run::metrics (.ci/run)"
    )]
    fn the_facades_no_op_is_told_apart() {
        assert!(
            !listening(),
            "the facade's NoopRecorder was taken for a recorder"
        );
        // Not kept: a recorder set for the thread is heard, and once it is gone, no more.
        let recorder = Registrations::default();
        ::metrics::with_local_recorder(&recorder, || assert!(listening()));
        assert!(!listening());
    }

    /// A recorder set for the thread is listened to while it is set, and hears of the events
    /// of a call `listening` said `true` for, and of none of one it said `false` for.
    #[test]
    fn a_recorder_set_for_the_thread_is_listened_to() {
        let recorder = Registrations::default();
        ::metrics::with_local_recorder(&recorder, || {
            assert!(listening());
            retry(listening(), "listened", Duration::ZERO);
            give_up(listening(), "listened", GiveUpReason::Attempts);
            throttled("listened");
        });
        // The retry's counter and histogram, the give-up's and the throttle's counters.
        assert_eq!(recorder.count(), 4);
        ::metrics::with_local_recorder(&recorder, || {
            retry(false, "listened", Duration::ZERO);
            recovered(false, "listened");
            hedge(false, "listened");
        });
        assert_eq!(recorder.count(), 4);
    }

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
            (&keys.throttled, THROTTLED_TOTAL),
            (&keys.breaker_open, BREAKER_OPEN_TOTAL),
            (&keys.breaker_state, BREAKER_STATE),
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
