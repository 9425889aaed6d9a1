//! `cancel = …` and `Retry::cancel`: a cancelled token ends the wait at once (a blocking one
//! too), no further attempt starts, and the call returns its last error with
//! `GiveUpReason::Cancelled`.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use retry_jitter::{
    retry, AdaptiveThrottle, CancelToken, CircuitBreaker, GiveUp, GiveUpReason, Jitter, Policy,
    Retry, RetryBudget, RetryEvent,
};

/// The error of call number `n`: which error came back says which attempt it was.
#[derive(Debug, PartialEq, Eq)]
struct Down(u32);

/// Each wait an hour: a call that returns in seconds had its wait cut short.
const HOUR: Duration = Duration::from_secs(3600);
/// A generous bound for "at once", whatever the machine's load.
const PROMPTLY: Duration = Duration::from_secs(30);

static GAVE_UP: Mutex<Vec<(&'static str, GiveUpReason, u32)>> = Mutex::new(Vec::new());

fn record(_: &Down, g: &GiveUp) {
    GAVE_UP
        .lock()
        .unwrap()
        .push((g.function, g.reason, g.calls));
}

fn gave_up(function: &str) -> Vec<(GiveUpReason, u32)> {
    let seen = GAVE_UP.lock().unwrap();
    seen.iter()
        .filter(|(f, _, _)| *f == function)
        .map(|(_, r, c)| (*r, *c))
        .collect()
}

#[retry(attempts = 5, base = "1h", cap = "1h", jitter = none, cancel = token, give_up = record)]
fn blocking(token: &CancelToken, calls: &AtomicU32) -> Result<(), Down> {
    Err(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[test]
fn a_sync_fn_cancelled_from_another_thread_during_its_wait_returns_at_once() {
    let token = CancelToken::new();
    let calls = AtomicU32::new(0);
    let started = Instant::now();
    let out = std::thread::scope(|s| {
        let call = s.spawn(|| blocking(&token, &calls));
        // Let the first attempt fail and the hour's wait begin.
        while calls.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(50));
        token.cancel();
        call.join().unwrap()
    });
    assert_eq!(out, Err(Down(1)), "the last (and only) error, unchanged");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "no attempt after the cancel"
    );
    assert!(started.elapsed() < PROMPTLY, "{:?}", started.elapsed());
    assert_eq!(gave_up("blocking"), [(GiveUpReason::Cancelled, 1)]);
}

#[track_caller]
#[retry(attempts = 5, base = "1h", cap = "1h", jitter = none, cancel = token)]
fn blocking_inline(token: &CancelToken, calls: &AtomicU32) -> Result<(), Down> {
    Err(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[test]
fn a_track_caller_fn_whose_loop_is_written_inline_is_cancelled_the_same() {
    let token = CancelToken::new();
    let calls = AtomicU32::new(0);
    let started = Instant::now();
    let out = std::thread::scope(|s| {
        let call = s.spawn(|| blocking_inline(&token, &calls));
        while calls.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(50));
        token.cancel();
        call.join().unwrap()
    });
    assert_eq!((out, calls.load(Ordering::SeqCst)), (Err(Down(1)), 1));
    assert!(started.elapsed() < PROMPTLY, "{:?}", started.elapsed());
}

#[retry(attempts = 5, base = "1h", cap = "1h", jitter = none, cancel = token, give_up = record)]
async fn waits_an_hour(token: &CancelToken, calls: &AtomicU32) -> Result<(), Down> {
    Err(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[tokio::test(start_paused = true)]
async fn an_async_fn_cancelled_during_its_wait_returns_then_on_the_paused_clock() {
    let token = CancelToken::new();
    let calls = AtomicU32::new(0);
    let started = tokio::time::Instant::now();
    let cancel = async {
        tokio::time::sleep(Duration::from_secs(10)).await;
        token.cancel();
    };
    let (out, ()) = tokio::join!(waits_an_hour(&token, &calls), cancel);
    assert_eq!((out, calls.load(Ordering::SeqCst)), (Err(Down(1)), 1));
    // The paused clock moved to the cancel, not to the end of the hour.
    assert_eq!(started.elapsed(), Duration::from_secs(10));
    assert_eq!(gave_up("waits_an_hour"), [(GiveUpReason::Cancelled, 1)]);
}

#[retry(attempts = 5, base = "1h", cap = "1h", jitter = none, hedge = "1s", cancel = token)]
async fn hedged(token: &CancelToken, calls: &AtomicU32) -> Result<(), Down> {
    Err(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[tokio::test(start_paused = true)]
async fn a_hedged_fn_cancelled_during_its_backoff_wait_returns_then() {
    let token = CancelToken::new();
    let calls = AtomicU32::new(0);
    let started = tokio::time::Instant::now();
    let cancel = async {
        tokio::time::sleep(Duration::from_secs(10)).await;
        token.cancel();
    };
    let (out, ()) = tokio::join!(hedged(&token, &calls), cancel);
    assert_eq!((out, calls.load(Ordering::SeqCst)), (Err(Down(1)), 1));
    assert_eq!(started.elapsed(), Duration::from_secs(10));
}

static SHUTDOWN: CancelToken = CancelToken::new();

#[retry(attempts = 5, base = "1h", cap = "1h", jitter = none, cancel = &SHUTDOWN, give_up = record)]
async fn until_shutdown(calls: &AtomicU32) -> Result<(), Down> {
    Err(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[tokio::test(start_paused = true)]
async fn a_token_in_a_static_cancelled_through_a_clone() {
    let calls = AtomicU32::new(0);
    let clone = SHUTDOWN.clone();
    let cancel = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        clone.cancel();
    };
    let (out, ()) = tokio::join!(until_shutdown(&calls), cancel);
    assert_eq!((out, calls.load(Ordering::SeqCst)), (Err(Down(1)), 1));
    assert!(SHUTDOWN.is_cancelled());
    assert_eq!(gave_up("until_shutdown"), [(GiveUpReason::Cancelled, 1)]);
}

#[test]
fn clones_share_the_state_both_ways() {
    let a = CancelToken::new();
    let b = a.clone();
    let c = b.clone();
    assert!(!a.is_cancelled() && !b.is_cancelled() && !c.is_cancelled());
    c.cancel();
    assert!(a.is_cancelled() && b.is_cancelled());
    // A token not cloned from them is not.
    assert!(!CancelToken::new().is_cancelled());
}

static NOTIFIED: AtomicU32 = AtomicU32::new(0);

fn count(_: &Down, _: &RetryEvent) {
    NOTIFIED.fetch_add(1, Ordering::SeqCst);
}

#[retry(attempts = 5, base = "1h", cap = "1h", cancel = token, notify = count, give_up = record)]
fn already_cancelled(token: &CancelToken, calls: &AtomicU32) -> Result<(), Down> {
    Err(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[test]
fn a_token_cancelled_before_the_call_lets_the_first_attempt_run_and_no_other() {
    let token = CancelToken::new();
    token.cancel();
    let calls = AtomicU32::new(0);
    let started = Instant::now();
    assert_eq!(already_cancelled(&token, &calls), Err(Down(1)));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(started.elapsed() < PROMPTLY);
    // No retry was announced: the call ended on its first error.
    assert_eq!(NOTIFIED.load(Ordering::SeqCst), 0);
    assert_eq!(gave_up("already_cancelled"), [(GiveUpReason::Cancelled, 1)]);
}

#[test]
fn a_success_is_returned_whatever_the_token() {
    let token = CancelToken::new();
    token.cancel();
    let r = Retry::new(Policy::new()).cancel(&token);
    assert_eq!(r.call(|| Ok::<_, Down>(7)), Ok(7));
}

#[test]
fn the_closure_api_sync_call_is_cancelled_from_another_thread() {
    let token = CancelToken::new();
    let calls = AtomicU32::new(0);
    let reasons = Mutex::new(Vec::new());
    let policy = Policy::new()
        .with_base(HOUR)
        .with_cap(HOUR)
        .with_jitter(Jitter::None);
    let r = Retry::new(policy)
        .cancel(&token)
        .give_up(|_: &Down, g: &GiveUp| reasons.lock().unwrap().push(g.reason));
    let started = Instant::now();
    let out = std::thread::scope(|s| {
        let call =
            s.spawn(|| r.call(|| Err::<(), _>(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))));
        while calls.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(50));
        token.cancel();
        call.join().unwrap()
    });
    assert_eq!((out, calls.load(Ordering::SeqCst)), (Err(Down(1)), 1));
    assert!(started.elapsed() < PROMPTLY, "{:?}", started.elapsed());
    assert_eq!(*reasons.lock().unwrap(), [GiveUpReason::Cancelled]);
}

#[tokio::test(start_paused = true)]
async fn the_closure_api_async_call_is_cancelled_during_its_wait() {
    let token = CancelToken::new();
    let calls = AtomicU32::new(0);
    let r = Retry::new(
        Policy::new()
            .with_base(HOUR)
            .with_cap(HOUR)
            .with_jitter(Jitter::None),
    )
    .cancel(&token);
    let started = tokio::time::Instant::now();
    let call = r.call_async(|| {
        let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
        async move { Err::<(), _>(Down(n)) }
    });
    let cancel = async {
        tokio::time::sleep(Duration::from_secs(3)).await;
        token.cancel();
    };
    let (out, ()) = tokio::join!(call, cancel);
    assert_eq!((out, calls.load(Ordering::SeqCst)), (Err(Down(1)), 1));
    assert_eq!(started.elapsed(), Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn a_cancel_during_an_async_attempt_after_a_failure_drops_it_and_returns_the_error_before() {
    let token = CancelToken::new();
    let calls = AtomicU32::new(0);
    let reasons = Mutex::new(Vec::new());
    let r = Retry::new(
        Policy::new()
            .with_base(Duration::from_secs(1))
            .with_jitter(Jitter::None),
    )
    .cancel(&token)
    .give_up(|_: &Down, g: &GiveUp| reasons.lock().unwrap().push((g.reason, g.calls)));
    let started = tokio::time::Instant::now();
    let call = r.call_async(|| {
        let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            if n == 2 {
                // A slow second attempt, cancelled 2 s into its 5.
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
            Err::<(), _>(Down(n))
        }
    });
    let cancel = async {
        tokio::time::sleep(Duration::from_secs(3)).await;
        token.cancel();
    };
    let (out, ()) = tokio::join!(call, cancel);
    // Dropped at once: the error of the attempt before it, 1 s of wait and 2 s of attempt.
    assert_eq!((out, calls.load(Ordering::SeqCst)), (Err(Down(1)), 2));
    assert_eq!(started.elapsed(), Duration::from_secs(3));
    // Two calls made: the dropped one counts.
    assert_eq!(*reasons.lock().unwrap(), [(GiveUpReason::Cancelled, 2)]);
}

#[retry(attempts = 5, base = "1s", jitter = none, cancel = token, give_up = record)]
async fn slow_second(token: &CancelToken, calls: &AtomicU32) -> Result<(), Down> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    if n == 2 {
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    Err(Down(n))
}

#[retry(attempts = 5, base = "1s", jitter = none, timeout = "10s", cancel = token)]
async fn slow_second_timed(token: &CancelToken, calls: &AtomicU32) -> Result<(), std::io::Error> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    if n == 2 {
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    // A reset connection: transient, retried.
    Err(std::io::Error::new(
        std::io::ErrorKind::ConnectionReset,
        format!("down {n}"),
    ))
}

#[tokio::test(start_paused = true)]
async fn an_async_fn_drops_an_attempt_cancelled_after_a_failure_with_or_without_timeout() {
    for timed in [false, true] {
        let token = CancelToken::new();
        let calls = AtomicU32::new(0);
        let started = tokio::time::Instant::now();
        let cancel = async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            token.cancel();
        };
        let call = async {
            if timed {
                slow_second_timed(&token, &calls)
                    .await
                    .map_err(|e| Down(e.to_string()["down ".len()..].parse().unwrap()))
            } else {
                slow_second(&token, &calls).await
            }
        };
        let (out, ()) = tokio::join!(call, cancel);
        assert_eq!(out, Err(Down(1)), "timed: {timed}");
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(
            started.elapsed(),
            Duration::from_secs(3),
            "not the 5 s attempt"
        );
    }
    assert_eq!(gave_up("slow_second"), [(GiveUpReason::Cancelled, 2)]);
}

#[retry(attempts = 5, base = "1s", jitter = none, cancel = token)]
fn blocking_slow_second(token: &CancelToken, calls: &AtomicU32) -> Result<(), Down> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    if n == 2 {
        // Cancelled while running: a sync attempt is not interrupted, and is the last.
        token.cancel();
    }
    Err(Down(n))
}

#[test]
fn a_sync_attempt_cancelled_while_running_ends_as_it_would_and_is_the_last() {
    let token = CancelToken::new();
    let calls = AtomicU32::new(0);
    assert_eq!(blocking_slow_second(&token, &calls), Err(Down(2)));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[test]
fn the_budget_share_of_the_retry_that_never_runs_is_given_back() {
    static BUDGET: RetryBudget = RetryBudget::new(100);
    let token = CancelToken::new();
    let calls = AtomicU32::new(0);
    let r = Retry::new(
        Policy::new()
            .with_base(HOUR)
            .with_cap(HOUR)
            .with_jitter(Jitter::None),
    )
    .budget(&BUDGET)
    .cancel(&token);
    let out = std::thread::scope(|s| {
        let call =
            s.spawn(|| r.call(|| Err::<(), _>(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))));
        while calls.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            BUDGET.available() < 100,
            "the retry's share is taken during the wait"
        );
        token.cancel();
        call.join().unwrap()
    });
    assert_eq!(out, Err(Down(1)));
    assert_eq!(BUDGET.available(), 100);
}

#[test]
fn a_guard_set_after_the_token_keeps_it() {
    static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(60));
    let token = CancelToken::new();
    token.cancel();
    let calls = AtomicU32::new(0);
    static BREAKER: CircuitBreaker =
        CircuitBreaker::new(0.5, 100, Duration::from_secs(10), Duration::from_secs(5));
    let r = Retry::new(
        Policy::new()
            .with_base(HOUR)
            .with_cap(HOUR)
            .with_jitter(Jitter::None),
    )
    .cancel(&token)
    .throttle(&THROTTLE)
    .breaker(&BREAKER);
    let out = r.call(|| Err::<(), _>(io(calls.fetch_add(1, Ordering::SeqCst) + 1)));
    assert_eq!(out.unwrap_err().to_string(), "down 1");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

fn io(n: u32) -> std::io::Error {
    std::io::Error::other(format!("down {n}"))
}

#[test]
fn the_reason_reads_cancelled() {
    assert_eq!(GiveUpReason::Cancelled.label(), "cancelled");
    assert_eq!(GiveUpReason::Cancelled.to_string(), "cancelled");
}

#[test]
fn a_cancellable_async_fn_is_send() {
    fn send<T: Send>(_: &T) {}
    let (token, calls) = (CancelToken::new(), AtomicU32::new(0));
    send(&waits_an_hour(&token, &calls));
    send(&hedged(&token, &calls));
    let r = Retry::new(Policy::new()).cancel(&token);
    send(&r.call_async(|| async { Err::<(), _>(Down(1)) }));
}

/// Send, not Sync: an error a future may own across an `.await`, but not borrow.
#[derive(Debug)]
struct Unshared(std::cell::Cell<u32>);

#[retry(attempts = 3, base = "0ms", cancel = token, stats = |_: &retry_jitter::RetryStats| {})]
async fn unshared_error(token: &CancelToken) -> Result<(), Unshared> {
    Err(Unshared(std::cell::Cell::new(1)))
}

#[test]
fn a_cancellable_async_fn_whose_error_is_not_sync_is_still_send() {
    fn is_send<T: Send>(_: &T) {}
    let token = CancelToken::new();
    // The last error is kept through the next attempt by value, never borrowed across it.
    is_send(&unshared_error(&token));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let out = rt.block_on(unshared_error(&token));
    assert_eq!(out.map_err(|e| e.0.get()), Err(1));
}
