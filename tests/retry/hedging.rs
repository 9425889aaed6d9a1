//! Hedged requests (`hedge = …`): a slow attempt gets the next one started beside it, the first
//! success wins and the rest are dropped, never more than `attempts` calls, a retryable error
//! waits the usual backoff only when nothing else runs. All on tokio's paused clock.

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use retry_jitter::hedge::Hedge;
use retry_jitter::hooks::Notify;
use retry_jitter::{retry, Decision, GiveUp, GiveUpReason, Policy, Retry, RetryBudget, RetryEvent};
use tokio::time::Instant;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// What call number n does: answer after a time, fail after a time, or never answer.
#[derive(Clone, Copy)]
enum Plan {
    Ok(u64),
    Fail(u64, Failure),
    Hang,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Failure {
    Busy,
    NotFound,
}

#[derive(Debug, PartialEq)]
enum ApiError {
    Failed(u32, Failure),
    TimedOut,
}

impl From<retry_jitter::TimedOut> for ApiError {
    fn from(_: retry_jitter::TimedOut) -> Self {
        ApiError::TimedOut
    }
}

fn transient(e: &ApiError) -> Decision {
    match e {
        ApiError::Failed(_, Failure::NotFound) => Decision::Stop,
        _ => Decision::Retry,
    }
}

/// Counts calls, and the calls whose future was dropped before it ended.
struct Upstream {
    plans: Vec<Plan>,
    calls: AtomicU32,
    dropped: AtomicU32,
}

struct DropGuard<'a>(&'a AtomicU32, bool);

impl Drop for DropGuard<'_> {
    fn drop(&mut self) {
        if !self.1 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Upstream {
    fn new(plans: &[Plan]) -> Self {
        Upstream {
            plans: plans.to_vec(),
            calls: AtomicU32::new(0),
            dropped: AtomicU32::new(0),
        }
    }

    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }

    fn dropped(&self) -> u32 {
        self.dropped.load(Ordering::SeqCst)
    }

    async fn call(&self) -> Result<u32, ApiError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let mut guard = DropGuard(&self.dropped, false);
        let plan = self
            .plans
            .get(n as usize - 1)
            .copied()
            .unwrap_or(Plan::Hang);
        let out = match plan {
            Plan::Ok(t) => {
                tokio::time::sleep(ms(t)).await;
                Ok(n)
            }
            Plan::Fail(t, f) => {
                tokio::time::sleep(ms(t)).await;
                Err(ApiError::Failed(n, f))
            }
            Plan::Hang => std::future::pending().await,
        };
        guard.1 = true;
        out
    }
}

#[retry(attempts = 3, base = "100ms", jitter = none, hedge = "50ms", on = transient)]
async fn hedged(up: &Upstream) -> Result<u32, ApiError> {
    up.call().await
}

#[tokio::test(start_paused = true)]
async fn a_slow_attempt_gets_a_hedge_and_the_first_success_wins() {
    let up = Upstream::new(&[Plan::Ok(1000), Plan::Ok(10)]);
    let started = Instant::now();
    assert_eq!(hedged(&up).await, Ok(2));
    assert_eq!(started.elapsed(), ms(60));
    assert_eq!(up.calls(), 2);
    assert_eq!(
        up.dropped(),
        1,
        "the slow first call was dropped when the hedge won"
    );
}

#[tokio::test(start_paused = true)]
async fn an_attempt_that_answers_before_the_hedge_delay_is_the_only_call() {
    let up = Upstream::new(&[Plan::Ok(49)]);
    assert_eq!(hedged(&up).await, Ok(1));
    assert_eq!(up.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn the_earlier_attempt_keeps_running_and_may_win() {
    // The hedge starts at 50 ms and would take a second; the first answers at 70 ms.
    let up = Upstream::new(&[Plan::Ok(70), Plan::Ok(1000)]);
    let started = Instant::now();
    assert_eq!(hedged(&up).await, Ok(1));
    assert_eq!(started.elapsed(), ms(70));
    assert_eq!((up.calls(), up.dropped()), (2, 1));
}

#[tokio::test(start_paused = true)]
async fn never_more_than_attempts_calls() {
    // Every call hangs: hedges at 50 and 100 ms, then no more, whatever the wait.
    let up = Upstream::new(&[]);
    let call = hedged(&up);
    tokio::pin!(call);
    assert!(tokio::time::timeout(ms(10_000), &mut call).await.is_err());
    assert_eq!(up.calls(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_retryable_failure_does_not_end_the_call_while_another_attempt_runs() {
    // Call 1 fails (retryable) at 80 ms while the hedge (from 50 ms) runs; it answers at 90 ms.
    let up = Upstream::new(&[Plan::Fail(80, Failure::Busy), Plan::Ok(40)]);
    let started = Instant::now();
    assert_eq!(hedged(&up).await, Ok(2));
    assert_eq!(started.elapsed(), ms(90));
    assert_eq!(up.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn when_none_runs_the_next_attempt_waits_the_usual_backoff() {
    // Each call fails at once: no hedge ever starts; the waits are 100 and 200 ms.
    let up = Upstream::new(&[
        Plan::Fail(0, Failure::Busy),
        Plan::Fail(0, Failure::Busy),
        Plan::Fail(0, Failure::Busy),
    ]);
    let started = Instant::now();
    assert_eq!(hedged(&up).await, Err(ApiError::Failed(3, Failure::Busy)));
    assert_eq!(started.elapsed(), ms(300));
    assert_eq!(up.calls(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_stop_decision_ends_the_call_and_drops_the_others() {
    // Call 1 hangs; the hedge (at 50 ms) answers 404 at 60 ms: that is the answer.
    let up = Upstream::new(&[Plan::Hang, Plan::Fail(10, Failure::NotFound)]);
    let started = Instant::now();
    assert_eq!(
        hedged(&up).await,
        Err(ApiError::Failed(2, Failure::NotFound))
    );
    assert_eq!(started.elapsed(), ms(60));
    assert_eq!((up.calls(), up.dropped()), (2, 1));
}

#[retry(attempts = 2, hedge = "50ms", timeout = "120ms", on = transient)]
async fn hedged_with_a_limit(up: &Upstream) -> Result<u32, ApiError> {
    up.call().await
}

#[tokio::test(start_paused = true)]
async fn a_lead_that_outlives_the_hedge_delay_is_still_cut_at_its_own_limit() {
    // Call 1 hangs; the hedge starts at 50 ms and answers at 150 ms. Call 1's limit ends at
    // 120 ms (what was left of it when the hedge started), not at 170 ms, nor never.
    let up = Upstream::new(&[Plan::Hang, Plan::Ok(100)]);
    let started = Instant::now();
    let call = hedged_with_a_limit(&up);
    tokio::pin!(call);
    assert!(tokio::time::timeout(ms(119), &mut call).await.is_err());
    assert_eq!((up.calls(), up.dropped()), (2, 0));
    assert!(tokio::time::timeout(ms(2), &mut call).await.is_err());
    assert_eq!(up.dropped(), 1, "call 1 cut at 120 ms");
    assert_eq!(call.await, Ok(2));
    assert_eq!(started.elapsed(), ms(150));
}

#[retry(attempts = 2, base = "100ms", jitter = none, hedge = "50ms", timeout = "30ms", on = transient)]
async fn hedged_past_the_limit(up: &Upstream) -> Result<u32, ApiError> {
    up.call().await
}

#[tokio::test(start_paused = true)]
async fn a_limit_shorter_than_the_hedge_delay_cuts_the_attempt_and_no_hedge_starts() {
    // Call 1 hangs and is cut at 30 ms, before any hedge: the retry waits the usual 100 ms.
    let up = Upstream::new(&[Plan::Hang, Plan::Ok(10)]);
    let started = Instant::now();
    assert_eq!(hedged_past_the_limit(&up).await, Ok(2));
    assert_eq!(started.elapsed(), ms(140));
    assert_eq!((up.calls(), up.dropped()), (2, 1));
}

static THIN: RetryBudget = RetryBudget::new(4);

#[retry(attempts = 3, hedge = "50ms", budget = &THIN)]
async fn hedged_on_a_thin_budget(up: &Upstream) -> Result<u32, ApiError> {
    up.call().await
}

#[tokio::test(start_paused = true)]
async fn each_hedge_takes_a_budget_token_and_none_starts_without_one() {
    // 4 tokens, 5 a hedge: no hedge, the slow call is waited for.
    let up = Upstream::new(&[Plan::Ok(1000)]);
    assert_eq!(hedged_on_a_thin_budget(&up).await, Ok(1));
    assert_eq!(up.calls(), 1);

    static ROOMY: RetryBudget = RetryBudget::new(100);
    let up = Upstream::new(&[Plan::Hang, Plan::Ok(10)]);
    let r = Retry::new(Policy::new().with_attempts(2))
        .hedge(Hedge::After(ms(50)))
        .budget(&ROOMY);
    let took = Mutex::new(None);
    let out = r
        .call_async(|| {
            let out = up.call();
            async {
                let v = out.await;
                *took.lock().unwrap() = Some(ROOMY.available());
                v
            }
        })
        .await;
    assert_eq!(out, Ok(2));
    assert_eq!(*took.lock().unwrap(), Some(95), "the hedge took 5 tokens");
    assert_eq!(
        ROOMY.available(),
        100,
        "a success after a hedge gives back what it took"
    );
}

#[retry(attempts = 3, hedge = "50ms", timeout = "1s", max_elapsed = "300ms", give_up = gave_up)]
async fn hedged_with_a_deadline(up: &Upstream) -> Result<u32, ApiError> {
    up.call().await
}

static GIVE_UPS: Mutex<Vec<(GiveUpReason, u32)>> = Mutex::new(Vec::new());

fn gave_up(_: &ApiError, g: &GiveUp) {
    GIVE_UPS.lock().unwrap().push((g.reason, g.calls));
}

#[tokio::test(start_paused = true)]
async fn the_deadline_cuts_every_hedged_attempt() {
    let up = Upstream::new(&[]);
    let started = Instant::now();
    assert_eq!(hedged_with_a_deadline(&up).await, Err(ApiError::TimedOut));
    assert_eq!(started.elapsed(), ms(300));
    assert_eq!((up.calls(), up.dropped()), (3, 3));
    assert_eq!(GIVE_UPS.lock().unwrap()[0].0, GiveUpReason::Elapsed);
}

#[retry(attempts = 2, hedge = "p95")]
async fn adaptive(up: &Upstream) -> Result<u32, ApiError> {
    up.call().await
}

#[tokio::test(start_paused = true)]
async fn a_percentile_hedge_waits_for_samples_then_follows_the_recent_latency() {
    // No samples: no hedge; the slow call is waited for.
    let up = Upstream::new(&[Plan::Ok(1000)]);
    let started = Instant::now();
    assert_eq!(adaptive(&up).await, Ok(1));
    assert_eq!((started.elapsed(), up.calls()), (ms(1000), 1));
    // Sixty calls of 10 ms: the 95th percentile is 10 ms (to its bucket's upper edge).
    for _ in 0..60 {
        assert!(adaptive(&Upstream::new(&[Plan::Ok(10)])).await.is_ok());
    }
    let up = Upstream::new(&[Plan::Ok(1000), Plan::Ok(10)]);
    let started = Instant::now();
    assert_eq!(adaptive(&up).await, Ok(2));
    let took = started.elapsed();
    assert!(
        took >= ms(20) && took <= ms(23),
        "hedged at ~p95 (10 ms): {took:?}"
    );
}

/// Told of retries and of hedges.
#[derive(Default)]
struct Seen(Mutex<Vec<RetryEvent>>);

impl Notify<io::Error> for &Seen {
    fn notify(&self, _: &io::Error, event: &RetryEvent) {
        self.0.lock().unwrap().push(*event);
    }
    fn hedge(&self, event: &RetryEvent) {
        self.0.lock().unwrap().push(*event);
    }
}

#[tokio::test(start_paused = true)]
async fn the_closure_api_hedges_on_the_same_loop_and_reports_hedges_as_such() {
    let seen = Seen::default();
    let mut calls = 0;
    let r = Retry::new(Policy::new().with_attempts(3).with_base(ms(100)))
        .hedge(Hedge::After(ms(50)))
        .notify(&seen)
        .with_name("lookup");
    let out = r
        .call_async(|| {
            calls += 1;
            let n = calls;
            async move {
                match n {
                    1 => Err(io::Error::from(io::ErrorKind::ConnectionReset)), // fails at once
                    2 => std::future::pending().await,                         // hangs
                    _ => Ok(n),                                                // the hedge
                }
            }
        })
        .await;
    assert_eq!(out.unwrap(), 3);
    let events = seen.0.into_inner().unwrap();
    let kinds: Vec<_> = events
        .iter()
        .map(|e| (e.attempt, e.hedge, e.function))
        .collect();
    assert_eq!(kinds, [(1, false, "lookup"), (2, true, "lookup")]);
    assert_eq!(events[1].delay, ms(50));
}

static STOPPED: Mutex<Vec<(GiveUpReason, u32)>> = Mutex::new(Vec::new());

fn stopped(_: &ApiError, g: &GiveUp) {
    STOPPED.lock().unwrap().push((g.reason, g.calls));
}

#[retry(attempts = 3, base = "100ms", hedge = "50ms", on = transient, give_up = stopped)]
async fn hedged_and_told(up: &Upstream) -> Result<u32, ApiError> {
    up.call().await
}

#[tokio::test(start_paused = true)]
async fn give_up_counts_the_hedges_still_running() {
    // Call 1 hangs; the hedge answers 404 at 60 ms: two calls were made.
    let up = Upstream::new(&[Plan::Hang, Plan::Fail(10, Failure::NotFound)]);
    let out = hedged_and_told(&up).await;
    assert_eq!(out, Err(ApiError::Failed(2, Failure::NotFound)));
    assert_eq!(up.calls(), 2);
    assert_eq!(STOPPED.lock().unwrap()[..], [(GiveUpReason::Stopped, 2)]);
}

#[tokio::test(start_paused = true)]
async fn the_deadline_reports_every_hedged_attempt_it_cut_as_a_call() {
    static CUT: Mutex<Vec<(GiveUpReason, u32)>> = Mutex::new(Vec::new());
    let up = Upstream::new(&[]);
    let r = Retry::new(Policy::new().with_attempts(3).with_max_elapsed(ms(300)))
        .hedge(Hedge::After(ms(50)))
        .timeout(ms(1000))
        .give_up(|_: &ApiError, g: &GiveUp| CUT.lock().unwrap().push((g.reason, g.calls)));
    assert_eq!(r.call_async(|| up.call()).await, Err(ApiError::TimedOut));
    assert_eq!(up.calls(), 3);
    assert_eq!(CUT.lock().unwrap()[..], [(GiveUpReason::Elapsed, 3)]);
    // The same through the macro, told apart from `hedged_with_a_deadline`'s give-ups (the
    // test that calls it runs at the same time, on another thread).
    static CUT_MACRO: Mutex<Vec<(GiveUpReason, u32)>> = Mutex::new(Vec::new());
    fn cut(_: &ApiError, g: &GiveUp) {
        CUT_MACRO.lock().unwrap().push((g.reason, g.calls));
    }
    #[retry(attempts = 3, hedge = "50ms", timeout = "1s", max_elapsed = "300ms", give_up = cut)]
    async fn cut_by_the_deadline(up: &Upstream) -> Result<u32, ApiError> {
        up.call().await
    }
    let up = Upstream::new(&[]);
    assert_eq!(cut_by_the_deadline(&up).await, Err(ApiError::TimedOut));
    assert_eq!(CUT_MACRO.lock().unwrap()[..], [(GiveUpReason::Elapsed, 3)]);
}

#[tokio::test(start_paused = true)]
async fn the_closure_api_counts_the_hedges_still_running() {
    let seen = Mutex::new(None);
    let up = Upstream::new(&[Plan::Hang, Plan::Fail(10, Failure::NotFound)]);
    let r = Retry::new(Policy::new().with_attempts(3))
        .hedge(Hedge::After(ms(50)))
        .on(transient)
        .give_up(|_: &ApiError, g: &GiveUp| *seen.lock().unwrap() = Some((g.reason, g.calls)));
    let out = r.call_async(|| up.call()).await;
    assert_eq!(out, Err(ApiError::Failed(2, Failure::NotFound)));
    assert_eq!(*seen.lock().unwrap(), Some((GiveUpReason::Stopped, 2)));
}

/// An error that carries a server's `Retry-After`.
#[derive(Debug, PartialEq)]
struct Busy(u32, Duration);

fn busy(e: &Busy) -> Decision {
    Decision::RetryAfter(e.1)
}

#[tokio::test(start_paused = true)]
async fn a_hint_beyond_cap_ends_a_hedged_call() {
    // Call 1 hangs; the hedge (at 50 ms) is told to come back in an hour, at 60 ms.
    let calls = AtomicU32::new(0);
    let seen = Mutex::new(None);
    let r = Retry::new(Policy::new().with_attempts(5).with_cap(ms(30_000)))
        .hedge(Hedge::After(ms(40)))
        .on(busy)
        .give_up(|_: &Busy, g: &GiveUp| *seen.lock().unwrap() = Some((g.reason, g.calls)));
    let started = Instant::now();
    let call = r.call_async(|| {
        let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            if n == 1 {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(ms(10)).await;
            Err::<(), _>(Busy(n, Duration::from_secs(3600)))
        }
    });
    let out = tokio::time::timeout(ms(10_000), call).await;
    assert_eq!(out, Ok(Err(Busy(2, Duration::from_secs(3600)))));
    assert_eq!(started.elapsed(), ms(50));
    assert_eq!(calls.load(Ordering::SeqCst), 2, "no hedge after the hint");
    assert_eq!(
        *seen.lock().unwrap(),
        Some((GiveUpReason::HintBeyondCap, 2))
    );
}

#[retry(attempts = 4, cap = "10s", hedge = "40ms", on = busy, attempt = n)]
async fn hedged_with_hints(
    hint: Duration,
    started: &Mutex<Vec<Duration>>,
    t0: Instant,
) -> Result<(), Busy> {
    started.lock().unwrap().push(t0.elapsed());
    if n == 1 {
        std::future::pending::<()>().await;
    }
    tokio::time::sleep(ms(10)).await;
    Err(Busy(n, hint))
}

#[tokio::test(start_paused = true)]
async fn a_hint_within_cap_delays_the_next_hedge_to_at_least_the_hint() {
    let started = Mutex::new(Vec::new());
    let t0 = Instant::now();
    let call = hedged_with_hints(ms(500), &started, t0);
    // Call 1 hangs from 0; the hedge starts at 40 ms and is told at 50 ms to wait 500 ms.
    // Call 1 never ends: the call runs on, hedge after hedge, until `attempts` are spent.
    assert!(tokio::time::timeout(ms(2000), call).await.is_err());
    let started = started.into_inner().unwrap();
    assert!(started.len() >= 3, "{started:?}");
    assert_eq!(started[..2], [ms(0), ms(40)]);
    assert!(
        started[2] >= ms(550),
        "the next hedge waited the hint: {started:?}"
    );

    let out = hedged_with_hints(Duration::from_secs(3600), &Mutex::new(Vec::new()), t0).await;
    assert_eq!(out, Err(Busy(2, Duration::from_secs(3600))));
}

/// When each attempt started: the first runs `first` then fails (to be retried), the hedge
/// after it answers "slow down" (`RateLimited`, no hint) 10 ms in, the third fails 10 ms in,
/// the fourth succeeds.
async fn started_after_a_rate_limited_hedge(first: Duration) -> Vec<Duration> {
    let started = Mutex::new(Vec::new());
    let calls = AtomicU32::new(0);
    let t0 = Instant::now();
    let r = Retry::new(
        Policy::new()
            .with_attempts(4)
            .with_base(ms(10))
            .with_rate_limited_base(ms(500))
            .with_jitter(retry_jitter::Jitter::None),
    )
    .hedge(Hedge::After(ms(40)))
    .on(|n: &u32| match n {
        2 => Decision::RateLimited,
        _ => Decision::Retry,
    });
    let out = r
        .call_async(|| {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            started.lock().unwrap().push(t0.elapsed());
            async move {
                match n {
                    1 => tokio::time::sleep(first).await,
                    2 | 3 => tokio::time::sleep(ms(10)).await,
                    _ => return Ok(n),
                }
                Err(n)
            }
        })
        .await;
    assert_eq!(out, Ok(4));
    started.into_inner().unwrap()
}

/// Issue 49: an attempt answered "slow down" while another runs. No attempt of that call,
/// hedge or retry, starts before the wait that answer calls for: here, jitter off, the
/// rate-limited base, 500 ms after 50 ms (it was the next hedge at its usual 40 ms delay).
#[tokio::test(start_paused = true)]
async fn a_rate_limited_answer_holds_back_the_next_hedge_and_retry() {
    // The first runs on past 550 ms: the next hedge waits to 550, not to 80; then the one
    // after it goes 40 ms later, as usual.
    let hedges = started_after_a_rate_limited_hedge(ms(1000)).await;
    assert_eq!(hedges, [ms(0), ms(40), ms(550), ms(590)]);
    // The first fails at 100 ms (none runs): the retry's own wait (20 ms) is held to 550.
    let retries = started_after_a_rate_limited_hedge(ms(100)).await;
    assert_eq!(retries, [ms(0), ms(40), ms(550), ms(600)]);
}

/// A `Notify` that panics when it hears of a hedge.
struct PanicsOnHedge;

impl Notify<ApiError> for PanicsOnHedge {
    fn notify(&self, _: &ApiError, _: &RetryEvent) {}
    fn hedge(&self, _: &RetryEvent) {
        panic!("a hook that fails");
    }
}

#[tokio::test(start_paused = true)]
async fn a_hook_that_panics_as_a_hedge_starts_gives_its_tokens_back() {
    use std::future::Future;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::task::Poll;
    static BUDGET: RetryBudget = RetryBudget::new(100);
    let up = Upstream::new(&[Plan::Hang, Plan::Ok(10)]);
    let r = Retry::new(Policy::new().with_attempts(2))
        .hedge(Hedge::After(ms(50)))
        .budget(&BUDGET)
        .notify(PanicsOnHedge);
    let mut call = std::pin::pin!(r.call_async(|| up.call()));
    let out = std::future::poll_fn(|cx| {
        match catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(cx))) {
            Ok(poll) => poll.map(Ok),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    })
    .await;
    assert!(out.is_err(), "the hook panicked");
    assert_eq!(BUDGET.available(), 100, "the hedge's tokens came back");
}

/// A `Notify` of one's own, given to the key by value: it hears of hedges.
struct HedgeCounter;

static HEARD: AtomicU32 = AtomicU32::new(0);

impl Notify<ApiError> for HedgeCounter {
    fn notify(&self, _: &ApiError, _: &RetryEvent) {}
    fn hedge(&self, event: &RetryEvent) {
        assert!(event.hedge);
        HEARD.fetch_add(1, Ordering::SeqCst);
    }
}

#[retry(attempts = 3, hedge = "50ms", notify = HedgeCounter)]
async fn hedged_and_heard(up: &Upstream) -> Result<u32, ApiError> {
    up.call().await
}

#[tokio::test(start_paused = true)]
async fn a_notify_type_of_ones_own_hears_of_hedges_through_the_key() {
    let up = Upstream::new(&[Plan::Ok(1000), Plan::Ok(10)]);
    assert_eq!(hedged_and_heard(&up).await, Ok(2));
    assert_eq!(HEARD.load(Ordering::SeqCst), 1);
}

static PANIC_BUDGET: RetryBudget = RetryBudget::new(100);

#[retry(attempts = 2, hedge = "50ms", budget = &PANIC_BUDGET, notify = PanicsOnHedge)]
async fn hedged_with_a_panicking_hook(up: &Upstream) -> Result<u32, ApiError> {
    up.call().await
}

#[tokio::test(start_paused = true)]
async fn a_hook_that_panics_as_a_macro_hedge_starts_gives_its_tokens_back() {
    use std::future::Future;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::task::Poll;
    let up = Upstream::new(&[Plan::Hang, Plan::Ok(10)]);
    let mut call = std::pin::pin!(hedged_with_a_panicking_hook(&up));
    let out = std::future::poll_fn(|cx| {
        match catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(cx))) {
            Ok(poll) => poll.map(Ok),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    })
    .await;
    assert!(out.is_err(), "the hook panicked");
    assert_eq!(
        PANIC_BUDGET.available(),
        100,
        "the hedge's tokens came back"
    );
}
