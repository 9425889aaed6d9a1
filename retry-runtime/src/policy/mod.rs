//! Deciding: the backoff and its jitter, the random generator they draw from, the policy, and
//! which errors are worth retrying. Imports nothing else of the crate: every layer above uses
//! it.

mod backoff;
mod classify;
pub(crate) mod deadline;
mod decision;
#[allow(clippy::module_inception)]
mod policy;
pub(crate) mod rng;
pub(crate) mod scope;
pub(crate) mod transient;

use std::time::Instant;

pub use backoff::{Backoff, Jitter, Schedule};
pub use classify::{AcceptOk, Classify, ClassifyOk, Resend, RetryAll};
pub use deadline::attempt_time_left;
pub use decision::{Decision, GiveUp, GiveUpReason, RetryEvent};
pub use policy::Policy;

/// A clock: the current instant on the timer's own time line.
///
/// ```
/// use retry_jitter::sleep::{self, Clock};
/// let clock: Clock = sleep::now;
/// assert!(clock() <= sleep::now());
/// ```
pub type Clock = fn() -> Instant;
