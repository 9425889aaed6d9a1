//! `on_ok` (retry an `Ok` value: poll until ready) and `attempt = n` (the attempt's number in
//! the body), on sync and async fns, hedged calls and the closure API, on tokio's paused clock.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use retry_jitter::hedge::Hedge;
use retry_jitter::hooks::{GiveUpHook, Notify};
use retry_jitter::{
    retry, testing, Decision, GiveUp, GiveUpReason, Policy, Retry, RetryBudget, RetryEvent,
};
use tokio::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Job {
    Pending,
    Done(u32),
}

fn pending(job: &Job) -> bool {
    *job == Job::Pending
}

/// A job that is done at its `ready`-th poll.
struct Jobs {
    polls: AtomicU32,
    ready: u32,
}

impl Jobs {
    const fn new(ready: u32) -> Self {
        Jobs {
            polls: AtomicU32::new(0),
            ready,
        }
    }
    fn poll(&self) -> Job {
        let n = self.polls.fetch_add(1, Ordering::Relaxed) + 1;
        if n >= self.ready {
            Job::Done(n)
        } else {
            Job::Pending
        }
    }
    fn polls(&self) -> u32 {
        self.polls.load(Ordering::Relaxed)
    }
}

#[retry(attempts = 10, base = "100ms", jitter = none, on_ok = pending)]
async fn poll_async(jobs: &Jobs) -> Result<Job, String> {
    Ok(jobs.poll())
}

#[tokio::test(start_paused = true)]
async fn a_value_is_retried_until_ready_with_the_usual_backoff() {
    let jobs = Jobs::new(4);
    let started = Instant::now();
    assert_eq!(poll_async(&jobs).await, Ok(Job::Done(4)));
    assert_eq!(jobs.polls(), 4);
    // Three waits without jitter: 100 + 200 + 400 ms.
    assert_eq!(started.elapsed(), Duration::from_millis(700));
}

#[retry(attempts = 3, base = "0ms", on_ok = pending)]
fn poll_sync(jobs: &Jobs) -> Result<Job, String> {
    Ok(jobs.poll())
}

#[test]
fn the_last_value_is_returned_when_attempts_run_out() {
    let jobs = Jobs::new(100);
    assert_eq!(poll_sync(&jobs), Ok(Job::Pending));
    assert_eq!(jobs.polls(), 3);
    let ready = Jobs::new(2);
    assert_eq!(poll_sync(&ready), Ok(Job::Done(2)));
    assert_eq!(ready.polls(), 2);
}

#[test]
fn errors_are_still_classified_by_on_beside_on_ok() {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    #[retry(attempts = 5, base = "0ms", on_ok = pending, on = |e: &String| e != "fatal")]
    fn mixed() -> Result<Job, String> {
        match CALLS.fetch_add(1, Ordering::Relaxed) {
            0 => Ok(Job::Pending),
            1 => Err("busy".into()),
            2 => Ok(Job::Pending),
            _ => Err("fatal".into()),
        }
    }
    assert_eq!(mixed(), Err("fatal".to_string()));
    assert_eq!(CALLS.load(Ordering::Relaxed), 4);
}

/// The server's hint on a value: `RetryAfter` from `on_ok` is waited, as from `on`.
fn later(job: &Job) -> Decision {
    match job {
        Job::Pending => Decision::RetryAfter(Duration::from_secs(2)),
        Job::Done(_) => Decision::Stop,
    }
}

#[retry(attempts = 3, base = "0ms", on_ok = later)]
async fn poll_with_hint(jobs: &Jobs) -> Result<Job, String> {
    Ok(jobs.poll())
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_decision_on_a_value_is_a_hint() {
    let jobs = Jobs::new(3);
    let started = Instant::now();
    assert_eq!(poll_with_hint(&jobs).await, Ok(Job::Done(3)));
    assert_eq!(started.elapsed(), Duration::from_secs(4));
}

#[retry(attempts = 10, base = "1s", cap = "1s", jitter = none, max_elapsed = "2500ms", on_ok = pending)]
async fn poll_until_deadline(jobs: &Jobs) -> Result<Job, String> {
    Ok(jobs.poll())
}

#[tokio::test(start_paused = true)]
async fn max_elapsed_ends_on_the_last_value() {
    let jobs = Jobs::new(100);
    assert_eq!(poll_until_deadline(&jobs).await, Ok(Job::Pending));
    // Polls at 0, 1 s and 2 s; a third wait would end past 2.5 s.
    assert_eq!(jobs.polls(), 3);
}

#[retry(attempts = 10, base = "10ms", timeout = "1s", on_ok = pending)]
async fn poll_with_timeout(jobs: &Jobs) -> Result<Job, std::io::Error> {
    tokio::time::sleep(Duration::from_millis(5)).await;
    Ok(jobs.poll())
}

#[tokio::test(start_paused = true)]
async fn on_ok_works_beside_timeout() {
    let jobs = Jobs::new(3);
    assert_eq!(poll_with_timeout(&jobs).await.unwrap(), Job::Done(3));
    assert_eq!(jobs.polls(), 3);
}

static BUDGET: RetryBudget = RetryBudget::new(10);

#[retry(attempts = 10, base = "0ms", budget = &BUDGET, on_ok = pending)]
async fn poll_on_budget(jobs: &Jobs) -> Result<Job, String> {
    Ok(jobs.poll())
}

#[tokio::test(start_paused = true)]
async fn retried_values_take_the_budget_and_a_late_success_pays_it_back() {
    // 10 tokens, 5 a retry: two retries, then the budget ends the call on its last value.
    let jobs = Jobs::new(100);
    assert_eq!(poll_on_budget(&jobs).await, Ok(Job::Pending));
    assert_eq!(jobs.polls(), 3);
    assert_eq!(BUDGET.available(), 0);
    // A call that is done at its second poll pays its one retry back (after taking it).
    BUDGET.succeeded_after(2);
    let jobs = Jobs::new(2);
    assert_eq!(poll_on_budget(&jobs).await, Ok(Job::Done(2)));
    assert_eq!(BUDGET.available(), 10);
}

#[retry(attempts = 3, base = "0ms", hedge = "50ms", on_ok = pending, attempt = n)]
async fn poll_hedged(jobs: &Jobs, seen: &Mutex<Vec<u32>>) -> Result<Job, String> {
    seen.lock().unwrap().push(n);
    // The first poll hangs past the hedge delay; the hedge answers "pending" at once, the
    // third call (no others running: after the backoff wait) "done".
    if n == 1 {
        tokio::time::sleep(Duration::from_secs(10)).await;
    }
    Ok(jobs.poll())
}

#[tokio::test(start_paused = true)]
async fn hedged_calls_retry_values_and_number_each_hedge() {
    let jobs = Jobs::new(2);
    let seen = Mutex::new(Vec::new());
    assert_eq!(poll_hedged(&jobs, &seen).await, Ok(Job::Done(2)));
    assert_eq!(*seen.lock().unwrap(), [1, 2, 3]);
}

#[retry(attempts = 4, base = "0ms", attempt = n)]
fn numbered_sync(seen: &Mutex<Vec<u32>>) -> Result<u32, u32> {
    seen.lock().unwrap().push(n);
    if n < 4 {
        Err(n)
    } else {
        Ok(n)
    }
}

#[retry(attempts = 4, base = "0ms", attempt = n)]
async fn numbered_async(seen: &Mutex<Vec<u32>>) -> Result<u32, u32> {
    seen.lock().unwrap().push(n);
    tokio::task::yield_now().await;
    if n < 4 {
        Err(n)?;
    }
    Ok(n)
}

#[retry(attempts = 3, base = "0ms", timeout = "1s", attempt = n)]
async fn numbered_timeout(seen: &Mutex<Vec<u32>>) -> Result<u32, std::io::Error> {
    seen.lock().unwrap().push(n);
    if n < 3 {
        tokio::time::sleep(Duration::from_secs(5)).await; // cut by the timeout
    }
    Ok(n)
}

#[tokio::test(start_paused = true)]
async fn attempt_numbers_are_seen_in_order() {
    let seen = Mutex::new(Vec::new());
    assert_eq!(numbered_sync(&seen), Ok(4));
    assert_eq!(std::mem::take(&mut *seen.lock().unwrap()), [1, 2, 3, 4]);
    assert_eq!(numbered_async(&seen).await, Ok(4));
    assert_eq!(std::mem::take(&mut *seen.lock().unwrap()), [1, 2, 3, 4]);
    assert_eq!(numbered_timeout(&seen).await.unwrap(), 3);
    assert_eq!(std::mem::take(&mut *seen.lock().unwrap()), [1, 2, 3]);
}

/// A `notify` and `give_up` of one's own hear of retried values through their own methods.
#[derive(Default)]
struct Heard {
    retried_values: AtomicU32,
    errors: AtomicU32,
    gave_up_on_value: Mutex<Option<(GiveUpReason, u32)>>,
}

impl<E> Notify<E> for &Heard {
    fn notify(&self, _: &E, _: &RetryEvent) {
        self.errors.fetch_add(1, Ordering::Relaxed);
    }
    fn retry_ok(&self, event: &RetryEvent) {
        assert!(event.ok);
        self.retried_values.fetch_add(1, Ordering::Relaxed);
    }
}

impl<E> GiveUpHook<E> for &Heard {
    fn give_up(&self, _: &E, _: &GiveUp) {
        panic!("no error to give up on");
    }
    fn give_up_ok(&self, give_up: &GiveUp) {
        assert!(give_up.ok);
        *self.gave_up_on_value.lock().unwrap() = Some((give_up.reason, give_up.calls));
    }
}

#[test]
fn the_closure_api_retries_values_and_tells_the_hooks() {
    let heard = Heard::default();
    let jobs = Jobs::new(100);
    let out = Retry::new(Policy::new().with_attempts(3).with_base(Duration::ZERO))
        .on_ok(pending)
        .notify(&heard)
        .give_up(&heard)
        .call(|| Ok::<_, String>(jobs.poll()));
    assert_eq!(out, Ok(Job::Pending));
    assert_eq!(jobs.polls(), 3);
    assert_eq!(heard.retried_values.load(Ordering::Relaxed), 2);
    assert_eq!(heard.errors.load(Ordering::Relaxed), 0);
    assert_eq!(
        *heard.gave_up_on_value.lock().unwrap(),
        Some((GiveUpReason::Attempts, 3))
    );
}

#[tokio::test(start_paused = true)]
async fn the_closure_api_numbers_attempts_sync_async_and_hedged() {
    let r = Retry::new(Policy::new().with_attempts(3).with_base(Duration::ZERO));
    let mut seen = Vec::new();
    let out = r.call_with_attempt(|n| {
        seen.push(n);
        if n < 3 {
            Err(n)
        } else {
            Ok(n)
        }
    });
    assert_eq!((out, seen), (Ok(3), vec![1, 2, 3]));

    let seen = Mutex::new(Vec::new());
    let out = r
        .call_async_with_attempt(|n| {
            seen.lock().unwrap().push(n);
            async move {
                if n < 3 {
                    Err(n)
                } else {
                    Ok(n)
                }
            }
        })
        .await;
    assert_eq!(out, Ok(3));
    assert_eq!(std::mem::take(&mut *seen.lock().unwrap()), [1, 2, 3]);

    // Hedged: the first attempt hangs, the hedge at 50 ms is number 2 and answers. (A
    // clone: a `Retry` with its own budget is not `Copy`; the clone shares that budget.)
    let out = r
        .clone()
        .hedge(Hedge::After(Duration::from_millis(50)))
        .call_async_with_attempt(|n| {
            seen.lock().unwrap().push(n);
            async move {
                if n == 1 {
                    tokio::time::sleep(Duration::from_secs(10)).await;
                }
                Ok::<_, ()>(n)
            }
        })
        .await;
    assert_eq!(out, Ok(2));
    assert_eq!(*seen.lock().unwrap(), [1, 2]);

    // on_ok through call_async.
    let jobs = Jobs::new(3);
    let out = r
        .on_ok(pending)
        .call_async(|| async { Ok::<_, ()>(jobs.poll()) })
        .await;
    assert_eq!((out, jobs.polls()), (Ok(Job::Done(3)), 3));
}

#[test]
fn a_seeded_value_retry_draws_the_same_waits_as_an_error_retry() {
    let policy = Policy::new().with_attempts(4);
    testing::seed_jitter(9);
    let (_, error_waits) =
        testing::record_sleeps(|| Retry::new(policy).call(|| Err::<(), _>("busy")));
    testing::seed_jitter(9);
    let (_, value_waits) = testing::record_sleeps(|| {
        Retry::new(policy)
            .on_ok(|_: &()| true)
            .call(|| Ok::<_, &str>(()))
    });
    assert_eq!(error_waits.len(), 3);
    assert_eq!(error_waits, value_waits);
}
