//! gRPC's retry throttling (gRFC A6), as a budget.

use core::fmt;
use core::sync::atomic::{AtomicU32, Ordering};

use super::{Charge, RetryTicket, SharedBudget, Taken};
use crate::policy::Clock;

/// gRPC's retry throttling (gRFC A6's `retryThrottling`): a bucket of tokens.
///
/// Every failed attempt drains it by one; every successful call fills it by `tokenRatio`.
///
/// While it holds half its tokens or fewer, nothing is retried or hedged.
///
/// The arithmetic is gRPC C-core's, in thousandths of a token:
///
/// - The bucket starts full at `max_tokens`.
/// - An attempt that fails with an error the loop would retry takes 1 token, never below zero.
/// - That is told by [`SharedBudget::failed`], whether a retry follows or not: a call's last
///   attempt counts too.
/// - An error the loop stops on takes nothing.
/// - A call that succeeds gives `token_ratio` thousandths, never above `max_tokens`.
/// - A retry or hedge goes ahead only while the tokens, the failure just counted, are above
///   `max_tokens / 2`.
/// - A refused retry ends the call with its last error
///   ([`GiveUpReason::BudgetEmpty`](crate::GiveUpReason::BudgetEmpty)).
///
/// From a full bucket of 10 tokens, a service that fails everything gets four retries, and
/// the fifth failure in a row is not retried:
///
/// ```
/// use retry_jitter::{Policy, Retry};
/// use retry_jitter::budget::RetryThrottling;
/// use std::time::Duration;
///
/// // maxTokens 10, tokenRatio 0.1: in thousandths, 100.
/// static THROTTLING: RetryThrottling = RetryThrottling::new(10, 100);
///
/// let retry = Retry::new(Policy::new().with_attempts(10).with_base(Duration::ZERO))
///     .budget(&THROTTLING);
/// let mut calls = 0;
/// let _ = retry.call(|| { calls += 1; Err::<(), _>("unavailable") });
/// assert_eq!(calls, 5);
/// assert_eq!(THROTTLING.milli_tokens(), 5_000);
/// ```
///
/// Lock-free (one atomic) and `const`-constructible, for a `static`.
///
/// Pass it as `budget = &THROTTLING` or to [`Retry::budget`](crate::Retry::budget).
///
/// It counts what A6 counts: use it instead of a budget, not beside one.
pub struct RetryThrottling {
    milli_tokens: AtomicU32,
    max_milli_tokens: u32,
    milli_token_ratio: u32,
}

impl RetryThrottling {
    /// A full bucket of `max_tokens` tokens (A6's `maxTokens`, 1 to 1000), each successful call
    /// giving back `token_ratio_milli` thousandths of a token (A6's `tokenRatio` × 1000, digits
    /// past the third decimal dropped: `0.1` is `100`).
    ///
    /// Never panics: `max_tokens` is held to at most 1000, and `token_ratio_milli` to at least
    /// 1.
    ///
    /// Those are the bounds A6 sets; a service config outside them is refused where it is read.
    ///
    /// A bucket is never empty: it holds at least a thousandth.
    ///
    /// ```
    /// use retry_jitter::budget::RetryThrottling;
    /// static T: RetryThrottling = RetryThrottling::new(100, 1_000);
    /// assert_eq!((T.milli_tokens(), T.max_milli_tokens(), T.milli_token_ratio()), (100_000, 100_000, 1_000));
    /// ```
    #[must_use]
    pub const fn new(max_tokens: u32, token_ratio_milli: u32) -> Self {
        let max_tokens = if max_tokens > 1000 { 1000 } else { max_tokens };
        Self::from_milli(max_tokens * 1000, token_ratio_milli)
    }

    /// [`new`](RetryThrottling::new) with the bucket's size in thousandths too (A6's
    /// `maxTokens` may have three decimals), held to 1..=1 000 000.
    pub(crate) const fn from_milli(max_milli_tokens: u32, token_ratio_milli: u32) -> Self {
        let max_milli_tokens = if max_milli_tokens == 0 {
            1
        } else if max_milli_tokens > 1_000_000 {
            1_000_000
        } else {
            max_milli_tokens
        };
        RetryThrottling {
            milli_tokens: AtomicU32::new(max_milli_tokens),
            max_milli_tokens,
            milli_token_ratio: if token_ratio_milli == 0 {
                1
            } else {
                token_ratio_milli
            },
        }
    }

    /// The tokens in the bucket now, in thousandths.
    ///
    /// ```
    /// use retry_jitter::sleep;
    /// use retry_jitter::budget::{RetryThrottling, SharedBudget};
    /// let t = RetryThrottling::new(10, 100);
    /// t.failed(sleep::now);
    /// assert_eq!(t.milli_tokens(), 9_000);
    /// ```
    pub fn milli_tokens(&self) -> u32 {
        self.milli_tokens.load(Ordering::Relaxed)
    }

    /// The bucket's size, in thousandths of a token (`max_tokens` × 1000).
    ///
    /// ```
    /// assert_eq!(retry_jitter::budget::RetryThrottling::new(5000, 1).max_milli_tokens(), 1_000_000);
    /// ```
    pub const fn max_milli_tokens(&self) -> u32 {
        self.max_milli_tokens
    }

    /// What a successful call gives back, in thousandths of a token.
    ///
    /// ```
    /// assert_eq!(retry_jitter::budget::RetryThrottling::new(10, 0).milli_token_ratio(), 1);
    /// ```
    pub const fn milli_token_ratio(&self) -> u32 {
        self.milli_token_ratio
    }

    /// Whether a retry or a hedge may go ahead now: more than half the bucket left.
    ///
    /// ```
    /// use retry_jitter::sleep;
    /// use retry_jitter::budget::{RetryThrottling, SharedBudget};
    /// let t = RetryThrottling::new(2, 100);
    /// assert!(t.allows());
    /// t.failed(sleep::now); // 1 token left of 2: half, not more
    /// assert!(!t.allows());
    /// ```
    pub fn allows(&self) -> bool {
        self.milli_tokens() > self.max_milli_tokens / 2
    }

    /// Add `delta` thousandths (a negative one takes), held to `0..=max`.
    fn add(&self, delta: i64) {
        let max = i64::from(self.max_milli_tokens);
        let _ = self
            .milli_tokens
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |now| {
                let next = (i64::from(now) + delta).clamp(0, max);
                // In range by the clamp: 0..=1_000_000.
                u32::try_from(next).ok()
            });
    }
}

impl SharedBudget for RetryThrottling {
    /// A failed attempt takes one token.
    fn failed(&self, _: Clock) {
        self.add(-1000);
    }
    /// A retry or a hedge goes ahead while more than half the bucket is left; it takes
    /// nothing more (its failure already did).
    fn take_retry(&self, _: Charge, _: Clock) -> Option<RetryTicket> {
        self.allows().then_some(RetryTicket::NONE)
    }
    /// Nothing was taken: nothing to give back.
    fn refund(&self, _: RetryTicket) {}
    /// A successful call gives back `token_ratio` thousandths.
    fn succeeded(&self, _: Taken) {
        self.add(i64::from(self.milli_token_ratio));
    }
}

impl fmt::Debug for RetryThrottling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryThrottling")
            .field("milli_tokens", &self.milli_tokens())
            .field("max_milli_tokens", &self.max_milli_tokens)
            .field("milli_token_ratio", &self.milli_token_ratio)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::time::Instant;

    const NOW: Clock = Instant::now;

    #[test]
    fn a_success_gives_back_its_ratio_and_never_fills_past_the_top() {
        let t = RetryThrottling::new(10, 100);
        for _ in 0..3 {
            t.failed(NOW);
        }
        assert_eq!(t.milli_tokens(), 7_000);
        t.succeeded(Taken::NONE);
        assert_eq!(t.milli_tokens(), 7_100);
        for _ in 0..100 {
            t.succeeded(Taken::NONE);
        }
        assert_eq!(t.milli_tokens(), 10_000);
    }

    #[test]
    fn the_bucket_never_goes_below_zero_and_hedges_are_held_to_the_same_half() {
        let t = RetryThrottling::new(1, 1);
        for _ in 0..3 {
            t.failed(NOW);
        }
        assert_eq!(t.milli_tokens(), 0);
        assert_eq!(t.take_retry(Charge::Hedge, NOW), None);
        let t = RetryThrottling::new(4, 1);
        t.failed(NOW);
        assert_eq!(t.take_retry(Charge::Hedge, NOW), Some(RetryTicket::NONE));
        t.failed(NOW);
        assert_eq!(t.take_retry(Charge::Retry, NOW), None);
    }

    #[test]
    fn a_configuration_outside_a6s_bounds_is_held_to_them() {
        assert_eq!(RetryThrottling::new(0, 0).max_milli_tokens(), 1);
        assert_eq!(
            RetryThrottling::from_milli(2_500, 1).max_milli_tokens(),
            2_500
        );
        assert_eq!(
            RetryThrottling::new(u32::MAX, u32::MAX).max_milli_tokens(),
            1_000_000
        );
        let t = RetryThrottling::new(u32::MAX, u32::MAX);
        t.succeeded(Taken::NONE);
        assert_eq!(t.milli_tokens(), 1_000_000);
    }

    #[test]
    fn failures_and_successes_from_many_threads_are_each_counted_once() {
        // 8 threads, each taking a token and giving it back 250 times, from a bucket half full.
        //
        // Whatever the interleaving, no bound is reached: each thread is at most one token down
        // at any moment.
        //
        // So every take and every add is counted once.
        for _ in 0..20 {
            let t = RetryThrottling::new(1000, 1000);
            for _ in 0..500 {
                t.failed(NOW);
            }
            assert_eq!(t.milli_tokens(), 500_000);
            std::thread::scope(|s| {
                for _ in 0..8 {
                    s.spawn(|| {
                        for i in 0..500 {
                            if i % 2 == 0 {
                                t.failed(NOW);
                            } else {
                                t.succeeded(Taken::NONE);
                            }
                        }
                    });
                }
            });
            assert_eq!(t.milli_tokens(), 500_000);
        }
    }
}
