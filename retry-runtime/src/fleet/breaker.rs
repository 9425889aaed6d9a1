//! A circuit breaker that counts calls, not attempts.

use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;

use super::window::Window;
use crate::policy::Clock;

/// A breaker's state, as the `retry_jitter_breaker_state` gauge reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BreakerState {
    /// Calls go through (gauge 0).
    Closed,
    /// Calls fail at once with [`CircuitOpen`](crate::CircuitOpen), until the break is over
    /// (gauge 1).
    Open,
    /// The break is over and one probe call is let through (gauge 2).
    ///
    /// The others fail at once.
    HalfOpen,
}

impl BreakerState {
    /// The gauge's value: 0 closed, 1 open, 2 half-open.
    ///
    /// ```
    /// assert_eq!(retry_jitter::breaker::BreakerState::HalfOpen.gauge(), 2.0);
    /// ```
    pub const fn gauge(self) -> f64 {
        match self {
            BreakerState::Closed => 0.0,
            BreakerState::Open => 1.0,
            BreakerState::HalfOpen => 2.0,
        }
    }
}

/// What the breaker says to a call about to begin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Closed: the call goes through.
    Pass,
    /// Half-open: this call is the probe; its outcome closes or reopens the breaker.
    Probe,
    /// Open (or half-open with its probe out): the call fails at once.
    Refuse,
}

const CLOSED: u64 = 0;
const OPEN: u64 = 1;
const HALF_OPEN: u64 = 2;

const fn pack(state: u64, at: u64) -> u64 {
    (at << 2) | state
}

const fn unpack(word: u64) -> (u64, u64) {
    (word & 3, word >> 2)
}

/// A circuit breaker shared by every call that uses it.
///
/// It opens when, over the trailing `window`, at least `min_calls` calls ended and
/// `failure_ratio` of them failed.
///
/// Open, calls fail at once with `E::from(`[`CircuitOpen`](crate::CircuitOpen)`)`, without
/// calling the body, for `break_for`.
///
/// Then one probe call is let through (half-open).
///
/// The probe's success closes the breaker; its failure opens it for another `break_for`.
///
/// It counts **calls, not attempts**.
///
/// A call that ended in a retryable failure after its retries (attempts spent, the deadline,
/// the budget) is one failure.
///
/// An `Ok`, or an error the classifier says [`Decision::Stop`](crate::Decision::Stop) to, is a
/// success: the service answered.
///
/// With `attempts = 3` and every attempt failing, `min_calls = 5` opens after 5 calls, 15
/// attempts.
///
/// Lock-free (one atomic state word, a ring of 16 atomic slots of `window / 16`).
///
/// `const`-constructible, for a `static`.
///
/// Pass it as `breaker = &BREAKER` or to [`Retry::breaker`](crate::Retry::breaker).
///
/// While half-open, the first call to end decides.
///
/// A call begun before the breaker opened and ending then counts as the probe's verdict.
///
/// A probe that never ends (its future dropped) is replaced by the next call after another
/// `break_for`.
///
/// ```
/// use retry_jitter::{sleep, CircuitBreaker};
/// use retry_jitter::breaker::BreakerState;
/// use std::time::Duration;
///
/// static BREAKER: CircuitBreaker =
///     CircuitBreaker::new(0.5, 4, Duration::from_secs(10), Duration::from_secs(5));
/// for _ in 0..4 {
///     BREAKER.admit(sleep::now);
///     BREAKER.ended(sleep::now, false);
/// }
/// assert_eq!(BREAKER.state(sleep::now), BreakerState::Open);
/// ```
pub struct CircuitBreaker {
    failure_ratio: f64,
    min_calls: u32,
    window: Duration,
    break_for: Duration,
    /// The state and when it began (nanoseconds on the window's time line).
    state: AtomicU64,
    /// Per slot: calls ended (`a`) and failures (`b`).
    counts: Window,
}

impl CircuitBreaker {
    /// Open when at least `min_calls` calls ended in the trailing `window` and `failure_ratio`
    /// of them failed.
    ///
    /// Stay open for `break_for`, then let one probe through.
    ///
    /// # Panics
    ///
    /// If `failure_ratio` is not in `(0.0, 1.0]` (or is NaN), or `window` is zero.
    ///
    /// In a `static` that is a compile-time error:
    ///
    /// ```compile_fail
    /// use retry_jitter::CircuitBreaker;
    /// use std::time::Duration;
    /// static BAD: CircuitBreaker = CircuitBreaker::new(1.5, 20, Duration::from_secs(10), Duration::from_secs(5));
    /// ```
    ///
    /// ```
    /// use retry_jitter::CircuitBreaker;
    /// use std::time::Duration;
    /// static B: CircuitBreaker = CircuitBreaker::new(0.5, 20, Duration::from_secs(10), Duration::from_secs(5));
    /// assert_eq!(B.min_calls(), 20);
    /// ```
    #[must_use]
    pub const fn new(
        failure_ratio: f64,
        min_calls: u32,
        window: Duration,
        break_for: Duration,
    ) -> Self {
        assert!(
            failure_ratio > 0.0 && failure_ratio <= 1.0,
            "CircuitBreaker::new: failure_ratio must be in (0.0, 1.0], like 0.5 for half the calls"
        );
        assert!(
            !window.is_zero(),
            "CircuitBreaker::new: the window must be longer than zero"
        );
        CircuitBreaker {
            failure_ratio,
            min_calls,
            window,
            break_for,
            state: AtomicU64::new(pack(CLOSED, 0)),
            counts: Window::new(window),
        }
    }

    /// The share of failed calls that opens the breaker.
    ///
    /// ```
    /// # use retry_jitter::CircuitBreaker; use std::time::Duration;
    /// assert_eq!(CircuitBreaker::new(0.5, 1, Duration::from_secs(1), Duration::from_secs(1)).failure_ratio(), 0.5);
    /// ```
    pub const fn failure_ratio(&self) -> f64 {
        self.failure_ratio
    }

    /// The fewest calls in the window for the breaker to open.
    ///
    /// ```
    /// # use retry_jitter::CircuitBreaker; use std::time::Duration;
    /// assert_eq!(CircuitBreaker::new(0.5, 7, Duration::from_secs(1), Duration::from_secs(1)).min_calls(), 7);
    /// ```
    pub const fn min_calls(&self) -> u32 {
        self.min_calls
    }

    /// The trailing window calls are counted over.
    ///
    /// ```
    /// # use retry_jitter::CircuitBreaker; use std::time::Duration;
    /// assert_eq!(CircuitBreaker::new(0.5, 1, Duration::from_secs(3), Duration::from_secs(1)).window(), Duration::from_secs(3));
    /// ```
    pub const fn window(&self) -> Duration {
        self.window
    }

    /// How long the breaker stays open before its probe.
    ///
    /// ```
    /// # use retry_jitter::CircuitBreaker; use std::time::Duration;
    /// assert_eq!(CircuitBreaker::new(0.5, 1, Duration::from_secs(1), Duration::from_secs(5)).break_for(), Duration::from_secs(5));
    /// ```
    pub const fn break_for(&self) -> Duration {
        self.break_for
    }

    fn break_nanos(&self) -> u64 {
        u64::try_from(self.break_for.as_nanos()).unwrap_or(u64::MAX >> 2)
    }

    /// The state now (an open breaker whose break is over reads as half-open).
    ///
    /// ```
    /// use retry_jitter::{sleep, CircuitBreaker};
    /// use retry_jitter::breaker::BreakerState;
    /// use std::time::Duration;
    /// let b = CircuitBreaker::new(0.5, 1, Duration::from_secs(10), Duration::from_secs(5));
    /// assert_eq!(b.state(sleep::now), BreakerState::Closed);
    /// ```
    pub fn state(&self, clock: Clock) -> BreakerState {
        let now = self.counts.nanos(clock);
        match unpack(self.state.load(Ordering::Acquire)) {
            (CLOSED, _) => BreakerState::Closed,
            (OPEN, at) if now.saturating_sub(at) < self.break_nanos() => BreakerState::Open,
            _ => BreakerState::HalfOpen,
        }
    }

    /// The calls that ended in the trailing window, and how many of them failed.
    ///
    /// ```
    /// use retry_jitter::{sleep, CircuitBreaker};
    /// use std::time::Duration;
    /// let b = CircuitBreaker::new(0.5, 10, Duration::from_secs(10), Duration::from_secs(5));
    /// b.ended(sleep::now, true);
    /// b.ended(sleep::now, false);
    /// assert_eq!(b.calls(sleep::now), (2, 1));
    /// ```
    pub fn calls(&self, clock: Clock) -> (u64, u64) {
        self.counts.sums(self.counts.nanos(clock))
    }

    /// A call is about to begin: whether it may, and whether it is the probe.
    ///
    /// ```
    /// use retry_jitter::{sleep, CircuitBreaker};
    /// use retry_jitter::breaker::Admission;
    /// use std::time::Duration;
    /// let b = CircuitBreaker::new(0.5, 1, Duration::from_secs(10), Duration::from_secs(5));
    /// assert_eq!(b.admit(sleep::now), Admission::Pass);
    /// ```
    pub fn admit(&self, clock: Clock) -> Admission {
        let word = self.state.load(Ordering::Acquire);
        let (state, at) = unpack(word);
        if state == CLOSED {
            return Admission::Pass;
        }
        let now = self.counts.nanos(clock);
        // Open with its break over, or half-open with a probe out for longer than a break.
        //
        // A probe out that long had its future dropped.
        //
        // This call is the probe, if it takes the state first.
        if now.saturating_sub(at) < self.break_nanos() {
            return Admission::Refuse;
        }
        match self.state.compare_exchange(
            word,
            pack(HALF_OPEN, now),
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => Admission::Probe,
            Err(_) => Admission::Refuse,
        }
    }

    /// A call that was let through ended.
    ///
    /// `success` for an `Ok` or a `Decision::Stop`; else a failure (a retryable failure after
    /// its retries).
    ///
    /// `Some(state)` when this changed the breaker's state.
    ///
    /// ```
    /// use retry_jitter::{sleep, CircuitBreaker};
    /// use retry_jitter::breaker::BreakerState;
    /// use std::time::Duration;
    /// let b = CircuitBreaker::new(1.0, 1, Duration::from_secs(10), Duration::from_secs(5));
    /// b.admit(sleep::now);
    /// assert_eq!(b.ended(sleep::now, false), Some(BreakerState::Open));
    /// ```
    pub fn ended(&self, clock: Clock, success: bool) -> Option<BreakerState> {
        let now = self.counts.nanos(clock);
        let word = self.state.load(Ordering::Acquire);
        match unpack(word) {
            (CLOSED, _) => {
                self.counts.add(now, 1, u64::from(!success));
                let (calls, failures) = self.counts.sums(now);
                let opens = calls >= u64::from(self.min_calls)
                    && calls > 0
                    && failures as f64 >= self.failure_ratio * calls as f64;
                if opens
                    && self
                        .state
                        .compare_exchange(
                            word,
                            pack(OPEN, now),
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        )
                        .is_ok()
                {
                    return Some(BreakerState::Open);
                }
                None
            }
            (HALF_OPEN, _) => {
                let (next, state) = if success {
                    (pack(CLOSED, now), BreakerState::Closed)
                } else {
                    (pack(OPEN, now), BreakerState::Open)
                };
                if self
                    .state
                    .compare_exchange(word, next, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
                {
                    return None;
                }
                if success {
                    // Closed afresh: the failures that opened it are forgotten.
                    self.counts.clear();
                }
                Some(state)
            }
            // Open: a call let through before it opened; the service's state is known.
            _ => None,
        }
    }
}

impl fmt::Debug for CircuitBreaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreaker")
            .field("failure_ratio", &self.failure_ratio)
            .field("min_calls", &self.min_calls)
            .field("window", &self.window)
            .field("break_for", &self.break_for)
            .finish_non_exhaustive()
    }
}
