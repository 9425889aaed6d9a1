//! What to do with an error, and what the retry loop tells the outside world.

use core::time::Duration;

/// What to do after a failed call: the answer of an `on` classifier.
///
/// A classifier may also return `bool` (`true` = [`Decision::Retry`], `false` =
/// [`Decision::Stop`]); anything that is `Into<Decision>` works.
///
/// ```
/// use retry_runtime::Decision;
/// use std::time::Duration;
///
/// fn classify(status: &u16) -> Decision {
///     match status {
///         429 | 503 => Decision::RetryAfter(Duration::from_secs(1)),
///         500..=599 => Decision::Retry,
///         _ => Decision::Stop,
///     }
/// }
/// assert_eq!(classify(&404), Decision::Stop);
/// assert_eq!(Decision::from(true), Decision::Retry);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Worth another try, after the backoff's wait.
    Retry,
    /// Will never succeed by waiting: return this error now.
    Stop,
    /// A server hint (HTTP `Retry-After`): wait at least this long.
    ///
    /// The hint is a lower bound: the wait is the hint **plus** the wait the jitter kind draws
    /// for that retry, so clients given the same hint do not come back in lock-step. A hint
    /// longer than the backoff's cap, or one that would end past `max_elapsed`, ends the
    /// retries with this error.
    RetryAfter(Duration),
}

impl From<bool> for Decision {
    /// `true` is [`Decision::Retry`], `false` is [`Decision::Stop`].
    ///
    /// ```
    /// use retry_runtime::Decision;
    /// assert_eq!(Decision::from(false), Decision::Stop);
    /// ```
    fn from(retry: bool) -> Self {
        if retry {
            Decision::Retry
        } else {
            Decision::Stop
        }
    }
}

/// What a `notify` hook is told before each wait.
///
/// ```
/// use retry_runtime::{Policy, Retry, RetryEvent};
///
/// let seen = std::cell::RefCell::new(Vec::new());
/// let _ = Retry::new(Policy::default().with_attempts(3).with_base(std::time::Duration::ZERO))
///     .notify(|_e: &&str, ev: &RetryEvent| seen.borrow_mut().push(ev.attempt))
///     .call(|| Err::<(), _>("down"));
/// assert_eq!(seen.into_inner(), [1, 2]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryEvent {
    /// The 1-based number of the call that just failed.
    pub attempt: u32,
    /// The wait about to be slept before the next call.
    pub delay: Duration,
    /// The retried function's name (`query` for a method `Db::query`), or the name given to
    /// the closure API.
    pub function: &'static str,
    /// The total number of calls allowed, the first included.
    pub attempts: u32,
}

/// Why retrying ended with an error.
///
/// ```
/// use retry_runtime::{GiveUp, Policy, RetryState, Decision};
///
/// let mut state = RetryState::new(Policy::default().with_attempts(1));
/// assert_eq!(state.next_wait(Decision::Retry), Err(GiveUp::Attempts));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GiveUp {
    /// Every allowed call was made.
    Attempts,
    /// The next wait would end past `max_elapsed`.
    Elapsed,
    /// The classifier said [`Decision::Stop`].
    Stopped,
    /// The server asked for a wait ([`Decision::RetryAfter`]) longer than the cap.
    HintBeyondCap,
}
