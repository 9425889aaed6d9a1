//! Client-side adaptive throttling (Google's SRE book, "Handling Overload").

use core::fmt;
use core::time::Duration;

use super::window::Window;
use crate::policy::{rng, Clock};

/// Client-side adaptive throttling: when the service rejects much of what it is sent, reject
/// locally, before sending.
///
/// The rejection probability is `max(0, (requests − k·accepts) / (requests + 1))` over the
/// trailing `window`.
///
/// The rule is Google's SRE book's (ch. 21); gRPC's RLS throttler and Envoy's admission control
/// use it.
///
/// Every attempt asks first: the first, retries, hedges.
///
/// The counts are of *answers*, as gRPC's adaptive throttler keeps them:
///
/// - An attempt the service answered adds a request and an accept: an `Ok`, or an error the
///   classifier says [`Decision::Stop`](crate::Decision::Stop) to (a 4xx is an answer).
/// - An attempt that ends retryable (an error to retry, a server hint, a timeout) adds a
///   request alone.
/// - An attempt rejected here adds a request alone.
/// - An attempt in flight, or dropped by the caller (a losing hedge, the caller's timeout),
///   counts for nothing.
///
/// While the service answers every call, `requests = accepts`: nothing is rejected, however
/// many calls are in flight.
///
/// When it answers nothing, the probability climbs towards 1, and the client sheds its own load.
///
/// `k = 2` (the book's) lets through twice what is accepted.
///
/// Lock-free (a ring of 16 atomic slots of `window / 16`) and `const`-constructible, for a
/// `static`.
///
/// Pass it as `throttle = &THROTTLE` or to [`Retry::throttle`](crate::Retry::throttle).
///
/// A rejected attempt is not made: it fails with `E::from(`[`Throttled`](crate::Throttled)`)`.
/// The call ends ([`GiveUpReason::Throttled`](crate::GiveUpReason::Throttled)).
///
/// ```
/// use retry_jitter::{sleep, AdaptiveThrottle};
/// use std::time::Duration;
///
/// static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(60));
/// // 100 attempts, none answered: (100 − 2·0) / 101 of the next ones are rejected.
/// for _ in 0..100 {
///     assert!(THROTTLE.admit(sleep::now) || true);
///     THROTTLE.answered(sleep::now, false);
/// }
/// assert!(THROTTLE.rejection_probability(sleep::now) > 0.9);
/// ```
pub struct AdaptiveThrottle {
    k: f64,
    window: Duration,
    /// Per slot: requests (`a`) and accepts (`b`).
    counts: Window,
}

impl AdaptiveThrottle {
    /// Reject with probability `max(0, (requests − k·accepts) / (requests + 1))` over the
    /// trailing `window`.
    ///
    /// # Panics
    ///
    /// If `k` is not a number, below 1 or infinite, or `window` is zero.
    ///
    /// A `k` below 1 would reject while the service answers everything.
    ///
    /// In a `static` that is a compile-time error:
    ///
    /// ```compile_fail
    /// use retry_jitter::AdaptiveThrottle;
    /// static BAD: AdaptiveThrottle = AdaptiveThrottle::new(0.5, std::time::Duration::from_secs(60));
    /// ```
    ///
    /// ```
    /// use retry_jitter::AdaptiveThrottle;
    /// static T: AdaptiveThrottle = AdaptiveThrottle::new(2.0, std::time::Duration::from_secs(60));
    /// assert_eq!(T.k(), 2.0);
    /// ```
    #[must_use]
    pub const fn new(k: f64, window: Duration) -> Self {
        assert!(
            k >= 1.0 && k < f64::INFINITY,
            "AdaptiveThrottle::new: k must be a finite number of at least 1 (the SRE book's is 2.0)"
        );
        assert!(
            !window.is_zero(),
            "AdaptiveThrottle::new: the window must be longer than zero (the SRE book's is 2 minutes)"
        );
        AdaptiveThrottle {
            k,
            window,
            counts: Window::new(window),
        }
    }

    /// The multiplier `k`.
    ///
    /// ```
    /// # use retry_jitter::AdaptiveThrottle;
    /// assert_eq!(AdaptiveThrottle::new(1.5, std::time::Duration::from_secs(1)).k(), 1.5);
    /// ```
    pub const fn k(&self) -> f64 {
        self.k
    }

    /// The trailing window the counts are kept over.
    ///
    /// ```
    /// # use retry_jitter::AdaptiveThrottle;
    /// # use std::time::Duration;
    /// assert_eq!(AdaptiveThrottle::new(2.0, Duration::from_secs(60)).window(), Duration::from_secs(60));
    /// ```
    pub const fn window(&self) -> Duration {
        self.window
    }

    /// The requests and the accepts counted over the trailing window.
    ///
    /// ```
    /// use retry_jitter::{sleep, AdaptiveThrottle};
    /// let t = AdaptiveThrottle::new(2.0, std::time::Duration::from_secs(60));
    /// assert!(t.admit(sleep::now));
    /// t.answered(sleep::now, true);
    /// assert_eq!(t.counts(sleep::now), (1, 1));
    /// ```
    pub fn counts(&self, clock: Clock) -> (u64, u64) {
        self.counts.sums(self.counts.nanos(clock))
    }

    /// The probability the next attempt is rejected, now.
    ///
    /// ```
    /// use retry_jitter::{sleep, AdaptiveThrottle};
    /// let t = AdaptiveThrottle::new(2.0, std::time::Duration::from_secs(60));
    /// assert_eq!(t.rejection_probability(sleep::now), 0.0);
    /// ```
    pub fn rejection_probability(&self, clock: Clock) -> f64 {
        let (requests, accepts) = self.counts.sums(self.counts.nanos(clock));
        probability(requests, accepts, self.k)
    }

    /// An attempt is about to be made: `false` if it is rejected.
    ///
    /// The draw uses the crate's jitter generator, which
    /// [`testing::seed_jitter`](crate::testing::seed_jitter) seeds.
    ///
    /// A rejected attempt counts as a request.
    ///
    /// One let through counts for nothing until it ends ([`answered`](AdaptiveThrottle::answered)).
    ///
    /// ```
    /// use retry_jitter::{sleep, AdaptiveThrottle};
    /// let t = AdaptiveThrottle::new(2.0, std::time::Duration::from_secs(60));
    /// assert!(t.admit(sleep::now)); // nothing rejected yet: probability 0
    /// assert_eq!(t.counts(sleep::now), (0, 0)); // in flight: not counted
    /// ```
    pub fn admit(&self, clock: Clock) -> bool {
        let nanos = self.counts.nanos(clock);
        let (requests, accepts) = self.counts.sums(nanos);
        let p = probability(requests, accepts, self.k);
        if p <= 0.0 {
            return true;
        }
        // A uniform draw in [0, 1): 53 random bits.
        let draw = rng::up_to((1 << 53) - 1) as f64 / (1u64 << 53) as f64;
        if draw >= p {
            return true;
        }
        self.counts.add(nanos, 1, 0);
        false
    }

    /// An attempt that [`admit`](AdaptiveThrottle::admit) let through ended: a request.
    ///
    /// And an accept if the service answered it (`accepted`: an `Ok`, or an error classified
    /// `Decision::Stop`).
    ///
    /// An attempt dropped before its end (a losing hedge, a caller's own timeout) is not
    /// reported at all.
    ///
    /// ```
    /// use retry_jitter::{sleep, AdaptiveThrottle};
    /// let t = AdaptiveThrottle::new(2.0, std::time::Duration::from_secs(60));
    /// assert!(t.admit(sleep::now));
    /// t.answered(sleep::now, true);
    /// assert!(t.admit(sleep::now));
    /// t.answered(sleep::now, false);
    /// assert_eq!(t.counts(sleep::now), (2, 1));
    /// assert_eq!(t.rejection_probability(sleep::now), 0.0); // 2 − 2·1 ≤ 0
    /// ```
    pub fn answered(&self, clock: Clock, accepted: bool) {
        let nanos = self.counts.nanos(clock);
        self.counts.add(nanos, 1, u64::from(accepted));
    }
}

/// `max(0, (requests − k·accepts) / (requests + 1))`.
fn probability(requests: u64, accepts: u64, k: f64) -> f64 {
    let (requests, accepts) = (requests as f64, accepts as f64);
    ((requests - k * accepts) / (requests + 1.0)).max(0.0)
}

impl fmt::Debug for AdaptiveThrottle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdaptiveThrottle")
            .field("k", &self.k)
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}
