//! The runtime of [retry-jitter](https://docs.rs/retry-jitter): everything a retried call runs.
//!
//! Use it through the `retry-jitter` crate, which re-exports all of it beside the `#[retry]`
//! attribute. It holds:
//!
//! - [`Backoff`]: capped exponential backoff, `c(k) = min(cap, base · 2^(k−1))`, with a
//!   [`Jitter`] drawn under that ceiling (full jitter by default);
//! - [`Policy`]: backoff, attempts and an optional time budget;
//! - [`Decision`] and [`Transient`]: which errors are worth retrying;
//! - [`RetryState`](hooks::RetryState): the per-call state every retry loop here is driven by;
//! - [`Retry`]: the closure API, for call sites an attribute cannot reach;
//! - [`RetryBudget`] and [`RatioBudget`]: retry budgets shared by many calls;
//! - [`sleep`]: timers and their clocks; [`testing`]: seeded jitter and recorded waits;
//! - [`hooks`]: the traits and stand-ins a [`Retry`] carries as its type parameters.
//!
//! ```
//! use retry_jitter::{Policy, Retry};
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

// The layers, each importing only those below it:
//
// - `policy` decides: backoff, jitter, which errors;
// - `fleet` guards the service: budgets;
// - `classify` knows the protocols' errors;
// - `run` is the one retry loop;
// - the faces drive it: the closure API in `retry`, the macro's `__private`.
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
#[cfg(feature = "reqwest-middleware")]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest-middleware")))]
pub use middleware::reqwest_middleware;
#[cfg(feature = "tonic")]
#[cfg_attr(docsrs, doc(cfg(feature = "tonic")))]
pub use middleware::tonic;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub use middleware::tower;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use run::metrics;
pub use run::{hedge, sleep, testing};

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use fleet::{
    AdaptiveThrottle, CircuitBreaker, CircuitOpen, RatioBudget, RetryBudget, Throttled,
};
pub use policy::transient::{either, transient, Transient};
pub use policy::{
    Backoff, CancelToken, Cancelled, Decision, GiveUp, GiveUpReason, Jitter, Policy, RetryEvent,
    RetryStats, TimedOut,
};
pub use retry::Retry;

pub mod budget {
    //! What a budget is made of: the trait every budget implements ([`SharedBudget`]) and what
    //! it hands a loop ([`Charge`], [`RetryTicket`], [`Taken`]), the budgets on by default
    //! ([`DefaultBudget`], a [`Retry`](crate::Retry)'s [`OwnBudget`], a middleware's
    //! [`HostBudgets`]), and gRPC's [`RetryThrottling`]. The budgets a user puts in a `static`,
    //! [`RetryBudget`](crate::RetryBudget) and [`RatioBudget`](crate::RatioBudget), are at
    //! the crate's root.
    pub use crate::fleet::{
        Charge, DefaultBudget, HostBudgets, OwnBudget, RetryThrottling, RetryTicket, SharedBudget,
        Taken,
    };
}

pub mod breaker {
    //! What a [`CircuitBreaker`](crate::CircuitBreaker) says: its [`BreakerState`], and its
    //! [`Admission`] of a call about to begin.
    pub use crate::fleet::{Admission, BreakerState};
}

pub mod time {
    //! The clock a loop reads ([`Clock`]), the waits a [`Backoff`](crate::Backoff) draws
    //! ([`Backoff::schedule`](crate::Backoff::schedule)), and the time an attempt has left ([`attempt_time_left`]). The timers
    //! themselves are in [`sleep`](crate::sleep).
    pub use crate::policy::{attempt_time_left, Clock, Schedule};
}

#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "tower", feature = "reqwest-middleware")))
)]
pub mod builder {
    //! What the middleware faces share: their builder ([`RetryBuilder`], whose aliases are
    //! `tower`'s `RetryLayer` and `reqwest_middleware`'s `RetryMiddleware`), the type that
    //! names its settings ([`Settings`]), and the `static` guards as those settings name them
    //! ([`Breaker`], [`Throttle`]).
    pub use crate::middleware::builder::{Breaker, RetryBuilder, Settings, Throttle};
}

pub mod hooks {
    //! The closure API's plumbing.
    //!
    //! - The hooks a user implements on a type of their own ([`Notify`], [`GiveUpHook`],
    //!   [`Classify`], [`ClassifyOk`]).
    //! - The stand-ins a [`Retry`](crate::Retry) carries in its type for those it was not
    //!   given.
    //! - The [`Hooks`] a loop of your own hands
    //!   [`RetryState::on_error`](RetryState::on_error).
    //!
    //! A user of `#[retry]` never names them.
    //!
    //! ```
    //! use retry_jitter::hooks::{GiveUpHook, Unset};
    //! use retry_jitter::{GiveUp, Policy, Retry};
    //!
    //! struct Alarm;
    //! impl<E: std::fmt::Debug> GiveUpHook<E> for Alarm {
    //!     fn give_up(&self, e: &E, g: &GiveUp) {
    //!         eprintln!("{} gave up after {} calls: {e:?}", g.function, g.calls);
    //!     }
    //! }
    //!
    //! // A stored `Retry` names the stand-ins of the hooks it was not given.
    //! let r: Retry<_, Unset, Alarm> = Retry::new(Policy::new().with_attempts(1)).give_up(Alarm);
    //! assert_eq!(r.call(|| Err::<(), _>("down")), Err("down"));
    //! ```
    pub use crate::fleet::Budget;
    pub use crate::policy::Unset;
    pub use crate::policy::{AcceptOk, Classify, ClassifyOk, Resend, RetryAll};
    pub use crate::retry::{Awaiting, Cancellable, WithStats};
    pub use crate::run::awaiting::{AsyncHooks, HookFuture};
    pub use crate::run::hooks::{GiveUpHook, Hooks, Notify};
    pub use crate::run::state::RetryState;
}
