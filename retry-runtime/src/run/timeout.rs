//! Attempts with a time limit: the race of an attempt against its timer that
//! `#[retry(timeout = …)]` and [`Retry::timeout`](crate::Retry::timeout) run.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::time::Instant;

use crate::policy::deadline::{within, Started};
use crate::policy::TimedOut;

// Public through `hooks`, with the closure API's other stand-ins.
pub(crate) mod limit;
pub(crate) use limit::{AttemptTimeout, MakeError};

/// One poll of `attempt` raced against `timer`: `Err(TimedOut)` when the timer won.
///
/// The attempt is polled first: one that is ready is never cut, even by an expired timer.
///
/// `#[retry(timeout = …)]` pins the attempt and its timer in the function's own future and
/// polls them with this, so they are stored once.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_jitter::{__private::poll_race, TimedOut};
/// use std::{future, pin::pin, time::Duration};
///
/// let mut attempt = pin!(future::pending::<u32>());
/// let mut timer = pin!(tokio::time::sleep(Duration::from_secs(1)));
/// let out = future::poll_fn(|cx| poll_race(attempt.as_mut(), timer.as_mut(), cx)).await;
/// assert_eq!(out, Err(TimedOut));
/// # }
/// ```
#[inline]
#[doc(hidden)]
pub fn poll_race<A: Future, T: Future<Output = ()>>(
    attempt: Pin<&mut A>,
    timer: Pin<&mut T>,
    cx: &mut Context<'_>,
) -> Poll<Result<A::Output, TimedOut>> {
    if let Poll::Ready(out) = attempt.poll(cx) {
        return Poll::Ready(Ok(out));
    }
    timer.poll(cx).map(|()| Err(TimedOut))
}

/// One poll of [`poll_race`] for an attempt limited to `limit` on `clock`.
///
/// While the attempt is polled, it can ask how long it has left ([`attempt_time_left`]).
///
/// [`reqwest::check`](crate::reqwest::check) ends its error-body read there, so the status it
/// decided on is not lost to the timer.
///
/// `end` is the attempt's end, kept between polls.
///
/// It is learnt (one clock read) only when the first poll is pending: an attempt ready at once
/// reads no clock.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_jitter::sleep::tokio_now;
/// use retry_jitter::__private::poll_race_within;
/// use retry_jitter::time::attempt_time_left;
/// use std::{future, pin::pin, time::Duration};
///
/// let limit = Duration::from_secs(1);
/// let mut attempt = pin!(async {
///     tokio::task::yield_now().await; // the first poll is pending: the end is learnt
///     attempt_time_left()
/// });
/// let mut timer = pin!(tokio::time::sleep(limit));
/// let mut end = None;
/// let left = future::poll_fn(|cx| {
///     poll_race_within(attempt.as_mut(), timer.as_mut(), &mut end, (limit, tokio_now), cx)
/// });
/// assert_eq!(left.await, Ok(Some(limit)));
/// # }
/// ```
#[inline]
#[doc(hidden)]
pub fn poll_race_within<A: Future, T: Future<Output = ()>>(
    attempt: Pin<&mut A>,
    timer: Pin<&mut T>,
    end: &mut Option<Instant>,
    (limit, clock): (Duration, crate::policy::Clock),
    cx: &mut Context<'_>,
) -> Poll<Result<A::Output, TimedOut>> {
    if let Poll::Ready(out) = poll_within(attempt, end, (limit, clock), cx) {
        return Poll::Ready(Ok(out));
    }
    timer.poll(cx).map(|()| Err(TimedOut))
}

/// The attempt's half of [`poll_race_within`]: one poll of `attempt` within its end.
///
/// The end is learnt if that first poll is pending.
///
/// For a caller whose timer is not the attempt's own: the hedged call's first attempt, which
/// shares one timer with the hedge delay.
#[inline]
pub(crate) fn poll_within<A: Future>(
    attempt: Pin<&mut A>,
    end: &mut Option<Instant>,
    (limit, clock): (Duration, crate::policy::Clock),
    cx: &mut Context<'_>,
) -> Poll<A::Output> {
    let polled = match *end {
        None => attempt.poll(cx),
        Some(at) => within((at, clock), || attempt.poll(cx)),
    };
    if polled.is_ready() {
        return polled;
    }
    if end.is_none() {
        *end = learn_end(limit, clock);
    }
    Poll::Pending
}

pin_project_lite::pin_project! {
    /// An attempt raced against its timer, both held (and pinned) in place.
    ///
    /// `#[retry(timeout = …)]` and [`Retry::timeout`](crate::Retry::timeout) await it per
    /// attempt; it runs [`poll_race_within`] on each poll.
    ///
    /// It holds nothing but what that needs: no borrow of the attempt, the timer or the end, as
    /// a `poll_fn` over pinned locals would.
    ///
    /// So the attempt's future is as small as the race can be.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_jitter::sleep::tokio_now;
    /// use retry_jitter::__private::Race;
    /// use retry_jitter::time::attempt_time_left;
    /// use retry_jitter::TimedOut;
    /// use std::time::Duration;
    ///
    /// let limit = Duration::from_secs(1);
    /// let timer = tokio::time::sleep(limit);
    /// let slow = Race::new(tokio::time::sleep(Duration::from_secs(10)), timer, limit, tokio_now);
    /// assert_eq!(slow.await, Err(TimedOut));
    /// let asks = async {
    ///     tokio::task::yield_now().await; // the first poll is pending: the end is learnt
    ///     attempt_time_left()
    /// };
    /// let race = Race::new(asks, tokio::time::sleep(limit), limit, tokio_now);
    /// assert_eq!(race.await, Ok(Some(limit)));
    /// # }
    /// ```
    #[must_use = "a race does nothing unless polled"]
    #[doc(hidden)]
    pub struct Race<A, T> {
        #[pin]
        attempt: A,
        #[pin]
        timer: T,
        end: Option<Instant>,
        limit: Duration,
        clock: crate::policy::Clock,
    }
}

impl<A: Future, T: Future<Output = ()>> Race<A, T> {
    /// `attempt` raced against `timer`, a timer of `limit` on `clock`.
    #[inline]
    pub fn new(attempt: A, timer: T, limit: Duration, clock: crate::policy::Clock) -> Self {
        Race {
            attempt,
            timer,
            end: None,
            limit,
            clock,
        }
    }
}

impl<A: Future, T: Future<Output = ()>> Future for Race<A, T> {
    type Output = Result<A::Output, TimedOut>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let within = (*this.limit, *this.clock);
        poll_race_within(this.attempt, this.timer, this.end, within, cx)
    }
}

/// The end of an attempt limited to `limit` whose first poll just returned.
///
/// Out of line, off the path of an attempt ready at once.
#[cold]
#[inline(never)]
fn learn_end(limit: Duration, clock: crate::policy::Clock) -> Option<Instant> {
    clock().checked_add(limit)
}

/// The time limit of one attempt: the `timeout`, or less where the call's `max_elapsed`
/// deadline comes first.
///
/// ```
/// use retry_jitter::__private::Started;
/// use retry_jitter::{__private::Limit, sleep, Policy};
/// use std::time::Duration;
///
/// let policy = Policy::new().with_max_elapsed(Duration::from_secs(5));
/// let call = Started { policy, clock: sleep::now, start: Some(sleep::now()) };
/// let limit = Limit::of(Duration::from_secs(1), call);
/// assert_eq!((limit.duration, limit.deadline), (Duration::from_secs(1), false));
/// let limit = Limit::of(Duration::from_secs(60), call);
/// assert!(limit.duration <= Duration::from_secs(5) && limit.deadline);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[doc(hidden)]
pub struct Limit {
    /// How long the attempt may run.
    pub duration: Duration,
    /// Whether that is the time left before the deadline (`max_elapsed`) rather than the
    /// `timeout`.
    ///
    /// An attempt cut then ends the call.
    pub deadline: bool,
}

impl Limit {
    /// The limit of an attempt starting now, in `call`.
    ///
    /// The clock is read only when its policy has a `max_elapsed`.
    #[inline]
    pub fn of(timeout: Duration, call: Started) -> Limit {
        if let Some(left) = call.time_left() {
            if left <= timeout {
                return Limit {
                    duration: left,
                    deadline: true,
                };
            }
        }
        Limit {
            duration: timeout,
            deadline: false,
        }
    }
}
