//! Bounding a call in time: `timeout` for each attempt, `max_elapsed` for the whole call, and a
//! caller's deadline.
//!
//! A retried call must end. Without a limit, an attempt that never answers — a server that accepts
//! the connection and says nothing, a body that stalls — holds the call forever, however few
//! `attempts` it has.
//!
//! ```toml
//! [dependencies]
//! retry-jitter = "0.1"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread", "time"] }
//! ```
//!
//! ```rust
//! use retry_jitter::{retry, GiveUp};
//! use std::time::{Duration, Instant};
//! use std::{future, io};
//!
//! fn log_give_up(e: &io::Error, g: &GiveUp) {
//!     println!("{}: {e} after {} calls ({})", g.function, g.calls, g.reason.as_str());
//! }
//!
//! // Each attempt is cut after 100 ms; the whole call after 250 ms, however many attempts are left.
//! #[retry(attempts = 10, base = "10ms", timeout = "100ms", max_elapsed = "250ms", give_up = log_give_up)]
//! async fn ask_a_server_that_never_answers() -> io::Result<String> {
//!     future::pending().await
//! }
//!
//! #[tokio::main]
//! async fn main() {
//!     let started = Instant::now();
//!     let err = ask_a_server_that_never_answers().await.unwrap_err();
//!     assert_eq!(err.kind(), io::ErrorKind::TimedOut); // io::Error: From<TimedOut>
//!     assert!(started.elapsed() < Duration::from_millis(400));
//! }
//! ```
//!
//! - **`timeout`** limits each attempt of an `async fn`. An attempt still running at the limit is
//!   dropped — its future cancelled, as a `select!` drops the branch that lost — and fails with
//!   `E::from(`[`TimedOut`](crate::TimedOut)`)`. From there it is a failure like any other: `on`
//!   classifies it (`TimedOut` is `Transient`, retried), and backoff, the budget, `notify`,
//!   `give_up` and tracing see it. The error type must implement `From<TimedOut>`: the crate does
//!   for `std::io::Error` (kind `TimedOut`) and for `retry_jitter::reqwest::Error`; for your own
//!   type add a variant. A type you do not own (`String`, `sqlx::Error`, `tonic::Status`) cannot
//!   be given it: wrap it in an error type of your own. Without it, the compile error is on the
//!   `timeout` key and says so.
//! - **`max_elapsed`** is the time budget of the whole call, from the first attempt. Alone, it is
//!   checked between attempts: a wait that would end past it is not slept, and after each wait it
//!   is checked again, so a timer that overslept buys no attempt past it — but it cannot cut an
//!   attempt that is running. **With `timeout` it is a hard deadline**: each attempt is limited to
//!   `min(timeout, time left)`, and an attempt cut by the deadline ends the call with
//!   `E::from(TimedOut)` and `GiveUpReason::Elapsed`.
//! - **A sync function cannot be cut**: a running sync call cannot be interrupted from outside, so
//!   `timeout` on a sync fn is a compile error. Set the timeout on the I/O itself
//!   (`TcpStream::set_read_timeout`, reqwest's `ClientBuilder::timeout`), or make the function
//!   `async`.
//! - **A caller's deadline**: inside a service under [`ChainLayer`](crate::tower::ChainLayer), every
//!   loop also keeps to the deadline the request brought, and passes what is left on to the next
//!   tier ([`chain`](crate::guide::chain)).
//!
//! The attempt is raced against a timer of its limit: the `sleep` the waits use (tokio's, or yours
//! with `sleep = path`), polled after the attempt, so an attempt that is ready at once is never
//! cut. The times are read on one clock:
//!
//! | function | timer | clock of `max_elapsed` and `timeout` |
//! |---|---|---|
//! | sync | `std::thread::sleep` | the monotonic system clock (moved forward by `testing::record_sleeps`) |
//! | `async`, feature `tokio` (default) | `tokio::time::sleep`, or `sleep = path` | tokio's `Instant::now()` — the paused clock in `#[tokio::test(start_paused = true)]`, the system clock off a runtime — or `clock = path` |
//! | `async`, no `tokio` feature | `sleep = path` (required) | the monotonic system clock, or `clock = path` |
//!
//! The clock is read at the first call only when `max_elapsed` (or a `policy`) is set; then at each
//! failure, after each wait, and, with `timeout`, at the start of each attempt. Without `timeout`
//! nothing changes on the success path: no timer, no clock read. With it, each attempt costs one
//! timer ([BENCHMARKS.md](https://github.com/retry-jitter/retry-jitter/blob/main/BENCHMARKS.md)).
//! The closure API has the same: `Retry::new(policy).timeout(Duration::from_secs(2)).call_async(|| …)`.
//!
//! # Cancelling
//!
//! A deadline ends a call when its time is up; a [`CancelToken`](crate::CancelToken) ends it when
//! the program says so — a shutdown, a user who gave up, a worker thread told to stop. Give the
//! call a token with `cancel = &TOKEN` (or `Retry::cancel(&token)` in the closure API); once
//! `token.cancel()` is called, from any thread:
//!
//! - a **wait between attempts ends at once**, a blocking one too (a sync function's wait sleeps on
//!   a condition variable the cancel wakes, not through the rest of its backoff);
//! - **no further attempt starts**, and no retry is announced (`notify` is not called, no budget
//!   share is taken; one taken for a wait the cancel cut short is given back);
//! - the call returns its **last error**, unchanged, and the `give_up` hook, the trace and the
//!   metrics hear [`GiveUpReason::Cancelled`](crate::GiveUpReason::Cancelled) (label `cancelled`).
//!
//! An attempt running when the token is cancelled: in an `async fn`, **an attempt after a
//! failure is dropped at once**, and the call returns the error before it (`Cancelled`). **The
//! first attempt always runs** to its end, even with a token already cancelled (a call must have
//! an error to return), and so does a **sync** attempt (a thread cannot be interrupted: the call
//! returns once it ends, its success if it succeeds) and a **hedged** call's attempts. To abandon
//! an `async` call during its first attempt, drop its future, for example in a `tokio::select!`
//! against [`token.cancelled()`](crate::CancelToken::cancelled).
//!
//! `CancelToken::new()` is a `const fn`, so a token can be a `static`; a clone is a reference
//! count, and shares the state of the token it was cloned from. Cancelling is for good.
//!
//! ```rust
//! use retry_jitter::{retry, CancelToken};
//! use std::time::Duration;
//!
//! static SHUTDOWN: CancelToken = CancelToken::new();
//!
//! #[retry(attempts = 10, base = "1s", cap = "1m", cancel = &SHUTDOWN)]
//! fn poll_queue() -> Result<u32, String> {
//!     Err("queue unreachable".into())
//! }
//!
//! fn main() {
//!     let worker = std::thread::spawn(poll_queue);
//!     std::thread::sleep(Duration::from_millis(50));
//!     SHUTDOWN.cancel(); // the worker's wait ends now, with the error it had
//!     assert_eq!(worker.join().unwrap(), Err("queue unreachable".to_string()));
//! }
//! ```
//!
//! A token given as an argument works the same (`cancel = token` for `token: &CancelToken`). With
//! `cancel`, the last outcome is kept through each wait and the next attempt (to be returned if
//! either is cancelled): a retried `async fn`'s future is then `Send` only if its `Result<T, E>`
//! is, `T` and `E` both (a generic `T` or `E` with no `Send` bound is not). Without `cancel` nothing
//! of it is compiled: no check, no clock, no cost on any path.
