//! Deciding: the backoff and its jitter, the random generator they draw from, the policy, and
//! which errors are worth retrying.
//!
//! Imports nothing else of the crate: every layer above uses it.

mod backoff;
mod cancel;
mod classify;
pub(crate) mod deadline;
mod decision;
#[allow(clippy::module_inception)]
mod policy;
pub(crate) mod rng;
pub(crate) mod scope;
mod stats;
pub(crate) mod transient;

use std::time::Instant;

pub use backoff::{Backoff, Jitter, Schedule};
pub use cancel::{CancelToken, Cancelled};
#[cfg(feature = "tower")]
pub(crate) use classify::Transparently;
pub use classify::{AcceptOk, Classify, ClassifyOk, Resend, RetryAll, Transparent};
pub use deadline::{attempt_time_left, TimedOut};
pub use decision::{Decision, GiveUp, GiveUpReason, RetryEvent};
pub use policy::Policy;
pub use stats::RetryStats;

/// A clock: the current instant on the timer's own time line ([`sleep::now`](crate::sleep::now),
/// [`sleep::tokio_now`](crate::sleep::tokio_now), or a function of your own).
///
/// ```
/// use retry_jitter::sleep;
/// use retry_jitter::time::Clock;
/// let clock: Clock = sleep::now;
/// assert!(clock() <= sleep::now());
/// ```
pub type Clock = fn() -> Instant;

/// The stand-in a [`Retry`](crate::Retry) carries in its type for each hook it was not given (a
/// notify or give-up hook, a budget, a guard, a hedge, a time limit, the trace): it does nothing,
/// and costs nothing.
///
/// ```
/// use retry_jitter::hooks::Unset;
/// use retry_jitter::{Policy, Retry};
///
/// // A new `Retry` has every hook `Unset`.
/// let r: Retry<_, Unset, Unset> = Retry::new(Policy::new().with_attempts(1));
/// assert_eq!(r.call(|| Err::<(), _>("down")), Err("down"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unset;
