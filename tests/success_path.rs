//! What a first-call success does not do: allocate (counted with a global allocator that tallies
//! this thread's allocations) or read the clock without `max_elapsed` (counted through the
//! clock the loop is given). No random draw: tests/retry/behaviour.rs. No atomic without `budget`:
//! the budget is a zero-sized `Unset` then, and BENCHMARKS.md shows the instructions.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use retry_jitter::retry;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract is passed on to System.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_in(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

#[retry(attempts = 5, base = "100ms", jitter = full)]
fn ok_sync(x: &u64) -> Result<u64, String> {
    Ok(x + 1)
}

#[retry(attempts = 5, base = "100ms", jitter = decorrelated, max_elapsed = "1s")]
async fn ok_async(x: &u64) -> Result<u64, String> {
    Ok(x + 1)
}

/// A macro of the user's: the attribute cannot see into it, so this attempt stays a nested
/// `async` block (the fallback), which must cost nothing on success either.
macro_rules! same {
    ($e:expr) => {
        $e
    };
}

#[retry(attempts = 5, base = "100ms", jitter = decorrelated, max_elapsed = "1s")]
async fn ok_async_nested(x: &u64) -> Result<u64, String> {
    same!(Ok(x + 1))
}

#[retry(attempts = 3, base = "0ns")]
async fn fails_once(n: &Cell<u32>) -> Result<u32, u32> {
    n.set(n.get() + 1);
    if n.get() < 2 {
        Err(n.get())
    } else {
        Ok(n.get())
    }
}

fn poll_once<F: Future>(f: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(f).poll(&mut cx) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("a success does not wait"),
    }
}

#[test]
fn a_first_call_success_allocates_nothing() {
    let x = 41;
    // A function's budget (issue 53) makes its window at its first call ever, and a thread
    // registers the stripe it gives back on exit at its first call of any: measured from the
    // second call on.
    let _ = (
        ok_sync(&x),
        poll_once(ok_async(&x)),
        poll_once(ok_async_nested(&x)),
    );
    assert_eq!(allocations_in(|| assert_eq!(ok_sync(&x), Ok(42))), 0);
    assert_eq!(
        allocations_in(|| assert_eq!(poll_once(ok_async(&x)), Ok(42))),
        0
    );
    assert_eq!(
        allocations_in(|| assert_eq!(poll_once(ok_async_nested(&x)), Ok(42))),
        0
    );
}

#[test]
fn the_counter_sees_what_a_failure_allocates() {
    // The control, so that the test above cannot pass by counting nothing: once a call fails,
    // an async fn's retry state is boxed, and the counter sees it.
    let n = Cell::new(0);
    let allocated = allocations_in(|| assert_eq!(poll_once(fails_once(&n)), Ok(2)));
    assert!(allocated >= 1, "{allocated}");
}

static CLOCK_READS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

fn counting_clock() -> std::time::Instant {
    CLOCK_READS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    std::time::Instant::now()
}

async fn no_sleep(_: std::time::Duration) {}

#[test]
fn a_first_call_success_reads_the_clock_only_with_max_elapsed() {
    use retry_jitter::{Policy, Retry};
    use std::sync::atomic::Ordering::SeqCst;
    use std::time::Duration;

    // The second call of a `Retry`: its own budget (issue 53) read the clock once, at its
    // first call ever, to date the calls it counts; no call after that reads it.
    let reads = |policy: Policy| {
        let r = Retry::new(policy);
        let call = || {
            CLOCK_READS.store(0, SeqCst);
            let out =
                poll_once(r.call_async_with(no_sleep, counting_clock, || async { Ok::<_, ()>(1) }));
            assert_eq!(out, Ok(1));
            CLOCK_READS.load(SeqCst)
        };
        let first = call();
        let later = call();
        assert_eq!(
            first,
            later + 1,
            "the budget's one reading, at the first call"
        );
        later
    };
    assert_eq!(reads(Policy::new()), 0);
    assert_eq!(
        reads(Policy::new().with_max_elapsed(Duration::from_secs(1))),
        1
    );
}

// `timeout` and a fixed `hedge`: guide::hedging and guide::deadlines promise a first-call success makes no allocation
// and reads no clock (the timer is an `async fn` that only holds its limit until polled, and a
// ready attempt never lets it be), and that a `"pNN"` hedge reads the clock, to learn latency.

/// Its own counter: the tests run in parallel.
static CLOCK_READS_TOO: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

fn counting_clock_too() -> std::time::Instant {
    CLOCK_READS_TOO.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    std::time::Instant::now()
}

#[retry(attempts = 3, timeout = "1s", sleep = no_sleep, clock = counting_clock_too)]
async fn ok_with_timeout(x: &u64) -> Result<u64, std::io::Error> {
    Ok(x + 1)
}

#[retry(attempts = 3, hedge = "50ms", sleep = no_sleep, clock = counting_clock_too)]
async fn ok_hedged(x: &u64) -> Result<u64, String> {
    Ok(x + 1)
}

#[retry(attempts = 3, hedge = "p95", sleep = no_sleep, clock = counting_clock_too)]
async fn ok_hedged_adaptively(x: &u64) -> Result<u64, String> {
    Ok(x + 1)
}

#[test]
fn a_first_call_success_with_timeout_or_hedge_allocates_nothing_and_reads_no_clock() {
    use std::sync::atomic::Ordering::SeqCst;
    let x = 41;
    // Each function's budget (issue 53) reads the clock once in its life, at its first call,
    // to date the calls it counts: measured from the second call on.
    let reads_and_allocations = |f: &dyn Fn()| {
        CLOCK_READS_TOO.store(0, SeqCst);
        f();
        let first = CLOCK_READS_TOO.swap(0, SeqCst);
        let allocated = allocations_in(f);
        let later = CLOCK_READS_TOO.load(SeqCst);
        assert_eq!(
            first,
            later + 1,
            "the budget's one reading, at the first call"
        );
        (later, allocated)
    };
    let timeout = || assert_eq!(poll_once(ok_with_timeout(&x)).unwrap(), 42);
    assert_eq!(reads_and_allocations(&timeout), (0, 0));
    let hedged = || assert_eq!(poll_once(ok_hedged(&x)), Ok(42));
    assert_eq!(reads_and_allocations(&hedged), (0, 0));
    // The control: a percentile hedge reads the clock at the attempt's start and end.
    let adaptive = || assert_eq!(poll_once(ok_hedged_adaptively(&x)), Ok(42));
    assert_eq!(reads_and_allocations(&adaptive), (2, 0));
}

// `on_ok` and `attempt = n`: an accepted first value costs one call of the predicate, no clock
// read and no allocation; the attempt's number is read off the empty state.

static PREDICATE_CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

fn counted_pending(value: &u64) -> bool {
    PREDICATE_CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    *value == 0
}

/// Its own counter: the tests run in parallel.
static CLOCK_READS_ON_OK: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

fn counting_clock_on_ok() -> std::time::Instant {
    CLOCK_READS_ON_OK.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    std::time::Instant::now()
}

#[retry(attempts = 3, on_ok = counted_pending, attempt = n, sleep = no_sleep, clock = counting_clock_on_ok)]
async fn ok_accepted_async(x: &u64) -> Result<u64, String> {
    Ok(x + u64::from(n))
}

#[retry(attempts = 3, on_ok = counted_pending, attempt = n)]
fn ok_accepted_sync(x: &u64) -> Result<u64, String> {
    Ok(x + u64::from(n))
}

#[test]
fn an_accepted_first_value_costs_one_predicate_call_and_nothing_else() {
    use std::sync::atomic::Ordering::SeqCst;
    let x = 41;
    // The function's budget (issue 53) reads the clock once, at its first call: from the
    // second on, none.
    assert_eq!(poll_once(ok_accepted_async(&x)), Ok(42));
    assert_eq!(CLOCK_READS_ON_OK.load(SeqCst), 1);
    PREDICATE_CALLS.store(0, SeqCst);
    CLOCK_READS_ON_OK.store(0, SeqCst);
    let allocated = allocations_in(|| assert_eq!(poll_once(ok_accepted_async(&x)), Ok(42)));
    assert_eq!(
        (allocated, CLOCK_READS_ON_OK.load(SeqCst)),
        (0, 0),
        "no allocation, no clock read"
    );
    assert_eq!(PREDICATE_CALLS.load(SeqCst), 1);
    assert_eq!(ok_accepted_sync(&x), Ok(42)); // its budget's window, made at its first call
    PREDICATE_CALLS.store(1, SeqCst);
    let allocated = allocations_in(|| assert_eq!(ok_accepted_sync(&x), Ok(42)));
    assert_eq!(allocated, 0);
    assert_eq!(PREDICATE_CALLS.load(SeqCst), 2);
}
