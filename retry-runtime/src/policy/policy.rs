//! The whole retry configuration of one call site.

use core::time::Duration;

use crate::policy::{Backoff, Jitter};

/// Backoff, the number of attempts, and an optional time budget: everything `#[retry]` needs
/// to know about *when* to retry.
///
/// `Copy` and `const`-constructible: it can be a `const`, a field, or built from configuration
/// at run time (`#[retry(policy = self.policy)]`).
///
/// ```
/// use retry_jitter::{Jitter, Policy};
/// use std::time::Duration;
///
/// const DB: Policy = Policy::new()
///     .with_attempts(4)
///     .with_base(Duration::from_millis(50))
///     .with_cap(Duration::from_secs(2))
///     .with_jitter(Jitter::Equal)
///     .with_max_elapsed(Duration::from_secs(5));
/// assert_eq!(DB.attempts(), 4);
/// assert_eq!(Policy::default(), Policy::new());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Policy {
    backoff: Backoff,
    attempts: u32,
    max_elapsed: Option<Duration>,
    /// In whole milliseconds: a `u32` fits where the policy had padding.
    ///
    /// So a `Policy`, copied into every call, is no larger for it.
    rate_limited_base_ms: u32,
}

impl Default for Policy {
    /// 5 attempts, 200 ms base, 30 s cap, full jitter, no time budget.
    ///
    /// ```
    /// use retry_jitter::Policy;
    /// assert_eq!(Policy::default().attempts(), 5);
    /// ```
    fn default() -> Self {
        Self::new()
    }
}

impl Policy {
    /// The defaults: 5 attempts, 200 ms base, 30 s cap, full jitter, no time budget.
    ///
    /// ```
    /// use retry_jitter::Policy;
    /// assert_eq!(Policy::new().max_elapsed(), None);
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Policy {
            backoff: Backoff::DEFAULT,
            attempts: 5,
            max_elapsed: None,
            rate_limited_base_ms: 1000,
        }
    }

    /// The **total** number of calls, the first included: `1` never retries.
    ///
    /// `0` is treated as `1`: the first call is always made.
    ///
    /// ```
    /// use retry_jitter::Policy;
    /// assert_eq!(Policy::new().with_attempts(0).attempts(), 1);
    /// ```
    #[must_use]
    pub const fn with_attempts(mut self, attempts: u32) -> Self {
        self.attempts = if attempts == 0 { 1 } else { attempts };
        self
    }

    /// The ceiling of the first retry's wait.
    ///
    /// ```
    /// use retry_jitter::Policy;
    /// use std::time::Duration;
    /// let p = Policy::new().with_base(Duration::from_millis(10));
    /// assert_eq!(p.backoff().base(), Duration::from_millis(10));
    /// ```
    #[must_use]
    pub const fn with_base(mut self, base: Duration) -> Self {
        self.backoff = self.backoff.with_bounds(base, self.backoff.cap());
        self
    }

    /// The longest single wait (a server's `RetryAfter` hint aside).
    ///
    /// ```
    /// use retry_jitter::Policy;
    /// use std::time::Duration;
    /// let p = Policy::new().with_cap(Duration::from_secs(1));
    /// assert_eq!(p.backoff().ceiling(100), Duration::from_secs(1));
    /// ```
    #[must_use]
    pub const fn with_cap(mut self, cap: Duration) -> Self {
        self.backoff = self.backoff.with_bounds(self.backoff.base(), cap);
        self
    }

    /// How each wait is drawn under its ceiling.
    ///
    /// ```
    /// use retry_jitter::{Jitter, Policy};
    /// assert_eq!(Policy::new().with_jitter(Jitter::None).backoff().jitter(), Jitter::None);
    /// ```
    #[must_use]
    pub const fn with_jitter(mut self, jitter: Jitter) -> Self {
        self.backoff = self.backoff.with_jitter(jitter);
        self
    }

    /// Base, cap and jitter at once.
    ///
    /// ```
    /// use retry_jitter::{Backoff, Policy};
    /// use std::time::Duration;
    /// let b = Backoff::new(Duration::from_millis(1), Duration::from_millis(8));
    /// assert_eq!(Policy::new().with_backoff(b).backoff(), b);
    /// ```
    #[must_use]
    pub const fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// A time budget from the first call.
    ///
    /// A wait that would end past it is not slept; the last error is returned instead.
    ///
    /// ```
    /// use retry_jitter::Policy;
    /// use std::time::Duration;
    /// let p = Policy::new().with_max_elapsed(Duration::from_secs(10));
    /// assert_eq!(p.max_elapsed(), Some(Duration::from_secs(10)));
    /// ```
    #[must_use]
    pub const fn with_max_elapsed(mut self, max_elapsed: Duration) -> Self {
        self.max_elapsed = Some(max_elapsed);
        self
    }

    /// The total number of calls allowed, the first included (at least 1).
    ///
    /// ```
    /// use retry_jitter::Policy;
    /// assert_eq!(Policy::new().with_attempts(3).attempts(), 3);
    /// ```
    pub const fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The backoff: base, cap, jitter.
    ///
    /// ```
    /// use retry_jitter::{Backoff, Policy};
    /// assert_eq!(Policy::new().backoff(), Backoff::DEFAULT);
    /// ```
    pub const fn backoff(&self) -> Backoff {
        self.backoff
    }

    /// The ceiling of the first wait after a [`Decision::RateLimited`](crate::Decision::RateLimited).
    ///
    /// The waits of a server limiting the rate are drawn from this base, under the same cap and
    /// jitter.
    ///
    /// 1 s unless set: the AWS SDKs' 2026 retry behaviour backs off from 1 s for throttling
    /// errors, from 50 ms for others.
    ///
    /// Kept in whole milliseconds, at most `u32::MAX` of them (49 days).
    ///
    /// A server's "slow down" is not measured finer.
    ///
    /// ```
    /// use retry_jitter::Policy;
    /// use std::time::Duration;
    /// assert_eq!(Policy::new().rate_limited_base(), Duration::from_secs(1));
    /// let aws = Policy::new()
    ///     .with_base(Duration::from_millis(50))
    ///     .with_rate_limited_base(Duration::from_secs(1))
    ///     .with_cap(Duration::from_secs(20));
    /// assert_eq!(aws.rate_limited_base(), Duration::from_secs(1));
    /// ```
    #[must_use]
    pub const fn with_rate_limited_base(mut self, base: Duration) -> Self {
        let ms = base.as_millis();
        self.rate_limited_base_ms = if ms > u32::MAX as u128 {
            u32::MAX
        } else {
            ms as u32
        };
        self
    }

    /// The ceiling of the first wait after a [`Decision::RateLimited`](crate::Decision::RateLimited).
    ///
    /// ```
    /// use retry_jitter::Policy;
    /// assert_eq!(Policy::new().rate_limited_base().as_secs(), 1);
    /// ```
    pub const fn rate_limited_base(&self) -> Duration {
        Duration::from_millis(self.rate_limited_base_ms as u64)
    }

    /// The backoff, borrowed: the retry loops draw from it in place, without a copy.
    #[inline]
    pub(crate) const fn backoff_ref(&self) -> &Backoff {
        &self.backoff
    }

    /// The time budget, if any.
    ///
    /// ```
    /// use retry_jitter::Policy;
    /// assert!(Policy::new().max_elapsed().is_none());
    /// ```
    pub const fn max_elapsed(&self) -> Option<Duration> {
        self.max_elapsed
    }
}
