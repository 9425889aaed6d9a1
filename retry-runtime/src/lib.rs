//! The runtime of [retry-jitter](https://docs.rs/retry-jitter): everything a retried call runs.
//!
//! Use it through the `retry-jitter` crate, which re-exports all of it beside the `#[retry]`
//! attribute. It holds:
//!
//! - [`Backoff`]: capped exponential backoff, `c(k) = min(cap, base · 2^(k−1))`, with a
//!   [`Jitter`] drawn under that ceiling (full jitter by default);
//! - [`Policy`]: backoff, attempts and an optional time budget;
//! - [`Decision`] and [`Classify`]: which errors are worth retrying;
//! - [`RetryState`]: the per-call state every retry loop here is driven by;
//! - [`Retry`]: the closure API, for call sites an attribute cannot reach;
//! - [`RetryBudget`] and [`RatioBudget`]: retry budgets shared by many calls;
//! - [`sleep`]: timers and their clocks; [`testing`]: seeded jitter and recorded waits.
//!
//! ```
//! use retry_runtime::{Policy, Retry};
//! use std::time::Duration;
//!
//! let mut calls = 0;
//! let out = Retry::new(Policy::new().with_base(Duration::from_millis(1))).call(|| {
//!     calls += 1;
//!     if calls < 3 { Err("not yet") } else { Ok("done") }
//! });
//! assert_eq!((out, calls), (Ok("done"), 3));
//! ```
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

// The layers, each importing only those below it: `policy` decides (backoff, jitter, which
// errors), `fleet` guards the service (budgets), `classify` knows the protocols' errors, `run`
// is the one retry loop, and the faces (the closure API in `retry`, the macro's `__private`)
// drive it.
mod classify;
mod fleet;
#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
mod middleware;
mod policy;
mod retry;
mod run;

#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use classify::http;
#[cfg(feature = "reqwest")]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest")))]
pub use classify::reqwest;
#[cfg(feature = "sqlx")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlx")))]
pub use classify::sqlx;
#[cfg(feature = "tonic")]
#[cfg_attr(docsrs, doc(cfg(feature = "tonic")))]
pub use classify::tonic;
#[cfg(feature = "reqwest-middleware")]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest-middleware")))]
pub use middleware::reqwest_middleware;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub use middleware::tower;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use run::metrics;
pub use run::{hedge, sleep, testing, timeout};

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use fleet::TimedOut;
pub use fleet::{
    AdaptiveThrottle, Admission, BreakerState, Budget, CircuitBreaker, CircuitOpen, NoBudget,
    RatioBudget, RetryBudget, RetryTicket, SharedBudget, Throttled,
};
pub use policy::transient::{either, transient, Transient};
pub use policy::{AcceptOk, Classify, ClassifyOk, RetryAll};
pub use policy::{Backoff, Decision, GiveUp, GiveUpReason, Jitter, Policy, RetryEvent, Schedule};
pub use retry::GuardPair;
pub use retry::Retry;
pub use run::guard::{BreakerGuard, Guard, IntoErr, NoGuard, ThrottleGuard};
#[cfg(feature = "tracing")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
pub use run::hooks::{tracer, Level, Render, Rendered, Tracer, Unrendered};
pub use run::hooks::{GiveUpHook, Hooks, NoGiveUp, NoTrace, Trace};
pub use run::hooks::{NoNotify, Notify};
pub use run::state::RetryState;
