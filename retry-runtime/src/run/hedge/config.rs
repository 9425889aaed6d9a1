//! When a call hedges: [`Hedge`], a fixed delay or a percentile of recent latency.
//!
//! And [`HedgeWith`], which says whether a [`Retry`](crate::Retry) hedges at all.

use core::time::Duration;

use super::LatencyHistogram;
use crate::policy::Unset;

/// When a hedge starts: a fixed delay, or a percentile of the function's recent latency.
///
/// ```
/// use retry_jitter::hedge::{Hedge, LatencyHistogram};
/// use std::time::Duration;
///
/// static LATENCY: LatencyHistogram = LatencyHistogram::new();
/// assert_eq!(Hedge::After(Duration::from_millis(50)).delay(), Some(Duration::from_millis(50)));
/// assert_eq!(Hedge::Percentile(&LATENCY, 95).delay(), None); // no samples yet: no hedge
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Hedge {
    /// After this long without an answer.
    After(Duration),
    /// After the function's recent `percentile`-th percentile latency (1–99), as `histogram`
    /// has seen it.
    ///
    /// No hedge until it has seen [`LatencyHistogram::MIN_SAMPLES`] attempts.
    Percentile(&'static LatencyHistogram, u8),
}

impl Hedge {
    /// The delay before a hedge now, if there is to be one.
    #[inline]
    pub fn delay(&self) -> Option<Duration> {
        match *self {
            Hedge::After(delay) => Some(delay),
            Hedge::Percentile(histogram, percentile) => histogram.percentile(percentile),
        }
    }

    /// The histogram that learns the attempts' latency, for a percentile hedge.
    pub(super) fn histogram(&self) -> Option<&'static LatencyHistogram> {
        match *self {
            Hedge::After(_) => None,
            Hedge::Percentile(histogram, _) => Some(histogram),
        }
    }
}

/// Whether a [`Retry`](crate::Retry) hedges: [`Unset`] (the default), or a [`Hedge`] set with
/// [`Retry::hedge`](crate::Retry::hedge).
///
/// ```
/// use retry_jitter::hedge::Hedge;
/// use retry_jitter::hooks::Unset;
/// use retry_jitter::__private::HedgeWith;
/// use std::time::Duration;
/// assert!(Unset.hedge().is_none());
/// assert!(Hedge::After(Duration::from_millis(5)).hedge().is_some());
/// ```
pub trait HedgeWith {
    /// The hedge, if any.
    fn hedge(&self) -> Option<Hedge>;
}

impl HedgeWith for Unset {
    #[inline]
    fn hedge(&self) -> Option<Hedge> {
        None
    }
}

impl HedgeWith for Hedge {
    #[inline]
    fn hedge(&self) -> Option<Hedge> {
        Some(*self)
    }
}

/// A hedge decided per call: `None` does not hedge (the middleware faces' writes that may not
/// be sent twice).
///
/// ```
/// use retry_jitter::hedge::Hedge;
/// use retry_jitter::__private::HedgeWith;
/// use std::time::Duration;
/// let hedge = Hedge::After(Duration::from_millis(5));
/// assert!(Some(hedge).hedge().is_some());
/// assert!(None::<Hedge>.hedge().is_none());
/// ```
impl<D: HedgeWith> HedgeWith for Option<D> {
    #[inline]
    fn hedge(&self) -> Option<Hedge> {
        self.as_ref().and_then(HedgeWith::hedge)
    }
}
