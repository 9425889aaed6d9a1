//! What a user of `#[retry]` relies on: attempt counts, which error comes back, the exact waits.
//! Sync waits are recorded instead of slept (`testing::record_sleeps`); async ones run under
//! tokio's paused clock.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use retry_jitter::{retry, testing, Backoff, Decision, Jitter, Policy, Retry, RetryEvent};

/// Errors that say which call produced them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Failed(u32);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
    static EVENTS: RefCell<Vec<RetryEvent>> = const { RefCell::new(Vec::new()) };
}

fn call() -> u32 {
    CALLS.with(|c| {
        c.set(c.get() + 1);
        c.get()
    })
}

fn reset() {
    CALLS.with(|c| c.set(0));
    EVENTS.with(|e| e.borrow_mut().clear());
}

fn calls() -> u32 {
    CALLS.with(Cell::get)
}

fn record(_: &Failed, event: &RetryEvent) {
    EVENTS.with(|e| e.borrow_mut().push(*event));
}

fn events() -> Vec<RetryEvent> {
    EVENTS.with(|e| e.borrow().clone())
}

#[retry(attempts = 4, notify = record)]
fn always_fails() -> Result<(), Failed> {
    Err(Failed(call()))
}

#[test]
fn an_always_failing_fn_is_called_attempts_times_and_returns_the_last_error() {
    reset();
    let (result, waits) = testing::record_sleeps(always_fails);
    assert_eq!(result, Err(Failed(4)));
    assert_eq!(calls(), 4);
    assert_eq!(waits.len(), 3);
}

#[retry(attempts = 5, base = "10ms")]
fn succeeds_on_call(n: u32) -> Result<u32, Failed> {
    let k = call();
    if k < n {
        Err(Failed(k))
    } else {
        Ok(k)
    }
}

#[test]
fn success_after_failures_returns_the_value() {
    for n in 1..=5 {
        reset();
        let (result, waits) = testing::record_sleeps(|| succeeds_on_call(n));
        assert_eq!(result, Ok(n));
        assert_eq!(waits.len() as u32, n - 1);
    }
    reset();
    let (result, _) = testing::record_sleeps(|| succeeds_on_call(6));
    assert_eq!(result, Err(Failed(5)), "attempts = 5 stops before call 6");
}

#[retry(on = |e| e.0 != 1)]
fn stops_on_false() -> Result<(), Failed> {
    Err(Failed(call()))
}

#[retry(on = |_| Decision::Stop)]
fn stops_on_decision() -> Result<(), Failed> {
    Err(Failed(call()))
}

#[test]
fn a_classifier_saying_stop_means_one_call() {
    reset();
    let (result, waits) = testing::record_sleeps(stops_on_false);
    assert_eq!((result, calls(), waits.len()), (Err(Failed(1)), 1, 0));
    reset();
    let (result, waits) = testing::record_sleeps(stops_on_decision);
    assert_eq!((result, calls(), waits.len()), (Err(Failed(1)), 1, 0));
}

fn parse_on_third(k: u32) -> Result<u32, Failed> {
    if k < 3 {
        Err(Failed(k))
    } else {
        Ok(k)
    }
}

#[retry(attempts = 3)]
fn question_mark() -> Result<u32, Failed> {
    let k = parse_on_third(call())?;
    Ok(k * 10)
}

#[retry(attempts = 3)]
fn early_return() -> Result<u32, Failed> {
    let k = call();
    if k < 3 {
        return Err(Failed(k));
    }
    Ok(k * 10)
}

#[test]
fn question_mark_and_early_return_end_one_attempt_and_are_retried() {
    reset();
    assert_eq!(testing::record_sleeps(question_mark).0, Ok(30));
    reset();
    assert_eq!(testing::record_sleeps(early_return).0, Ok(30));
}

#[retry(jitter = none)]
fn default_schedule() -> Result<(), Failed> {
    Err(Failed(call()))
}

#[test]
fn jitter_none_waits_exactly_the_ceilings_200_400_800_1600() {
    reset();
    let (_, waits) = testing::record_sleeps(default_schedule);
    assert_eq!(waits, [ms(200), ms(400), ms(800), ms(1600)]);
}

// `budget = none` on the functions whose waits are drawn hundreds of times: the draws are
// tested, and their own budgets (issue 53) would refuse retries past their floor (100 in any
// 10 s) and make the later calls wait not at all.
#[retry(attempts = 12, base = "100ms", cap = "1s", jitter = full, budget = none)]
fn full() -> Result<(), Failed> {
    Err(Failed(call()))
}

#[retry(attempts = 12, base = "100ms", cap = "1s", jitter = equal, budget = none)]
fn equal() -> Result<(), Failed> {
    Err(Failed(call()))
}

#[retry(attempts = 12, base = "100ms", cap = "1s", jitter = decorrelated, budget = none)]
fn decorrelated() -> Result<(), Failed> {
    Err(Failed(call()))
}

#[test]
fn every_wait_is_within_its_jitter_bounds() {
    let b = Backoff::new(ms(100), ms(1000));
    for _ in 0..200 {
        let (_, waits) = testing::record_sleeps(full);
        for (k, w) in (1..).zip(&waits) {
            assert!(*w <= b.ceiling(k), "full: wait {k} = {w:?}");
        }
        let (_, waits) = testing::record_sleeps(equal);
        for (k, w) in (1..).zip(&waits) {
            let c = b.ceiling(k);
            assert!(
                *w >= c / 2 && *w <= c,
                "equal: wait {k} = {w:?} under {c:?}"
            );
        }
        let (_, waits) = testing::record_sleeps(decorrelated);
        let mut prev = ms(100);
        for w in &waits {
            assert!(*w >= ms(100) && *w <= ms(1000), "decorrelated: {w:?}");
            assert!(*w <= prev * 3, "decorrelated: {w:?} after {prev:?}");
            prev = *w;
        }
    }
}

#[test]
fn full_jitter_actually_varies() {
    let (_, a) = testing::record_sleeps(full);
    let (_, b) = testing::record_sleeps(full);
    assert_ne!(a, b, "two runs of full jitter drew the same 11 waits");
}

#[retry(attempts = 4, cap = "5s", budget = none, on = |e| if e.0 == 0 { Decision::RetryAfter(Duration::from_secs(2)) } else { Decision::RetryAfter(Duration::from_secs(6)) })]
fn rate_limited(code: u32) -> Result<(), Failed> {
    call();
    Err(Failed(code))
}

#[test]
fn retry_after_is_a_lower_bound_plus_jitter_and_a_hint_beyond_cap_stops() {
    let b = Backoff::DEFAULT;
    for _ in 0..100 {
        reset();
        let (_, waits) = testing::record_sleeps(|| rate_limited(0));
        assert_eq!(calls(), 4);
        for (k, w) in (1..).zip(&waits) {
            assert!(
                *w >= ms(2000) && *w <= ms(2000) + b.ceiling(k),
                "wait {k} = {w:?}"
            );
        }
    }
    reset();
    let (result, waits) = testing::record_sleeps(|| rate_limited(1));
    assert_eq!((result, calls(), waits.len()), (Err(Failed(1)), 1, 0));
}

#[retry(attempts = 100, base = "300ms", cap = "2s", max_elapsed = "5s")]
fn budgeted() -> Result<(), Failed> {
    Err(Failed(call()))
}

#[test]
fn max_elapsed_is_never_overshot() {
    for _ in 0..100 {
        reset();
        let (result, waits) = testing::record_sleeps(budgeted);
        let total: Duration = waits.iter().sum();
        assert!(total <= Duration::from_secs(5), "slept {total:?}");
        assert_eq!(result, Err(Failed(calls())));
        assert!(calls() < 100, "stopped by time, not attempts");
    }
}

#[retry(attempts = 4, jitter = none, notify = record)]
fn notified() -> Result<(), Failed> {
    Err(Failed(call()))
}

#[test]
fn notify_sees_each_retry_with_its_delay_and_the_function_name() {
    reset();
    let (_, waits) = testing::record_sleeps(notified);
    let events = events();
    assert_eq!(
        events.iter().map(|e| e.attempt).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(events.iter().map(|e| e.delay).collect::<Vec<_>>(), waits);
    assert!(events.iter().all(|e| e.function == "notified"));
}

struct Conn {
    failures_left: u32,
    calls: u32,
}

impl Conn {
    #[retry(attempts = 5, base = "1ms")]
    fn query(&mut self) -> Result<u32, Failed> {
        self.calls += 1;
        if self.failures_left > 0 {
            self.failures_left -= 1;
            return Err(Failed(self.calls));
        }
        Ok(self.calls)
    }
}

#[test]
fn mut_self_state_carries_across_attempts() {
    let mut conn = Conn {
        failures_left: 3,
        calls: 0,
    };
    let (result, _) = testing::record_sleeps(|| conn.query());
    assert_eq!(result, Ok(4));
    assert_eq!(conn.failures_left, 0);
}

#[test]
fn a_first_call_success_draws_no_random_number() {
    testing::seed_jitter(42);
    reset();
    assert_eq!(testing::record_sleeps(|| succeeds_on_call(1)).0, Ok(1));
    let after_success: Vec<_> = Backoff::DEFAULT.schedule().take(3).collect();
    testing::seed_jitter(42);
    let fresh: Vec<_> = Backoff::DEFAULT.schedule().take(3).collect();
    assert_eq!(after_success, fresh);
}

#[test]
fn seeded_jitter_gives_the_same_schedule() {
    testing::seed_jitter(7);
    let (_, a) = testing::record_sleeps(full);
    testing::seed_jitter(7);
    let (_, b) = testing::record_sleeps(full);
    assert_eq!(a, b);
}

#[test]
fn the_closure_api_runs_the_same_loop() {
    let policy = Policy::new().with_attempts(3).with_jitter(Jitter::None);
    let mut n = 0;
    let (result, waits) = testing::record_sleeps(|| {
        Retry::new(policy).call(|| {
            n += 1;
            Err::<(), _>(Failed(n))
        })
    });
    assert_eq!(result, Err(Failed(3)));
    assert_eq!(waits, [ms(200), ms(400)]);
}

// --- async, under tokio's paused clock ---

struct Upstream {
    calls: AtomicU32,
    fail_first: u32,
}

impl Upstream {
    fn hit(&self) -> Result<u32, Failed> {
        let k = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if k <= self.fail_first {
            Err(Failed(k))
        } else {
            Ok(k)
        }
    }

    #[retry(attempts = 5, jitter = none, notify = record)]
    async fn fetch(&self) -> Result<u32, Failed> {
        tokio::task::yield_now().await;
        self.hit()
    }
}

#[tokio::test(start_paused = true)]
async fn async_waits_take_virtual_time_equal_to_their_sum() {
    reset();
    let up = Upstream {
        calls: AtomicU32::new(0),
        fail_first: 3,
    };
    let start = tokio::time::Instant::now();
    assert_eq!(up.fetch().await, Ok(4));
    let slept: Duration = events().iter().map(|e| e.delay).sum();
    assert_eq!(events().len(), 3);
    assert_eq!(slept, ms(200 + 400 + 800));
    assert_eq!(start.elapsed(), slept);
}

#[retry(attempts = 5, notify = record)]
async fn jittered(up: &Upstream) -> Result<u32, Failed> {
    up.hit()
}

#[tokio::test(start_paused = true)]
async fn async_jittered_waits_are_slept_to_tokios_millisecond() {
    reset();
    let up = Upstream {
        calls: AtomicU32::new(0),
        fail_first: 4,
    };
    let start = tokio::time::Instant::now();
    assert_eq!(jittered(&up).await, Ok(5));
    let slept: Duration = events().iter().map(|e| e.delay).sum();
    // tokio's timer rounds each sleep up to its next millisecond.
    assert!(start.elapsed() >= slept && start.elapsed() <= slept + ms(4));
}

#[retry(attempts = 100, base = "300ms", cap = "2s", max_elapsed = "5s")]
async fn async_budgeted(up: &Upstream) -> Result<u32, Failed> {
    up.hit()
}

#[tokio::test(start_paused = true)]
async fn async_max_elapsed_runs_on_tokios_clock() {
    let up = Upstream {
        calls: AtomicU32::new(0),
        fail_first: u32::MAX,
    };
    let start = tokio::time::Instant::now();
    let result = async_budgeted(&up).await;
    assert!(start.elapsed() <= Duration::from_secs(5));
    let calls = up.calls.load(Ordering::SeqCst);
    assert!(calls > 2 && calls < 100, "{calls} calls");
    assert_eq!(result, Err(Failed(calls)));
}

#[retry(attempts = 10, base = "1s", jitter = none)]
async fn slow_retries(up: Arc<Upstream>) -> Result<u32, Failed> {
    up.hit()
}

#[tokio::test(start_paused = true)]
async fn dropping_the_future_mid_sleep_makes_no_further_calls() {
    let up = Arc::new(Upstream {
        calls: AtomicU32::new(0),
        fail_first: u32::MAX,
    });
    let task = tokio::spawn(slow_retries(Arc::clone(&up)));
    // Calls at 0 s, 1 s, 3 s; the fourth would be at 7 s.
    tokio::time::sleep(ms(3500)).await;
    assert_eq!(up.calls.load(Ordering::SeqCst), 3);
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert_eq!(up.calls.load(Ordering::SeqCst), 3);
}

#[tokio::test(start_paused = true)]
async fn the_async_closure_api_retries_on_tokios_clock() {
    let policy = Policy::new().with_attempts(3).with_jitter(Jitter::None);
    let up = Upstream {
        calls: AtomicU32::new(0),
        fail_first: 2,
    };
    let start = tokio::time::Instant::now();
    let result = Retry::new(policy).call_async(|| async { up.hit() }).await;
    assert_eq!(result, Ok(3));
    assert_eq!(start.elapsed(), ms(600));
}

/// The error type of the calls a body makes, converted by `?` into the function's (`Failed`):
/// the conversion adds 100, so a test sees that it happened.
#[derive(Debug)]
struct Lower(u32);

impl From<Lower> for Failed {
    fn from(lower: Lower) -> Failed {
        Failed(lower.0 + 100)
    }
}

fn lowered(outcome: Result<u32, Failed>) -> Result<u32, Lower> {
    outcome.map_err(|Failed(k)| Lower(k))
}

#[retry(attempts = 3, base = "1ms")]
async fn async_question_mark(up: &Upstream) -> Result<u32, Failed> {
    tokio::task::yield_now().await;
    // `?` before a method call, and `?` on an `async` call's outcome.
    let k = lowered(up.hit())?.to_string();
    Ok(async { k.parse::<u32>() }.await.map_err(|_| Failed(0))? * 10)
}

#[retry(attempts = 3, base = "1ms")]
async fn async_early_return(up: &Upstream) -> Result<u32, Failed> {
    let k = match up.hit() {
        Ok(k) => k,
        Err(e) => return Err(e),
    };
    tokio::task::yield_now().await;
    Ok(k * 10)
}

/// A macro that returns, as `anyhow::bail!` does: the attribute cannot see into it.
macro_rules! fail_with {
    ($e:expr) => {
        return Err($e)
    };
}

#[retry(attempts = 3, base = "1ms")]
async fn async_macro_return(up: &Upstream) -> Result<u32, Failed> {
    match up.hit() {
        Ok(k) => Ok(k * 10),
        Err(e) => fail_with!(e),
    }
}

#[retry(attempts = 3, base = "1ms")]
async fn async_nested_exits(up: &Upstream) -> Result<u32, Failed> {
    // Their `?` and `return` are the closure's and the block's: they end neither the attempt
    // nor the call.
    let checked = |r: Result<u32, Failed>| -> Result<u32, Failed> {
        let k = r?;
        if k == 0 {
            return Err(Failed(0));
        }
        Ok(k)
    };
    let inner: Result<u32, Failed> = async { Ok(checked(up.hit())? + 1) }.await;
    Ok(inner.unwrap_or(0) * 10)
}

/// Every place a `return` or a `?` can stand in an inline attempt, one per `exit`: each must end
/// the attempt (and be retried), wherever it is.
#[retry(attempts = 3, base = "1ms")]
async fn exits_from_everywhere(up: &Upstream, exit: u32) -> Result<u32, Failed> {
    let outcome = up.hit();
    tokio::task::yield_now().await;
    match exit {
        // `let … else` whose `else` returns.
        0 => {
            let Ok(k) = outcome else {
                return outcome;
            };
            Ok(k * 10)
        }
        // `return` from inside a labelled loop, on its second turn.
        1 => {
            let mut turns = 0;
            'outer: loop {
                turns += 1;
                if turns < 2 {
                    continue 'outer;
                }
                if outcome.is_err() {
                    return outcome;
                }
                break 'outer Ok(outcome? * 10);
            }
        }
        // `?` in an `if let` condition, in a nested block, in a match guard.
        2 => {
            if let Some(k) = Some(outcome.clone()?) {
                let k = { outcome.clone()? + k - k };
                match k {
                    k if outcome.clone()? == k => Ok(k * 10),
                    _ => unreachable!(),
                }
            } else {
                unreachable!()
            }
        }
        // `?` on a `Poll<Result>`, and a nested fn with its own `?`.
        _ => {
            fn doubled(r: Result<u32, Failed>) -> Result<u32, Failed> {
                Ok(r? * 2)
            }
            let std::task::Poll::Ready(k) = std::task::Poll::Ready(outcome.clone())? else {
                unreachable!()
            };
            Ok(doubled(Ok(k))? * 5)
        }
    }
}

#[tokio::test(start_paused = true)]
async fn every_place_of_a_return_or_question_mark_ends_one_attempt() {
    for exit in 0..4 {
        ends_attempts(
            async |up: &Upstream| exits_from_everywhere(up, exit).await,
            Failed(3),
        )
        .await;
    }
}

fn upstream(fail_first: u32) -> Upstream {
    Upstream {
        calls: AtomicU32::new(0),
        fail_first,
    }
}

/// `f`, retried with `attempts = 3`, ends an attempt where it should: a success after two
/// failures comes back after 3 calls, and when every call fails the last error comes back
/// (`last`, as the body made it), after 3 calls too.
async fn ends_attempts(f: impl AsyncFn(&Upstream) -> Result<u32, Failed>, last: Failed) {
    let up = upstream(2);
    assert_eq!(f(&up).await, Ok(30));
    assert_eq!(up.calls.load(Ordering::SeqCst), 3);
    let up = upstream(u32::MAX);
    assert_eq!(f(&up).await, Err(last));
    assert_eq!(up.calls.load(Ordering::SeqCst), 3);
}

#[tokio::test(start_paused = true)]
async fn async_question_mark_and_early_return_end_one_attempt_and_are_retried() {
    // The last error converted by `?`'s `From`.
    ends_attempts(async_question_mark, Failed(103)).await;
    ends_attempts(async_early_return, Failed(3)).await;
}

#[tokio::test(start_paused = true)]
async fn a_return_inside_a_macro_still_ends_one_attempt() {
    ends_attempts(async_macro_return, Failed(3)).await;
}

#[tokio::test(start_paused = true)]
async fn closures_and_async_blocks_keep_their_own_question_mark_and_return() {
    // The closure's `?` turns the failure into the block's `Err`, which the body absorbs: the
    // first call succeeds as far as the attempt goes.
    let up = upstream(u32::MAX);
    assert_eq!(async_nested_exits(&up).await, Ok(0));
    assert_eq!(up.calls.load(Ordering::SeqCst), 1);
    let up = upstream(0);
    assert_eq!(async_nested_exits(&up).await, Ok(20));
}

#[retry(attempts = 5, base = "1ms")]
fn panics() -> Result<(), Failed> {
    call();
    panic!("a bug, not a transient failure");
}

#[test]
fn a_panic_in_the_body_is_not_caught_nor_retried() {
    reset();
    let caught = std::panic::catch_unwind(panics);
    assert!(caught.is_err());
    assert_eq!(calls(), 1);
}

/// Within 20% of `ceiling` either way: gRPC's jitter (`Backoff::grpc`).
fn within_a_fifth(wait: Duration, ceiling: Duration) -> bool {
    wait >= ceiling.mul_f64(0.8) && wait <= ceiling.mul_f64(1.2)
}

#[test]
fn a_retry_loop_under_grpcs_backoff_sleeps_its_waits_and_a_pushback_exactly() {
    let policy = Policy::new()
        .with_attempts(5)
        .with_backoff(Backoff::grpc(ms(100), ms(1000), 3.0));
    let mut n = 0;
    let (out, slept) = testing::record_sleeps(|| {
        Retry::new(policy)
            .budget_none()
            .on(|e: &u32| match e {
                2 => Decision::RetryAfter(ms(50)),
                _ => Decision::Retry,
            })
            .call(|| {
                n += 1;
                Err::<(), u32>(n)
            })
    });
    assert_eq!(out, Err(5));
    // 100 ms ±20%, the pushback's 50 ms exactly, then the backoff from its start again.
    assert_eq!(slept.len(), 4);
    assert!(within_a_fifth(slept[0], ms(100)), "{slept:?}");
    assert_eq!(slept[1], ms(50));
    assert!(within_a_fifth(slept[2], ms(100)), "{slept:?}");
    assert!(within_a_fifth(slept[3], ms(300)), "{slept:?}");
}
