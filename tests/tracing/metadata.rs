//! Feature `tracing`: what the events' metadata says of where they come from. Every event is
//! under the target `retry_jitter`, its module path is the crate's name (or none), and neither
//! its file, its line nor its name points into the runtime's sources: a JSON subscriber, a
//! `.with_file(true)` or a filter by module path sees the crate, not its internals. The fields,
//! their names and their values are those `tests/tracing/events.rs` checks, at every level.
#![cfg(feature = "tracing")]

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_jitter::hedge::Hedge;
use retry_jitter::{retry, testing, Policy, Retry};
use tracing::callsite::Identifier;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

use crate::trace_recorder;
use trace_recorder::{capture, Recorder};

const LEVELS: [Level; 5] = [
    Level::ERROR,
    Level::WARN,
    Level::INFO,
    Level::DEBUG,
    Level::TRACE,
];

/// A recovery's level: one below the retries'.
fn below(level: Level) -> Level {
    match level {
        Level::ERROR => Level::WARN,
        Level::WARN => Level::INFO,
        Level::INFO => Level::DEBUG,
        _ => Level::TRACE,
    }
}

fn no_wait(attempts: u32) -> Policy {
    Policy::new()
        .with_attempts(attempts)
        .with_base(Duration::ZERO)
}

#[test]
fn a_closure_call_that_retries_once_and_gives_up_names_the_crate_at_every_level() {
    for level in LEVELS {
        let events = capture(|| {
            let out = Retry::new(no_wait(2))
                .with_name("job")
                .trace(level)
                .call(|| Err::<(), _>("down"));
            assert_eq!(out, Err("down"));
        });
        assert_eq!(events.len(), 2, "{level}: {events:#?}");
        assert!(events.iter().all(|e| e.level == level), "{events:#?}");

        let retrying = &events[0];
        assert_eq!(
            retrying.names(),
            ["message", "function", "attempt", "delay_ms"]
        );
        assert_eq!(retrying.get("message"), Some("retrying"));
        assert_eq!(retrying.get("function"), Some("job"));
        assert_eq!(retrying.get("attempt"), Some("1"));
        assert_eq!(retrying.get("delay_ms"), Some("0"));

        let giving_up = &events[1];
        assert_eq!(
            giving_up.names(),
            ["message", "function", "calls", "reason"]
        );
        assert_eq!(giving_up.get("message"), Some("giving up"));
        assert_eq!(giving_up.get("function"), Some("job"));
        assert_eq!(giving_up.get("calls"), Some("2"));
        assert_eq!(giving_up.get("reason"), Some("attempts spent"));
    }
}

#[test]
fn a_closure_call_that_recovers_names_the_crate_at_every_level() {
    for level in LEVELS {
        let mut calls = 0;
        let events = capture(|| {
            let out = Retry::new(no_wait(3))
                .with_name("job")
                .trace(level)
                .call(|| {
                    calls += 1;
                    if calls == 1 {
                        Err("down")
                    } else {
                        Ok(calls)
                    }
                });
            assert_eq!(out, Ok(2));
        });
        assert_eq!(events.len(), 2, "{level}: {events:#?}");

        let retrying = &events[0];
        assert_eq!(retrying.level, level);
        assert_eq!(retrying.get("message"), Some("retrying"));
        assert_eq!(retrying.get("attempt"), Some("1"));
        assert_eq!(retrying.get("delay_ms"), Some("0"));

        let recovered = &events[1];
        assert_eq!(recovered.level, below(level));
        assert_eq!(
            recovered.names(),
            ["message", "function", "calls", "elapsed_ms"]
        );
        assert_eq!(recovered.get("message"), Some("recovered"));
        assert_eq!(recovered.get("function"), Some("job"));
        assert_eq!(recovered.get("calls"), Some("2"));
        let elapsed: u64 = recovered.get("elapsed_ms").unwrap().parse().unwrap();
        assert!(elapsed < 1_000, "{elapsed}");
    }
}

#[test]
fn a_hedge_names_the_crate() {
    for level in LEVELS {
        let events = capture(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            let mut calls = 0;
            let out = rt.block_on(
                Retry::new(no_wait(2))
                    .with_name("slow")
                    .trace(level)
                    .hedge(Hedge::After(Duration::from_millis(50)))
                    .call_async(|| {
                        calls += 1;
                        let slow = calls == 1;
                        async move {
                            let ms = if slow { 1_000 } else { 10 };
                            tokio::time::sleep(Duration::from_millis(ms)).await;
                            Ok::<_, ()>(slow)
                        }
                    }),
            );
            assert_eq!(out, Ok(false), "the hedge answers first");
        });
        let hedging = events
            .iter()
            .find(|e| e.get("message") == Some("hedging"))
            .unwrap_or_else(|| panic!("{events:#?}"));
        assert_eq!(hedging.level, level);
        assert_eq!(
            hedging.names(),
            ["message", "function", "attempt", "delay_ms"]
        );
        assert_eq!(hedging.get("function"), Some("slow"));
        assert_eq!(hedging.get("attempt"), Some("1"));
        assert_eq!(hedging.get("delay_ms"), Some("50"));
    }
}

#[derive(Debug)]
struct Shown(u32);

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "shown #{}", self.0)
    }
}

#[derive(Debug)]
struct DebugOnly(#[allow(dead_code)] u32);

#[retry(attempts = 2, jitter = none, base = "10ms", trace_level = error)]
fn display_error() -> Result<(), Shown> {
    Err(Shown(7))
}

#[retry(attempts = 2, jitter = none, base = "10ms", trace_level = trace)]
fn debug_error() -> Result<(), DebugOnly> {
    Err(DebugOnly(8))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Job {
    Pending,
}

#[retry(attempts = 2, base = "10ms", jitter = none, trace_level = debug, on_ok = |j: &Job| *j == Job::Pending)]
fn pending_job() -> Result<Job, Shown> {
    Ok(Job::Pending)
}

#[test]
fn the_attribute_s_events_with_the_error_or_the_value_name_the_crate() {
    let events = capture(|| {
        let _ = testing::record_sleeps(display_error);
    });
    assert_eq!(events.len(), 2, "{events:#?}");
    assert!(events.iter().all(|e| e.level == Level::ERROR));
    assert_eq!(
        events[0].names(),
        ["message", "function", "attempt", "delay_ms", "error"]
    );
    assert_eq!(events[0].get("message"), Some("retrying"));
    assert_eq!(events[0].get("function"), Some("display_error"));
    assert_eq!(events[0].get("attempt"), Some("1"));
    assert_eq!(events[0].get("delay_ms"), Some("10"));
    assert_eq!(events[0].get("error"), Some("shown #7"));
    assert_eq!(
        events[1].names(),
        ["message", "function", "calls", "reason", "error"]
    );
    assert_eq!(events[1].get("message"), Some("giving up"));
    assert_eq!(events[1].get("calls"), Some("2"));
    assert_eq!(events[1].get("error"), Some("shown #7"));

    let events = capture(|| {
        let _ = testing::record_sleeps(debug_error);
    });
    assert_eq!(events.len(), 2, "{events:#?}");
    assert!(events.iter().all(|e| e.level == Level::TRACE));
    assert_eq!(events[0].get("error"), Some("DebugOnly(8)"));
    assert_eq!(events[1].get("error"), Some("DebugOnly(8)"));

    let events = capture(|| {
        let _ = testing::record_sleeps(pending_job);
    });
    assert_eq!(events.len(), 2, "{events:#?}");
    assert!(events.iter().all(|e| e.level == Level::DEBUG));
    assert_eq!(
        events[0].names(),
        ["message", "function", "attempt", "delay_ms", "value"]
    );
    assert_eq!(events[0].get("message"), Some("retrying on an Ok value"));
    assert_eq!(events[0].get("value"), Some("Pending"));
    assert_eq!(
        events[1].names(),
        ["message", "function", "calls", "reason", "value"]
    );
    assert_eq!(events[1].get("message"), Some("giving up on an Ok value"));
    assert_eq!(events[1].get("value"), Some("Pending"));
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

#[test]
fn fmt_with_file_and_line_prints_no_file_of_the_runtime() {
    let out = Printed::default();
    let writer = out.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("retry_jitter=trace"))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_file(true)
        .with_line_number(true)
        .with_target(true)
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        let _ = testing::record_sleeps(display_error);
    });
    let out = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    for line in &lines {
        assert!(line.contains(" retry_jitter: "), "{line}");
        assert!(
            !line.contains("retry-runtime") && !line.contains("retry_runtime"),
            "{line}"
        );
        assert!(!line.contains(".rs:"), "no file, no line: {line}");
    }
    assert!(
        lines[0]
            .contains("retrying function=\"display_error\" attempt=1 delay_ms=10 error=shown #7"),
        "{out}"
    );
    assert!(
        lines[1].contains(
            "giving up function=\"display_error\" calls=2 reason=\"attempts spent\" error=shown #7"
        ),
        "{out}"
    );
}

/// A subscriber that wants none of the crate's events: its `Interest::never` is cached in the
/// callsites, and no event reaches it.
struct Uninterested(Arc<Mutex<u32>>);

impl Subscriber for Uninterested {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if meta.target() == "retry_jitter" {
            Interest::never()
        } else {
            Interest::always()
        }
    }
    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        meta.target() != "retry_jitter"
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        if event.metadata().target() == "retry_jitter" {
            *self.0.lock().unwrap() += 1;
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn a_subscriber_without_interest_gets_no_event() {
    let seen = Arc::new(Mutex::new(0));
    tracing::subscriber::with_default(Uninterested(seen.clone()), || {
        for level in LEVELS {
            let _ = Retry::new(no_wait(2))
                .trace(level)
                .call(|| Err::<(), _>("down"));
        }
        let _ = testing::record_sleeps(display_error);
    });
    assert_eq!(*seen.lock().unwrap(), 0);
}

/// The callsites a subscriber set now is told of: every callsite registered so far.
fn registered() -> HashSet<Identifier> {
    let recorder = Recorder::default();
    tracing::subscriber::with_default(recorder.clone(), || {});
    recorder.callsites()
}

#[test]
fn each_event_s_callsite_is_registered_as_tracing_s_own_are() {
    let mut events = Vec::new();
    for level in LEVELS {
        events.extend(capture(|| {
            let _ = Retry::new(no_wait(2))
                .trace(level)
                .call(|| Err::<(), _>("down"));
        }));
    }
    assert_eq!(events.len(), 10, "{events:#?}");
    // A callsite another test's thread is registering right then still sends its event (as
    // `tracing`'s own do): it is in the registry a moment later.
    let mut waited = Duration::ZERO;
    loop {
        let registered = registered();
        let missing: Vec<_> = events
            .iter()
            .filter(|e| !registered.contains(&e.callsite))
            .collect();
        if missing.is_empty() {
            break;
        }
        assert!(
            waited < Duration::from_secs(5),
            "not registered: {missing:#?}"
        );
        std::thread::sleep(Duration::from_millis(10));
        waited += Duration::from_millis(10);
    }
    // One callsite per kind of event and level.
    let distinct: HashSet<_> = events.iter().map(|e| e.callsite.clone()).collect();
    assert_eq!(distinct.len(), 10);
}
