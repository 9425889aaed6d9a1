//! What to do with an error, and what the retry loop tells the outside world.

use core::time::Duration;

/// What to do after a failed call: the answer of an `on` classifier.
///
/// A classifier may also return `bool`: `true` = [`Decision::Retry`], `false` =
/// [`Decision::Stop`].
///
/// Anything that is `Into<Decision>` works.
///
/// ```
/// use retry_jitter::Decision;
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
    /// for that retry.
    ///
    /// So clients given the same hint do not come back in lock-step.
    ///
    /// A hint longer than the backoff's cap, or one that would end past `max_elapsed`, ends the
    /// retries with this error.
    RetryAfter(Duration),
    /// The server is limiting the rate of calls (HTTP `429`, gRPC `RESOURCE_EXHAUSTED`), and
    /// said nowhere for how long.
    ///
    /// Worth another try after a longer wait, drawn as for [`Retry`](Decision::Retry).
    ///
    /// The draw is from the policy's [`rate_limited_base`](crate::Policy::rate_limited_base)
    /// (1 s unless set) instead of its base, under the same cap.
    ///
    /// A hint, where the server gives one, is a [`RetryAfter`](Decision::RetryAfter) instead.
    ///
    /// Not the adaptive throttle's refusal, which is this side's:
    /// [`Throttled`](crate::Throttled).
    ///
    /// ```
    /// use retry_jitter::{Decision, Jitter, Policy};
    /// use retry_jitter::hooks::RetryState;
    /// use std::time::Duration;
    ///
    /// let policy = Policy::new().with_jitter(Jitter::None);
    /// let mut state = RetryState::new(policy);
    /// assert_eq!(state.next_wait(Decision::RateLimited), Ok(Duration::from_secs(1)));
    /// assert_eq!(state.next_wait(Decision::Retry), Ok(Duration::from_millis(400)));
    /// ```
    RateLimited,
}

impl Decision {
    /// Whether the decision is to try again (after whatever wait).
    #[cfg(any(feature = "http", feature = "tonic"))]
    #[inline]
    pub(crate) const fn retries(self) -> bool {
        !matches!(self, Decision::Stop)
    }
}

impl From<bool> for Decision {
    /// `true` is [`Decision::Retry`], `false` is [`Decision::Stop`].
    ///
    /// ```
    /// use retry_jitter::Decision;
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
/// use retry_jitter::{Policy, Retry, RetryEvent};
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
    /// Whether this is a hedge (`hedge = …`): call number `attempt` has not answered within
    /// `delay`.
    ///
    /// The next call starts beside it, at once. A retry after an error is not a hedge.
    pub hedge: bool,
    /// Whether the call that just ended returned an `Ok` value that `on_ok` retries (polling
    /// until ready), not an error.
    ///
    /// There is no error to show: a `notify` closure `Fn(&E, &RetryEvent)` is not called for it.
    ///
    /// A [`Notify`](crate::hooks::Notify) type hears of it through
    /// [`Notify::retry_ok`](crate::hooks::Notify::retry_ok).
    ///
    /// Traces and metrics count it as a retry.
    pub ok: bool,
}

/// Why retrying ended with an error.
///
/// ```
/// use retry_jitter::{Decision, GiveUpReason, Policy};
/// use retry_jitter::hooks::RetryState;
///
/// let mut state = RetryState::new(Policy::default().with_attempts(1));
/// assert_eq!(state.next_wait(Decision::Retry), Err(GiveUpReason::Attempts));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GiveUpReason {
    /// Every allowed call was made.
    Attempts,
    /// The time budget `max_elapsed` is spent.
    ///
    /// The next wait would end past it, a wait ended past it (no attempt starts then), or (with
    /// a `timeout`) the deadline cut the attempt in flight.
    Elapsed,
    /// The shared [`RetryBudget`](crate::RetryBudget) had no tokens for another retry.
    BudgetEmpty,
    /// The classifier said [`Decision::Stop`].
    Stopped,
    /// The server asked for a wait ([`Decision::RetryAfter`]) longer than the cap.
    HintBeyondCap,
    /// The adaptive throttle rejected an attempt (`throttle = …`): it was not made.
    Throttled,
    /// The circuit breaker is open (`breaker = …`): the body was not called.
    CircuitOpen,
    /// The call's [`CancelToken`](crate::CancelToken) was cancelled (`cancel = …`): no further
    /// attempt was made.
    Cancelled,
}

impl GiveUpReason {
    /// A short description, for logs.
    ///
    /// ```
    /// use retry_jitter::GiveUpReason;
    /// assert_eq!(GiveUpReason::Attempts.as_str(), "attempts spent");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            GiveUpReason::Attempts => "attempts spent",
            GiveUpReason::Elapsed => "max_elapsed reached",
            GiveUpReason::BudgetEmpty => "retry budget empty",
            GiveUpReason::Stopped => "not retryable (Decision::Stop)",
            GiveUpReason::HintBeyondCap => "server hint beyond cap",
            GiveUpReason::Throttled => "throttled",
            GiveUpReason::CircuitOpen => "circuit open",
            GiveUpReason::Cancelled => "cancelled",
        }
    }
}

impl GiveUpReason {
    /// The reason as a metric label: `attempts`, `elapsed`, `budget_empty`, `stopped`,
    /// `hint_beyond_cap`, `throttled`, `circuit_open`, `cancelled`.
    ///
    /// ```
    /// use retry_jitter::GiveUpReason;
    /// assert_eq!(GiveUpReason::HintBeyondCap.label(), "hint_beyond_cap");
    /// ```
    pub const fn label(self) -> &'static str {
        match self {
            GiveUpReason::Attempts => "attempts",
            GiveUpReason::Elapsed => "elapsed",
            GiveUpReason::BudgetEmpty => "budget_empty",
            GiveUpReason::Stopped => "stopped",
            GiveUpReason::HintBeyondCap => "hint_beyond_cap",
            GiveUpReason::Throttled => "throttled",
            GiveUpReason::CircuitOpen => "circuit_open",
            GiveUpReason::Cancelled => "cancelled",
        }
    }
}

impl core::fmt::Display for GiveUpReason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a `give_up` hook is told, once, when retrying ends with an error.
///
/// ```
/// use retry_jitter::{GiveUp, GiveUpReason, Policy, Retry};
/// use std::cell::Cell;
/// use std::time::Duration;
///
/// let seen = Cell::new(None);
/// let _ = Retry::new(Policy::new().with_attempts(3).with_base(Duration::ZERO))
///     .give_up(|_e: &&str, g: &GiveUp| seen.set(Some((g.reason, g.calls))))
///     .call(|| Err::<(), _>("down"));
/// assert_eq!(seen.get(), Some((GiveUpReason::Attempts, 3)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GiveUp {
    /// Why retrying ended.
    pub reason: GiveUpReason,
    /// How many calls were made, the first included.
    pub calls: u32,
    /// The retried function's name, as in [`RetryEvent::function`].
    pub function: &'static str,
    /// Whether retrying ended on an `Ok` value `on_ok` would have retried.
    ///
    /// Its attempts were spent, the deadline reached, the budget empty, or `on_ok` said
    /// [`Decision::Stop`] after all.
    ///
    /// The call returns that value.
    ///
    /// A `give_up` closure `Fn(&E, &GiveUp)`, which has no error to be shown, is not called.
    ///
    /// A [`GiveUpHook`](crate::hooks::GiveUpHook) type hears of it through
    /// [`GiveUpHook::give_up_ok`](crate::hooks::GiveUpHook::give_up_ok).
    pub ok: bool,
}
