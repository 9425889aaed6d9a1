//! The `#[retry]` attribute, walked through: the waits its keys draw, what the function becomes,
//! the mistakes caught at compile time, and the closure API for where an attribute cannot go.
//! The keys themselves, their values, defaults and meaning, are the doc of
//! [`#[retry]`](macro@crate::retry).
//!
//! ```toml
//! [dependencies]
//! retry-jitter = "0.1"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! ```
//!
//! ```rust
//! use retry_jitter::{retry, RetryEvent};
//! use std::io;
//!
//! fn log_retry(e: &io::Error, ev: &RetryEvent) {
//!     eprintln!("{}: call {} failed ({e}); retrying in {:?}", ev.function, ev.attempt, ev.delay);
//! }
//!
//! // Each attempt is cut after 2 s, the whole call after 10 s; no `on`: `io::Error` classifies
//! // itself, so a refused connection is retried and `NotFound` is returned at once.
//! #[retry(attempts = 5, base = "100ms", cap = "2s", timeout = "2s", max_elapsed = "10s", notify = log_retry)]
//! async fn read_config(path: &str) -> io::Result<String> {
//!     tokio::fs::read_to_string(path).await
//! }
//!
//! #[tokio::main]
//! async fn main() {
//!     let err = read_config("/no/such/file.toml").await.unwrap_err();
//!     assert_eq!(err.kind(), io::ErrorKind::NotFound); // one call: waiting will not create it
//! }
//! ```
//!
//! # The keys
//!
//! Every key is optional; `#[retry]` alone uses the defaults. Their table, each key with its
//! values, its default and what it means, and the duration literals they take, is the doc of
//! [`#[retry]`](macro@crate::retry) itself.
//!
//! **Hooks an `async fn` awaits.** In an `async fn`, `notify`, `give_up` and `stats` also take an
//! async closure (`notify = async |e, ev| audit.write(e, ev).await`) or the path of an `async fn`
//! with the same arguments: it is awaited where a sync hook is called — `notify` after a retry's
//! error, before its wait is started; `give_up` and `stats` as the call ends, before it returns.
//! A sync hook is called from the loop as before, and costs what it cost. A hook's time is the
//! call's: a slow `notify` adds to each retry, and counts toward `max_elapsed` (the wait drawn before it is slept in full, and no
//! attempt starts past the deadline: the call then returns the error the hook was handed). An async
//! `notify` cannot be combined with `hedge` (its loop calls `notify` between attempts it keeps
//! running: give a sync one there); a sync fn cannot await (an async closure on one is a compile
//! error at the key). An awaited hook is handed `&E` across its `.await`: the function's future is `Send`
//! only if the error type is `Sync` as well (a sync hook asks only `Send`).
//!
//! ```rust
//! use retry_jitter::{retry, GiveUp, RetryEvent};
//!
//! async fn audit(e: &std::io::Error, ev: &RetryEvent) {
//!     // An async client, awaited before the wait: a queue, an audit log…
//!     tokio::task::yield_now().await;
//!     eprintln!("{}: attempt {} failed ({e}), retry in {:?}", ev.function, ev.attempt, ev.delay);
//! }
//!
//! #[retry(attempts = 3, base = "10ms", notify = audit, give_up = async |e, g: &GiveUp| {
//!     eprintln!("{}: gave up after {} calls: {e}", g.function, g.calls);
//! })]
//! async fn read_config() -> std::io::Result<String> {
//!     std::fs::read_to_string("Cargo.toml")
//! }
//!
//! #[tokio::main]
//! async fn main() {
//!     let _ = read_config().await;
//! }
//! ```
//!
//! # The waits
//!
//! Retry number `k` = 1, 2, …, `attempts − 1` is the (k+1)-th call. Its **ceiling** is
//! `c(k) = min(cap, base · 2^(k−1))`: with the defaults the first wait is under 200 ms, then
//! 400 ms, 800 ms, 1.6 s — the timeline of the AWS article "Exponential Backoff And Jitter". (That
//! article's sample code computes `base · 2^attempt` with `attempt` already 1 at the first retry,
//! so its first wait is drawn under 2·base; we follow its timeline.) Saturating arithmetic: no
//! panic and no overflow for any `k`, `base`, `cap`.
//!
//! | jitter | wait before retry k |
//! |---|---|
//! | `full` (default) | uniform in `[0, c(k)]` |
//! | `equal` | `c(k)/2 + uniform[0, c(k)/2]` |
//! | `decorrelated` | `min(cap, uniform[base, 3·max(prev, base)])`, `prev` starting at `base` (the AWS formula; a rate-limited wait draws from `rate_limited_base` in its place; once `3·prev` passes the cap most waits are clipped to exactly `cap`, so long-failing clients bunch up there again) |
//! | `none` | exactly `c(k)` |
//!
//! A server's hint, [`Decision::RetryAfter`](crate::Decision::RetryAfter) (HTTP `Retry-After`), is
//! a lower bound: the wait is the hint plus the jitter's draw for that retry, so clients given the
//! same hint do not return in lock-step. A hint longer than `cap`, or one past `max_elapsed`, ends
//! the retries with that error. [`Backoff`](crate::Backoff) is the same math as a value, its
//! schedule an iterator.
//!
//! # What the function becomes
//!
//! - The function's own error type comes back unchanged: the **last** error. No wrapper.
//! - `return` and `?` in the body end one *attempt*: an `Err` from them is retried like any other.
//! - **Success costs next to nothing**: when the first call succeeds, no clock is read (unless
//!   `max_elapsed` is set), no random number is drawn, nothing is allocated; the function's own
//!   budget counts the call with a load and a store on a counter only the calling thread writes.
//!   Once in its life, at the function's first call, the budget reads the clock (to date the
//!   calls it counts) and allocates its window; a thread's first call of any function claims its
//!   counter. None of it with `budget = none`; a `budget = &X` does what `X` does. By-value arguments the body uses are still cloned once per attempt,
//!   the first included: take them by reference where that matters.
//! - Arguments: `&T` is reused, `&mut T` re-borrowed per attempt, by-value ones cloned per attempt
//!   when the body uses them (one the body does not use, as `tries` in `attempts = tries`, is not,
//!   and need not be `Clone`; nor need an `impl AsRef<Path>` or `impl AsRef<str>`: each attempt is
//!   lent it). Receivers: `&self` and `&mut self` work; `self: Arc<Self>`, `Rc<Self>` and any
//!   `Clone` `self` are cloned per attempt; `self: Pin<&mut Self>` and a `self` whose `Self` is a
//!   `&mut T` are re-borrowed.
//! - Generics, `where` clauses, `impl Trait`, patterns, `mut` bindings, async fns in traits,
//!   `#[async_trait]` methods (the inner future is retried; with `#[tracing::instrument]` in either
//!   order) and functions made by `macro_rules!` work, and the expansion adds no warning the
//!   function would not have.
//! - The future of a retried `async fn` is `Send` whenever its body's is, whatever its `T` and `E`.
//!   One exception: with `max_elapsed` (or a `policy`, which may carry one) or `cancel`, the last
//!   outcome, a `Result<T, E>`, is kept through each wait (and, with `cancel`, through the next
//!   attempt), to be returned should the deadline pass or the token be cancelled, so `T` and `E`
//!   must be `Send` too. Where they are not, rustc says "future cannot be sent between threads
//!   safely", pointing at the attribute as the `.await` that holds the value. Dropping the future cancels cleanly, mid-call or mid-sleep. Panics are not caught.
//! - An `async fn`'s attempt is written inline in its retry loop, part of the function's own state
//!   machine. A body calling a macro that might hide a `return` (any but the standard library's,
//!   and `tracing::`/`log::` ones called through their crate) runs its attempt in a nested `async`
//!   block instead: the same behaviour, about 10 ns more per call
//!   ([BENCHMARKS.md](https://github.com/retry-jitter/retry-jitter/blob/main/BENCHMARKS.md)). Call
//!   `tracing::info!`, not a bare `info!`, to keep it inline.
//! - `#[track_caller]` on a sync fn works as without `#[retry]`: the loop is then written in the
//!   function, so the caller's location reaches the body (a body that would need a closure, with a
//!   macro that might hide a `return`, is a compile error naming that macro).
//! - **One shape cannot be retried in today's Rust**: returning a borrow taken from a `&mut`
//!   argument or `&mut self` (each attempt re-borrows it, and the borrow checker cannot see that
//!   the attempt which returns is the last). Only a shared `&T` from an attempt written inline (an
//!   `async fn`, a `#[track_caller]` sync fn) is allowed; any other (a sync fn's, a `&mut T`, a
//!   lifetime in a path or a bound, `Self` carrying the `impl`'s lifetime) is a compile error on
//!   the borrow. Return an owned value.
//!
//! # Mistakes caught at compile time
//!
//! Each is an error on the offending token that says what to write instead, and the function is
//! still emitted so call sites keep compiling: an unknown key (the valid ones listed), a duplicate
//! key, `attempts = 0` or `attempts = "3"`, a malformed duration, `cap` below `base`, `policy`
//! with a key it replaces, a function that does not return a `Result` (checked by type, so
//! `io::Result<T>` works), a by-value `self` or argument the body uses whose type is not `Clone`,
//! `const fn`, a trait method without a body, `sleep`, `clock`, `timeout` or `hedge` on a sync
//! fn, an error type without `From<TimedOut>` when `timeout` is set, `hedge` with a `&mut`
//! argument or `&mut self`, a `hedge` percentile outside `"p1"`–`"p99"`, an `async fn` with no
//! timer (no `tokio` feature and no `sleep`).
//!
//! # Where an attribute cannot go: the closure API
//!
//! [`Retry`](crate::Retry) runs the same loop around a closure (a third-party call, a call site
//! you cannot annotate), sync or async, with the same keys as builder methods:
//!
//! ```rust
//! use retry_jitter::{Policy, Retry};
//! use std::io;
//! use std::time::Duration;
//!
//! fn main() -> io::Result<()> {
//!     let policy = Policy::new().with_attempts(3).with_base(Duration::from_millis(10));
//!     let hosts = Retry::new(policy)
//!         .on(retry_jitter::transient) // without `.on`, every error is retried
//!         .call(|| std::fs::read_to_string("/etc/hosts"));
//!     match hosts {
//!         Ok(text) => println!("{} lines", text.lines().count()),
//!         Err(e) => println!("not retried: {e}"), // NotFound on a system without it
//!     }
//!     Ok(())
//! }
//! ```
//!
//! `Retry::new` retries every error until `.on(…)` says otherwise, whatever the error type:
//! unlike the attribute, it cannot see the error type where it is made. It has `.notify`,
//! `.give_up`, `.stats`, `.budget`, `.timeout`, `.hedge`, `.throttle`, `.breaker`, `.cancel`, `.on_ok`,
//! `.with_name`, and `call`, `call_with_attempt`, `call_async`, `call_async_with_attempt` (a
//! `Retry` with a timeout has no sync `call`); `call_with_stats` and `call_async_with_stats`
//! return the call's [`RetryStats`](crate::RetryStats) with its outcome.
//!
//! # Off tokio
//!
//! With default features off there is no default timer: give `sleep = path` an async
//! `fn(Duration)` of your runtime, and `clock = path` a `fn() -> Instant` if `max_elapsed` or
//! `timeout` should be measured on its clock. A sync function always sleeps with
//! `std::thread::sleep`.
