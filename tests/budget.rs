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
