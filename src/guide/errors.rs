//! Which errors are worth retrying: `on`, [`Decision`](crate::Decision) and
//! [`Transient`](crate::Transient), and what the hooks are told.
//!
//! ```toml
//! [dependencies]
//! retry-jitter = "0.1"
//! ```
//!
//! ```rust
//! use retry_jitter::{retry, Decision, GiveUp};
//! use std::time::Duration;
//!
//! #[derive(Debug)]
//! struct ApiError {
//!     status: u16,
//!     retry_after: Option<Duration>,
//! }
//!
//! fn classify(e: &ApiError) -> Decision {
//!     match (e.status, e.retry_after) {
//!         (429 | 503, Some(hint)) => Decision::RetryAfter(hint), // the server's hint: at least that
//!         (429, None) => Decision::RateLimited, // limited, no hint: ceilings from 1 s
//!         (500..=599, _) => Decision::Retry,
//!         _ => Decision::Stop, // a 4xx will not succeed by waiting
//!     }
//! }
//!
//! fn log_give_up(e: &ApiError, g: &GiveUp) {
//!     eprintln!("{}: {e:?}, given up after {} calls ({})", g.function, g.calls, g.reason.as_str());
//! }
//!
//! #[retry(attempts = 4, base = "10ms", on = classify, give_up = log_give_up)]
//! fn fetch_order(id: u64, statuses: &mut Vec<u16>) -> Result<String, ApiError> {
//!     match statuses.pop() {
//!         Some(status) => Err(ApiError { status, retry_after: None }),
//!         None => Ok(format!("order {id}")),
//!     }
//! }
//!
//! fn main() {
//!     // Two 503s, then a success: three calls.
//!     assert_eq!(fetch_order(7, &mut vec![503, 503]).unwrap(), "order 7");
//!     // A 404 is returned at once, the 503 below it never reached.
//!     assert_eq!(fetch_order(7, &mut vec![503, 404]).unwrap_err().status, 404);
//! }
//! ```
//!
//! # `on` and `Decision`
//!
//! `on` is a path or a closure `Fn(&E) -> D`, `D: Into<Decision>`. A `bool` converts (`true` is
//! `Decision::Retry`); a [`Decision`](crate::Decision) says more:
//!
//! - `Decision::Retry`: wait the jittered backoff and try again (within `attempts`, `max_elapsed`,
//!   the budget);
//! - `Decision::Stop`: return this error now;
//! - `Decision::RetryAfter(hint)`: the server said when (HTTP `Retry-After`, gRPC's pushback); the
//!   wait is the hint plus the jitter's draw, and a hint beyond `cap` (or past `max_elapsed`) ends
//!   the retries;
//! - `Decision::RateLimited`: the server is limiting the rate and said nothing of when (HTTP `429`,
//!   gRPC `RESOURCE_EXHAUSTED`, with no hint): the wait is drawn as for `Retry`, but from the
//!   policy's `rate_limited_base` (1 s unless `rate_limited_base = …` or
//!   `Policy::with_rate_limited_base` says otherwise) instead of `base`, under the same `cap`.
//!   The ceiling is higher, not every wait: a full-jitter draw may still be short.
//!
//! A blip and a "slow down" are different problems: the built-in tables (`http`, `reqwest`,
//! `tonic`) decide a `429` and a `RESOURCE_EXHAUSTED` without a hint as `RateLimited`, and read
//! AWS's `x-amz-retry-after` (milliseconds, at most 5 s) beside `Retry-After`.
//!
//! [`either(a, b)`](crate::either) retries when either classifier says so.
//!
//! # `Transient`: error types that classify themselves
//!
//! [`Transient`](crate::Transient) is the trait of an error type that knows which of its values are
//! worth retrying, `fn decision(&self) -> Decision`. **Without `on`, an error type that implements
//! it is classified by it**, decided at compile time with no bound asked of the type; any other type
//! (`String`, `anyhow::Error`, `Box<dyn Error>`, a generic `E`) is retried on every error. Both
//! cost nothing on the success path. `on = retry_jitter::transient` says the same explicitly, and
//! keeps saying it (a compile error) if the error type changes to one without `Transient`;
//! `on = |_| true` retries everything.
//!
//! The crate implements it for:
//!
//! | type | retried |
//! |---|---|
//! | `std::io::Error` | kinds `TimedOut`, `WouldBlock`, `Interrupted`, `ConnectionRefused`, `ConnectionReset`, `ConnectionAborted`, `NotConnected`, `BrokenPipe`, `UnexpectedEof`, `HostUnreachable`, `NetworkUnreachable`, `NetworkDown`; every other kind (`NotFound`, `PermissionDenied`, `InvalidInput`, `InvalidData`, …) fails the same way again and is not |
//! | [`TimedOut`](crate::TimedOut) | always (an attempt cut by `timeout`) |
//! | [`Throttled`](crate::Throttled), [`CircuitOpen`](crate::CircuitOpen) | never: `Decision::Stop` (retrying a local refusal only spins) |
//! | `retry_jitter::reqwest::Error`, `reqwest::Error` (feature `reqwest`) | see [`http_clients`](crate::guide::http_clients) |
//! | `tonic::Status` (feature `tonic`) | see [`grpc`](crate::guide::grpc) |
//! | `sqlx::Error` (feature `sqlx`) | by SQLSTATE, see [`databases`](crate::guide::databases) |
//!
//! Your own error type:
//!
//! ```rust
//! use retry_jitter::{retry, Decision, Transient};
//!
//! #[derive(Debug)]
//! enum StoreError {
//!     Busy,
//!     Corrupt,
//! }
//!
//! impl Transient for StoreError {
//!     fn decision(&self) -> Decision {
//!         match self {
//!             StoreError::Busy => Decision::Retry,
//!             StoreError::Corrupt => Decision::Stop,
//!         }
//!     }
//! }
//!
//! #[retry(base = "1ms")] // no `on`: `StoreError` classifies itself
//! fn load(calls: &mut u32, fail_with: fn() -> StoreError) -> Result<&'static str, StoreError> {
//!     *calls += 1;
//!     if *calls < 3 { Err(fail_with()) } else { Ok("loaded") }
//! }
//!
//! fn main() {
//!     let mut calls = 0;
//!     assert_eq!(load(&mut calls, || StoreError::Busy).unwrap(), "loaded");
//!     assert_eq!(calls, 3);
//!
//!     let mut calls = 0;
//!     assert!(matches!(load(&mut calls, || StoreError::Corrupt), Err(StoreError::Corrupt)));
//!     assert_eq!(calls, 1);
//! }
//! ```
//!
//! # What the hooks are told
//!
//! - `notify`, before each wait, is given the error and a [`RetryEvent`](crate::RetryEvent):
//!   `attempt` (the 1-based number of the call that just failed), `delay` (the wait about to be
//!   slept), `function` (the retried function's name; for a method, its own name), `attempts` (the
//!   calls allowed), `hedge` (`true` for a hedge, [`hedging`](crate::guide::hedging)) and `ok` (`true` for
//!   an `Ok` value retried by `on_ok`).
//! - `give_up`, once, when retrying ends with an error, is given the error and a
//!   [`GiveUp`](crate::GiveUp): `reason`, a [`GiveUpReason`](crate::GiveUpReason) (`Attempts`
//!   spent, `Elapsed` — `max_elapsed` reached —, `BudgetEmpty`, `Stopped` by `Decision::Stop`,
//!   `HintBeyondCap`, `Throttled`, `CircuitOpen`, `Cancelled` by a `CancelToken`; `.as_str()`
//!   for a log line, `.label()` for a metric label), `calls` (the calls made, the first
//!   included), `function` and `ok`.
//! - A closure `Fn(&E, &RetryEvent)` is one kind of [`Notify`](crate::hooks::Notify); a type of
//!   your own implementing it also hears of hedges (`Notify::hedge`) and retried `Ok` values
//!   (`Notify::retry_ok`). [`GiveUpHook`](crate::hooks::GiveUpHook) is the same for `give_up`
//!   (`GiveUpHook::give_up_ok`).
