//! A retried `async fn`'s future is `Send` whenever the body's future is, whatever the
//! function's `T` and `E` are: nothing of the `Result` is held across an `.await` — not the
//! body's, not the wait's. (With `max_elapsed`, or a `policy` that may carry one, the last
//! error is kept through each wait, so the future is `Send` when the error type is too; so
//! with `cancel`, which keeps it through the next attempt, and an awaited `notify`, which is
//! handed it. A `stats` hook keeps none.)
//!
//! Each function here is spawned on tokio's multi-thread runtime, which takes only `Send`
//! futures: the file compiles only if that holds, and the call counts show the loop ran.

use std::error::Error;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_jitter::{retry, RetryBudget, TimedOut};

/// A yield the body awaits between its failures: a real `.await` inside the attempt.
async fn tick() {
    tokio::time::sleep(Duration::from_millis(1)).await;
}

static BOXED: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, base = "1ms")]
async fn boxed_dyn_error() -> Result<u32, Box<dyn Error>> {
    tick().await;
    if BOXED.fetch_add(1, Ordering::Relaxed) < 2 {
        return Err("down".into());
    }
    Ok(7)
}

static RC: AtomicU32 = AtomicU32::new(0);

/// Neither `T` nor `E` is `Send`.
#[retry(attempts = 3, base = "1ms")]
async fn rc_error() -> Result<Rc<str>, Rc<str>> {
    tick().await;
    if RC.fetch_add(1, Ordering::Relaxed) < 2 {
        Err(Rc::from("down"))?;
    }
    Ok(Rc::from("up"))
}

/// A macro the expansion cannot read: the attempt is a nested `async` block.
macro_rules! fail_twice {
    ($calls:expr) => {
        if $calls.fetch_add(1, Ordering::Relaxed) < 2 {
            return Err(Rc::from("down"));
        }
    };
}

static NESTED_DYN: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, base = "1ms")]
async fn nested_boxed_dyn_error() -> Result<u32, Box<dyn Error>> {
    tick().await;
    let failed: Result<(), Rc<str>> = (|| {
        fail_twice!(NESTED_DYN);
        Ok(())
    })();
    failed.map_err(|e| e.to_string())?;
    Ok(7)
}

static NESTED_RC: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, base = "1ms")]
async fn nested_rc_error() -> Result<u32, Rc<str>> {
    tick().await;
    fail_twice!(NESTED_RC);
    Ok(7)
}

static BUDGET: RetryBudget = RetryBudget::new(100);
static BUDGETED: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, base = "1ms", budget = &BUDGET)]
async fn budgeted_rc_error() -> Result<u32, Rc<str>> {
    tick().await;
    fail_twice!(BUDGETED);
    Ok(7)
}

/// An error of one's own that is not `Send`, with the `From<TimedOut>` that `timeout` needs.
#[derive(Debug)]
struct LocalError(#[allow(dead_code)] Rc<str>);

impl From<TimedOut> for LocalError {
    fn from(_: TimedOut) -> Self {
        LocalError(Rc::from("timed out"))
    }
}

static TIMED: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, base = "1ms", timeout = "1s")]
async fn timed_local_error() -> Result<u32, LocalError> {
    tick().await;
    if TIMED.fetch_add(1, Ordering::Relaxed) < 2 {
        return Err(LocalError(Rc::from("down")));
    }
    Ok(7)
}

static HEDGED: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, base = "1ms", hedge = "1s")]
async fn hedged_rc_error() -> Result<u32, Rc<str>> {
    tick().await;
    fail_twice!(HEDGED);
    Ok(7)
}

static HEDGED_TIMED: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, base = "1ms", hedge = "1s", timeout = "2s")]
async fn hedged_timed_local_error() -> Result<u32, LocalError> {
    tick().await;
    if HEDGED_TIMED.fetch_add(1, Ordering::Relaxed) < 2 {
        return Err(LocalError(Rc::from("down")));
    }
    Ok(7)
}

static WITH_STATS: AtomicU32 = AtomicU32::new(0);

/// A sync `stats` hook: its recorder is held across the waits by reference, and keeps no error.
#[retry(attempts = 3, base = "1ms", stats = |s: &retry_jitter::RetryStats| assert!(s.attempts > 0))]
async fn stats_rc_error() -> Result<u32, Rc<str>> {
    tick().await;
    fail_twice!(WITH_STATS);
    Ok(7)
}

/// A method whose `Self` is shared across threads, as an axum handler's state is.
struct Service {
    calls: AtomicU32,
}

impl Service {
    #[retry(attempts = 3, base = "1ms")]
    async fn get(&self) -> Result<u32, Box<dyn Error>> {
        tick().await;
        if self.calls.fetch_add(1, Ordering::Relaxed) < 2 {
            return Err("down".into());
        }
        Ok(7)
    }
}

/// `Send` futures only: a spawned task's.
fn spawn<F>(future: F) -> tokio::task::JoinHandle<bool>
where
    F: std::future::Future + Send + 'static,
    F::Output: IsOk,
{
    tokio::spawn(async move { future.await.is_ok() })
}

/// Whether an outcome is `Ok`, so the task's output is `Send` however the error is not.
trait IsOk {
    fn is_ok(&self) -> bool;
}

impl<T, E> IsOk for Result<T, E> {
    fn is_ok(&self) -> bool {
        Result::is_ok(self)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retried_futures_with_errors_that_are_not_send_are_send_and_retry() {
    let service: &'static Service = Box::leak(Box::new(Service {
        calls: AtomicU32::new(0),
    }));
    let tasks = [
        spawn(boxed_dyn_error()),
        spawn(rc_error()),
        spawn(nested_boxed_dyn_error()),
        spawn(nested_rc_error()),
        spawn(budgeted_rc_error()),
        spawn(timed_local_error()),
        spawn(hedged_rc_error()),
        spawn(hedged_timed_local_error()),
        spawn(stats_rc_error()),
        spawn(service.get()),
    ];
    for task in tasks {
        assert!(
            task.await.unwrap(),
            "every call succeeds at its third attempt"
        );
    }
    for calls in [
        &BOXED,
        &RC,
        &NESTED_DYN,
        &NESTED_RC,
        &BUDGETED,
        &TIMED,
        &HEDGED,
        &HEDGED_TIMED,
        &WITH_STATS,
        &service.calls,
    ] {
        assert_eq!(calls.load(Ordering::Relaxed), 3);
    }
}
