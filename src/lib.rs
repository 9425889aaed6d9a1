//! Retries done right by default, with one attribute.
//!
//! The waits are capped exponential backoff with **full jitter**.
//!
//! The attribute works on any sync or async function that returns a `Result`.
//!
//! ```toml
//! [dependencies]
//! retry-jitter = "0.1"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] } # your runtime: bring your own
//! ```
//!
//! ```
//! use retry_jitter::retry;
//! use std::io;
//! # use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
//! # static REFUSALS: AtomicU32 = AtomicU32::new(2);
//! # async fn connect(addr: &str) -> io::Result<String> {
//! #     match REFUSALS.fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1)) {
//! #         Ok(_) => Err(io::ErrorKind::ConnectionRefused.into()),
//! #         Err(_) => Ok(format!("hello from {addr}")),
//! #     }
//! # }
//!
//! // No `on`: `io::Error` implements `Transient`, so a refused connection is retried and a
//! // `NotFound` or `PermissionDenied` returned at once.
//! #[retry(attempts = 5, base = "100ms", timeout = "2s", max_elapsed = "10s")]
//! async fn greet(addr: &str) -> io::Result<String> {
//!     connect(addr).await // each attempt is cut after 2 s; the whole call after 10 s
//! }
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! assert_eq!(greet("db:5432").await.unwrap(), "hello from db:5432"); // two refusals, then Ok
//! # }
//! ```
//!
//! # What to read
//!
//! The [`guide`] has a page per task, each with a whole program.
//!
//! The guide's index opens with a reading order for a first read.
//!
//! Then come the tasks, each with its page.
//!
//! # Why jitter
//!
//! Thousands of clients that failed together must not retry together.
//!
//! So the wait before retry `k` is drawn uniformly in `[0, c(k)]`.
//!
//! Here `c(k) = min(cap, base · 2^(k−1))`.
//!
//! With the defaults: under 200 ms, 400 ms, 800 ms…
//!
//! The `on` key says which errors are worth retrying.
//!
//! It answers with a `bool` or a [`Decision`] (`Retry`, `Stop`, `RetryAfter(hint)`):
//!
//! ```
//! use retry_jitter::{retry, Decision};
//! # #[derive(Debug)] struct ApiError { status: u16 }
//! # static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
//! # fn call_the_api(id: u64) -> Result<String, ApiError> {
//! #     let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
//! #     if n < 2 { Err(ApiError { status: 503 }) } else { Ok(format!("user {id}")) }
//! # }
//!
//! fn classify(e: &ApiError) -> Decision {
//!     if e.status >= 500 { Decision::Retry } else { Decision::Stop } // a 4xx will not heal
//! }
//!
//! #[retry(base = "10ms", cap = "1s", attempts = 5, on = classify)]
//! fn fetch_user(id: u64) -> Result<String, ApiError> {
//!     call_the_api(id)
//! }
//!
//! assert_eq!(fetch_user(7).unwrap(), "user 7"); // two 503s, then a success
//! ```
//!
//! # Start here
//!
//! - [`retry`](macro@retry), the attribute, whose doc has every key.
//! - [`Retry`], the same loop as a closure API, for a call site an attribute cannot reach.
//!   It retries every error unless told `.on(…)`.
//! - [`Decision`], [`Transient`], [`transient`] and [`either`]: which errors are worth retrying.
//!   `std::io::Error` is `Transient`.
//! - Modules [`http`](mod@http), [`reqwest`](mod@reqwest) and [`sqlx`](mod@sqlx) classify
//!   their errors, behind features.
//! - [`Policy`], [`Backoff`] and [`Jitter`]: the delay math, built at run time.
//! - [`RetryEvent`], [`GiveUp`] and [`GiveUpReason`]: what the hooks are told.
//! - [`RetryStats`]: a call's figures (`stats = …`, [`Retry::call_with_stats`]).
//! - [`RetryBudget`]: a fleet's retries capped.
//! - [`TimedOut`], [`attempt_time_left`](time::attempt_time_left) and [`hedge`](mod@hedge): slow attempts.
//! - [`CancelToken`]: stopping a call's retries from outside (`cancel = &TOKEN`).
//! - [`testing`]: seeded jitter, waits recorded instead of slept.
//! - [`hooks`]: the plumbing, types met only as type parameters of [`Retry`].
//!   And the traits a hook of your own implements ([`Notify`](hooks::Notify), [`GiveUpHook`](hooks::GiveUpHook)).
//! - [`budget`]: what a budget is made of, for one of your own ([`SharedBudget`](budget::SharedBudget)),
//!   and the budgets on by default.
//! - [`breaker`]: what a [`CircuitBreaker`] says.
//! - [`time`]: the clock, the waits drawn, the time an attempt has left.
//! - `builder` (features `tower`, `reqwest-middleware`): the faces' shared builder and settings.
//!
//! Features:
//!
//! - `tokio` (default): tokio's timer and clock for `async fn`s.
//! - `tracing`: an event for each retry, hedge, recovery and give-up.
//! - `metrics`: counters and a histogram of them (module `metrics` names them).
//! - `http` and `reqwest`: classification of HTTP statuses and reqwest's errors.
//! - `sqlx`: classification of PostgreSQL's errors by SQLSTATE.
//! - `tower`, `tonic` and `reqwest-middleware`: the loop as client middleware (a
//!   `tower::Layer`, a `reqwest_middleware::Middleware`), and the gRPC status table.
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

// The guide's pages use every feature.
//
// Their snippets run as doc tests with all of them (the README's test command).
//
// A doc-test run with fewer leaves them out.
#[cfg(any(
    not(doctest),
    all(
        feature = "tokio",
        feature = "tracing",
        feature = "http",
        feature = "reqwest",
        feature = "sqlx",
        feature = "metrics",
        feature = "tower",
        feature = "tonic",
        feature = "reqwest-middleware"
    )
))]
#[cfg_attr(
    not(all(
        feature = "tracing",
        feature = "reqwest",
        feature = "sqlx",
        feature = "metrics",
        feature = "tower",
        feature = "tonic",
        feature = "reqwest-middleware"
    )),
    allow(rustdoc::broken_intra_doc_links)
)]
pub mod guide;

/// Turn a function returning `Result` into a retry loop.
///
/// The waits are capped exponential backoff with full jitter.
///
/// Only the errors worth retrying are retried.
///
/// ```
/// use retry_jitter::{retry, Decision};
/// use std::io;
///
/// fn transient(e: &io::Error) -> bool {
///     matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::ConnectionRefused)
/// }
///
/// #[retry(attempts = 3, base = "1ms", on = transient)]
/// fn read_config(path: &str) -> io::Result<String> {
///     std::fs::read_to_string(path)
/// }
///
/// // NotFound is not transient: one call, the error returned unchanged.
/// assert_eq!(read_config("/no/such/file").unwrap_err().kind(), io::ErrorKind::NotFound);
/// ```
///
/// The table of [keys](#keys) below lists them all.
///
/// It gives each key's values, default and meaning.
///
/// [`guide::attribute`] walks through them.
///
/// That page also says what the function becomes.
///
/// Async functions sleep on tokio's timer (default feature `tokio`).
///
/// They measure `max_elapsed` on tokio's clock.
///
/// So `#[tokio::test(start_paused = true)]` runs them in no real time:
///
/// ```
/// use retry_jitter::{retry, Decision};
/// use std::time::Duration;
///
/// #[derive(Debug, PartialEq)]
/// enum HttpError { Status(u16), RetryAfter(Duration) }
///
/// fn classify(e: &HttpError) -> Decision {
///     match e {
///         HttpError::RetryAfter(hint) => Decision::RetryAfter(*hint),
///         HttpError::Status(s) if *s >= 500 => Decision::Retry,
///         HttpError::Status(_) => Decision::Stop,
///     }
/// }
///
/// #[retry(attempts = 3, on = classify)]
/// async fn get(status: u16) -> Result<(), HttpError> {
///     Err(HttpError::Status(status))
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// assert_eq!(get(404).await, Err(HttpError::Status(404))); // a 4xx is never retried
/// # }
/// ```
///
/// Nothing cuts a running attempt unless `timeout` is set.
///
/// With it, an attempt still running at the limit is dropped.
///
/// That attempt fails with `E::from(TimedOut)`.
///
/// `max_elapsed` then becomes a hard deadline.
///
/// Each attempt gets at most the time left.
///
/// A sync function cannot be cut.
///
/// `timeout` on one is a compile error.
///
/// ```
/// use retry_jitter::retry;
/// use std::{future, io};
///
/// #[retry(attempts = 3, base = "10ms", timeout = "1s", max_elapsed = "10s")]
/// async fn ask_a_server_that_never_answers() -> io::Result<String> {
///     future::pending().await
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let started = tokio::time::Instant::now();
/// let err = ask_a_server_that_never_answers().await.unwrap_err();
/// assert_eq!(err.kind(), io::ErrorKind::TimedOut); // io::Error: From<TimedOut>
/// assert!(started.elapsed() < std::time::Duration::from_secs(4)); // 3 × 1 s, and the waits
/// # }
/// ```
///
/// # Keys
///
/// Every key is optional; `#[retry]` alone uses the defaults.
///
/// | key | value | default | meaning |
/// |---|---|---|---|
/// | `attempts` | integer literal ≥ 1, or any `u32` expression | `5` | **total** calls, the first included; `attempts = 1` never retries |
/// | `base` | duration literal (`"200ms"`) or `Duration` expression | `"200ms"` | ceiling of the first retry's wait |
/// | `cap` | duration literal or `Duration` expression | `"30s"` | no drawn wait is longer; a server hint up to `cap` is waited plus the draw, a longer one ends the call at once ([`GiveUpReason::HintBeyondCap`]) |
/// | `jitter` | `full`, `equal`, `decorrelated`, `none` | `full` | how a wait is drawn under its ceiling ([the waits](crate::guide::attribute#the-waits)) |
/// | `rate_limited_base` | duration literal or `Duration` expression | `"1s"` | the `base` of the waits after a [`Decision::RateLimited`] (a server limiting the rate without saying how long: HTTP `429`, gRPC `RESOURCE_EXHAUSTED`), under the same `cap` and `jitter` ([`errors`](crate::guide::errors)) |
/// | `on` | path or closure, `Fn(&E) -> D` where `D: Into<Decision>` (`bool` works: `true` = retry) | `E`'s own [`Transient`] decision when `E` implements it, else retry every error | which errors are worth retrying ([`errors`](crate::guide::errors)) |
/// | `on_ok` | path or closure, `Fn(&T) -> D` where `D: Into<Decision>` (`true` = try again) | none | retry an `Ok` value too (poll until ready); when retrying ends on one, that last `Ok` is returned ([`polling`](crate::guide::polling)) |
/// | `attempt` | an identifier, `attempt = n` | none | binds `n: u32` in the body: the 1-based number of the attempt running (each hedge its own) |
/// | `max_elapsed` | duration literal or expression | none | time budget from the first call: a wait that would end past it is not slept, no attempt starts past it, the last error is returned; with `timeout`, a hard deadline that cuts the attempt in flight ([`deadlines`](crate::guide::deadlines)) |
/// | `timeout` | duration literal or expression; `async fn` only | none | limit of each attempt: one still running is dropped and fails with `E::from(`[`TimedOut`]`)` |
/// | `hedge` | duration literal or expression, or `"p1"`…`"p99"`; `async fn` only | none | an attempt not answered after this delay gets the next one started beside it; the first success wins; `"p95"` follows the function's recent 95th-percentile latency ([`hedging`](crate::guide::hedging)) |
/// | `notify` | path or closure `Fn(&E, &RetryEvent)`, or a value of a type implementing [`Notify<E>`](crate::hooks::Notify) (`notify = Counts`, `notify = &SEEN`); in an `async fn`, also an async closure or `async fn` | none | called before each wait (an async one awaited there); a `Notify` type also hears of hedges and retried `Ok`s |
/// | `give_up` | path or closure `Fn(&E, &GiveUp)`, or a [`GiveUpHook<E>`](crate::hooks::GiveUpHook); in an `async fn`, also an async closure or `async fn` | none | called once when retrying ends with an error, with the reason and the calls made |
/// | `stats` | path or closure `Fn(&RetryStats)`; in an `async fn`, also an async closure or `async fn` | none | called once when the call ends, success or give-up, with its [`RetryStats`]: `attempts` (hedges included), `hedges`, `waited` (time slept between attempts), `elapsed`, `gave_up` (`None` on success); a call without it reads no clock for it ([`observability`](crate::guide::observability#a-calls-figures)) |
/// | `budget` | `&RetryBudget` or `&RatioBudget` expression (usually a `static`), a `&` of any [`SharedBudget`](budget::SharedBudget), or `none` | the function's own [`DefaultBudget`](budget::DefaultBudget): 20% of its calls over 10 s, plus 10 retries a second | shared by many calls: when it is empty, errors are returned without retrying ([`protecting`](crate::guide::protecting)); `budget = none` turns the default off |
/// | `throttle` | `&AdaptiveThrottle` expression (a `static`) | none | client-side adaptive throttling: every attempt asks it first; one it rejects is not made and the call ends with `E::from(Throttled)` |
/// | `breaker` | `&CircuitBreaker` expression (a `static`) | none | a circuit breaker counting calls: while open, calls fail with `E::from(CircuitOpen)` without calling the body |
/// | `cancel` | `&CancelToken` expression (a `static`, or an argument) | none | stops retrying once the [`CancelToken`] is cancelled: a wait ends at once (a blocking one too), no further attempt starts, the last error is returned ([`GiveUpReason::Cancelled`]); the first attempt always runs; in an `async fn` a later attempt running at the cancel is dropped (the error before it is returned), a sync one ends as it would ([`deadlines`](crate::guide::deadlines#cancelling)) |
/// | `trace_level` | `error`, `warn`, `info`, `debug`, `trace` | `warn` | with feature `tracing`: the level of the retry and give-up events ([`observability`](crate::guide::observability)) |
/// | `sleep` | path to an async `fn(Duration)` | tokio's sleep | the timer for async fns on other runtimes (waits and `timeout`) |
/// | `clock` | path to a `fn() -> Instant` | tokio's clock | the clock `max_elapsed` and `timeout` are measured on, paired with `sleep` |
/// | `policy` | [`Policy`] or `&Policy` expression | none | a policy built at run time (from configuration); excludes `attempts`, `base`, `cap`, `jitter`, `max_elapsed`, `rate_limited_base` |
/// | `crate` | string literal path | `"::retry_jitter"` | where this crate is, for re-exports |
///
/// **Duration literals** are a whole number followed by a unit, with no space.
///
/// The units: `ns`, `us` (or `µs`), `ms`, `s`, `m`, `h`.
///
/// Several may be joined (`"1m30s"`).
///
/// No fractions: `"1.5s"` is `"1500ms"`.
///
/// No words: `"10 seconds"` is `"10s"`.
///
/// No days: a day is `"24h"`.
///
/// They are parsed at compile time.
///
/// A `Duration` expression (`Duration::from_secs_f64(1.5)`) takes any value.
///
/// **Key expressions** are evaluated once per call, before the first attempt.
///
/// They run in the function's scope.
///
/// They may use `self` and the arguments: `policy = self.retry_policy`.
///
/// `Policy` is `Copy`, so the field is copied, not moved.
pub use retry_jitter_macro::retry;

#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "tower", feature = "reqwest-middleware")))
)]
pub use retry_jitter_runtime::builder;
pub use retry_jitter_runtime::hooks;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use retry_jitter_runtime::http;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use retry_jitter_runtime::metrics;
#[cfg(feature = "reqwest")]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest")))]
pub use retry_jitter_runtime::reqwest;
#[cfg(feature = "reqwest-middleware")]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest-middleware")))]
pub use retry_jitter_runtime::reqwest_middleware;
#[cfg(feature = "sqlx")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlx")))]
pub use retry_jitter_runtime::sqlx;
#[cfg(feature = "tonic")]
#[cfg_attr(docsrs, doc(cfg(feature = "tonic")))]
pub use retry_jitter_runtime::tonic;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub use retry_jitter_runtime::tower;
pub use retry_jitter_runtime::{
    breaker, budget, either, hedge, sleep, testing, time, transient, AdaptiveThrottle, Backoff,
    CancelToken, Cancelled, CircuitBreaker, CircuitOpen, Decision, GiveUp, GiveUpReason, Jitter,
    Policy, RatioBudget, Retry, RetryBudget, RetryEvent, RetryStats, Throttled, TimedOut,
    Transient,
};

// The README's snippets, run as doc tests with the features they use.
//
// That is the README's test command, `cargo test --workspace --all-features`.
#[cfg(all(
    doctest,
    feature = "tokio",
    feature = "reqwest",
    feature = "sqlx",
    feature = "tower",
    feature = "tonic",
    feature = "reqwest-middleware"
))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

#[doc(hidden)]
pub mod __private {
    pub use retry_jitter_runtime::__private::*;
}

// The traits a misuse's compile error names.
//
// One reads "the trait `IsResult` is not implemented for `Option<u32>`".
//
// They are reachable outside the hidden `__private` as well.
//
// rustc then prints each by its own name.
//
// It no longer prints them as `retry_jitter::__private::IsResult`.
//
// Hidden: no user names them.
#[doc(hidden)]
pub use retry_jitter_runtime::__private::{
    Branch, BudgetArg, ByClone, ByReborrow, CancelArg, CloneArg, CloneSelf, FromCircuitOpen,
    FromThrottled, FromTimedOut, IsResult, OnOkReturns, OnReturns, OwnSelf, Unborrowed,
};
