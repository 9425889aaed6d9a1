//! Retries done right by default: capped exponential backoff with **full jitter**, on any sync or
//! async function that returns a `Result`, with one attribute.
//!
//! ```
//! use retry_jitter::retry;
//! # #[derive(Debug)] struct ApiError { status: u16 }
//! # fn is_transient(e: &ApiError) -> bool { e.status >= 500 }
//! # static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
//! # fn call_the_api(id: u64) -> Result<String, ApiError> {
//! #     let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
//! #     if n < 2 { Err(ApiError { status: 503 }) } else { Ok(format!("user {id}")) }
//! # }
//!
//! #[retry(base = "10ms", cap = "1s", attempts = 5, on = is_transient)]
//! fn fetch_user(id: u64) -> Result<String, ApiError> {
//!     call_the_api(id)
//! }
//!
//! assert_eq!(fetch_user(7).unwrap(), "user 7"); // two 503s, then a success
//! ```
//!
//! Thousands of clients that failed together must not retry together: each wait before retry
//! `k` is drawn uniformly in `[0, c(k)]`, where `c(k) = min(cap, base · 2^(k−1))` — under 200 ms,
//! 400 ms, 800 ms… with the defaults. See [`retry`] for every key, and the README for the
//! reasoning.
//!
//! Without the attribute, the same loop runs through [`Retry`] (a closure API); the delay math
//! is [`Backoff`]; [`RetryBudget`] caps a fleet's retries; [`Transient`] and [`transient`]
//! classify errors (`std::io::Error` included); [`testing`] seeds the jitter and records waits
//! instead of sleeping them.
//!
//! Features: `tokio` (default), tokio's timer and clock for `async fn`s; `tracing`, an event
//! for each retry, hedge, recovery and give-up; `metrics`, counters and a histogram of them
//! (module `metrics` names them); `http` and `reqwest`, classification of HTTP
//! statuses and reqwest's errors; `sqlx`, of PostgreSQL's errors by SQLSTATE.
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

/// Turn a function returning `Result` into a retry loop: capped exponential backoff with full
/// jitter, and only the errors worth retrying retried.
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
/// Every key is optional:
///
/// | key | value | default |
/// |---|---|---|
/// | `attempts` | integer literal ≥ 1 or `u32` expression: **total** calls, the first included | `5` |
/// | `base` | duration literal (`"200ms"`, `"1m30s"`) or `Duration` expression: the first wait's ceiling | `"200ms"` |
/// | `cap` | duration literal or expression: no wait is longer (a server hint aside) | `"30s"` |
/// | `jitter` | `full`, `equal`, `decorrelated`, `none` | `full` |
/// | `on` | path or closure `Fn(&E) -> D`, `D: Into<Decision>` (`bool` works) | retry every error |
/// | `max_elapsed` | duration literal or expression: time budget from the first call (with `timeout`, a hard deadline) | none |
/// | `timeout` | duration literal or expression, `async fn` only: limit of each attempt; a cut one fails with `E::from(`[`TimedOut`]`)` | none |
/// | `hedge` | duration literal or expression, or `"pNN"`, `async fn` only: an attempt not answered by then gets the next one started beside it (see [`hedge`](mod@hedge)) | none |
/// | `notify` | path or closure `Fn(&E, &RetryEvent)`, called before each wait | none |
/// | `give_up` | path or closure `Fn(&E, &GiveUp)`, called once when retrying ends with an error | none |
/// | `budget` | a `&RetryBudget` expression (usually a `static`) shared by many calls | none |
/// | `trace_level` | `error`, `warn`, `info`, `debug`, `trace` (feature `tracing`) | `warn` |
/// | `sleep` | path to an async `fn(Duration)`: the timer of an `async fn` off tokio | `tokio::time::sleep` |
/// | `clock` | path to a `fn() -> Instant`: the clock `max_elapsed` and `timeout` are measured on | tokio's clock |
/// | `policy` | a [`Policy`] or `&Policy` expression (excludes `attempts`, `base`, `cap`, `jitter`, `max_elapsed`) | none |
/// | `crate` | string literal: the path of this crate, when re-exported | `"::retry_jitter"` |
///
/// Key expressions are evaluated once per call, before the first attempt, in the function's
/// scope (`policy = self.policy` works). By-value arguments the body uses are cloned for each
/// attempt, `&mut` ones re-borrowed; so are receivers: `self: Arc<Self>`, `Rc<Self>` or any `Clone` `self` is
/// cloned, `self: Pin<&mut Self>` and a `self` whose `Self` is a `&mut T` re-borrowed. On an `#[async_trait]` method the inner future
/// is retried. `return` and `?` end one attempt, and an `Err` from them is retried like
/// any other. The function's own error comes back unchanged: the last one. (In an `async fn`
/// they are rewritten to do so, so that the attempt runs inline, in the function's own state
/// machine; a body with a macro call that might hide a `return` — any but the standard
/// library's, and `tracing::`/`log::` ones called through their crate — keeps its attempt in a
/// nested `async` block, which behaves the same.) `#[track_caller]` on a sync fn works: its
/// attempt is then written inline the same way (a body that cannot be is a compile error), and
/// a `?` through a `#[track_caller]` `From` records the user's `?`.
///
/// A borrow of a `&mut` argument or `&mut self` can be returned only as a shared `&T` from an
/// attempt written inline (an `async fn`, a `#[track_caller]` sync fn), where rustc judges the
/// loop as without `#[retry]`. Any other (a sync fn's, a `&mut T`, a lifetime in a path or a
/// bound, `Self` carrying the `impl`'s lifetime) cannot be retried in today's Rust (the borrow
/// checker cannot see that the attempt which returns is the last): a return type that may hold
/// one is a compile error saying so. Return an owned value there.
///
/// Async functions sleep on tokio's timer (feature `tokio`, on by default) and measure
/// `max_elapsed` on tokio's clock, so `#[tokio::test(start_paused = true)]` runs them in no
/// real time:
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
/// Nothing cuts a running attempt unless `timeout` is set: then an attempt still running at
/// the limit is dropped and fails with `E::from(TimedOut)`, and `max_elapsed` becomes a hard
/// deadline (each attempt gets at most the time left). A sync function cannot be cut:
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
pub use retry_macro::retry;

#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use retry_runtime::http;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use retry_runtime::metrics;
#[cfg(feature = "reqwest")]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest")))]
pub use retry_runtime::reqwest;
#[cfg(feature = "sqlx")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlx")))]
pub use retry_runtime::sqlx;
pub use retry_runtime::{
    either, hedge, sleep, testing, timeout, transient, AcceptOk, Backoff, Budget, Classify,
    ClassifyOk, Decision, GiveUp, GiveUpHook, GiveUpReason, Hooks, Jitter, NoBudget, NoGiveUp,
    NoNotify, NoTrace, Notify, Policy, Retry, RetryAll, RetryBudget, RetryEvent, RetryState,
    Schedule, SharedBudget, TimedOut, Trace, Transient,
};
#[cfg(feature = "tracing")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
pub use retry_runtime::{tracer, Level, Render, Rendered, Tracer, Unrendered};

// The README's snippets, compiled and run as doc tests, with the features they use (the
// README's test command, `cargo test --workspace --all-features`).
#[cfg(all(doctest, feature = "tokio", feature = "reqwest", feature = "sqlx"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

#[doc(hidden)]
pub mod __private {
    pub use retry_runtime::__private::*;
}
