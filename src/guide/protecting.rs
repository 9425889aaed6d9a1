//! Keeping retries from overloading the service they retry: retry budgets, adaptive throttling
//! and a circuit breaker.
//!
//! Per-call limits (`attempts`, `max_elapsed`) still let every caller multiply the load on a
//! service that is down: with 4 attempts, each failing call makes 4 calls. The guards here are
//! shared by many calls, usually as `static`s, and decide from what all of them saw.
//!
//! ```toml
//! [dependencies]
//! retry-jitter = "0.1"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread", "time"] }
//! ```
//!
//! `cargo run --example guide_protecting` runs this program, 200 calls to a service that is down,
//! then 200 once it is back:
//!
//! ```rust,no_run
#![doc = include_str!("../../examples/guide_protecting.rs")]
//! ```
//!
//! ```text
//! the service down: 200 calls, 0 answered, 40 attempts reached it (up to 800 without a budget or a breaker)
//!   how they ended: {"attempts spent": 6, "circuit open": 180, "retry budget empty": 14}
//! the service back: 200 calls, 200 answered, 200 attempts reached it
//! ```
//!
//! # Retry budgets
//!
//! ## On by default
//!
//! Every `#[retry]` function has a budget of its own unless given another: a
//! [`DefaultBudget`](crate::budget::DefaultBudget), one per annotated function (whatever its generic
//! arguments), which allows retries while, over the last 10 s, they stay within **20% of the
//! function's calls plus 10 a second** — the shape of the budgets reqwest, Linkerd, Finagle and
//! Gateway API turn on. A [`Retry`](crate::Retry) has one too, shared with its clones, and the
//! tower and reqwest middleware have one **per host** (the request's authority, in a table of
//! bounded size). A handful of calls retries exactly as without it (the floor is 100 retries in
//! any 10 s); a fleet of callers facing a dependency that is down sends it at most 1.2 attempts
//! per call plus the floor, where 5 attempts each would send 5. A retry it refuses ends the call
//! with its last error, `GiveUpReason::BudgetEmpty`, as any budget's refusal does.
//!
//! Change it per function: `budget = &X` shares the budget `X` instead (the kinds below), and
//! `budget = none` has none at all (every call makes its attempts whatever the others do);
//! `.budget(&X)` and `.budget_none()` on a `Retry`, a `RetryLayer` or a `RetryMiddleware`.
//!
//! ```rust
//! use retry_jitter::retry;
//! use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
//!
//! static SENT: AtomicU32 = AtomicU32::new(0);
//!
//! #[retry(base = "0ns")] // its own budget: 20% of its calls, plus 10 retries a second
//! fn down() -> Result<(), u32> {
//!     SENT.fetch_add(1, Relaxed);
//!     Err(503)
//! }
//!
//! #[retry(base = "0ns", budget = none)] // no budget: 5 attempts, every call
//! fn down_no_budget() -> Result<(), u32> {
//!     SENT.fetch_add(1, Relaxed);
//!     Err(503)
//! }
//!
//! fn main() {
//!     for _ in 0..1_000 {
//!         let _ = down();
//!     }
//!     assert_eq!(SENT.swap(0, Relaxed), 1_000 + 300); // retries: the floor's 100, 20% of 1,000
//!     for _ in 0..1_000 {
//!         let _ = down_no_budget();
//!     }
//!     assert_eq!(SENT.load(Relaxed), 5_000);
//! }
//! ```
//!
//! Its success path is one atomic add on a counter of the calling thread's own (no clock, no
//! shared cache line): the figures are in `BENCHMARKS.md`.
//!
//! ## The kinds of budget
//!
//! - [`RetryBudget`](crate::RetryBudget) (the AWS SDKs' retry quota) for a **client**: a lock-free
//!   token bucket, `const`-constructible for a `static`. `RetryBudget::new(500)` is their shape: a
//!   retry costs 5 tokens (`with_retry_cost`; `with_costs(retry, rate_limited)` prices a retry
//!   after a `Decision::RateLimited` apart), a first-try success gives 1 back
//!   (`with_success_reward`), a success after retries gives back what it took. When it is empty,
//!   errors are returned without retrying (`GiveUpReason::BudgetEmpty`): a client facing a
//!   dependency that is down stops retrying after a burst and fails fast until calls succeed
//!   again. The first call is always made.
//! - [`RatioBudget`](crate::RatioBudget) (Finagle's) for a **service's outbound calls**: retries
//!   stay within a share of the calls made over a window, plus a floor per second so that a quiet
//!   service can still retry its rare failure. However much traffic comes in, the dependency sees
//!   at most `1 + ratio` times it.
//!
//! ```rust
//! use retry_jitter::{retry, RatioBudget};
//! use std::io;
//! use std::time::Duration;
//!
//! // At most 20% more calls, plus 10 retries a second, over the last 10 s.
//! static UPSTREAM: RatioBudget = RatioBudget::new(0.2, 10, Duration::from_secs(10));
//!
//! #[retry(attempts = 4, base = "1ms", budget = &UPSTREAM)]
//! fn call_upstream(fail: bool) -> io::Result<&'static str> {
//!     if fail { Err(io::ErrorKind::ConnectionReset.into()) } else { Ok("ok") }
//! }
//!
//! fn main() {
//!     for _ in 0..100 {
//!         call_upstream(false).unwrap();
//!     }
//!     // 100 calls made: the floor's 10 and 20% of them, and no more, may be retries.
//!     for _ in 0..100 {
//!         let _ = call_upstream(true);
//!     }
//! }
//! ```
//!
//! A token taken for a retry that never runs — the future dropped during the wait, a hook that
//! panicked, the deadline passed — is given back. A budget of your own implements
//! [`SharedBudget`](crate::budget::SharedBudget).
//!
//! ## Recipe: the AWS SDKs' 2026 retry behaviour
//!
//! The AWS SDKs back off from 50 ms after a transient error and from 1 s after throttling, and
//! charge their 500-token quota 14 for a retry and 5 for one after throttling. The same here: a
//! `base`, a `rate_limited_base` (the base after a `Decision::RateLimited`, which the built-in
//! tables give a `429` or a `RESOURCE_EXHAUSTED` without a hint) and a budget priced by kind.
//! AWS's `x-amz-retry-after` header is read beside `Retry-After` (in milliseconds, at most 5 s).
//!
//! ```rust
//! use retry_jitter::{retry, Decision, RetryBudget};
//! use std::time::Duration;
//!
//! static QUOTA: RetryBudget = RetryBudget::new(500).with_costs(14, 5);
//!
//! #[derive(Debug)]
//! enum AwsError { Throttling, Transient, Fatal }
//!
//! fn classify(e: &AwsError) -> Decision {
//!     match e {
//!         AwsError::Throttling => Decision::RateLimited,
//!         AwsError::Transient => Decision::Retry,
//!         AwsError::Fatal => Decision::Stop,
//!     }
//! }
//!
//! #[retry(attempts = 3, base = "50ms", rate_limited_base = "1s", cap = "20s", on = classify, budget = &QUOTA)]
//! async fn put_item(answers: &mut Vec<AwsError>) -> Result<&'static str, AwsError> {
//!     match answers.pop() {
//!         Some(e) => Err(e),
//!         None => Ok("stored"),
//!     }
//! }
//!
//! #[tokio::main(flavor = "current_thread", start_paused = true)]
//! async fn main() {
//!     let started = tokio::time::Instant::now();
//!     let mut answers = vec![AwsError::Transient, AwsError::Throttling];
//!     assert_eq!(put_item(&mut answers).await.unwrap(), "stored");
//!     // A throttled attempt waited up to 1 s, a transient one up to 100 ms (its exponent is 2).
//!     assert!(started.elapsed() <= Duration::from_millis(1100));
//!     assert_eq!(QUOTA.available(), 500); // a success gives back what its retries took
//! }
//! ```
//!
//! # Stop sending: adaptive throttling and a circuit breaker
//!
//! A budget limits *retries*. When the service is overloaded by *first attempts* (its capacity
//! dropped, a dependency of its own is slow), only the client can shed them:
//!
//! - **[`AdaptiveThrottle::new(k, window)`](crate::AdaptiveThrottle)** (Google's SRE book,
//!   "Handling Overload"): every attempt asks it first, and it rejects locally with probability
//!   `max(0, (requests − k·accepts) / (requests + 1))` over the trailing window. It counts answers
//!   as gRPC's throttler does: an attempt the service answered — an `Ok`, or an error `on` says
//!   `Decision::Stop` to (a 4xx is an answer) — is a request and an accept; a retryable error or a
//!   timeout is a request alone, and so is an attempt rejected here. An attempt in flight, or one
//!   dropped before its answer (a losing hedge, the caller's own timeout), counts for nothing. So
//!   while the service answers every call nothing is rejected, however many calls are in flight;
//!   when it answers nothing, the client sheds nearly all of its own load, and lets a trickle
//!   through to see it come back. `k = 2` is the book's.
//! - **[`CircuitBreaker::new(failure_ratio, min_calls, window, break_for)`](crate::CircuitBreaker)**
//!   counts **calls, not attempts**: a call that ended in a retryable failure after its retries is
//!   one failure; an `Ok` or a `Decision::Stop` is a success. When at least `min_calls` calls ended
//!   in the window and `failure_ratio` of them failed, it opens: calls fail at once with
//!   `E::from(CircuitOpen)`, the body not called, for `break_for`; then one probe call goes through
//!   (half-open), whose success closes it and whose failure opens it again. While half-open, the
//!   first call to end decides (a call begun before the breaker opened counts too), and a probe
//!   whose future is dropped is replaced after another `break_for`.
//!
//! ```rust
//! use retry_jitter::{retry, AdaptiveThrottle, Throttled};
//! use std::io;
//! use std::time::Duration;
//!
//! static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(60));
//!
//! #[retry(attempts = 3, base = "1ms", throttle = &THROTTLE)]
//! fn send(down: bool) -> io::Result<()> {
//!     if down { Err(io::ErrorKind::ConnectionRefused.into()) } else { Ok(()) }
//! }
//!
//! fn main() {
//!     // While the service answers, nothing is refused.
//!     for _ in 0..50 {
//!         send(false).unwrap();
//!     }
//!     // Down: once requests pass twice the accepts, attempts are refused here, not sent.
//!     let refused = (0..200)
//!         .filter(|_| send(true).is_err_and(|e| e.get_ref().is_some_and(|e| e.is::<Throttled>())))
//!         .count();
//!     println!("{refused} of 200 calls refused by the throttle");
//! }
//! ```
//!
//! [`Throttled`](crate::Throttled) and [`CircuitOpen`](crate::CircuitOpen) are small error types
//! like [`TimedOut`](crate::TimedOut); both are `Transient` as `Decision::Stop`, and
//! `std::io::Error` and `retry_jitter::reqwest::Error` have `From` for them. For an error type that
//! is not yours (`String`), wrap it in one of your own: the compile error on the key says so. A
//! refused call is reported to `give_up` with `GiveUpReason::Throttled` or
//! `GiveUpReason::CircuitOpen`, and counted in the metrics ([`observability`](crate::guide::observability)).
//! The closure API has `Retry::throttle(&T)` and `Retry::breaker(&B)`; a throttled hedge is not
//! started, and the attempts running go on.
//!
//! # Retry at one layer
//!
//! Retries multiply across layers: a call through 5 services that each make 3 attempts reaches the
//! last one up to 3⁵ = **243** times. Retry where the decision is best informed — usually the layer
//! closest to the user, or the one that owns the operation's idempotency — and let the layers below
//! fail fast (`attempts = 1`, or a budget of their own). Between services, `ChainLayer` does it for
//! you ([`chain`](crate::guide::chain)).
//!
//! [`simulations`](crate::guide::simulations) measures each guard against an outage under real traffic,
//! and tells which to pick.
