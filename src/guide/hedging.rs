//! Cutting the slow tail: a second attempt started beside a slow one.
//!
//! Retries fix errors; hedging fixes slowness. When a call's latency has a heavy tail — most answers
//! in 10 ms, one in two hundred after about a second — the slowest calls spend their time waiting
//! on one slow answer. A hedge sends a second copy of the call once the first has taken longer than
//! nearly every call does, and keeps whichever answers first.
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
//! use std::time::{Duration, Instant};
//!
//! // Attempt 1 stalls for a second; a hedge started after 50 ms answers in 10 ms.
//! #[retry(hedge = "50ms", attempts = 3, timeout = "2s", attempt = n)]
//! async fn fetch_price(sku: &str) -> io::Result<String> {
//!     let took = if n == 1 { 1000 } else { 10 };
//!     tokio::time::sleep(Duration::from_millis(took)).await;
//!     Ok(format!("{sku}: 9.99 (attempt {n})"))
//! }
//!
//! #[tokio::main]
//! async fn main() -> io::Result<()> {
//!     let started = Instant::now();
//!     let price = fetch_price("A-1").await?;
//!     assert_eq!(price, "A-1: 9.99 (attempt 2)"); // the hedge won; attempt 1 was dropped
//!     assert!(started.elapsed() < Duration::from_millis(500));
//!     println!("{price} after {:?}", started.elapsed());
//!     Ok(())
//! }
//! ```
//!
//! - **An attempt that has not answered after the hedge delay gets the next one started beside
//!   it**; the earlier one keeps running. The first success is returned and the attempts still
//!   running are dropped (cancelled) at once. At most `attempts` calls in all, hedges included. A
//!   retryable error does not end the call while another attempt runs; when none runs, the next
//!   waits the usual jittered backoff. `Decision::Stop` ends the call and drops the others.
//!   `timeout` limits each attempt; with `max_elapsed` the deadline cuts them all.
//! - **Hedge only what is safe to do twice**: reads, and writes the server makes idempotent (an
//!   idempotency key, a conditional update). **Never a non-idempotent write**: dropping the losing
//!   attempt cancels the client's future, not the server's work, so both copies may be applied.
//!   Hedged attempts run at the same time and share the arguments by reference or clone them: a
//!   `&mut` argument or `&mut self` is a compile error (on the argument), as is an
//!   `impl AsRef<Path>` argument (take `&Path`), and `hedge` on a sync fn (on the key). The
//!   middleware faces never hedge a request the method rule does not let send twice
//!   ([`writes`](crate::guide::writes)).
//! - **What it costs**: each hedge is one more call to the service, counted against `attempts`,
//!   and takes a `budget` token like a retry (no token, no hedge). With `hedge` set, a first
//!   attempt that answers before the delay costs one timer, made but never polled — no clock read
//!   for a fixed delay, no allocation; the hedging loop itself is made (boxed) only once the first
//!   attempt fails or the delay passes, and hedges are boxed. Without `hedge` nothing changes.
//! - **`hedge = "50ms"`** (or a `Duration` expression, `hedge = self.hedge_after`) is a fixed
//!   delay: set it near the function's measured 95th percentile. **`hedge = "p95"`** (any
//!   `"p1"`–`"p99"`) follows the function's recent latency: each annotated function keeps a
//!   static, lock-free histogram of its attempts' latencies — 128 atomic buckets (520 bytes), four
//!   per doubling of latency, recording a few relaxed atomic adds — whose counts are halved every
//!   1,000 samples, so the last few thousand attempts weigh most; there is no hedge before it has
//!   seen 50. The delay is the upper edge of the percentile's bucket: a hedge starts a little late
//!   rather than early. Attempts a hedge beat are dropped unfinished and not counted.
//! - **Hooks**: a `notify` closure, `Fn(&E, &RetryEvent)`, is not told of hedges (a hedge has no
//!   error to show). Tracing logs each one (`hedging`, with its delay), the metrics count it
//!   (`retry_jitter_hedges_total`), `GiveUp::calls` includes it, and a
//!   [`Notify`](crate::hooks::Notify) type of one's own hears of it in its `hedge` method, with
//!   `RetryEvent { hedge: true, .. }`.
//! - **Server hints**: a `Retry-After` beyond `cap` (or past `max_elapsed`) ends a hedged call too,
//!   with `GiveUpReason::HintBeyondCap` (`Elapsed`), the other attempts dropped; one within the cap
//!   delays the next hedge to at least the hint.
//!
//! The closure API runs the same loop, told when to hedge by a [`Hedge`](crate::hedge::Hedge):
//! `Hedge::After(delay)`, or `Hedge::Percentile(&LATENCY, 95)` with a
//! `static LATENCY: LatencyHistogram = LatencyHistogram::new();` the loop records into; then
//! `Retry::new(policy).hedge(…).call_async(…)`. `RetryLayer` and `RetryMiddleware` take the same
//! `.hedge(…)`.
//!
//! What it buys, in the herd's tail model (100,000 calls, 0.5% of attempts stalling for 0.5–1.5 s):
//! hedging at the 95th percentile cuts the 99.9th percentile 38-fold, from 1,310.8 ms to 34.7 ms,
//! for 4.7% more calls. The table and chart are in [`simulations`](crate::guide::simulations).
