//! A test kit: reproducible jitter, and sync retries whose waits are recorded instead of slept.
//!
//! Async code needs nothing from here.
//!
//! Run it under tokio's paused clock (`#[tokio::test(start_paused = true)]`): the waits take
//! no real time.

use core::cell::RefCell;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::time::Duration;

thread_local! {
    static RECORDER: RefCell<Option<Recorder>> = const { RefCell::new(None) };
}

/// How many [`record_sleeps`] are running, on every thread.
///
/// While none is, a wait or a clock read does not look at this thread's recorder (a
/// thread-local with a destructor) at all.
///
/// A thread that records has counted itself before it looks, so it always sees its own.
static RECORDING: AtomicUsize = AtomicUsize::new(0);

/// Whether any thread is recording (so this one may be).
#[inline]
fn recording() -> bool {
    RECORDING.load(Ordering::Relaxed) != 0
}

struct Recorder {
    waits: Vec<Duration>,
    offset: Duration,
}

/// Seed this thread's jitter generator, so the waits drawn from now on are the same every run.
///
/// The generator is per thread: seed the thread that runs the retries.
///
/// A current-thread tokio runtime runs everything on the test's thread.
///
/// ```
/// use retry_jitter::{testing, Backoff};
///
/// testing::seed_jitter(7);
/// let a: Vec<_> = Backoff::DEFAULT.schedule().take(4).collect();
/// testing::seed_jitter(7);
/// let b: Vec<_> = Backoff::DEFAULT.schedule().take(4).collect();
/// assert_eq!(a, b);
/// ```
pub fn seed_jitter(seed: u64) {
    crate::policy::rng::seed(seed);
}

/// Run `f` with every blocking retry wait on this thread recorded instead of slept.
///
/// Returns what `f` returned and the waits, in order.
///
/// The clock that `max_elapsed` is measured on moves forward by each recorded wait, as if it
/// had been slept.
///
/// Nested calls record into the innermost.
///
/// ```
/// use retry_jitter::{testing, Jitter, Policy, Retry};
///
/// let policy = Policy::new().with_jitter(Jitter::None);
/// let (result, waits) = testing::record_sleeps(|| Retry::new(policy).call(|| Err::<(), _>("down")));
/// assert_eq!(result, Err("down"));
/// assert_eq!(waits.iter().map(|w| w.as_millis()).collect::<Vec<_>>(), [200, 400, 800, 1600]);
/// ```
pub fn record_sleeps<T>(f: impl FnOnce() -> T) -> (T, Vec<Duration>) {
    RECORDING.fetch_add(1, Ordering::Relaxed);
    struct Counted;
    impl Drop for Counted {
        fn drop(&mut self) {
            RECORDING.fetch_sub(1, Ordering::Relaxed);
        }
    }
    let _counted = Counted;
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
#[inline]
pub(crate) fn record(delay: Duration) -> bool {
    recording() && record_here(delay)
}

#[cold]
#[inline(never)]
fn record_here(delay: Duration) -> bool {
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
#[inline]
pub(crate) fn recorded_offset() -> Option<Duration> {
    if recording() {
        recorded_offset_here()
    } else {
        None
    }
}

#[cold]
#[inline(never)]
fn recorded_offset_here() -> Option<Duration> {
    RECORDER.with(|r| r.borrow().as_ref().map(|rec| rec.offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count of running recorders goes back down however `f` ends, nested or unwinding.
    ///
    /// A leftover count would only cost speed; a missing one would lose recorded waits.
    #[test]
    fn the_recording_count_follows_the_recorders() {
        let before = RECORDING.load(Ordering::Relaxed);
        let ((), waits) = record_sleeps(|| {
            assert!(recording());
            let ((), inner) = record_sleeps(|| assert!(record(Duration::from_millis(1))));
            assert_eq!(inner, [Duration::from_millis(1)]);
            assert!(record(Duration::ZERO));
        });
        assert_eq!(waits, [Duration::ZERO]);
        let unwound = std::panic::catch_unwind(|| record_sleeps(|| panic!("in f")));
        assert!(unwound.is_err());
        // (No other unit test of this crate records: the count is this test's alone.)
        assert_eq!(RECORDING.load(Ordering::Relaxed), before);
        assert!(
            !record_here(Duration::ZERO),
            "this thread records nothing now"
        );
    }
}
