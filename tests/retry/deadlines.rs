//! Deadlines that hold: a per-attempt `timeout` cuts an attempt that never answers, `max_elapsed`
//! with a `timeout` cuts the attempt in flight, no attempt starts past `max_elapsed` however long
//! the timer slept, the clock is the timer's (tokio's paused clock here), and a retry that never
//! ran gives its budget tokens back. All on tokio's paused clock: no real time passes.

use std::cell::RefCell;
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_jitter::{
    retry, GiveUp, GiveUpReason, Policy, Retry, RetryBudget, RetryEvent, TimedOut, Transient,
};
use tokio::time::Instant;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Counts calls; each attempt sleeps its `hang` (tokio time), then fails or succeeds.
#[derive(Default)]
struct Upstream {
    calls: AtomicU32,
    /// Attempt number (1-based) → how long it takes; attempts not listed never answer.
    answers: Mutex<Vec<(u32, Duration)>>,
    /// Attempts that finished (were not dropped).
    finished: AtomicU32,
}

impl Upstream {
    fn answering(answers: &[(u32, Duration)]) -> Self {
        Upstream {
            answers: Mutex::new(answers.to_vec()),
            ..Upstream::default()
        }
    }

    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }

    /// One attempt: `Ok(n)` after its listed time, or never.
    async fn attempt(&self) -> io::Result<u32> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let time = self
            .answers
            .lock()
            .unwrap()
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, t)| *t);
        match time {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending::<()>().await,
        }
        self.finished.fetch_add(1, Ordering::SeqCst);
        Ok(n)
    }
}

#[retry(attempts = 3, base = "100ms", jitter = none, timeout = "1s")]
async fn never_answers(up: &Upstream) -> io::Result<u32> {
    up.attempt().await
}

#[tokio::test(start_paused = true)]
async fn an_attempt_that_never_answers_is_cut_at_its_timeout_and_retried() {
    let up = Upstream::default();
    let started = Instant::now();
    let err = never_answers(&up).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    assert!(err.get_ref().is_some_and(|e| e.is::<TimedOut>()), "{err:?}");
    assert_eq!(up.calls(), 3);
    // Three cut attempts of 1 s, and the waits of 100 ms and 200 ms between them.
    assert_eq!(started.elapsed(), ms(3_300));
}

#[tokio::test(start_paused = true)]
async fn an_attempt_that_answers_in_time_is_not_cut() {
    // The first attempt never answers, the second takes 999 ms: within the 1 s limit.
    let up = Upstream::answering(&[(2, ms(999))]);
    let started = Instant::now();
    assert_eq!(never_answers(&up).await.unwrap(), 2);
    assert_eq!(up.calls(), 2);
    assert_eq!(started.elapsed(), ms(1_000 + 100 + 999));
}

#[tokio::test(start_paused = true)]
async fn a_cut_attempt_is_dropped_at_once() {
    struct Dropped<'a>(&'a AtomicU32);
    impl Drop for Dropped<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    #[retry(attempts = 2, base = "0ns", timeout = "50ms")]
    async fn holds(up: &Upstream, dropped: &AtomicU32) -> io::Result<u32> {
        let calls_before = up.calls();
        // Every earlier attempt was dropped before this one began.
        assert_eq!(dropped.load(Ordering::SeqCst), calls_before);
        let _guard = Dropped(dropped);
        up.attempt().await
    }
    let (up, dropped) = (Upstream::default(), AtomicU32::new(0));
    assert!(holds(&up, &dropped).await.is_err());
    assert_eq!((up.calls(), up.finished.load(Ordering::SeqCst)), (2, 0));
    assert_eq!(dropped.load(Ordering::SeqCst), 2);
}

/// An error type of the user's, with its own variant for a cut attempt.
#[derive(Debug, PartialEq)]
enum ApiError {
    TimedOut,
    NotFound,
}

impl From<TimedOut> for ApiError {
    fn from(_: TimedOut) -> Self {
        ApiError::TimedOut
    }
}

fn not_a_timeout(e: &ApiError) -> bool {
    *e != ApiError::TimedOut
}

#[retry(attempts = 5, timeout = "1s", on = not_a_timeout)]
async fn classified(up: &Upstream) -> Result<u32, ApiError> {
    up.attempt().await.map_err(|_| ApiError::NotFound)
}

#[tokio::test(start_paused = true)]
async fn on_classifies_a_timed_out_attempt_like_any_error() {
    let up = Upstream::default();
    assert_eq!(classified(&up).await, Err(ApiError::TimedOut));
    assert_eq!(up.calls(), 1, "on said not to retry a timeout");
}

static EVENTS: Mutex<Vec<(String, u32)>> = Mutex::new(Vec::new());
static GIVE_UPS: Mutex<Vec<(String, GiveUpReason, u32)>> = Mutex::new(Vec::new());

fn noted(e: &ApiError, ev: &RetryEvent) {
    EVENTS.lock().unwrap().push((format!("{e:?}"), ev.attempt));
}

fn gave_up(e: &ApiError, g: &GiveUp) {
    GIVE_UPS
        .lock()
        .unwrap()
        .push((format!("{e:?}"), g.reason, g.calls));
}

#[retry(attempts = 3, base = "0ns", timeout = "10ms", notify = noted, give_up = gave_up)]
async fn reported(up: &Upstream) -> Result<u32, ApiError> {
    up.attempt().await.map_err(|_| ApiError::NotFound)
}

#[tokio::test(start_paused = true)]
async fn notify_and_give_up_see_a_timed_out_attempt_like_any_failure() {
    let up = Upstream::default();
    assert_eq!(reported(&up).await, Err(ApiError::TimedOut));
    let t = || "TimedOut".to_string();
    assert_eq!(*EVENTS.lock().unwrap(), [(t(), 1), (t(), 2)]);
    assert_eq!(
        *GIVE_UPS.lock().unwrap(),
        [(t(), GiveUpReason::Attempts, 3)]
    );
}

thread_local! {
    /// Gives up with `max_elapsed` only: the reason of each call, in order, on this thread.
    /// Each test runs on a thread of its own (its runtime is current-thread), so the tests
    /// that share this hook and run side by side never see each other's give-ups.
    static REASONS: RefCell<Vec<(GiveUpReason, u32)>> = const { RefCell::new(Vec::new()) };
}

fn reason(_: &io::Error, g: &GiveUp) {
    REASONS.with_borrow_mut(|reasons| reasons.push((g.reason, g.calls)));
}

#[retry(attempts = 10, base = "0ns", timeout = "1s", max_elapsed = "2500ms", give_up = reason)]
async fn deadline(up: &Upstream) -> io::Result<u32> {
    up.attempt().await
}

#[tokio::test(start_paused = true)]
async fn with_a_timeout_max_elapsed_is_a_hard_deadline_that_cuts_the_attempt_in_flight() {
    let up = Upstream::default();
    let started = Instant::now();
    let err = deadline(&up).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    // 0–1 s and 1–2 s cut by the timeout; 2–2.5 s cut by the deadline, which ends the call.
    assert_eq!(started.elapsed(), ms(2_500));
    assert_eq!(up.calls(), 3);
    assert_eq!(REASONS.take(), [(GiveUpReason::Elapsed, 3)]);
}

#[retry(attempts = 10, timeout = "1h", max_elapsed = "2s", give_up = reason)]
async fn first_attempt_hangs(up: &Upstream) -> io::Result<u32> {
    up.attempt().await
}

#[tokio::test(start_paused = true)]
async fn the_deadline_cuts_even_the_first_attempt() {
    let up = Upstream::default();
    let started = Instant::now();
    assert!(first_attempt_hangs(&up).await.is_err());
    assert_eq!(started.elapsed(), ms(2_000));
    assert_eq!(up.calls(), 1);
    assert_eq!(REASONS.take(), [(GiveUpReason::Elapsed, 1)]);
}

#[retry(attempts = 3, base = "0ns", max_elapsed = "1s")]
async fn no_timeout(up: &Upstream) -> io::Result<u32> {
    up.attempt().await
}

#[tokio::test(start_paused = true)]
async fn without_a_timeout_max_elapsed_does_not_cut_a_running_attempt() {
    // The first attempt takes 5 s, past the 1 s budget: it is not cut, and it answers.
    let up = Upstream::answering(&[(1, ms(5_000))]);
    assert_eq!(no_timeout(&up).await.unwrap(), 1);
}

async fn my_tokio_sleep(d: Duration) {
    tokio::time::sleep(d).await;
}

#[retry(attempts = 1000, base = "1s", cap = "1s", jitter = none, max_elapsed = "10s", sleep = my_tokio_sleep)]
async fn own_sleep(up: &Upstream) -> Result<u32, ()> {
    up.calls.fetch_add(1, Ordering::SeqCst);
    Err(())
}

#[tokio::test(start_paused = true)]
async fn a_sleep_of_the_users_keeps_tokios_paused_clock_for_max_elapsed() {
    let up = Upstream::default();
    let started = Instant::now();
    assert!(own_sleep(&up).await.is_err());
    // Calls at 0 s, 1 s, … 10 s: the wait after the eleventh would end past 10 s.
    assert_eq!(up.calls(), 11);
    assert_eq!(started.elapsed(), ms(10_000));
}

static OVERSLEEPS: AtomicU32 = AtomicU32::new(0);

/// A timer that sleeps ten times longer than asked.
async fn oversleep(d: Duration) {
    OVERSLEEPS.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(d * 10).await;
}

#[retry(attempts = 10, base = "1s", jitter = none, max_elapsed = "5s", sleep = oversleep, give_up = reason)]
async fn overslept(up: &Upstream) -> io::Result<u32> {
    let n = up.calls.fetch_add(1, Ordering::SeqCst) + 1;
    Err(io::Error::new(
        io::ErrorKind::ConnectionRefused,
        format!("failure {n}"),
    ))
}

#[tokio::test(start_paused = true)]
async fn no_attempt_starts_past_max_elapsed_however_long_the_timer_slept() {
    let up = Upstream::default();
    let started = Instant::now();
    let err = overslept(&up).await.unwrap_err();
    // The first wait (1 s asked) took 10 s: the deadline passed during it, so the second call
    // is never made and the first call's error comes back.
    assert_eq!(err.to_string(), "failure 1");
    assert_eq!(up.calls(), 1);
    assert_eq!(OVERSLEEPS.load(Ordering::SeqCst), 1);
    assert_eq!(started.elapsed(), ms(10_000));
    assert_eq!(REASONS.take(), [(GiveUpReason::Elapsed, 1)]);
}

static SLEEPS: AtomicU32 = AtomicU32::new(0);
static CLOCK_READS: AtomicU32 = AtomicU32::new(0);

async fn counted_sleep(d: Duration) {
    SLEEPS.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(d).await;
}

fn counted_clock() -> std::time::Instant {
    CLOCK_READS.fetch_add(1, Ordering::SeqCst);
    tokio::time::Instant::now().into_std()
}

#[retry(attempts = 2, base = "0ns", timeout = "1s", max_elapsed = "1m", sleep = counted_sleep, clock = counted_clock)]
async fn own_timer(up: &Upstream) -> io::Result<u32> {
    up.attempt().await
}

#[tokio::test(start_paused = true)]
async fn the_attempt_is_raced_against_the_users_own_timer_on_the_users_clock() {
    let up = Upstream::default();
    let started = Instant::now();
    assert!(own_timer(&up).await.is_err());
    assert_eq!(started.elapsed(), ms(2_000));
    // One timer per attempt (a zero wait is no timer), and the clock read for the start and
    // for each attempt's limit against the deadline (and for each wait's check against it).
    assert_eq!(SLEEPS.load(Ordering::SeqCst), 2);
    assert!(CLOCK_READS.load(Ordering::SeqCst) >= 3);
}

#[tokio::test(start_paused = true)]
async fn the_closure_api_has_the_same_timeout_and_deadline() {
    let up = Upstream::answering(&[(3, ms(10))]);
    let retry = Retry::new(Policy::new().with_attempts(5).with_base(Duration::ZERO))
        .timeout(ms(100))
        .with_name("closure");
    let started = Instant::now();
    assert_eq!(retry.call_async(|| up.attempt()).await.unwrap(), 3);
    assert_eq!(started.elapsed(), ms(210));

    let up = Upstream::default();
    let policy = Policy::new()
        .with_attempts(100)
        .with_base(Duration::ZERO)
        .with_max_elapsed(ms(250));
    let started = Instant::now();
    let gave = Mutex::new(None);
    let err = Retry::new(policy)
        .timeout(ms(100))
        .give_up(|_: &io::Error, g: &GiveUp| *gave.lock().unwrap() = Some((g.reason, g.calls)))
        .call_async(|| up.attempt())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    assert_eq!(started.elapsed(), ms(250));
    assert_eq!(*gave.lock().unwrap(), Some((GiveUpReason::Elapsed, 3)));
}

#[test]
fn timed_out_is_a_small_transient_error() {
    fn traits<T: Copy + Eq + std::error::Error + Send + Sync + 'static>() {}
    traits::<TimedOut>();
    assert_eq!(TimedOut.decision(), retry_jitter::Decision::Retry);
    assert_eq!(io::Error::from(TimedOut).kind(), io::ErrorKind::TimedOut);
}

// Budget tokens are never lost: a retry that took its tokens and never ran gives them back.

#[retry(attempts = 5, base = "10s", jitter = none, budget = &DROPPED_BUDGET)]
async fn fails_then_waits(up: Arc<Upstream>) -> io::Result<u32> {
    up.calls.fetch_add(1, Ordering::SeqCst);
    Err(io::Error::new(io::ErrorKind::ConnectionRefused, "down"))
}
static DROPPED_BUDGET: RetryBudget = RetryBudget::new(100);

#[tokio::test(start_paused = true)]
async fn a_future_dropped_during_the_wait_gives_its_retrys_tokens_back() {
    let up = Arc::new(Upstream::default());
    let task = tokio::spawn(fails_then_waits(up.clone()));
    tokio::time::sleep(ms(1)).await; // the first call failed; the 10 s wait began
    assert_eq!(up.calls(), 1);
    assert_eq!(DROPPED_BUDGET.available(), 95, "the retry took its tokens");
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_eq!(
        DROPPED_BUDGET.available(),
        100,
        "the retry never ran: tokens back"
    );
}

static PANIC_BUDGET: RetryBudget = RetryBudget::new(100);

fn panics(_: &io::Error, _: &RetryEvent) {
    panic!("a notify hook that panics");
}

#[retry(attempts = 5, base = "0ns", budget = &PANIC_BUDGET, notify = panics)]
fn notify_panics() -> io::Result<()> {
    Err(io::Error::new(io::ErrorKind::ConnectionRefused, "down"))
}

#[test]
fn a_notify_hook_that_panics_gives_the_retrys_tokens_back() {
    assert!(std::panic::catch_unwind(notify_panics).is_err());
    assert_eq!(PANIC_BUDGET.available(), 100);
}

static DEADLINE_BUDGET: RetryBudget = RetryBudget::new(100);

/// [`oversleep`], uncounted.
async fn oversleep_too(d: Duration) {
    tokio::time::sleep(d * 10).await;
}

#[retry(attempts = 10, base = "1s", jitter = none, max_elapsed = "5s", sleep = oversleep_too, budget = &DEADLINE_BUDGET)]
async fn overslept_with_budget() -> io::Result<u32> {
    Err(io::Error::new(io::ErrorKind::ConnectionRefused, "down"))
}

#[tokio::test(start_paused = true)]
async fn a_retry_the_deadline_stopped_after_its_wait_gives_its_tokens_back() {
    assert!(overslept_with_budget().await.is_err());
    assert_eq!(DEADLINE_BUDGET.available(), 100);
}

#[tokio::test(start_paused = true)]
async fn tokens_of_retries_that_ran_are_still_spent() {
    static SPENT: RetryBudget = RetryBudget::new(100);
    #[retry(attempts = 3, base = "0ns", budget = &SPENT)]
    async fn down() -> io::Result<u32> {
        Err(io::Error::new(io::ErrorKind::ConnectionRefused, "down"))
    }
    assert!(down().await.is_err());
    assert_eq!(SPENT.available(), 90, "two retries ran, 5 tokens each");
}

/// No runtime at all: a timer that is a thread, and a `block_on` that parks the test's thread.
mod no_runtime {
    use std::future::Future;
    use std::pin::pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll, Wake, Waker};
    use std::thread::{self, Thread};
    use std::time::Duration;

    /// Sleeps on a thread of its own, then wakes the task.
    pub async fn thread_sleep(d: Duration) {
        let shared: Arc<Mutex<(bool, Option<Waker>)>> = Arc::default();
        let mut started = false;
        std::future::poll_fn(|cx| {
            let mut state = shared.lock().unwrap();
            if state.0 {
                return Poll::Ready(());
            }
            state.1 = Some(cx.waker().clone());
            if !started {
                started = true;
                let shared = shared.clone();
                thread::spawn(move || {
                    thread::sleep(d);
                    let mut state = shared.lock().unwrap();
                    state.0 = true;
                    if let Some(waker) = state.1.take() {
                        waker.wake();
                    }
                });
            }
            Poll::Pending
        })
        .await;
    }

    struct Unpark(Thread);

    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }

    pub fn block_on<F: Future>(f: F) -> F::Output {
        let mut f = pin!(f);
        let waker = Waker::from(Arc::new(Unpark(thread::current())));
        let mut cx = Context::from_waker(&waker);
        loop {
            if let Poll::Ready(out) = f.as_mut().poll(&mut cx) {
                return out;
            }
            thread::park();
        }
    }
}

#[retry(attempts = 3, base = "1ms", timeout = "50ms", max_elapsed = "10s",
        sleep = no_runtime::thread_sleep, clock = retry_jitter::sleep::now)]
async fn hangs_off_tokio(calls: &AtomicU32) -> io::Result<()> {
    calls.fetch_add(1, Ordering::SeqCst);
    std::future::pending().await
}

#[test]
fn the_timeout_needs_no_tokio_only_the_timer_given_with_sleep() {
    let calls = AtomicU32::new(0);
    let started = std::time::Instant::now();
    let err = no_runtime::block_on(hangs_off_tokio(&calls)).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    // Three attempts cut at 50 ms each, on real time (there is no paused clock off tokio).
    assert!(started.elapsed() >= ms(150), "{:?}", started.elapsed());
}
