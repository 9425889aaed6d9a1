//! Deadlines.
//!
//! - A call's deadline (`max_elapsed` after its start) and its arithmetic, which every check of
//!   the loops goes through.
//! - [`TimedOut`], the error of an attempt cut by its limit.
//! - The time limit of the attempt being polled, as the attempt itself can read it.
//!
//! The retry loops set that limit (in `run/timeout`) while they poll an attempt that has one.
//!
//! Code inside the attempt fits its work to what is left: `reqwest::check`'s error-body read.

use core::borrow::Borrow;
use core::fmt;
use core::time::Duration;
use std::io;
use std::time::Instant;

use crate::policy::transient::Transient;
use crate::policy::{Clock, Decision, Policy};

/// A call's deadline on `clock`: `max_elapsed` after its start.
///
/// Inside a [`ChainLayer`](crate::tower::ChainLayer)'s scope, the caller's if that is earlier.
#[derive(Clone, Copy)]
pub(crate) struct Deadline {
    at: Instant,
    clock: Clock,
    /// It is the caller's: reaching it says nothing of the service called.
    pub(crate) callers: bool,
}

impl Deadline {
    /// The deadline of a call under `max_elapsed` that began at `start`, if it has one.
    ///
    /// `start` is kept only when the call has a `max_elapsed`.
    ///
    /// A deadline past the clock's range is none.
    #[inline]
    pub(crate) fn of(max: Option<Duration>, start: Option<Instant>, clock: Clock) -> Option<Self> {
        match (max, start) {
            (Some(max), Some(start)) => Some(Deadline {
                at: start.checked_add(max)?,
                clock,
                callers: false,
            }),
            _ => None,
        }
    }

    /// The earlier of `own` and the caller's deadline `caller` (on the same clock).
    #[inline]
    fn earliest(own: Option<Self>, caller: Option<Instant>, clock: Clock) -> Option<Self> {
        let callers = |at| {
            Some(Deadline {
                at,
                clock,
                callers: true,
            })
        };
        match (own, caller) {
            (Some(own), Some(at)) if at < own.at => callers(at),
            (None, Some(at)) => callers(at),
            (own, _) => own,
        }
    }

    /// Whether a wait of `wait` from now would end past it (`ZERO`: whether it has passed).
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn passed_after(&self, wait: Duration) -> bool {
        (self.clock)()
            .checked_add(wait)
            .is_none_or(|end| end > self.at)
    }

    /// The time left before it, now.
    #[inline]
    pub(crate) fn left(&self) -> Duration {
        self.at.saturating_duration_since((self.clock)())
    }
}

/// A call once its first attempt has begun.
///
/// It holds the policy it runs under, the clock its time is read on, and when it began.
///
/// The start is kept only where the policy has a `max_elapsed`: see
/// [`start_time`](crate::__private::start_time).
///
/// The retry loops are handed it for the call's time; its deadline arithmetic lives here.
///
/// `P` is a [`Policy`] or a borrow of one.
///
/// A borrowed `const` policy (the attribute's policy of literals) is an address, not a copy.
///
/// ```
/// use retry_jitter::__private::{now, Started};
/// use retry_jitter::Policy;
///
/// let policy = Policy::new();
/// let call = Started { policy: &policy, clock: now, start: None };
/// assert_eq!(call.owned().policy, policy);
/// ```
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Started<P = Policy> {
    /// The policy the call runs under.
    pub policy: P,
    /// The clock its time is read on.
    pub clock: Clock,
    /// When its first attempt began, where the policy has a `max_elapsed`.
    pub start: Option<Instant>,
}

impl<P: Borrow<Policy>> Started<P> {
    /// The same call with its policy copied out of the borrow.
    #[inline]
    pub fn owned(&self) -> Started {
        Started {
            policy: *self.policy.borrow(),
            clock: self.clock,
            start: self.start,
        }
    }

    /// The call's deadline, if it has one: its `max_elapsed` after the start kept for it.
    ///
    /// Inside a chain's scope, the caller's if that is earlier.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn deadline(&self) -> Option<Deadline> {
        let own = Deadline::of(self.policy.borrow().max_elapsed(), self.start, self.clock);
        Deadline::earliest(own, crate::policy::scope::caller_deadline(), self.clock)
    }

    /// Whether the call has a deadline: [`deadline`](Started::deadline)`.is_some()`.
    ///
    /// No arithmetic for a call that kept no start (no `max_elapsed`) outside a chain's scope.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn has_deadline(&self) -> bool {
        (self.start.is_some() && self.deadline().is_some())
            || crate::policy::scope::caller_deadline().is_some()
    }

    /// The time left before the deadline, now, if there is one.
    #[inline]
    pub(crate) fn time_left(&self) -> Option<Duration> {
        self.deadline().map(|d| d.left())
    }

    /// Whether a wait of `wait` from now would end past the deadline (`ZERO`: whether it has
    /// passed); never without one.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn passed_after(&self, wait: Duration) -> bool {
        self.deadline().is_some_and(|d| d.passed_after(wait))
    }
}

std::thread_local! {
    /// The end of the attempt being polled on this thread, and its clock.
    static ATTEMPT_END: core::cell::Cell<Option<(Instant, Clock)>> =
        const { core::cell::Cell::new(None) };
}

/// Run `poll` with `end` as the attempt's end ([`attempt_time_left`]).
///
/// The previous one is restored after it, even if it unwinds.
///
/// Attempts nest: a retried fn calling another.
pub(crate) fn within<O>(end: (Instant, Clock), poll: impl FnOnce() -> O) -> O {
    struct Restore(Option<(Instant, Clock)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ATTEMPT_END.with(|cell| cell.set(self.0));
        }
    }
    let _restore = Restore(ATTEMPT_END.with(|cell| cell.replace(Some(end))));
    poll()
}

/// How long the attempt being polled has left before its time limit cuts it.
///
/// The limit is `timeout`, or the deadline `max_elapsed` sets with it.
///
/// `None` outside an attempt with a limit, and in an attempt's first poll.
///
/// Read it inside the attempt (an `async` block or fn it awaits) to fit work in the attempt
/// rather than have it cut.
///
/// `reqwest::check` does so with its error-body read.
///
/// ```
/// assert_eq!(retry_jitter::time::attempt_time_left(), None);
/// ```
pub fn attempt_time_left() -> Option<Duration> {
    ATTEMPT_END
        .with(|cell| cell.get())
        .map(|(end, clock)| end.saturating_duration_since(clock()))
}

/// An attempt ran past its time limit (`timeout`, or the hard deadline `max_elapsed` sets with
/// it) and was dropped.
///
/// A retried function with a `timeout` gets this as its own error type through
/// `From<TimedOut>`.
///
/// It is [`Transient`] (retried): a classifier that delegates to
/// [`transient`](crate::transient) retries a timed-out attempt.
///
/// ```
/// use retry_jitter::{Decision, TimedOut, Transient};
///
/// let e = std::io::Error::from(TimedOut);
/// assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
/// assert_eq!(TimedOut.decision(), Decision::Retry);
/// assert_eq!(TimedOut.to_string(), "the attempt timed out");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TimedOut;

impl fmt::Display for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the attempt timed out")
    }
}

impl std::error::Error for TimedOut {}

/// Retried: the next attempt may answer in time.
///
/// ```
/// use retry_jitter::{transient, Decision, TimedOut};
/// assert_eq!(transient(&TimedOut), Decision::Retry);
/// ```
impl Transient for TimedOut {
    fn decision(&self) -> Decision {
        Decision::Retry
    }
}

/// An `io::Error` of kind [`TimedOut`](io::ErrorKind::TimedOut), with [`TimedOut`] as its
/// inner error: `#[retry(timeout = …)]` works on any `io::Result` function.
///
/// ```
/// use retry_jitter::TimedOut;
/// let e = std::io::Error::from(TimedOut);
/// assert!(e.get_ref().is_some_and(|inner| inner.is::<TimedOut>()));
/// ```
impl From<TimedOut> for io::Error {
    fn from(e: TimedOut) -> Self {
        io::Error::new(io::ErrorKind::TimedOut, e)
    }
}
