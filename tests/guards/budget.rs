//! Retry budgets: exact accounting under concurrency, the AWS quota's shape, and what a call
//! does when the shared bucket is empty.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_jitter::{retry, testing, Policy, Retry, RetryBudget};

#[test]
fn concurrent_retries_never_take_more_tokens_than_there_are_and_lose_none() {
    const THREADS: u32 = 8;
    const TRIES: u32 = 10_000;
    static BUDGET: RetryBudget = RetryBudget::new(5_000);
    let granted = AtomicU32::new(0);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..TRIES {
                    if BUDGET.try_retry() {
                        granted.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    // 5,000 tokens at 5 a retry: exactly 1,000 retries, whatever the interleaving.
    assert_eq!(granted.load(Ordering::Relaxed), 1_000);
    assert_eq!(BUDGET.available(), 0);
}

#[test]
fn concurrent_refunds_and_retries_balance_exactly() {
    const THREADS: u32 = 8;
    const ROUNDS: u32 = 5_000;
    static BUDGET: RetryBudget = RetryBudget::new(1_000);
    let granted = AtomicU32::new(0);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..ROUNDS {
                    // A retry that then succeeds gives back what it took.
                    if BUDGET.try_retry() {
                        granted.fetch_add(1, Ordering::Relaxed);
                        BUDGET.succeeded_after(1);
                    }
                }
            });
        }
    });
    assert_eq!(BUDGET.available(), 1_000, "tokens were lost or made up");
    assert_eq!(granted.load(Ordering::Relaxed), THREADS * ROUNDS);
}

#[test]
fn first_try_successes_refill_one_token_each_up_to_capacity() {
    let b = RetryBudget::new(100);
    assert!((0..20).all(|_| b.try_retry()));
    assert_eq!(b.available(), 0);
    for _ in 0..7 {
        b.succeeded_after(0);
    }
    assert_eq!(b.available(), 7);
    b.succeeded_after(50); // 250 back, capped
    assert_eq!(b.available(), 100);
}

#[test]
fn costs_are_configurable_in_const() {
    static B: RetryBudget = RetryBudget::new(10)
        .with_retry_cost(1)
        .with_success_reward(0);
    assert!((0..10).all(|_| B.try_retry()));
    assert!(!B.try_retry());
    B.succeeded_after(0);
    assert_eq!(B.available(), 0);
}

static CALLS: AtomicU32 = AtomicU32::new(0);
static SHARED: RetryBudget = RetryBudget::new(12);

#[retry(attempts = 10, base = "1ms", budget = &SHARED)]
fn always_down() -> Result<(), u32> {
    Err(CALLS.fetch_add(1, Ordering::SeqCst) + 1)
}

#[test]
fn an_empty_budget_returns_the_error_at_once_and_the_first_call_is_always_made() {
    let (first, waits) = testing::record_sleeps(always_down);
    // 12 tokens: two retries (5 each), then the third cannot take its 5.
    assert_eq!(first, Err(3));
    assert_eq!(waits.len(), 2);
    assert_eq!(SHARED.available(), 2);
    let (second, waits) = testing::record_sleeps(always_down);
    assert_eq!(second, Err(4), "one call, no retry");
    assert!(waits.is_empty(), "no wait when the budget is empty");
}

#[test]
fn a_success_after_retries_gives_back_what_they_took() {
    static B: RetryBudget = RetryBudget::new(100);
    let mut n = 0;
    let policy = Policy::new().with_base(Duration::ZERO);
    let out = Retry::new(policy).budget(&B).call(|| {
        n += 1;
        if n < 4 {
            Err(n)
        } else {
            Ok(n)
        }
    });
    assert_eq!(out, Ok(4));
    assert_eq!(
        B.available(),
        100,
        "3 retries took 15, the success gave 15 back"
    );
}

#[tokio::test(start_paused = true)]
async fn async_retries_share_the_budget_too() {
    static B: RetryBudget = RetryBudget::new(10);
    static N: AtomicU32 = AtomicU32::new(0);

    #[retry(attempts = 5, budget = &B)]
    async fn down() -> Result<(), u32> {
        Err(N.fetch_add(1, Ordering::SeqCst) + 1)
    }

    assert_eq!(down().await, Err(3));
    assert_eq!(down().await, Err(4));
    assert_eq!(B.available(), 0);
}

/// A budget of one's own, told each moment of each call: what `SharedBudget` promises.
#[derive(Default)]
struct Told(std::sync::Mutex<Vec<String>>);

impl retry_jitter::budget::SharedBudget for Told {
    fn begin(&self, _: retry_jitter::time::Clock) {
        self.0.lock().unwrap().push("begin".into());
    }
    fn failed(&self, _: retry_jitter::time::Clock) {
        self.0.lock().unwrap().push("failed".into());
    }
    fn take_retry(
        &self,
        charge: retry_jitter::budget::Charge,
        _: retry_jitter::time::Clock,
    ) -> Option<retry_jitter::budget::RetryTicket> {
        self.0.lock().unwrap().push(format!("take {charge:?}"));
        Some(retry_jitter::budget::RetryTicket::NONE)
    }
    fn refund(&self, _: retry_jitter::budget::RetryTicket) {
        self.0.lock().unwrap().push("refund".into());
    }
    fn succeeded(&self, taken: retry_jitter::budget::Taken) {
        let t = (taken.retries, taken.rate_limited, taken.hedges);
        self.0.lock().unwrap().push(format!("succeeded {t:?}"));
    }
}

#[tokio::test(start_paused = true)]
async fn a_budget_hears_each_moment_once_a_hedge_charged_as_one() {
    use retry_jitter::hedge::Hedge;
    let told: &'static Told = Box::leak(Box::default());
    let r = Retry::new(Policy::new().with_attempts(3))
        .hedge(Hedge::After(Duration::from_millis(10)))
        .budget(told);
    let calls = AtomicU32::new(0);
    let out = r
        .call_async(|| {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move {
                // The first attempt is slow: the hedge, sent at 10 ms, answers first.
                tokio::time::sleep(Duration::from_millis(if n == 0 { 100 } else { 1 })).await;
                Ok::<_, ()>(n)
            }
        })
        .await;
    assert_eq!(out, Ok(1));
    // Counted when the hedge was due, charged as a hedge, paid back with what it took.
    assert_eq!(
        *told.0.lock().unwrap(),
        ["begin", "take Hedge", "succeeded (0, 0, 1)"]
    );
    // A first success: counted and told it took nothing; nothing charged.
    told.0.lock().unwrap().clear();
    assert_eq!(
        Retry::new(Policy::new())
            .budget(told)
            .call(|| Ok::<_, ()>(1)),
        Ok(1)
    );
    assert_eq!(*told.0.lock().unwrap(), ["begin", "succeeded (0, 0, 0)"]);
}

#[test]
fn a_budget_hears_each_failure_to_retry_the_last_one_too_and_not_one_it_stops_on() {
    let told: &'static Told = Box::leak(Box::default());
    let policy = Policy::new().with_attempts(2).with_base(Duration::ZERO);
    let mut first = true;
    let out = Retry::new(policy).budget(told).call(|| {
        if core::mem::replace(&mut first, false) {
            Err(503)
        } else {
            Ok(1)
        }
    });
    assert_eq!(out, Ok(1));
    assert_eq!(
        *told.0.lock().unwrap(),
        ["begin", "failed", "take Retry", "succeeded (1, 0, 0)"]
    );
    // Two failures with two attempts: the second is told too, though no retry follows.
    told.0.lock().unwrap().clear();
    let _ = Retry::new(policy).budget(told).call(|| Err::<(), _>(503));
    assert_eq!(
        *told.0.lock().unwrap(),
        ["begin", "failed", "take Retry", "failed"]
    );
    // An error the classifier stops on is not a failure to retry.
    told.0.lock().unwrap().clear();
    let _ = Retry::new(policy)
        .budget(told)
        .on(|_: &u32| retry_jitter::Decision::Stop)
        .call(|| Err::<(), _>(404_u32));
    assert_eq!(*told.0.lock().unwrap(), ["begin"]);
}

#[test]
fn grpc_retry_throttling_refuses_the_fifth_failure_in_a_row_and_counts_the_last_attempt() {
    use retry_jitter::budget::RetryThrottling;
    use retry_jitter::Decision;
    let policy = |attempts| {
        Policy::new()
            .with_attempts(attempts)
            .with_base(Duration::ZERO)
    };
    let t: &'static RetryThrottling = Box::leak(Box::new(RetryThrottling::new(10, 100)));
    let mut calls = 0;
    let r = Retry::new(policy(5)).budget(t).call(|| {
        calls += 1;
        Err::<(), _>("unavailable")
    });
    // Five attempts: the fifth failure leaves 5 000 of 10 000 thousandths, half: no retry.
    assert_eq!((r, calls, t.milli_tokens()), (Err("unavailable"), 5, 5_000));
    // The next call's first attempt is made (a call's first is never held back); its
    // failure takes the bucket to 4 000, and it is not retried.
    let mut calls = 0;
    let _ = Retry::new(policy(5)).budget(t).call(|| {
        calls += 1;
        Err::<(), _>("unavailable")
    });
    assert_eq!((calls, t.milli_tokens()), (1, 4_000));

    // A call whose attempts run out still counts its last failure; one stopped on, nothing;
    // a success after a retry gives back its ratio once.
    let t: &'static RetryThrottling = Box::leak(Box::new(RetryThrottling::new(10, 100)));
    let _ = Retry::new(policy(2))
        .budget(t)
        .call(|| Err::<(), _>("down"));
    assert_eq!(t.milli_tokens(), 8_000);
    let _ = Retry::new(policy(5))
        .budget(t)
        .on(|_: &&str| Decision::Stop)
        .call(|| Err::<(), _>("not found"));
    assert_eq!(t.milli_tokens(), 8_000);
    let mut first = true;
    let r = Retry::new(policy(5)).budget(t).call(|| {
        if std::mem::replace(&mut first, false) {
            Err("once")
        } else {
            Ok(2)
        }
    });
    assert_eq!((r, t.milli_tokens()), (Ok(2), 7_100));
}

#[tokio::test(start_paused = true)]
async fn grpc_retry_throttling_under_the_attribute_counts_as_a6_does() {
    use retry_jitter::budget::RetryThrottling;
    // maxTokens 10, tokenRatio 0.1.
    static T: RetryThrottling = RetryThrottling::new(10, 100);
    static N: AtomicU32 = AtomicU32::new(0);

    #[retry(attempts = 5, base = "1ms", budget = &T)]
    async fn unavailable() -> Result<(), u32> {
        Err(N.fetch_add(1, Ordering::SeqCst) + 1)
    }

    // Four retries, then the fifth failure leaves 5 of 10 tokens: not retried.
    assert_eq!(unavailable().await, Err(5));
    assert_eq!(T.milli_tokens(), 5_000);
    // Each later call is sent once, and takes a token.
    assert_eq!(unavailable().await, Err(6));
    assert_eq!(T.milli_tokens(), 4_000);
}

#[tokio::test(start_paused = true)]
async fn grpc_retry_throttling_holds_back_hedges_too() {
    use retry_jitter::budget::RetryThrottling;
    use retry_jitter::hedge::Hedge;
    // 2 tokens: one failure leaves half, and nothing more is sent.
    let t: &'static RetryThrottling = Box::leak(Box::new(RetryThrottling::new(2, 100)));
    let r = Retry::new(Policy::new().with_attempts(3))
        .hedge(Hedge::After(Duration::from_millis(10)))
        .budget(t);
    let calls = AtomicU32::new(0);
    let out = r
        .call_async(|| {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Err::<(), _>("unavailable") }
        })
        .await;
    assert_eq!(out, Err("unavailable"));
    assert_eq!((calls.load(Ordering::SeqCst), t.milli_tokens()), (1, 1_000));
}

#[test]
fn a_retry_budget_prices_a_hedge_as_a_retry_and_gets_it_back() {
    use retry_jitter::budget::{Charge, SharedBudget, Taken};
    use retry_jitter::sleep;
    let b = RetryBudget::new(20);
    let ticket = b.take_retry(Charge::Hedge, sleep::now).unwrap();
    assert_eq!(b.available(), 15);
    b.refund(ticket);
    assert_eq!(b.available(), 20);
    let _ = b.take_retry(Charge::Hedge, sleep::now).unwrap();
    let mut taken = Taken::NONE;
    taken.count(Charge::Hedge);
    b.succeeded(taken);
    assert_eq!(b.available(), 20);
}

/// gRPC's throttle under a cold burst: 64 calls in flight at once on a multi-thread runtime,
/// the service failing everything, from a full bucket of 10. A retry goes ahead only where
/// the bucket, its own failure counted, holds more than 5 tokens: at most 4 of the 64 first
/// failures can see that, whatever the interleaving, so at most 64 + 4 attempts reach the
/// service (and their own failures drain the bucket). Many rounds: a race loses rarely.
#[test]
fn grpc_retry_throttling_holds_a_cold_burst_of_64_to_four_retries() {
    use retry_jitter::budget::RetryThrottling;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    for _ in 0..50 {
        let t: &'static RetryThrottling = Box::leak(Box::new(RetryThrottling::new(10, 100)));
        let attempts: &'static AtomicU32 = Box::leak(Box::new(AtomicU32::new(0)));
        let retry = Retry::new(Policy::new().with_attempts(5).with_base(Duration::ZERO)).budget(t);
        rt.block_on(async {
            let calls: Vec<_> = (0..64)
                .map(|_| {
                    tokio::spawn(async move {
                        retry
                            .call_async(|| async {
                                attempts.fetch_add(1, Ordering::SeqCst);
                                tokio::task::yield_now().await;
                                Err::<(), _>("unavailable")
                            })
                            .await
                    })
                })
                .collect();
            for call in calls {
                assert_eq!(call.await.unwrap(), Err("unavailable"));
            }
        });
        let n = attempts.load(Ordering::SeqCst);
        assert!((64..=68).contains(&n), "{n} attempts");
        // Every failure counted: the bucket is empty.
        assert_eq!(t.milli_tokens(), 0);
    }
}

/// gRPC's throttle over a day of one call an hour (paused clock): the bucket has no clock,
/// only failures and successes move it. Each hourly call fails once and would succeed on its
/// retry: it takes 1 token and gives 0.1 back, so the retries go ahead while a failure
/// leaves more than half (five hours: 9.0, 8.1, 7.2, 6.3, 5.4 after each failure), and from
/// the sixth hour on the call ends on its failure, and no hour of silence brings tokens back.
#[tokio::test(start_paused = true)]
async fn grpc_retry_throttling_over_a_day_of_hourly_calls_moves_by_calls_not_by_time() {
    use retry_jitter::budget::RetryThrottling;
    let t: &'static RetryThrottling = Box::leak(Box::new(RetryThrottling::new(10, 100)));
    let retry = Retry::new(Policy::new().with_attempts(2).with_base(Duration::ZERO)).budget(t);
    let mut outcomes = Vec::new();
    for hour in 0..24u32 {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        let mut first = true;
        let out = retry
            .call_async(|| {
                let failed = std::mem::replace(&mut first, false);
                async move {
                    if failed {
                        Err(hour)
                    } else {
                        Ok(hour)
                    }
                }
            })
            .await;
        outcomes.push(out.is_ok());
    }
    let ok = outcomes.iter().filter(|ok| **ok).count();
    assert_eq!(outcomes[..5], [true; 5]);
    assert_eq!(ok, 5, "{outcomes:?}");
    // 10 − 5 × 0.9 = 5.5 after the fifth hour; then 19 failures, never below zero.
    assert_eq!(t.milli_tokens(), 0);
}
