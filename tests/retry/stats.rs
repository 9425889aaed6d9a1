//! `stats = …`, `Retry::stats`, `Retry::call_with_stats` and `Retry::call_async_with_stats`:
//! each call's figures ([`RetryStats`]), handed over once when the call ends, success or
//! give-up — attempts (hedges included), hedges, the time waited and in all, how it ended.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use retry_jitter::{
    retry, CancelToken, CircuitBreaker, GiveUpReason, Jitter, Policy, Retry, RetryStats,
};

#[derive(Debug, PartialEq, Eq)]
struct Down(u32);

impl From<retry_jitter::CircuitOpen> for Down {
    fn from(_: retry_jitter::CircuitOpen) -> Self {
        Down(0)
    }
}

/// Every figure handed to `keep`, by function name.
static SEEN: Mutex<Vec<RetryStats>> = Mutex::new(Vec::new());

fn keep(stats: &RetryStats) {
    SEEN.lock().unwrap().push(*stats);
}

/// The figures of `function`'s calls, in order.
fn seen(function: &str) -> Vec<RetryStats> {
    let seen = SEEN.lock().unwrap();
    seen.iter()
        .filter(|s| s.function == function)
        .copied()
        .collect()
}

const MS: Duration = Duration::from_millis(1);

#[retry(attempts = 3, stats = keep)]
fn succeeds_at_once() -> Result<u32, Down> {
    Ok(7)
}

#[test]
fn a_call_that_succeeds_at_once_reports_one_attempt_and_nothing_waited() {
    assert_eq!(succeeds_at_once(), Ok(7));
    let [stats] = seen("succeeds_at_once")[..] else {
        panic!("one report per call: {:?}", seen("succeeds_at_once"))
    };
    assert_eq!((stats.attempts, stats.hedges), (1, 0));
    assert_eq!(stats.waited, Duration::ZERO);
    assert_eq!(stats.gave_up, None);
    assert!(stats.elapsed < Duration::from_secs(5), "{stats:?}");
}

#[retry(attempts = 4, base = "2ms", jitter = none, stats = keep)]
fn fails_twice(calls: &AtomicU32) -> Result<u32, Down> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    if n < 3 {
        Err(Down(n))
    } else {
        Ok(n)
    }
}

#[test]
fn a_sync_call_that_recovers_reports_its_attempts_and_the_waits_it_slept() {
    let calls = AtomicU32::new(0);
    assert_eq!(fails_twice(&calls), Ok(3));
    let [stats] = seen("fails_twice")[..] else {
        panic!("one report per call: {:?}", seen("fails_twice"))
    };
    assert_eq!((stats.attempts, stats.hedges, stats.gave_up), (3, 0, None));
    // 2 ms, then 4 ms: no jitter.
    assert_eq!(stats.waited, 6 * MS);
    assert!(stats.elapsed >= 6 * MS, "{stats:?}");
}

#[retry(attempts = 3, base = "0ms", stats = |s: &RetryStats| keep(s))]
fn always_down(calls: &AtomicU32) -> Result<(), Down> {
    Err(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[retry(attempts = 3, on = |_: &Down| false, stats = keep)]
fn stopped(calls: &AtomicU32) -> Result<(), Down> {
    Err(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[test]
fn a_call_that_gives_up_reports_why_and_its_calls() {
    let calls = AtomicU32::new(0);
    assert_eq!(always_down(&calls), Err(Down(3)));
    let [stats] = seen("always_down")[..] else {
        panic!("{:?}", seen("always_down"))
    };
    assert_eq!(stats.attempts, 3);
    assert_eq!(stats.gave_up, Some(GiveUpReason::Attempts));
    assert_eq!(stats.waited, Duration::ZERO);

    let calls = AtomicU32::new(0);
    assert_eq!(stopped(&calls), Err(Down(1)));
    let [stats] = seen("stopped")[..] else {
        panic!("{:?}", seen("stopped"))
    };
    assert_eq!(
        (stats.attempts, stats.gave_up),
        (1, Some(GiveUpReason::Stopped))
    );
}

static OPEN: CircuitBreaker =
    CircuitBreaker::new(1.0, 1, Duration::from_secs(3600), Duration::from_secs(3600));

#[retry(attempts = 1, breaker = &OPEN, stats = keep)]
fn behind_a_breaker(calls: &AtomicU32) -> Result<(), Down> {
    Err(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[test]
fn a_call_the_breaker_refuses_reports_no_attempt() {
    let calls = AtomicU32::new(0);
    assert_eq!(behind_a_breaker(&calls), Err(Down(1)), "opens the breaker");
    assert_eq!(behind_a_breaker(&calls), Err(Down(0)), "refused");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let seen = seen("behind_a_breaker");
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(
        (seen[0].attempts, seen[0].gave_up),
        (1, Some(GiveUpReason::Attempts))
    );
    assert_eq!(
        (seen[1].attempts, seen[1].gave_up),
        (0, Some(GiveUpReason::CircuitOpen))
    );
}

#[retry(attempts = 4, base = "100ms", jitter = none, stats = keep)]
async fn async_down(calls: &AtomicU32) -> Result<(), Down> {
    Err(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[tokio::test(start_paused = true)]
async fn an_async_call_reports_exact_waits_on_the_paused_clock() {
    let calls = AtomicU32::new(0);
    assert_eq!(async_down(&calls).await, Err(Down(4)));
    let [stats] = seen("async_down")[..] else {
        panic!("{:?}", seen("async_down"))
    };
    assert_eq!(
        (stats.attempts, stats.gave_up),
        (4, Some(GiveUpReason::Attempts))
    );
    // 100, 200 and 400 ms, and the attempts take no time on the paused clock.
    assert_eq!(stats.waited, 700 * MS);
    assert_eq!(stats.elapsed, 700 * MS);
}

#[retry(attempts = 3, hedge = "10ms", stats = keep)]
async fn hedged(calls: &AtomicU32) -> Result<u32, Down> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    if n == 1 {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Ok(n)
}

#[tokio::test(start_paused = true)]
async fn a_hedge_counts_as_an_attempt_and_a_hedge() {
    let calls = AtomicU32::new(0);
    assert_eq!(hedged(&calls).await, Ok(2), "the hedge answers first");
    let [stats] = seen("hedged")[..] else {
        panic!("{:?}", seen("hedged"))
    };
    assert_eq!((stats.attempts, stats.hedges, stats.gave_up), (2, 1, None));
    assert_eq!(stats.waited, Duration::ZERO, "a hedge is not a wait");
    assert_eq!(stats.elapsed, 10 * MS);
}

#[retry(attempts = 5, base = "1h", cap = "1h", jitter = none, cancel = token, stats = keep)]
async fn cancellable(token: &CancelToken) -> Result<(), Down> {
    Err(Down(1))
}

#[tokio::test(start_paused = true)]
async fn a_wait_a_cancel_cut_short_counts_what_was_slept_of_it() {
    let token = CancelToken::new();
    let stop = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(50 * MS).await;
        stop.cancel();
    });
    assert_eq!(cancellable(&token).await, Err(Down(1)));
    let [stats] = seen("cancellable")[..] else {
        panic!("{:?}", seen("cancellable"))
    };
    assert_eq!(
        (stats.attempts, stats.gave_up),
        (1, Some(GiveUpReason::Cancelled))
    );
    assert_eq!(stats.waited, 50 * MS, "not the hour drawn");
    assert_eq!(stats.elapsed, 50 * MS);
}

/// A notify hook that takes a second (awaited: the function's own time, not a wait).
async fn slow_notify(_: &Down, _: &retry_jitter::RetryEvent) {
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[retry(attempts = 5, base = "10s", cap = "10s", jitter = none, cancel = token, notify = slow_notify, stats = keep)]
async fn notified_then_cancelled(token: &CancelToken) -> Result<(), Down> {
    Err(Down(1))
}

/// The figures of `notified_then_cancelled` cancelled `after` its start.
async fn cancelled_after(after: Duration) -> RetryStats {
    SEEN.lock()
        .unwrap()
        .retain(|s| s.function != "notified_then_cancelled");
    let token = CancelToken::new();
    let stop = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        stop.cancel();
    });
    assert_eq!(notified_then_cancelled(&token).await, Err(Down(1)));
    let [stats] = seen("notified_then_cancelled")[..] else {
        panic!("{:?}", seen("notified_then_cancelled"))
    };
    assert_eq!(stats.gave_up, Some(GiveUpReason::Cancelled));
    stats
}

#[tokio::test(start_paused = true)]
async fn an_awaited_hooks_time_is_not_waited_whichever_comes_first() {
    // The hook's second, then 2 s of the 10 s wait slept.
    let stats = cancelled_after(Duration::from_secs(3)).await;
    assert_eq!(
        stats.waited,
        Duration::from_secs(2),
        "not the hook's second"
    );
    assert_eq!(stats.elapsed, Duration::from_secs(3));
    // Cancelled during the hook: the hook ends, the wait is never slept.
    let stats = cancelled_after(500 * MS).await;
    assert_eq!(stats.waited, Duration::ZERO, "nothing was slept");
    assert_eq!(stats.elapsed, Duration::from_secs(1));
}

fn is_send<T: Send>(_: &T) {}

#[test]
fn an_async_fn_with_stats_is_still_send() {
    let calls = AtomicU32::new(0);
    let fut = async_down(&calls);
    is_send(&fut);
}

#[test]
fn call_with_stats_returns_the_figures_with_the_outcome() {
    let r = Retry::new(
        Policy::new()
            .with_attempts(4)
            .with_base(MS)
            .with_jitter(Jitter::None),
    )
    .with_name("closure");
    let mut calls = 0;
    let (out, stats) = r.call_with_stats(|| {
        calls += 1;
        if calls < 3 {
            Err(Down(calls))
        } else {
            Ok(calls)
        }
    });
    assert_eq!(out, Ok(3));
    assert_eq!(stats.function, "closure");
    assert_eq!((stats.attempts, stats.hedges, stats.gave_up), (3, 0, None));
    assert_eq!(stats.waited, 3 * MS);

    let (out, stats) = r.call_with_stats(|| Ok::<_, Down>(1));
    assert_eq!(
        (out, stats.attempts, stats.waited),
        (Ok(1), 1, Duration::ZERO)
    );
}

#[test]
fn a_retry_stats_hook_hears_each_call_once() {
    let heard = Mutex::new(Vec::new());
    let token = CancelToken::new();
    let r = Retry::new(Policy::new().with_attempts(2).with_base(Duration::ZERO))
        .stats(|s: &RetryStats| heard.lock().unwrap().push(*s))
        // The guards a `stats` hook is set beside: a cancel token, a breaker.
        .cancel(&token)
        .breaker(&UNUSED);
    assert_eq!(r.call(|| Err::<(), _>(Down(1))), Err(Down(1)));
    assert_eq!(r.call(|| Ok::<_, Down>(())), Ok(()));
    let (_, returned) = r.call_with_stats(|| Err::<(), _>(Down(2)));
    let heard = heard.into_inner().unwrap();
    assert_eq!(heard.len(), 3, "{heard:?}");
    assert_eq!(
        (heard[0].attempts, heard[0].gave_up),
        (2, Some(GiveUpReason::Attempts))
    );
    assert_eq!((heard[1].attempts, heard[1].gave_up), (1, None));
    assert_eq!(heard[2], returned, "the hook hears what is returned");
}

static UNUSED: CircuitBreaker =
    CircuitBreaker::new(0.5, 1000, Duration::from_secs(60), Duration::from_secs(60));

#[tokio::test(start_paused = true)]
async fn call_async_with_stats_and_a_stats_hook_on_call_async() {
    let count = AtomicU32::new(0);
    let r = Retry::new(
        Policy::new()
            .with_attempts(3)
            .with_base(100 * MS)
            .with_jitter(Jitter::None),
    )
    .stats(|_: &RetryStats| {
        count.fetch_add(1, Ordering::SeqCst);
    });
    let calls = AtomicU32::new(0);
    let (out, stats) = r
        .call_async_with_stats(|| async {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            if n < 3 {
                Err(Down(n))
            } else {
                Ok(n)
            }
        })
        .await;
    assert_eq!(out, Ok(3));
    assert_eq!(
        (stats.attempts, stats.waited, stats.elapsed),
        (3, 300 * MS, 300 * MS)
    );
    assert_eq!(r.call_async(|| async { Ok::<_, Down>(0) }).await, Ok(0));
    assert_eq!(count.load(Ordering::SeqCst), 2, "once per call");
}

#[test]
fn a_stats_hook_that_is_not_copy_takes_a_breaker_after_it() {
    // A `move` closure owning an `Arc`: not `Copy`, and guards set after it still work.
    let heard = std::sync::Arc::new(AtomicU32::new(0));
    let seen = heard.clone();
    let r = Retry::new(Policy::new().with_attempts(1))
        .stats(move |_: &RetryStats| {
            seen.fetch_add(1, Ordering::SeqCst);
        })
        .breaker(&UNUSED);
    assert_eq!(r.call(|| Ok::<_, Down>(1)), Ok(1));
    assert_eq!(heard.load(Ordering::SeqCst), 1);
}
