//! A retry budget shared by many calls: a lock-free token bucket.

use core::fmt;
#[cfg(not(loom))]
use core::sync::atomic::{AtomicU32, Ordering};
// Under `--cfg loom`, the bucket's atomics are loom's, so that `tests/loom.rs` can explore every
// interleaving of concurrent takes and refunds.
#[cfg(loom)]
use loom::sync::atomic::{AtomicU32, Ordering};

/// A token bucket shared by every call that uses it.
///
/// A fleet's retries stay a fraction of its calls during a long outage, whatever each call's
/// `attempts` allow.
///
/// Per-call limits alone still multiply the load on a service that is down: 3 attempts = 3×;
/// five layers of 3 attempts = 243×.
///
/// With a budget, each retry takes [`retry_cost`](RetryBudget::retry_cost) tokens.
///
/// A call that succeeds at once gives back [`success_reward`](RetryBudget::success_reward)
/// token.
///
/// One that succeeds after retries gives back what its retries took.
///
/// Neither fills the bucket past its capacity.
///
/// When a retry cannot take its tokens, the error is returned at once, without waiting.
///
/// The first call of every retried call is always made.
///
/// The defaults follow the AWS SDKs' retry quota: 500 tokens, 5 per retry, 1 back per
/// first-try success.
///
/// Lock-free (one atomic) and `const`-constructible, so it lives in a `static`:
///
/// ```
/// use retry_jitter::{Policy, Retry, RetryBudget};
/// use std::time::Duration;
///
/// static BUDGET: RetryBudget = RetryBudget::new(10);
///
/// let retry = Retry::new(Policy::new().with_base(Duration::ZERO)).budget(&BUDGET);
/// let _ = retry.call(|| Err::<(), _>("down")); // 4 retries take 20 tokens: only 2 fit
/// assert_eq!(BUDGET.available(), 0);
/// ```
pub struct RetryBudget {
    tokens: AtomicU32,
    capacity: u32,
    retry_cost: u32,
    rate_limited_cost: u32,
    success_reward: u32,
}

impl RetryBudget {
    /// A full bucket of `capacity` tokens; a retry costs 5, a first-try success gives back 1.
    ///
    /// ```
    /// use retry_jitter::RetryBudget;
    /// static B: RetryBudget = RetryBudget::new(500);
    /// assert_eq!(B.available(), 500);
    /// ```
    #[must_use]
    #[cfg(not(loom))]
    pub const fn new(capacity: u32) -> Self {
        Self::full(AtomicU32::new(capacity), capacity)
    }

    /// [`new`](RetryBudget::new) on loom's atomics, which cannot be made in `const`.
    #[must_use]
    #[cfg(loom)]
    pub fn new(capacity: u32) -> Self {
        Self::full(AtomicU32::new(capacity), capacity)
    }

    /// A bucket holding `tokens` (its capacity), with the AWS SDKs' costs.
    const fn full(tokens: AtomicU32, capacity: u32) -> Self {
        RetryBudget {
            tokens,
            capacity,
            retry_cost: 5,
            rate_limited_cost: 5,
            success_reward: 1,
        }
    }

    /// The tokens one retry takes, whatever its kind (default 5).
    ///
    /// `0` makes retries free: the budget never stops one.
    ///
    /// ```
    /// use retry_jitter::RetryBudget;
    /// static B: RetryBudget = RetryBudget::new(100).with_retry_cost(10);
    /// assert_eq!((B.retry_cost(), B.rate_limited_cost()), (10, 10));
    /// ```
    #[must_use]
    pub const fn with_retry_cost(self, retry_cost: u32) -> Self {
        self.with_costs(retry_cost, retry_cost)
    }

    /// The tokens a retry takes by kind.
    ///
    /// `retry` after any failure but a [`Decision::RateLimited`](crate::Decision::RateLimited);
    /// `rate_limited` after one.
    ///
    /// The AWS SDKs' 2026 retry behaviour charges their 500-token quota 14 for a retry and 5 for
    /// one after throttling.
    ///
    /// ```
    /// use retry_jitter::RetryBudget;
    /// static AWS: RetryBudget = RetryBudget::new(500).with_costs(14, 5);
    /// assert_eq!((AWS.retry_cost(), AWS.rate_limited_cost()), (14, 5));
    /// ```
    #[must_use]
    pub const fn with_costs(self, retry: u32, rate_limited: u32) -> Self {
        RetryBudget {
            retry_cost: retry,
            rate_limited_cost: rate_limited,
            ..self
        }
    }

    /// The tokens a call that succeeds at once gives back (default 1).
    ///
    /// ```
    /// use retry_jitter::RetryBudget;
    /// static B: RetryBudget = RetryBudget::new(100).with_success_reward(2);
    /// assert_eq!(B.success_reward(), 2);
    /// ```
    #[must_use]
    pub const fn with_success_reward(self, success_reward: u32) -> Self {
        RetryBudget {
            success_reward,
            ..self
        }
    }

    /// The most tokens the bucket holds.
    ///
    /// ```
    /// assert_eq!(retry_jitter::RetryBudget::new(7).capacity(), 7);
    /// ```
    pub const fn capacity(&self) -> u32 {
        self.capacity
    }

    /// The tokens one retry takes.
    ///
    /// ```
    /// assert_eq!(retry_jitter::RetryBudget::new(7).retry_cost(), 5);
    /// ```
    pub const fn retry_cost(&self) -> u32 {
        self.retry_cost
    }

    /// The tokens one retry after a [`Decision::RateLimited`](crate::Decision::RateLimited)
    /// takes (default 5, the same as any retry's).
    ///
    /// ```
    /// assert_eq!(retry_jitter::RetryBudget::new(7).rate_limited_cost(), 5);
    /// ```
    pub const fn rate_limited_cost(&self) -> u32 {
        self.rate_limited_cost
    }

    /// The tokens a first-try success gives back.
    ///
    /// ```
    /// assert_eq!(retry_jitter::RetryBudget::new(7).success_reward(), 1);
    /// ```
    pub const fn success_reward(&self) -> u32 {
        self.success_reward
    }

    /// The tokens in the bucket now.
    ///
    /// ```
    /// let b = retry_jitter::RetryBudget::new(12);
    /// assert!(b.try_retry());
    /// assert_eq!(b.available(), 7);
    /// ```
    pub fn available(&self) -> u32 {
        self.tokens.load(Ordering::Relaxed)
    }

    /// Take the tokens of one retry: `false`, taking nothing, if there are not enough.
    ///
    /// ```
    /// let b = retry_jitter::RetryBudget::new(9);
    /// assert!(b.try_retry());
    /// assert!(!b.try_retry()); // 4 left, a retry costs 5
    /// assert_eq!(b.available(), 4);
    /// ```
    pub fn try_retry(&self) -> bool {
        self.try_take(self.retry_cost)
    }

    /// Take `cost` tokens if the bucket holds them.
    pub(crate) fn try_take(&self, cost: u32) -> bool {
        self.tokens
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| t.checked_sub(cost))
            .is_ok()
    }

    /// A retry that took its tokens did not run after all: give them back, never past the
    /// capacity.
    ///
    /// Its future was dropped during the wait, a hook panicked, or the deadline came first.
    ///
    /// The retry loops here do this by themselves.
    ///
    /// ```
    /// let b = retry_jitter::RetryBudget::new(12);
    /// assert!(b.try_retry());
    /// b.refund_retry();
    /// assert_eq!(b.available(), 12);
    /// ```
    pub fn refund_retry(&self) {
        self.give_back(self.retry_cost);
    }

    /// A call succeeded after `retries` retries: give back what the retries took.
    ///
    /// With no retries, give back the first-try reward. Never past the capacity.
    ///
    /// ```
    /// let b = retry_jitter::RetryBudget::new(20);
    /// assert!(b.try_retry() && b.try_retry());
    /// b.succeeded_after(2);
    /// assert_eq!(b.available(), 20);
    /// b.succeeded_after(0);
    /// assert_eq!(b.available(), 20); // full: the reward is dropped
    /// ```
    pub fn succeeded_after(&self, retries: u32) {
        let back = if retries == 0 {
            self.success_reward
        } else {
            retries.saturating_mul(self.retry_cost)
        };
        self.give_back(back);
    }

    /// Put `back` tokens in the bucket, never past the capacity.
    pub(crate) fn give_back(&self, back: u32) {
        if back == 0 {
            return;
        }
        let capacity = self.capacity;
        // Never fails: the closure always returns Some.
        let _ = self
            .tokens
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                Some(t.saturating_add(back).min(capacity))
            });
    }
}

impl Default for RetryBudget {
    /// The AWS SDKs' retry quota: 500 tokens, 5 per retry, 1 back per first-try success.
    ///
    /// ```
    /// assert_eq!(retry_jitter::RetryBudget::default().capacity(), 500);
    /// ```
    fn default() -> Self {
        RetryBudget::new(500)
    }
}

impl fmt::Debug for RetryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryBudget")
            .field("available", &self.available())
            .field("capacity", &self.capacity)
            .field("retry_cost", &self.retry_cost)
            .field("success_reward", &self.success_reward)
            .finish()
    }
}
