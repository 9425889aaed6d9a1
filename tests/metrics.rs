//! Feature `metrics`: every retried function reports its retries, hedges, recoveries, give-ups
//! (by reason) and waits through the `metrics` facade, under the documented names, labelled with
//! `function`; a first-call success reports nothing. Read with metrics-util's debugging
//! recorder, installed for the test's thread only.
#![cfg(feature = "metrics")]

use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use retry_jitter::hedge::Hedge;
use retry_jitter::{retry, testing, CancelToken, Decision, Policy, Retry, RetryBudget};

/// The metric names the `metrics` module's table documents: dashboards are written from them.
mod names {
    pub const RETRIES_TOTAL: &str = "retry_jitter_retries_total";
    pub const HEDGES_TOTAL: &str = "retry_jitter_hedges_total";
    pub const RECOVERED_TOTAL: &str = "retry_jitter_recovered_total";
    pub const GIVE_UPS_TOTAL: &str = "retry_jitter_give_ups_total";
    pub const RETRY_DELAY_SECONDS: &str = "retry_jitter_retry_delay_seconds";
    pub const THROTTLED_TOTAL: &str = "retry_jitter_throttled_total";
    pub const BREAKER_OPEN_TOTAL: &str = "retry_jitter_breaker_open_total";
    pub const BREAKER_STATE: &str = "retry_jitter_breaker_state";
}

/// What `f` reported: each metric (name and sorted labels) and its value — a count, or the
/// recorded values of a histogram.
fn reported(f: impl FnOnce()) -> BTreeMap<String, Vec<f64>> {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, f);
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let key = key.key();
            let mut labels: Vec<String> = key
                .labels()
                .map(|l| format!("{}={}", l.key(), l.value()))
                .collect();
            labels.sort();
            let name = format!("{}{{{}}}", key.name(), labels.join(","));
            let values = match value {
                DebugValue::Counter(n) => vec![n as f64],
                DebugValue::Histogram(v) => v.into_iter().map(|x| x.into_inner()).collect(),
                DebugValue::Gauge(g) => vec![g.into_inner()],
            };
            (name, values)
        })
        // The debugging recorder keeps a registered metric at 0 after a snapshot: drop those.
        .filter(|(_, v)| !v.is_empty() && v != &[0.0])
        .collect()
}

fn counter(name: &str, labels: &str) -> String {
    format!("{name}{{{labels}}}")
}

static CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 5, base = "10ms", jitter = none)]
fn flaky() -> Result<u32, String> {
    let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    if n < 3 {
        Err(format!("failure {n}"))
    } else {
        Ok(n)
    }
}

#[test]
fn a_call_that_recovers_reports_its_retries_waits_and_recovery() {
    CALLS.store(0, Ordering::SeqCst);
    let got = reported(|| {
        let (out, _) = testing::record_sleeps(flaky);
        assert_eq!(out, Ok(3));
    });
    let want: BTreeMap<String, Vec<f64>> = [
        (counter(names::RETRIES_TOTAL, "function=flaky"), vec![2.0]),
        (counter(names::RECOVERED_TOTAL, "function=flaky"), vec![1.0]),
        (
            counter(names::RETRY_DELAY_SECONDS, "function=flaky"),
            vec![0.01, 0.02],
        ),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);
}

#[retry(attempts = 3, base = "0ns")]
fn always_ok() -> Result<u32, String> {
    Ok(1)
}

#[test]
fn a_first_call_success_reports_nothing() {
    assert!(reported(|| assert_eq!(always_ok(), Ok(1))).is_empty());
}

#[retry(attempts = 3, base = "0ns")]
fn always_down() -> Result<(), io::Error> {
    Err(io::Error::new(io::ErrorKind::ConnectionRefused, "down"))
}

fn stop_now(_: &io::Error) -> Decision {
    Decision::Stop
}

#[retry(on = stop_now)]
fn not_found() -> Result<(), io::Error> {
    Err(io::Error::from(io::ErrorKind::NotFound))
}

fn far_hint(_: &io::Error) -> Decision {
    Decision::RetryAfter(Duration::from_secs(3600))
}

#[retry(on = far_hint)]
fn told_to_wait_an_hour() -> Result<(), io::Error> {
    Err(io::Error::other("429"))
}

static EMPTY: RetryBudget = RetryBudget::new(0);

#[retry(budget = &EMPTY)]
fn no_budget() -> Result<(), io::Error> {
    Err(io::Error::new(io::ErrorKind::ConnectionRefused, "down"))
}

#[retry(attempts = 10, base = "1s", jitter = none, max_elapsed = "2500ms")]
fn out_of_time() -> Result<(), io::Error> {
    Err(io::Error::new(io::ErrorKind::ConnectionRefused, "down"))
}

static SHUTDOWN: CancelToken = CancelToken::new();

#[retry(attempts = 3, base = "1h", cap = "1h", cancel = &SHUTDOWN)]
fn shut_down() -> Result<(), io::Error> {
    Err(io::Error::new(io::ErrorKind::ConnectionRefused, "down"))
}

#[test]
fn every_give_up_is_counted_with_its_reason() {
    let got = reported(|| {
        let _ = testing::record_sleeps(|| {
            assert!(always_down().is_err());
            assert!(not_found().is_err());
            assert!(told_to_wait_an_hour().is_err());
            assert!(no_budget().is_err());
            assert!(out_of_time().is_err());
            SHUTDOWN.cancel();
            assert!(shut_down().is_err());
        });
    });
    let give_ups: BTreeMap<_, _> = got
        .iter()
        .filter(|(k, _)| k.starts_with(names::GIVE_UPS_TOTAL))
        .map(|(k, v)| (k.as_str(), v[0]))
        .collect();
    let g = |f: &str, r: &str| format!("{}{{function={f},reason={r}}}", names::GIVE_UPS_TOTAL);
    let want = [
        g("always_down", "attempts"),
        g("not_found", "stopped"),
        g("told_to_wait_an_hour", "hint_beyond_cap"),
        g("no_budget", "budget_empty"),
        g("out_of_time", "elapsed"),
        g("shut_down", "cancelled"),
    ];
    let mut want: Vec<String> = want.to_vec();
    want.sort();
    assert_eq!(
        give_ups.keys().map(|k| k.to_string()).collect::<Vec<_>>(),
        want
    );
    assert!(give_ups.values().all(|&n| n == 1.0));
    // always_down retried twice, out_of_time twice (waits of 1 s and 2 s would pass 2.5 s: once).
    assert_eq!(
        got[&counter(names::RETRIES_TOTAL, "function=always_down")],
        [2.0]
    );
    assert_eq!(
        got[&counter(names::RETRIES_TOTAL, "function=out_of_time")],
        [1.0]
    );
}

#[test]
fn the_closure_api_reports_under_its_name_and_hedges_are_counted() {
    let got = reported(|| {
        let mut n = 0;
        let r = Retry::new(Policy::new().with_base(Duration::ZERO)).with_name("load_config");
        assert_eq!(
            r.call(|| {
                n += 1;
                if n < 2 {
                    Err("busy")
                } else {
                    Ok(n)
                }
            }),
            Ok(2)
        );
        // A hedge: the first call hangs, the one started beside it at 5 ms answers.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let mut calls = 0;
        let hedged = Retry::new(Policy::new().with_attempts(2))
            .hedge(Hedge::After(Duration::from_millis(5)))
            .with_name("lookup");
        let out = rt.block_on(hedged.call_async(|| {
            calls += 1;
            let first = calls == 1;
            async move {
                if first {
                    std::future::pending::<()>().await;
                }
                Ok::<_, ()>(calls)
            }
        }));
        assert_eq!(out, Ok(2));
    });
    assert_eq!(
        got[&counter(names::RETRIES_TOTAL, "function=load_config")],
        [1.0]
    );
    assert_eq!(
        got[&counter(names::RECOVERED_TOTAL, "function=load_config")],
        [1.0]
    );
    assert_eq!(got[&counter(names::HEDGES_TOTAL, "function=lookup")], [1.0]);
    assert_eq!(
        got[&counter(names::RECOVERED_TOTAL, "function=lookup")],
        [1.0]
    );
    assert!(!got.contains_key(&counter(names::RETRIES_TOTAL, "function=lookup")));
}

static LATE_CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 5, base = "10ms", jitter = none)]
fn late() -> Result<u32, String> {
    let n = LATE_CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    if n % 3 != 0 {
        Err(format!("failure {n}"))
    } else {
        Ok(n)
    }
}

/// Whether a recorder listens is asked for each call, not once for good: calls that failed
/// while none was set (sync, async, the closure API) leave a recorder set later hearing of
/// every call after. (Only an optimized build tells "no recorder" apart, and so ever answers
/// "none": `cargo test --release` is the run this test can fail in.)
#[test]
fn a_recorder_set_after_calls_with_none_hears_the_calls_after() {
    LATE_CALLS.store(0, Ordering::SeqCst);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let closure = Retry::new(Policy::new().with_base(Duration::ZERO)).with_name("late_closure");
    let calls = || {
        assert_eq!(testing::record_sleeps(late).0, Ok(3));
        let mut n = 0;
        let out = rt.block_on(closure.call_async(|| {
            n += 1;
            let n = n;
            async move {
                if n < 2 {
                    Err("busy")
                } else {
                    Ok(n)
                }
            }
        }));
        assert_eq!(out, Ok(2));
    };
    calls();
    LATE_CALLS.store(0, Ordering::SeqCst);
    let got = reported(calls);
    // (The closure's one wait, 0 s, is dropped by `reported` with the zeros.)
    let want: BTreeMap<String, Vec<f64>> = [
        (counter(names::RETRIES_TOTAL, "function=late"), vec![2.0]),
        (counter(names::RECOVERED_TOTAL, "function=late"), vec![1.0]),
        (
            counter(names::RETRY_DELAY_SECONDS, "function=late"),
            vec![0.01, 0.02],
        ),
        (
            counter(names::RETRIES_TOTAL, "function=late_closure"),
            vec![1.0],
        ),
        (
            counter(names::RECOVERED_TOTAL, "function=late_closure"),
            vec![1.0],
        ),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);
}

static POLLS: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, base = "10ms", jitter = none, on_ok = |n: &u32| *n < 100)]
fn never_ready() -> Result<u32, String> {
    Ok(POLLS.fetch_add(1, Ordering::SeqCst))
}

#[test]
fn retried_values_are_counted_as_retries_and_their_give_up_by_reason() {
    let got = reported(|| {
        let (out, _) = testing::record_sleeps(never_ready);
        assert_eq!(out, Ok(2), "the last value");
    });
    let want: BTreeMap<String, Vec<f64>> = [
        (
            counter(names::RETRIES_TOTAL, "function=never_ready"),
            vec![2.0],
        ),
        (
            counter(names::RETRY_DELAY_SECONDS, "function=never_ready"),
            vec![0.01, 0.02],
        ),
        (
            counter(
                names::GIVE_UPS_TOTAL,
                "function=never_ready,reason=attempts",
            ),
            vec![1.0],
        ),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);
}

static OPENS: retry_jitter::CircuitBreaker =
    retry_jitter::CircuitBreaker::new(1.0, 2, Duration::from_secs(60), Duration::from_secs(3600));

#[retry(attempts = 1, breaker = &OPENS)]
fn broken() -> Result<(), io::Error> {
    Err(io::Error::from(io::ErrorKind::ConnectionRefused))
}

static SHEDS: retry_jitter::AdaptiveThrottle =
    retry_jitter::AdaptiveThrottle::new(1.0, Duration::from_secs(3600));

#[retry(attempts = 1, throttle = &SHEDS)]
fn shed() -> Result<(), io::Error> {
    Err(io::Error::from(io::ErrorKind::ConnectionRefused))
}

#[test]
fn the_breaker_and_the_throttle_report_their_refusals_and_states() {
    let got = reported(|| {
        for _ in 0..3 {
            let _ = broken();
        }
    });
    assert_eq!(
        got[&counter(names::BREAKER_OPEN_TOTAL, "function=broken")],
        [1.0]
    );
    assert_eq!(
        got[&counter(names::BREAKER_STATE, "function=broken")],
        [1.0],
        "open"
    );
    assert_eq!(
        got[&counter(names::GIVE_UPS_TOTAL, "function=broken,reason=circuit_open")],
        [1.0]
    );
    testing::seed_jitter(5);
    let got = reported(|| {
        for _ in 0..100 {
            let _ = shed();
        }
    });
    let throttled = got[&counter(names::THROTTLED_TOTAL, "function=shed")][0];
    assert!(throttled > 50.0, "{throttled}");
    assert_eq!(
        got[&counter(names::GIVE_UPS_TOTAL, "function=shed,reason=throttled")],
        [throttled]
    );
}

/// The `reason` labels the `metrics` module's table and guide::observability document, spelled out: dashboards and
/// alerts are written against these strings. (The metric names are checked where each is
/// recorded, above.)
#[test]
fn the_reason_labels_are_the_documented_ones() {
    use retry_jitter::GiveUpReason::*;
    let labels = [
        Attempts,
        Elapsed,
        BudgetEmpty,
        Stopped,
        HintBeyondCap,
        Throttled,
        CircuitOpen,
        Cancelled,
    ]
    .map(|reason| reason.label());
    assert_eq!(
        labels,
        [
            "attempts",
            "elapsed",
            "budget_empty",
            "stopped",
            "hint_beyond_cap",
            "throttled",
            "circuit_open",
            "cancelled"
        ]
    );
}
