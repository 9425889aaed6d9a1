//! A test kit: reproducible jitter, and sync retries whose waits are recorded instead of slept.
//!
//! Async code needs nothing from here: run it under tokio's paused clock
//! (`#[tokio::test(start_paused = true)]`) and the waits take no real time.

use core::cell::RefCell;
use core::time::Duration;

thread_local! {
    static RECORDER: RefCell<Option<Recorder>> = const { RefCell::new(None) };
}

struct Recorder {
    waits: Vec<Duration>,
    offset: Duration,
}

/// Seed this thread's jitter generator, so the waits drawn from now on are the same every run.
///
/// The generator is per thread: seed the thread that runs the retries (a current-thread tokio
/// runtime runs everything on the test's thread).
///
/// ```
/// use retry_runtime::{testing, Backoff};
///
/// testing::seed_jitter(7);
/// let a: Vec<_> = Backoff::DEFAULT.schedule().take(4).collect();
/// testing::seed_jitter(7);
/// let b: Vec<_> = Backoff::DEFAULT.schedule().take(4).collect();
/// assert_eq!(a, b);
/// ```
pub fn seed_jitter(seed: u64) {
    crate::rng::seed(seed);
}

/// Run `f` with every blocking retry wait on this thread recorded instead of slept.
///
/// Returns what `f` returned and the waits, in order. The clock that `max_elapsed` is measured
/// on moves forward by each recorded wait, as if it had been slept. Nested calls record into
/// the innermost.
///
/// ```
/// use retry_runtime::{testing, Jitter, Policy, Retry};
///
/// let policy = Policy::new().with_jitter(Jitter::None);
/// let (result, waits) = testing::record_sleeps(|| Retry::new(policy).call(|| Err::<(), _>("down")));
/// assert_eq!(result, Err("down"));
/// assert_eq!(waits.iter().map(|w| w.as_millis()).collect::<Vec<_>>(), [200, 400, 800, 1600]);
/// ```
pub fn record_sleeps<T>(f: impl FnOnce() -> T) -> (T, Vec<Duration>) {
    let outer = RECORDER.with(|r| {
        r.borrow_mut().replace(Recorder {
            waits: Vec::new(),
            offset: Duration::ZERO,
        })
    });
    // Put the outer recorder back even if `f` panics, so one failing test cannot leave the
    // thread recording.
    struct Restore(Option<Option<Recorder>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                RECORDER.with(|r| *r.borrow_mut() = outer);
            }
        }
    }
    let mut restore = Restore(Some(outer));
    let value = f();
    let inner = RECORDER.with(|r| r.borrow_mut().take());
    let outer = restore.0.take().unwrap_or(None);
    RECORDER.with(|r| *r.borrow_mut() = outer);
    (value, inner.map(|r| r.waits).unwrap_or_default())
}

/// Record `delay` if this thread is recording; `false` if it is not (the caller sleeps).
pub(crate) fn record(delay: Duration) -> bool {
    RECORDER.with(|r| match r.borrow_mut().as_mut() {
        Some(rec) => {
            rec.waits.push(delay);
            rec.offset = rec.offset.saturating_add(delay);
            true
        }
        None => false,
    })
}

/// How far the recorded waits have moved this thread's clock, if it is recording.
pub(crate) fn recorded_offset() -> Option<Duration> {
    RECORDER.with(|r| r.borrow().as_ref().map(|rec| rec.offset))
}
