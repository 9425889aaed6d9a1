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

mod backoff;
mod budget;
mod classify;
mod decision;
mod hooks;
mod policy;
mod question;
mod ratio;
mod retry;
mod rng;
mod state;

pub mod hedge;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub mod metrics;
#[cfg(feature = "reqwest")]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest")))]
pub mod reqwest;
pub mod sleep;
#[cfg(feature = "sqlx")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlx")))]
pub mod sqlx;
pub mod testing;
pub mod timeout;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use backoff::{Backoff, Jitter, Schedule};
pub use budget::RetryBudget;
pub use classify::{either, transient, Transient};
pub use decision::{Decision, GiveUp, GiveUpReason, RetryEvent};
#[cfg(feature = "tracing")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
pub use hooks::{tracer, Level, Render, Rendered, Tracer, Unrendered};
pub use hooks::{Budget, GiveUpHook, Hooks, NoBudget, NoGiveUp, NoTrace, Trace};
pub use policy::Policy;
pub use ratio::RatioBudget;
pub use retry::Retry;
pub use state::{Classify, NoNotify, Notify, RetryAll, RetryState};
pub use timeout::TimedOut;
