//! What one call's retries cost: [`RetryStats`].

use core::time::Duration;

use super::GiveUpReason;

/// One call's figures, from its first attempt to its end.
///
/// How many attempts it made, how many hedges ran, how long it waited between attempts, and how
/// it ended.
///
/// Handed to a `stats` hook (`#[retry(stats = …)]`, [`Retry::stats`](crate::Retry::stats)) once
/// per call, success or give-up.
///
/// Returned with the outcome by [`Retry::call_with_stats`](crate::Retry::call_with_stats).
///
/// ```
/// use retry_jitter::{GiveUpReason, Jitter, Policy, Retry};
/// use std::time::Duration;
///
/// let r = Retry::new(Policy::new().with_base(Duration::ZERO).with_jitter(Jitter::None).with_attempts(3));
/// let mut calls = 0;
/// let (out, stats) = r.call_with_stats(|| { calls += 1; Err::<(), _>("down") });
/// assert_eq!(out, Err("down"));
/// assert_eq!((stats.attempts, stats.hedges), (3, 0));
/// assert_eq!(stats.gave_up, Some(GiveUpReason::Attempts));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryStats {
    /// The retried function's name, as in [`RetryEvent::function`](crate::RetryEvent::function).
    pub function: &'static str,
    /// Calls of the body made, the first and every hedge included.
    ///
    /// 1 for a call that succeeded at once; 0 for one a circuit breaker refused.
    pub attempts: u32,
    /// Hedges started (`hedge = …`).
    pub hedges: u32,
    /// Attempts sent again at once, uncounted: they never reached the server's application.
    ///
    /// These are gRFC A6's transparent retries, made only under `tonic::ServiceConfigLayer`: 0
    /// elsewhere.
    ///
    /// Not in `attempts`.
    pub transparent_retries: u32,
    /// The time slept between attempts, in all: the waits drawn, less what a cancel cut from
    /// the last one.
    ///
    /// A hook's own time is not in it.
    pub waited: Duration,
    /// From the start of the first attempt to the end of the call, on the call's clock.
    pub elapsed: Duration,
    /// `None` on success; else why retrying ended (the call returned its last outcome).
    pub gave_up: Option<GiveUpReason>,
}
