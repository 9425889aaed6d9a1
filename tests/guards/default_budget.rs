//! Issue 53: every `#[retry]` function and every `Retry` has a budget of its own unless told
//! otherwise — 20% of its calls over 10 s plus 10 retries a second — and `budget = none` /
//! `.budget_none()` turn it off. Counts are exact: every wait is zero, so no call spends time
//! and the window holds them all.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use retry_jitter::{retry, GiveUp, GiveUpReason, Policy, Retry};

static ATTEMPTS: AtomicU32 = AtomicU32::new(0);
static REFUSED: AtomicU32 = AtomicU32::new(0);
/// The tests count attempts in statics: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    ATTEMPTS.store(0, Ordering::SeqCst);
    REFUSED.store(0, Ordering::SeqCst);
    guard
}

fn attempts() -> u32 {
    ATTEMPTS.load(Ordering::SeqCst)
}

fn count_refused(_: &u32, g: &GiveUp) {
    if g.reason == GiveUpReason::BudgetEmpty {
        REFUSED.fetch_add(1, Ordering::SeqCst);
    }
}

#[retry(base = "0ns", give_up = count_refused)]
fn down() -> Result<(), u32> {
    ATTEMPTS.fetch_add(1, Ordering::SeqCst);
    Err(503)
}

#[retry(base = "0ns", budget = none, give_up = count_refused)]
fn down_without_budget() -> Result<(), u32> {
    ATTEMPTS.fetch_add(1, Ordering::SeqCst);
    Err(503)
}

#[test]
fn a_handful_of_calls_retries_as_without_a_budget() {
    let _g = serial();
    #[retry(base = "0ns")]
    fn handful() -> Result<(), u32> {
        ATTEMPTS.fetch_add(1, Ordering::SeqCst);
        Err(503)
    }
    for _ in 0..5 {
        assert_eq!(handful(), Err(503));
    }
    assert_eq!(
        attempts(),
        25,
        "5 calls × 5 attempts: the floor covers them"
    );
}

#[test]
fn a_failing_function_sends_its_calls_a_fifth_more_plus_the_floor() {
    let _g = serial();
    for _ in 0..1_000 {
        assert_eq!(down(), Err(503));
    }
    // 1,000 first attempts, then retries while the budget lasts: the floor's 100 plus 20% of
    // the 1,000 calls, 300 in all, not the 4,000 five attempts each would make.
    assert_eq!(attempts(), 1_000 + 300);
    // Every call whose retry was refused ended with `BudgetEmpty`.
    let refused = REFUSED.load(Ordering::SeqCst);
    assert!(refused >= 1_000 - 300 / 4 - 1, "{refused} calls refused");
}

#[test]
fn budget_none_makes_every_attempt() {
    let _g = serial();
    for _ in 0..1_000 {
        assert_eq!(down_without_budget(), Err(503));
    }
    assert_eq!(attempts(), 5_000);
    assert_eq!(REFUSED.load(Ordering::SeqCst), 0);
}

/// One budget per annotated function, whatever its generic arguments.
#[retry(base = "0ns")]
fn generic<T: Default>() -> Result<T, u32> {
    ATTEMPTS.fetch_add(1, Ordering::SeqCst);
    Err(503)
}

#[test]
fn a_generic_function_has_one_budget_for_all_its_instances() {
    let _g = serial();
    for _ in 0..500 {
        let _ = generic::<u8>();
        let _ = generic::<String>();
    }
    assert_eq!(attempts(), 1_000 + 100 + 200);
}

// The lock keeps the other tests (on threads of their own) off the counters; nothing on this
// test's runtime takes it.
#[allow(clippy::await_holding_lock)]
#[tokio::test(start_paused = true)]
async fn an_async_function_s_budget_refills_as_the_window_moves() {
    let _g = serial();
    #[retry(base = "0ns")]
    async fn down_async() -> Result<(), u32> {
        ATTEMPTS.fetch_add(1, Ordering::SeqCst);
        Err(503)
    }
    for _ in 0..200 {
        let _ = down_async().await;
    }
    assert_eq!(attempts(), 200 + 100 + 40);
    // 10 s later the window holds none of it: the floor again, and a fifth of the new calls.
    tokio::time::advance(Duration::from_secs(11)).await;
    ATTEMPTS.store(0, Ordering::SeqCst);
    for _ in 0..200 {
        let _ = down_async().await;
    }
    assert_eq!(attempts(), 200 + 100 + 40);
}

#[test]
fn a_retry_and_its_clones_share_one_budget_and_budget_none_has_none() {
    let _g = serial();
    let r = Retry::new(Policy::new().with_base(Duration::ZERO));
    let clone = r.clone();
    let fail = || {
        ATTEMPTS.fetch_add(1, Ordering::SeqCst);
        Err::<(), _>(503)
    };
    for _ in 0..250 {
        let _ = r.call(fail);
        let _ = clone.call(fail);
    }
    assert_eq!(attempts(), 500 + 100 + 100);

    // Another `Retry` has a budget of its own, untouched by the first's.
    ATTEMPTS.store(0, Ordering::SeqCst);
    let other = Retry::new(Policy::new().with_base(Duration::ZERO));
    for _ in 0..10 {
        let _ = other.call(fail);
    }
    assert_eq!(attempts(), 50);

    ATTEMPTS.store(0, Ordering::SeqCst);
    let none = Retry::new(Policy::new().with_base(Duration::ZERO)).budget_none();
    for _ in 0..500 {
        let _ = none.call(fail);
    }
    assert_eq!(attempts(), 2_500);
}

/// A call an hour for a day of virtual time: each one's retries are the floor's, whatever
/// came before (the fold after 23 silent hours counts the one call, not nothing).
#[allow(clippy::await_holding_lock)] // as above
#[tokio::test(start_paused = true)]
async fn a_call_an_hour_retries_as_without_a_budget() {
    let _g = serial();
    #[retry(base = "0ns")]
    async fn hourly() -> Result<(), u32> {
        ATTEMPTS.fetch_add(1, Ordering::SeqCst);
        Err(503)
    }
    for _ in 0..24 {
        let _ = hourly().await;
        tokio::time::advance(Duration::from_secs(3_600)).await;
    }
    assert_eq!(attempts(), 24 * 5);
}

/// 64 calls in flight at once on a multi-thread runtime, many rounds: however their
/// counting, folding and taking interleave, the retries granted stay within the floor and a
/// fifth of the calls, and each call within its attempts.
#[test]
fn sixty_four_in_flight_stay_within_the_budget_every_round() {
    let _g = serial();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_time()
        .build()
        .unwrap();
    for round in 0..200 {
        // A fresh `Retry` each round: a fresh budget.
        let r = Retry::new(Policy::new().with_base(Duration::ZERO));
        let sent = std::sync::Arc::new(AtomicU32::new(0));
        let most = rt.block_on(async {
            let mut calls = tokio::task::JoinSet::new();
            for _ in 0..64 {
                let (r, sent) = (r.clone(), sent.clone());
                calls.spawn(async move {
                    let mine = AtomicU32::new(0);
                    let _ = r
                        .call_async(|| async {
                            mine.fetch_add(1, Ordering::SeqCst);
                            sent.fetch_add(1, Ordering::SeqCst);
                            tokio::task::yield_now().await;
                            Err::<(), _>(503)
                        })
                        .await;
                    mine.into_inner()
                });
            }
            let mut most = 0;
            while let Some(call) = calls.join_next().await {
                most = most.max(call.unwrap());
            }
            most
        });
        let retries = sent.load(Ordering::SeqCst) - 64;
        // At least the floor (100 < 64 × 4 asked), at most the floor and 20% of 64 (12.8).
        assert!(
            (100..=112).contains(&retries),
            "round {round}: {retries} retries"
        );
        assert!(most <= 5, "round {round}: a call made {most} attempts");
    }
}

/// Hedges are charged to the function's budget as retries: a handful of slow calls hedge
/// as without a budget.
#[tokio::test(start_paused = true)]
async fn a_handful_of_hedged_calls_hedge_as_without_a_budget() {
    static MADE: AtomicU32 = AtomicU32::new(0);
    #[retry(attempts = 3, hedge = "10ms")]
    async fn slow() -> Result<(), u32> {
        MADE.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(50)).await;
        Ok(())
    }
    let calls: Vec<_> = (0..10).map(|_| tokio::spawn(slow())).collect();
    for call in calls {
        assert_eq!(call.await.unwrap(), Ok(()));
    }
    // Each call: its attempt and hedges at 10 and 20 ms, all before the first answers.
    assert_eq!(MADE.load(Ordering::SeqCst), 30);
}
