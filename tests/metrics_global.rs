//! Feature `metrics`: a global recorder installed after calls that failed with no recorder at
//! all hears of every call after it. (A file of its own: the global recorder, once set, stays
//! for the process, and the other metrics tests count on none being set.) Only an optimized
//! build tells "no recorder" apart, and so ever answers "none": `cargo test --release` is the
//! run this test can fail in.
#![cfg(feature = "metrics")]

use std::sync::atomic::{AtomicU32, Ordering};

use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use metrics_util::CompositeKey;
use retry_jitter::{retry, testing};

static CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 5, base = "0ns")]
fn flaky() -> Result<u32, String> {
    flaky_body()
}

#[retry(attempts = 5, base = "0ns", sleep = no_sleep)]
async fn flaky_async() -> Result<u32, String> {
    flaky_body()
}

async fn no_sleep(_: std::time::Duration) {}

fn flaky_body() -> Result<u32, String> {
    let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    if n % 3 != 0 {
        Err(format!("failure {n}"))
    } else {
        Ok(n)
    }
}

/// The count of `name` labelled `function`, if any.
fn count(snapshot: &[(CompositeKey, DebugValue)], name: &str, function: &str) -> Option<u64> {
    snapshot.iter().find_map(|(key, value)| {
        let key = key.key();
        let labelled = key
            .labels()
            .any(|l| l.key() == "function" && l.value() == function);
        match value {
            DebugValue::Counter(n) if key.name() == name && labelled => Some(*n),
            _ => None,
        }
    })
}

#[test]
fn a_global_recorder_set_after_calls_with_none_hears_the_calls_after() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let calls = || {
        CALLS.store(0, Ordering::SeqCst);
        assert_eq!(testing::record_sleeps(flaky).0, Ok(3));
        CALLS.store(0, Ordering::SeqCst);
        assert_eq!(rt.block_on(flaky_async()), Ok(3));
    };
    // No recorder: reported to nobody, as many times as the deciding may be kept by anything.
    for _ in 0..3 {
        calls();
    }
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::set_global_recorder(recorder).expect("the first global recorder");
    calls();
    let snapshot: Vec<_> = snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| (key, value))
        .collect();
    for function in ["flaky", "flaky_async"] {
        assert_eq!(
            count(&snapshot, "retry_jitter_retries_total", function),
            Some(2),
            "{function}"
        );
        assert_eq!(
            count(&snapshot, "retry_jitter_recovered_total", function),
            Some(1),
            "{function}"
        );
    }
}
