//! Testing code that retries: reproducible waits, sync waits recorded instead of slept, async
//! waits in no real time.
//!
//! ```toml
//! [dependencies]
//! retry-jitter = "0.1"
//! # `test-util` pauses the clock; in a crate's tests, this line goes under [dev-dependencies].
//! tokio = { version = "1", features = ["macros", "rt", "time", "test-util"] }
//! ```
//!
//! A sync function: [`testing::seed_jitter`](crate::testing::seed_jitter) makes this thread's
//! waits reproducible, and [`testing::record_sleeps`](crate::testing::record_sleeps) runs a closure
//! with its waits recorded, not slept (the clock `max_elapsed` reads moves forward by them):
//!
//! ```rust
//! use retry_jitter::{retry, testing};
//! use std::io;
//!
//! #[retry(attempts = 3, base = "1s")]
//! fn connect() -> io::Result<()> {
//!     Err(io::ErrorKind::ConnectionRefused.into())
//! }
//!
//! fn main() {
//!     testing::seed_jitter(7); // reproducible waits on this thread
//!     let (result, waits) = testing::record_sleeps(connect); // the two waits, not slept
//!     assert!(result.is_err());
//!     assert_eq!(waits.len(), 2);
//!     assert!(waits[0].as_secs_f64() <= 1.0 && waits[1].as_secs_f64() <= 2.0); // under base, 2·base
//!
//!     testing::seed_jitter(7);
//!     let (_, again) = testing::record_sleeps(connect);
//!     assert_eq!(waits, again); // the same seed, the same waits
//! }
//! ```
//!
//! An `async fn` on tokio sleeps on tokio's timer and measures `max_elapsed` and `timeout` on
//! tokio's clock, so a paused runtime — `#[tokio::test(start_paused = true)]` in a test, as here
//! `#[tokio::main(flavor = "current_thread", start_paused = true)]` — runs a minute of backoff in
//! no real time:
//!
//! ```rust
//! use retry_jitter::retry;
//! use std::io;
//! use std::time::Duration;
//!
//! #[retry(attempts = 6, base = "10s", cap = "1m", max_elapsed = "5m")]
//! async fn fetch() -> io::Result<String> {
//!     Err(io::ErrorKind::ConnectionReset.into())
//! }
//!
//! #[tokio::main(flavor = "current_thread", start_paused = true)]
//! async fn main() {
//!     let started = tokio::time::Instant::now();
//!     let real = std::time::Instant::now();
//!     assert!(fetch().await.is_err());
//!     assert!(started.elapsed() <= Duration::from_secs(10 + 20 + 40 + 60 + 60)); // tokio's clock
//!     assert!(real.elapsed() < Duration::from_secs(1)); // and hardly any real time
//! }
//! ```
//!
//! This holds with a `sleep` of your own on tokio too. To count the calls and check what was
//! retried, a `notify` or `give_up` hook ([`errors`](crate::guide::errors)) in the test, or an `attempt = n`
//! binding, tells each attempt apart; `tests/` in the repository has the crate's own tests in this
//! style.
