//! Polling until a value is ready (`on_ok`), and failing over across replicas (`attempt = n`).
//!
//! ```toml
//! [dependencies]
//! retry-jitter = "0.1"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread", "time"] }
//! ```
//!
//! ```rust
//! use retry_jitter::retry;
//! use std::io;
//! use std::sync::atomic::{AtomicU32, Ordering};
//!
//! #[derive(Debug, PartialEq)]
//! enum Job {
//!     Pending,
//!     Done(String),
//! }
//!
//! static POLLS: AtomicU32 = AtomicU32::new(0);
//!
//! // `Ok(Job::Pending)` is polled again with the same backoff; an error is classified as ever.
//! #[retry(attempts = 20, base = "10ms", cap = "100ms", max_elapsed = "2s", on_ok = |job: &Job| *job == Job::Pending)]
//! async fn wait_for(id: u64) -> io::Result<Job> {
//!     match POLLS.fetch_add(1, Ordering::SeqCst) {
//!         0 | 1 => Ok(Job::Pending),
//!         _ => Ok(Job::Done(format!("report {id}"))),
//!     }
//! }
//!
//! // Attempt n goes to replica n: the first is down, the second answers.
//! #[retry(attempts = 3, base = "10ms", attempt = n)]
//! async fn submit(replicas: &[&str]) -> io::Result<String> {
//!     let replica = replicas[(n - 1) as usize % replicas.len()];
//!     if replica == "a.internal" {
//!         return Err(io::ErrorKind::ConnectionRefused.into());
//!     }
//!     Ok(format!("submitted to {replica} on attempt {n}"))
//! }
//!
//! #[tokio::main]
//! async fn main() -> io::Result<()> {
//!     assert_eq!(wait_for(7).await?, Job::Done("report 7".into())); // pending twice, then done
//!     assert_eq!(POLLS.load(Ordering::SeqCst), 3);
//!     let replicas = ["a.internal", "b.internal", "c.internal"];
//!     assert_eq!(submit(&replicas).await?, "submitted to b.internal on attempt 2");
//!     Ok(())
//! }
//! ```
//!
//! **`on_ok`** retries a value, not an error: a job that is still `Pending`, a `200` whose body
//! says "not ready". The value goes through the same loop as a retryable error — the backoff and
//! its jitter, `attempts`, `max_elapsed`, `timeout`, `budget`, hedging, and a
//! `Decision::RetryAfter` from the predicate is a server hint — and when retrying ends on one
//! (attempts spent, the deadline, the budget), the function returns that last `Ok`, its own value,
//! never an invented error. Without `on_ok` nothing changes; with it, an accepted first value costs
//! one call of the predicate and nothing else.
//!
//! **`attempt = n`** names the number of the attempt running (1, 2, …; each hedge gets its own),
//! for failing over across replicas, tagging an attempt in a header (as gRPC's
//! `grpc-previous-rpc-attempts`) or logging it; it costs nothing on the success path.
//!
//! `cargo run --example failover --features reqwest` runs both against three HTTP replicas on
//! loopback, the first one down. The closure API has the same: `Retry::on_ok(pred)`,
//! `Retry::call_with_attempt(|n| …)` and `call_async_with_attempt(|n| async move { … })`.
//!
//! Hooks hear of a retried value as of a retried error, but without an error to show:
//! `RetryEvent::ok` and `GiveUp::ok` are `true`; a `notify` or `give_up` closure (`Fn(&E, …)`) is
//! not called for it, while a `Notify` or `GiveUpHook` type of your own is, through
//! `Notify::retry_ok` and `GiveUpHook::give_up_ok`; the trace says "retrying on an Ok value" (with
//! the value's `Debug`, where its type has one), and the metrics count it in
//! `retry_jitter_retries_total` and the give-ups by reason.
