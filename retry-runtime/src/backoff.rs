//! Capped exponential backoff and the jitter drawn under its ceiling.

use core::time::Duration;

use crate::rng;

/// How a wait is drawn under its ceiling `c(k) = min(cap, base · 2^(k−1))`.
///
/// ```
/// use retry_runtime::{Backoff, Jitter};
/// use std::time::Duration;
///
/// let b = Backoff::new(Duration::from_millis(200), Duration::from_secs(30)).with_jitter(Jitter::None);
/// assert_eq!(b.jitter(), Jitter::None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Jitter {
    /// Uniform in `[0, c(k)]`: the default, and the one that spreads a herd best.
    #[default]
    Full,
    /// `c(k)/2 + uniform[0, c(k)/2]`: never shorter than half the ceiling.
    Equal,
    /// `min(cap, uniform[base, 3·prev])`, `prev` starting at `base` (the AWS formula).
    ///
    /// It does not follow `c(k)`: each wait grows from the previous one. Once `3·prev` passes the
    /// cap, most draws are clipped to exactly `cap`, so clients that have been failing for a
    /// while bunch up at the cap again. Prefer [`Jitter::Full`] unless you need its shape.
    Decorrelated,
    /// Exactly `c(k)`: no randomness. Clients that failed together retry together.
    None,
}

/// Capped exponential backoff with jitter: the delay before each retry.
///
/// Retry number `k` (1 for the second call, 2 for the third…) has the ceiling
/// `c(k) = min(cap, base · 2^(k−1))`, computed with saturating arithmetic, and a wait drawn
/// under it according to [`Jitter`].
///
/// ```
/// use retry_runtime::{Backoff, Jitter};
/// use std::time::Duration;
///
/// let b = Backoff::new(Duration::from_millis(200), Duration::from_secs(1)).with_jitter(Jitter::None);
/// let waits: Vec<_> = b.schedule().take(5).collect();
/// assert_eq!(waits, [200, 400, 800, 1000, 1000].map(Duration::from_millis));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Backoff {
    base: Duration,
    cap: Duration,
    jitter: Jitter,
}

impl Default for Backoff {
    /// 200 ms base, 30 s cap, full jitter.
    ///
    /// ```
    /// use retry_runtime::{Backoff, Jitter};
    /// use std::time::Duration;
    ///
    /// let b = Backoff::default();
    /// assert_eq!((b.base(), b.cap(), b.jitter()), (Duration::from_millis(200), Duration::from_secs(30), Jitter::Full));
    /// ```
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl Backoff {
    /// 200 ms base, 30 s cap, full jitter: the defaults of `#[retry]`.
    ///
    /// ```
    /// use retry_runtime::Backoff;
    /// assert_eq!(Backoff::DEFAULT, Backoff::default());
    /// ```
    pub const DEFAULT: Backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(30));

    /// Backoff from `base` (the ceiling of the first retry's wait) up to `cap`, with full jitter.
    ///
    /// A `cap` below `base` is allowed: every ceiling is then `cap`.
    ///
    /// ```
    /// use retry_runtime::Backoff;
    /// use std::time::Duration;
    ///
    /// const B: Backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(5));
    /// assert_eq!(B.ceiling(1), Duration::from_millis(50));
    /// ```
    #[must_use]
    pub const fn new(base: Duration, cap: Duration) -> Self {
        Backoff {
            base,
            cap,
            jitter: Jitter::Full,
        }
    }

    /// The same backoff with another [`Jitter`].
    ///
    /// ```
    /// use retry_runtime::{Backoff, Jitter};
    /// let b = Backoff::DEFAULT.with_jitter(Jitter::Equal);
    /// assert_eq!(b.jitter(), Jitter::Equal);
    /// ```
    #[must_use]
    pub const fn with_jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }

    /// The ceiling of the first retry's wait.
    ///
    /// ```
    /// use retry_runtime::Backoff;
    /// assert_eq!(Backoff::DEFAULT.base().as_millis(), 200);
    /// ```
    pub const fn base(&self) -> Duration {
        self.base
    }

    /// No drawn wait is ever longer.
    ///
    /// ```
    /// use retry_runtime::Backoff;
    /// assert_eq!(Backoff::DEFAULT.cap().as_secs(), 30);
    /// ```
    pub const fn cap(&self) -> Duration {
        self.cap
    }

    /// How waits are drawn under the ceiling.
    ///
    /// ```
    /// use retry_runtime::{Backoff, Jitter};
    /// assert_eq!(Backoff::DEFAULT.jitter(), Jitter::Full);
    /// ```
    pub const fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// The ceiling `c(k) = min(cap, base · 2^(k−1))` of retry `k` (1-based).
    ///
    /// `k = 0` (the first call, which is not preceded by a wait) gives zero. Saturating: never
    /// panics, never overflows, for any `k`, `base` and `cap`.
    ///
    /// ```
    /// use retry_runtime::Backoff;
    /// use std::time::Duration;
    ///
    /// let b = Backoff::DEFAULT;
    /// assert_eq!(b.ceiling(1), Duration::from_millis(200));
    /// assert_eq!(b.ceiling(3), Duration::from_millis(800));
    /// assert_eq!(b.ceiling(u32::MAX), Duration::from_secs(30));
    /// ```
    pub fn ceiling(&self, k: u32) -> Duration {
        if k == 0 {
            return Duration::ZERO;
        }
        // base · 2^(k−1) in steps of at most 2^31 (Duration::saturating_mul takes a u32), until
        // it reaches the cap: one step for every k up to 32, at most four for any k (2^94 ns
        // exceeds Duration::MAX), and never a u128 division.
        let mut ceiling = self.base;
        let mut shift = k - 1;
        while shift > 0 && ceiling < self.cap && !ceiling.is_zero() {
            let step = shift.min(31);
            ceiling = ceiling.saturating_mul(1 << step);
            shift -= step;
        }
        ceiling.min(self.cap)
    }

    /// The wait before retry `k` (1-based), drawn under its ceiling.
    ///
    /// `prev` is the previous wait, which [`Jitter::Decorrelated`] grows from; pass `base` before
    /// the first retry. The result is always `≤ cap`.
    ///
    /// ```
    /// use retry_runtime::{Backoff, Jitter};
    /// use std::time::Duration;
    ///
    /// let b = Backoff::DEFAULT;
    /// let wait = b.delay(2, b.base());
    /// assert!(wait <= Duration::from_millis(400));
    /// assert_eq!(b.with_jitter(Jitter::None).delay(2, b.base()), Duration::from_millis(400));
    /// ```
    pub fn delay(&self, k: u32, prev: Duration) -> Duration {
        match self.jitter {
            Jitter::Full => rng::uniform(Duration::ZERO, self.ceiling(k)),
            Jitter::Equal => {
                // c/2 + uniform[0, c/2], drawn as one uniform[c/2, 2·(c/2)].
                let half = self.ceiling(k) / 2;
                rng::uniform(half, half.saturating_mul(2))
            }
            Jitter::Decorrelated => {
                let hi = prev.saturating_mul(3).max(self.base);
                rng::uniform(self.base, hi).min(self.cap)
            }
            Jitter::None => self.ceiling(k),
        }
    }

    /// The waits before retries 1, 2, 3…: an endless iterator (use `take`).
    ///
    /// Each item is drawn fresh, exactly as a retry loop would draw it.
    ///
    /// ```
    /// use retry_runtime::Backoff;
    /// use std::time::Duration;
    ///
    /// let b = Backoff::new(Duration::from_millis(100), Duration::from_secs(1));
    /// for (k, wait) in (1..).zip(b.schedule().take(6)) {
    ///     assert!(wait <= b.ceiling(k));
    /// }
    /// ```
    pub fn schedule(&self) -> Schedule {
        Schedule {
            backoff: *self,
            k: 0,
            prev: self.base,
        }
    }
}

/// The endless iterator of waits returned by [`Backoff::schedule`].
///
/// ```
/// use retry_runtime::{Backoff, Jitter};
/// let mut s = Backoff::DEFAULT.with_jitter(Jitter::None).schedule();
/// assert_eq!(s.next().map(|d| d.as_millis()), Some(200));
/// ```
#[derive(Clone, Debug)]
pub struct Schedule {
    backoff: Backoff,
    k: u32,
    prev: Duration,
}

impl Iterator for Schedule {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        self.k = self.k.saturating_add(1);
        let wait = self.backoff.delay(self.k, self.prev);
        self.prev = wait;
        Some(wait)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (usize::MAX, None)
    }
}

/// A `Duration` from a count of nanoseconds that is at most `Duration::MAX`'s.
pub(crate) fn from_nanos(n: u128) -> Duration {
    const NANOS_PER_SEC: u128 = 1_000_000_000;
    let secs = n / NANOS_PER_SEC;
    if secs > u64::MAX as u128 {
        return Duration::MAX;
    }
    Duration::new(secs as u64, (n % NANOS_PER_SEC) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceiling_saturates_at_the_extremes() {
        let b = Backoff::new(Duration::MAX, Duration::MAX);
        assert_eq!(b.ceiling(1), Duration::MAX);
        assert_eq!(b.ceiling(u32::MAX), Duration::MAX);
        let z = Backoff::new(Duration::ZERO, Duration::MAX);
        assert_eq!(z.ceiling(u32::MAX), Duration::ZERO);
        let one = Backoff::new(Duration::from_nanos(1), Duration::MAX);
        assert_eq!(one.ceiling(64), Duration::from_nanos(1 << 63));
        assert_eq!(one.ceiling(200), Duration::MAX);
    }

    #[test]
    fn from_nanos_round_trips() {
        for d in [Duration::ZERO, Duration::new(3, 7), Duration::MAX] {
            assert_eq!(from_nanos(d.as_nanos()), d);
        }
    }
}
