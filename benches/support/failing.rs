//! The failure path, ours and backon's: a call that fails 4 times with zero waits and then
//! succeeds, and a fresh schedule's delay draws. Shared by `benches/peers.rs` (criterion's
//! times) and `examples/instructions.rs` (callgrind's instruction counts), so both measure the
//! same code.
//!
//! What is measured is the loop, the classification and the delay draw, not sleeping: our
//! `base = "0ns"` (a zero wait is neither slept nor, for async, a timer), backon with
//! `with_min_delay(ZERO)` and a no-op sleeper. Ours without a budget (`budget = none`,
//! `.budget_none()`): backon has none, and a budget would refuse a benchmark's millions of
//! retries a second after its first hundred.

use std::hint::black_box;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::LazyLock;
use std::time::Duration;

use backon::{BackoffBuilder, BlockingRetryable, ExponentialBuilder, Retryable};
use retry_jitter::hooks::{RetryAll, Unset};
use retry_jitter::{retry, Backoff, Policy, Retry};

/// Fails while the counter is below 4 (then resets it, so every call fails 4 times).
#[inline(never)]
pub fn flaky(n: &AtomicU32) -> Result<u32, u32> {
    let k = n.fetch_add(1, Ordering::Relaxed);
    if k < 4 {
        Err(k)
    } else {
        n.store(0, Ordering::Relaxed);
        Ok(k)
    }
}

#[retry(attempts = 5, base = "0ns", budget = none)]
#[inline(never)]
pub fn ours_flaky(n: &AtomicU32) -> Result<u32, u32> {
    flaky(n)
}

/// The closure API's blocking loop, the same policy.
#[inline(never)]
pub fn closure_flaky(n: &AtomicU32) -> Result<u32, u32> {
    static R: LazyLock<Retry<RetryAll, Unset, Unset, Unset>> =
        LazyLock::new(|| Retry::new(Policy::new().with_base(Duration::ZERO)).budget_none());
    R.call(|| flaky(n))
}

/// A timer that never waits.
pub async fn no_sleep(_: Duration) {}

#[retry(attempts = 5, base = "0ns", sleep = no_sleep, budget = none)]
#[inline(never)]
pub async fn ours_flaky_async(n: &AtomicU32) -> Result<u32, u32> {
    flaky(n)
}

/// backon's exponential backoff with no wait, retrying 4 times.
pub fn zero_backon() -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_min_delay(Duration::ZERO)
        .with_max_times(4)
}

#[inline(never)]
pub fn backon_flaky(n: &AtomicU32) -> Result<u32, u32> {
    (|| flaky(n)).retry(zero_backon()).sleep(|_| {}).call()
}

#[inline(never)]
pub async fn backon_flaky_async(n: &AtomicU32) -> Result<u32, u32> {
    (|| async { flaky(n) })
        .retry(zero_backon())
        .sleep(|_| async {})
        .await
}

/// The draws of one fresh schedule: as many as a call with the default 5 attempts can wait.
pub const DRAWS: u32 = 4;

/// A fresh schedule of our default backoff (200 ms base, 30 s cap, full jitter) and its first
/// `DRAWS` waits.
#[inline(never)]
pub fn ours_draws(backoff: &Backoff) {
    for wait in backoff.schedule().take(DRAWS as usize) {
        black_box(wait);
    }
}

/// backon's exponential backoff with jitter, built afresh, and its first `DRAWS` waits.
#[inline(never)]
pub fn backon_draws(builder: &ExponentialBuilder) {
    for wait in builder.build().take(DRAWS as usize) {
        black_box(wait);
    }
}

/// The backon builder of the draws: 200 ms up to 30 s, with jitter, never running out.
pub fn backon_jittered() -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(200))
        .with_max_delay(Duration::from_secs(30))
        .with_jitter()
        .without_max_times()
}
