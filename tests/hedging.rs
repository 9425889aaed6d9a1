//! Hedged requests (`hedge = …`): a slow attempt gets the next one started beside it, the first
//! success wins and the rest are dropped, never more than `attempts` calls, a retryable error
//! waits the usual backoff only when nothing else runs. All on tokio's paused clock.

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use retry_jitter::hedge::Hedge;
use retry_jitter::{
    retry, Decision, GiveUp, GiveUpReason, Notify, Policy, Retry, RetryBudget, RetryEvent,
};
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
