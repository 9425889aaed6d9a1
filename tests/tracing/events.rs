//! Feature `tracing`: one event per retry and one per give-up, with their fields, the error
//! shown through `Display` when its type has it, else `Debug`, else not at all.
#![cfg(feature = "tracing")]

use std::fmt;
use std::sync::{Arc, Mutex};

use retry_jitter::{retry, testing, Policy, Retry};
use tracing::Level;

use crate::trace_recorder;
use trace_recorder::capture;

#[derive(Debug)]
struct Shown(u32);

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "shown #{}", self.0)
    }
}

#[derive(Debug)]
struct DebugOnly(#[allow(dead_code)] u32);

struct Opaque;

#[retry(attempts = 3, jitter = none, base = "10ms")]
fn display_error() -> Result<(), Shown> {
    Err(Shown(7))
}

#[retry(attempts = 2, base = "10ms", trace_level = info)]
fn debug_error() -> Result<(), DebugOnly> {
    Err(DebugOnly(8))
}

#[retry(attempts = 2, base = "10ms", on = |_| false)]
fn opaque_error() -> Result<(), Opaque> {
    Err(Opaque)
}

#[test]
fn each_retry_and_the_give_up_are_events_with_their_fields() {
    let events = capture(|| {
        let _ = testing::record_sleeps(display_error);
    });
    assert_eq!(events.len(), 3, "{events:#?}");
    assert!(events.iter().all(|e| e.level == tracing::Level::WARN));
    assert!(
        events.iter().all(|e| e.target == "retry_jitter"),
        "{events:#?}"
    );
    for (event, (attempt, delay)) in events.iter().zip([("1", "10"), ("2", "20")]) {
        assert_eq!(event.get("message"), Some("retrying"));
        assert_eq!(event.get("function"), Some("display_error"));
        assert_eq!(event.get("attempt"), Some(attempt));
        assert_eq!(event.get("delay_ms"), Some(delay));
        assert_eq!(event.get("error"), Some("shown #7"), "Display is preferred");
    }
    let last = &events[2];
    assert_eq!(last.get("message"), Some("giving up"));
    assert_eq!(last.get("reason"), Some("attempts spent"));
    assert_eq!(last.get("calls"), Some("3"));
    assert_eq!(last.get("error"), Some("shown #7"));
}

#[test]
fn debug_is_the_fallback_and_the_level_is_configurable() {
    let events = capture(|| {
        let _ = testing::record_sleeps(debug_error);
    });
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| e.level == tracing::Level::INFO));
    assert_eq!(events[0].get("error"), Some("DebugOnly(8)"));
}

#[test]
fn an_error_without_display_or_debug_is_left_out_and_stop_is_a_reason() {
    let events = capture(|| {
        let _ = opaque_error();
    });
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].get("message"), Some("giving up"));
    assert_eq!(
        events[0].get("reason"),
        Some("not retryable (Decision::Stop)")
    );
    assert_eq!(events[0].get("error"), None);
}

#[test]
fn the_closure_api_traces_without_the_error() {
    let policy = Policy::new()
        .with_attempts(2)
        .with_base(std::time::Duration::ZERO);
    let events = capture(|| {
        let _ = Retry::new(policy)
            .with_name("job")
            .trace(Level::ERROR)
            .call(|| Err::<(), _>("x"));
    });
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| e.level == tracing::Level::ERROR));
    assert_eq!(events[0].get("function"), Some("job"));
    assert_eq!(events[0].get("error"), None);
}

#[test]
fn a_success_emits_nothing() {
    #[retry]
    fn ok() -> Result<u8, Shown> {
        Ok(1)
    }
    assert!(capture(|| assert_eq!(ok().ok(), Some(1))).is_empty());
}

static RECOVERING: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

#[retry(attempts = 5, base = "10ms", jitter = none, max_elapsed = "1m")]
fn recovers_on_the_third_call() -> Result<u32, Shown> {
    let n = RECOVERING.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    if n < 3 {
        Err(Shown(n))
    } else {
        Ok(n)
    }
}

#[test]
fn a_call_that_recovers_is_one_event_a_level_below_the_retries() {
    let events = capture(|| {
        let _ = testing::record_sleeps(recovers_on_the_third_call);
    });
    assert_eq!(events.len(), 3, "{events:#?}");
    let last = &events[2];
    assert_eq!(last.level, tracing::Level::INFO, "one below WARN");
    assert_eq!(last.get("message"), Some("recovered"));
    assert_eq!(last.get("function"), Some("recovers_on_the_third_call"));
    assert_eq!(last.get("calls"), Some("3"));
    // The recorded waits (10 ms, 20 ms) move the clock the call is timed on.
    let elapsed: u64 = last.get("elapsed_ms").unwrap().parse().unwrap();
    assert!((30..1_000).contains(&elapsed), "{elapsed}");
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Job {
    Pending,
}

/// A value of a type without `Debug`: the event says it was a value, and shows nothing of it.
#[derive(PartialEq)]
struct Hidden;

#[retry(attempts = 2, base = "10ms", jitter = none, on_ok = |j: &Job| *j == Job::Pending)]
fn pending_job() -> Result<Job, Shown> {
    Ok(Job::Pending)
}

#[retry(attempts = 2, base = "10ms", on_ok = |_: &Hidden| true)]
fn hidden_value() -> Result<Hidden, Shown> {
    Ok(Hidden)
}

#[test]
fn a_retried_value_is_an_event_that_shows_it_with_debug() {
    let events = capture(|| {
        let _ = testing::record_sleeps(pending_job);
    });
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0].get("message"), Some("retrying on an Ok value"));
    assert_eq!(events[0].get("value"), Some("Pending"));
    assert_eq!(events[0].get("error"), None);
    assert_eq!(events[1].get("message"), Some("giving up on an Ok value"));
    assert_eq!(events[1].get("reason"), Some("attempts spent"));
    assert_eq!(events[1].get("value"), Some("Pending"));

    let events = capture(|| {
        let _ = testing::record_sleeps(hidden_value);
    });
    assert_eq!(events[0].get("message"), Some("retrying on an Ok value"));
    assert_eq!(events[0].get("value"), None);
}

/// A writer the `fmt` subscriber prints to, kept for the test to read.
#[derive(Clone, Default)]
struct Printed(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Printed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What `tracing_subscriber`'s `fmt` prints of `f`'s events under the `EnvFilter` `directives`
/// (what a user puts in `RUST_LOG`).
fn printed(directives: &str, f: impl FnOnce()) -> String {
    let out = Printed::default();
    let writer = out.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(directives))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    let bytes = out.0.lock().unwrap().clone();
    String::from_utf8(bytes).unwrap()
}

#[retry(attempts = 3, jitter = none, base = "2250us", trace_level = debug)]
fn slow_to_answer() -> Result<(), Shown> {
    Err(Shown(3))
}

#[test]
fn rust_log_retry_jitter_shows_the_events_with_whole_milliseconds() {
    let out = printed("retry_jitter=debug", || {
        let _ = testing::record_sleeps(slow_to_answer);
    });
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    for line in &lines {
        assert!(
            line.contains(" retry_jitter: "),
            "the target is the crate's name: {line}"
        );
        assert!(line.contains("function=\"slow_to_answer\""), "{line}");
    }
    // 2.25 ms, then 4.5 ms: whole milliseconds, rounded down.
    assert!(
        lines[0].contains("retrying") && lines[0].contains("delay_ms=2 "),
        "{out}"
    );
    assert!(
        lines[1].contains("retrying") && lines[1].contains("delay_ms=4 "),
        "{out}"
    );
    assert!(lines[2].contains("giving up"), "{out}");

    // Another crate's directive shows none of them; the crate's own below DEBUG neither.
    for directive in [
        "retry_jitter_runtime=debug",
        "other=trace",
        "retry_jitter=info",
    ] {
        let out = printed(directive, || {
            let _ = testing::record_sleeps(slow_to_answer);
        });
        assert_eq!(out, "", "{directive}");
    }
}
