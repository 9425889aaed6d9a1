//! Every interleaving of concurrent takes and refunds on one `RetryBudget`, explored by loom:
//! no retry is granted that the tokens did not pay for, no token is lost or made up, and the
//! bucket never holds more than its capacity.
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p retry-runtime --no-default-features --test loom --release`
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use retry_runtime::RetryBudget;

#[test]
fn concurrent_takes_never_overdraw() {
    loom::model(|| {
        // 12 tokens at 5 a retry: two retries, whoever asks.
        let budget = Arc::new(RetryBudget::new(12));
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let b = Arc::clone(&budget);
                thread::spawn(move || b.try_retry())
            })
            .collect();
        let granted = threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|&g| g)
            .count();
        assert_eq!(granted, 2);
        assert_eq!(budget.available(), 2);
    });
}

#[test]
fn concurrent_refunds_and_rewards_lose_nothing_and_respect_the_capacity() {
    loom::model(|| {
        let budget = Arc::new(RetryBudget::new(10));
        assert!(budget.try_retry()); // 5 left
        let refund = {
            let b = Arc::clone(&budget);
            thread::spawn(move || b.succeeded_after(1)) // gives the 5 back
        };
        let take = {
            let b = Arc::clone(&budget);
            thread::spawn(move || b.try_retry())
        };
        let reward = {
            let b = Arc::clone(&budget);
            thread::spawn(move || b.succeeded_after(0)) // +1, capped at 10
        };
        refund.join().unwrap();
        reward.join().unwrap();
        let took = take.join().unwrap();
        // The take always succeeds (at least 5 tokens are there whenever it runs); what is left
        // is 10 - 5 (taken) + 1 (reward), unless the reward arrived while the bucket was full.
        assert!(took);
        let left = budget.available();
        assert!(left == 5 || left == 6, "{left} tokens left");
        assert!(left <= budget.capacity());
    });
}
