//! Seeing retries: logs through `tracing`, metrics through the `metrics` facade, and OpenTelemetry.
//!
//! ```toml
//! [dependencies]
//! retry-jitter = { version = "0.1", features = ["tracing", "metrics"] }
//! tracing-subscriber = { version = "0.3", features = ["env-filter"] }
//! metrics-exporter-prometheus = "0.17"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! ```
//!
//! `RUST_LOG=retry_jitter=debug cargo run --example guide_observability --features tracing,metrics`
//! runs this program:
//!
//! ```rust,no_run
#![doc = include_str!("../../examples/guide_observability.rs")]
//! ```
//!
//! and prints (timestamps cut):
//!
//! ```text
//!  WARN retry_jitter: retrying function="fetch_config" attempt=1 delay_ms=19 error=connection reset
//!  WARN retry_jitter: retrying function="fetch_config" attempt=2 delay_ms=20 error=connection reset
//!  INFO retry_jitter: recovered function="fetch_config" calls=3 elapsed_ms=42
//! app.toml: ok
//!  WARN retry_jitter: retrying function="fetch_flags" attempt=1 delay_ms=14 error=connection refused
//!  WARN retry_jitter: retrying function="fetch_flags" attempt=2 delay_ms=22 error=connection refused
//!  WARN retry_jitter: retrying function="fetch_flags" attempt=3 delay_ms=45 error=connection refused
//!  WARN retry_jitter: giving up function="fetch_flags" calls=4 reason="attempts spent" error=connection refused
//! connection refused
//!
//! what a Prometheus scrape of /metrics would read:
//!   retry_jitter_recovered_total{function="fetch_config"} 1
//!   retry_jitter_give_ups_total{function="fetch_flags",reason="attempts"} 1
//!   retry_jitter_retries_total{function="fetch_config"} 2
//!   retry_jitter_retries_total{function="fetch_flags"} 3
//!   retry_jitter_retry_delay_seconds_sum{function="fetch_config"} 0.039658141
//!   retry_jitter_retry_delay_seconds_count{function="fetch_config"} 2
//!   retry_jitter_retry_delay_seconds_sum{function="fetch_flags"} 0.082785823
//!   retry_jitter_retry_delay_seconds_count{function="fetch_flags"} 3
//! ```
//!
//! # Logs (feature `tracing`)
//!
//! Every event has the target `retry_jitter`: `RUST_LOG=retry_jitter=debug` shows them all,
//! `RUST_LOG=retry_jitter=warn` the retries and give-ups alone. Without the feature no tracing
//! code is compiled.
//!
//! | event (message) | level | fields |
//! |---|---|---|
//! | `retrying` | `trace_level` (WARN by default) | `function`, `attempt` (the call that failed, 1-based), `delay_ms` (the wait, whole milliseconds), `error` |
//! | `retrying on an Ok value` (`on_ok`) | `trace_level` | `function`, `attempt`, `delay_ms`, `value` |
//! | `hedging` | `trace_level` | `function`, `attempt`, `delay_ms` (the hedge delay) |
//! | `recovered`: a call that succeeded after retries | one level below `trace_level` (INFO by default) | `function`, `calls`, `elapsed_ms` (from the call's start when it has a `max_elapsed`, else from its first failure, so the success path still reads no clock) |
//! | `giving up` | `trace_level` | `function`, `calls`, `reason` (`GiveUpReason::as_str`), `error` |
//! | `giving up on an Ok value` | `trace_level` | `function`, `calls`, `reason`, `value` |
//!
//! `error` is rendered with `Display` when the error type has it, else `Debug`, else left out —
//! chosen at compile time, with no bound asked of your error type (`value` likewise with `Debug`).
//! `#[retry(trace_level = debug)]` sets the level per function; the closure API's
//! `Retry::trace(tracing::Level::WARN)` turns the events on for its calls (without `error`: a
//! closure API call knows nothing of its error type). A first-call success logs nothing.
//!
//! **The middleware faces.** `RetryLayer` and `RetryMiddleware` emit the same events (feature
//! `tracing`, no setting needed; `.trace(level)` sets their level, `WARN` by default, `recovered`
//! one below), with `function` their name (`"tower"`, `"reqwest"`, or `.with_name(..)`): `error` is
//! the error's `Display` or, for a response retried for its status, `status 503 Service
//! Unavailable`; a response a user's `on_ok` retries (a poll) shows no `value`. And one more:
//!
//! | event (message) | level | fields |
//! |---|---|---|
//! | `not sent again`: the write rule keeps a request from being sent again (a `POST` without an idempotency key answered with what may have been applied, or a body it cannot replay) | the face's level | `function`, `request` (`METHOD scheme://host[:port]/path`), `why` |
//!
//! What an event says of a request is its method, scheme, host and path: never its query string,
//! its user info, a header value (an `Authorization` header does not reach a log) or a body; of a
//! response, its status. A breaker's change is `circuit breaker` (WARN, `function`, `state`).
//! Each resend runs in the span `retry_attempt` (below). Every event's and span's module path is
//! `retry_jitter` too, and none names a file: a JSON subscriber or `.with_file(true)` prints the
//! crate, not its insides.
//!
//! | face | events | metrics | figures |
//! |---|---|---|---|
//! | `#[retry]` | all of the above (`trace_level`) | all below | `stats = hook` |
//! | `Retry` (closure API) | with `.trace(level)`, without `error` | all below | `.stats(hook)`, `call_with_stats` |
//! | `RetryLayer` | all of the above, `not sent again`, the `retry_attempt` span | all below | `.stats(hook)`, `.stats_in_response()` |
//! | `RetryMiddleware` | the same | all below | the same |
//!
//! # Metrics (feature `metrics`)
//!
//! Through the [`metrics`](https://docs.rs/metrics) facade: install any exporter (Prometheus,
//! StatsD, OpenTelemetry…). Every metric has the label `function` (the function's name, or the
//! closure API's `with_name`):
//!
//! | metric | kind | what |
//! |---|---|---|
//! | `retry_jitter_retries_total` | counter | one per retry: a wait started after an error (or a retried `Ok`) |
//! | `retry_jitter_hedges_total` | counter | one per hedge started |
//! | `retry_jitter_recovered_total` | counter | calls that succeeded after a failed or hedged call |
//! | `retry_jitter_give_ups_total` | counter, label `reason` | calls that ended in an error: `attempts`, `elapsed`, `budget_empty`, `stopped`, `hint_beyond_cap`, `throttled`, `circuit_open`, `cancelled` (`GiveUpReason::label`) |
//! | `retry_jitter_retry_delay_seconds` | histogram | each wait, in seconds |
//! | `retry_jitter_throttled_total` | counter | attempts the adaptive throttle refused |
//! | `retry_jitter_breaker_open_total` | counter | times a circuit breaker opened |
//! | `retry_jitter_breaker_state` | gauge | a breaker's state as the function that changed it last saw it: 0 closed, 1 open, 2 half-open |
//!
//! A first-call success reports nothing. `cargo run --example web_service --features
//! reqwest,metrics` serves them at `GET /metrics` from an axum service and prints what it scrapes.
//!
//! # OpenTelemetry
//!
//! - **Traces**: the events above are `tracing` events; `tracing-opentelemetry`'s layer sends them
//!   to an OpenTelemetry exporter with the span they happened in. `RetryLayer` and
//!   `RetryMiddleware` (feature `tracing`) run each resend in a span `retry_attempt` carrying
//!   OpenTelemetry's stable `http.request.resend_count` (1, 2, …), so a trace shows every attempt
//!   of one logical request; the first attempt has none.
//! - **Metrics**: any exporter of the `metrics` facade; an OpenTelemetry bridge of it reports the
//!   names above.
//!
//! # Hooks of your own
//!
//! `notify` and `give_up` ([`errors`](crate::guide::errors)) are called with the error and a
//! `RetryEvent` or `GiveUp`, for a log line or a counter of your own. On `RetryLayer` and
//! `RetryMiddleware` they are told a [`Failed`](crate::http::Failed) instead of the error: the
//! face's error, or the status of a response retried for it ([`http_clients`](crate::guide::http_clients)).
//!
//! # A call's figures
//!
//! `stats = hook` hands a call's [`RetryStats`](crate::RetryStats) to `hook` once, when the call
//! ends, success or give-up: `attempts` (calls of the body, hedges included), `hedges`, `waited`
//! (the time slept between attempts), `elapsed` (from the first attempt to the end) and `gave_up`
//! (`None` on success, else the [`GiveUpReason`](crate::GiveUpReason)). A call that succeeds at
//! once reports 1 attempt and nothing waited; a function without the key reads no clock for it.
//! The closure API takes the same hook (`Retry::stats`) and also returns the figures with the
//! outcome: `Retry::call_with_stats`, `Retry::call_async_with_stats`. `RetryLayer` and
//! `RetryMiddleware` take the hook (`.stats(hook)`), and with `.stats_in_response()` put each
//! call's figures in the response that comes out of it:
//! `response.extensions().get::<RetryStats>()` (a call that ends on a response retried for its
//! status has `gave_up` set).
//!
//! ```rust
//! use retry_jitter::{retry, Retry, RetryStats, Policy};
//! use std::time::Duration;
//!
//! fn record(s: &RetryStats) {
//!     // A histogram of attempts per call, a log line for a call that retried…
//!     if s.attempts > 1 {
//!         eprintln!("{}: {} attempts, waited {:?}, {:?}", s.function, s.attempts, s.waited, s.gave_up);
//!     }
//! }
//!
//! #[retry(attempts = 3, base = "1ms", stats = record)]
//! fn read_config() -> std::io::Result<String> {
//!     std::fs::read_to_string("Cargo.toml")
//! }
//!
//! fn main() {
//!     let _ = read_config();
//!     let r = Retry::new(Policy::new().with_base(Duration::ZERO));
//!     let (out, stats) = r.call_with_stats(|| Ok::<_, std::io::Error>(1));
//!     assert_eq!((out.unwrap(), stats.attempts, stats.gave_up), (1, 1, None));
//! }
//! ```
