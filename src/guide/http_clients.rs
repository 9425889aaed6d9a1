//! Retrying HTTP calls: with reqwest in an annotated function, with hyper's client under
//! `RetryLayer` (tower), and with reqwest-middleware.
//!
//! # reqwest, in an annotated function
//!
//! ```toml
//! [dependencies]
//! retry-jitter = { version = "0.1", features = ["reqwest"] } # Rust 1.88
//! reqwest = "0.13"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! axum = "0.8" # only for the stand-in server the program starts on loopback
//! ```
//!
//! `cargo run --example guide_reqwest --features reqwest` runs this program:
//!
//! ```rust,no_run
#![doc = include_str!("../../examples/guide_reqwest.rs")]
//! ```
//!
//! [`check(resp)`](crate::reqwest::check) turns a non-success response into an error,
//! [`retry_jitter::reqwest::Error`](crate::reqwest::Error), carrying the status, the parsed
//! `Retry-After`, the server's word (below) and the start of the body — at most 64 KiB, read for at
//! most 1 s in all and 250 ms without a new chunk, so a huge or stalled error body neither fills
//! memory nor holds the call. It implements [`Transient`](crate::Transient), as does
//! `reqwest::Error` itself:
//!
//! - retried: `408`, `425`, `429`, `500`, `502`, `503`, `504` and other `5xx` (a `429` or `503`
//!   waits its `Retry-After` or `x-amz-retry-after` plus the draw, if the hint is at most `cap`: a
//!   longer one ends the call; a `429` without either draws from `rate_limited_base`, 1 s, as
//!   [`Decision::RateLimited`](crate::Decision::RateLimited)), timeouts, connection failures, a
//!   connection cut mid-body, an attempt cut by `timeout` (the type has `From<TimedOut>`);
//! - returned at once: every other `4xx`, `501`, `505`, building and redirect errors, a malformed
//!   body, a complete body that does not decode.
//!
//! The recipe's `on = retry_jitter::transient` does what the attribute does without `on` for this
//! `Error` (the README leaves it out); written, it makes an error type without `Transient` a
//! compile error.
//!
//! A `Retry-After` too large for any integer saturates: a wait beyond any cap, which stops
//! retrying. reqwest is used with no feature of its own turned on (the crate pulls in no TLS
//! backend): enable the ones you need in your own `reqwest` line.
//!
//! **The server's word wins** over the status table, for a failure: `x-should-retry: false` (the
//! header of the Stainless-generated SDKs: OpenAI's, Anthropic's), `stripe-should-retry: false`
//! and `x-envoy-overloaded` stop whatever the status, and `x-should-retry: true` retries a failure
//! the table stops on (a `409`), within the attempts, the budget and the deadline. Every field line
//! of each header is heard (and each value of a line a proxy folded, `true, false`): one "don't"
//! wins over any "do". [`StatusError::server_says_retry`](crate::reqwest::StatusError::server_says_retry)
//! tells what it said.
//!
//! Feature `http` alone gives the pieces for any client: [`http::classify_status`](crate::http::classify_status)
//! (the table above), [`http::retry_after`](crate::http::retry_after) (delta-seconds or an
//! HTTP-date; garbage and past dates ignored), [`http::server_says_retry`](crate::http::server_says_retry),
//! [`http::classify_response`](crate::http::classify_response) (all three), and
//! [`http::classify_response_to`](crate::http::classify_response_to), which adds the rule for
//! writes: a `POST` or `PATCH` without an `Idempotency-Key` is retried only on what proves it was
//! not applied ([`writes`](crate::guide::writes)).
//!
//! **An annotated function decides for itself**: the attribute sees a function, not a request,
//! and retries whatever the function does. Retry `GET`, `PUT`, `DELETE` freely; retry a `POST`
//! only as [`writes`](crate::guide::writes) shows.
//!
//! # hyper's client, under `RetryLayer`
//!
//! Services retry their outbound calls in client middleware more often than in annotated
//! functions. `retry_jitter::tower::RetryLayer` (feature `tower`) is the loop as a `tower::Layer`
//! for any `S: Service<Req> + Clone`: hyper-util's client, a tonic `Channel`, …
//!
//! ```toml
//! [dependencies]
//! retry-jitter = { version = "0.1", features = ["tower"] }
//! hyper-util = { version = "0.1", features = ["client-legacy", "http1", "tokio"] }
//! http-body-util = "0.1"
//! bytes = "1"
//! http = "1"
//! tower = { version = "0.5", features = ["util"] }
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! axum = "0.8" # only for the stand-in server the program starts on loopback
//! ```
//!
//! `cargo run --example guide_hyper --features tower`:
//!
//! ```rust,no_run
#![doc = include_str!("../../examples/guide_hyper.rs")]
//! ```
//!
//! What the layer does with a request:
//!
//! - **Bodies are replayed**, up to 64 KiB (`with_body_limit`): a `Full<Bytes>`, `Empty<Bytes>`
//!   or `String` body is cloned for each attempt (a `Full`'s bytes shared, not copied); a boxed
//!   body (`BoxBody`, `UnsyncBoxBody`, tonic's) is recorded while it is sent, and each retry sends
//!   the same bytes. A larger body, or one the server answered before it was sent whole (a
//!   streaming upload), is sent once and its answer is the answer — decided per attempt, from that
//!   attempt's body alone. Any other body type is a compile error (below). A body type of your
//!   own that is `Clone`: `.clone_bodies()`.
//! - **Responses are classified** by the status table with `Retry-After` and the server's word
//!   (`.on_ok` replaces that); with feature `tonic`, a response carrying `grpc-status` in its
//!   headers (a trailers-only gRPC error) by the gRPC table.
//! - **Methods**: `GET`, `HEAD`, `OPTIONS`, `TRACE`, `PUT`, `DELETE`, or a request with a
//!   non-blank `Idempotency-Key` (or `X-Idempotency-Key`), are retried on the whole table; any
//!   other method only on what proves it was not applied ([`writes`](crate::guide::writes)).
//! - `RetryLayer::new(policy)` makes a [`RetryService<S>`](crate::tower::RetryService), a type a
//!   struct field (an axum app's state) can hold. It has a retry budget per host by default (a
//!   [`HostBudgets`](crate::budget::HostBudgets): 20% of each host's calls plus 10 retries a
//!   second, the first 64 hosts each their own). Builder methods: `.budget(&B)` (a budget of
//!   yours instead), `.budget_none()` (none), `.timeout(d)`,
//!   `.hedge(h)`, `.on(..)`, `.on_ok(..)`, `.idempotent()`, `.idempotency_key()`,
//!   `.with_name(..)`, `.deadline_header(..)`, `.attempt_header(..)`.
//! - A service that is not HTTP: `.clone_requests()` clones any `Req: Clone` per attempt and takes
//!   every `Ok` as the answer, as tower's own `Retry` does (no method rule, no key, no hop headers).
//!
//! **Hooks and guards, on both faces.** `RetryLayer` and `RetryMiddleware` take what `#[retry]`
//! takes, with the same names: `.notify(..)`, `.give_up(..)`, `.stats(..)`, `.cancel(&token)`,
//! `.throttle(&THROTTLE)`, `.breaker(&BREAKER)` and `.trace(level)`. On these faces most retries
//! are of answers, not errors: `notify` and `give_up` are told what failed as a
//! [`retry_jitter::http::Failed`](crate::http::Failed): `Failed::Error(&e)` (the face's error,
//! `BoxError` or `reqwest_middleware::Error`) or `Failed::Status(status)` (a response retried for
//! its status or the server's word). Such a response is a failure to the breaker, a request the
//! service did not accept to the throttle, and, when the call ends on it, a give-up (`gave_up`
//! set in `RetryStats`), while the caller still gets the response. A request the breaker or the
//! throttle refuses is not sent: the call ends with the face's error made from `CircuitOpen` or
//! `Throttled`. `.cancel(&token)` keeps a clone of the token (clones share their state): cancel
//! the one you keep, at shutdown. A response a user's `.on_ok(..)` retries is a poll, an answer:
//! neither hook is told of it. `.notify_async(..)`, `.give_up_async(..)` and `.stats_async(..)`
//! are awaited where the sync hooks are called (no request is sent while `notify_async` runs); an
//! async closure's future cannot be named `Send` on stable Rust, and a face's must be, so each
//! returns its future boxed: `|f, ev| -> HookFuture<'_> { Box::pin(async move { … }) }`, told
//! the `Failed` by value (`retry_jitter::hooks::HookFuture`).
//!
//! ```rust
//! # #[cfg(feature = "tower")] {
//! use bytes::Bytes;
//! use http_body_util::Full;
//! use hyper_util::client::legacy::{connect::HttpConnector, Client};
//! use hyper_util::rt::TokioExecutor;
//! use retry_jitter::http::Failed;
//! use retry_jitter::builder::{Breaker, Settings};
//! use retry_jitter::hooks::Unset;
//! use retry_jitter::tower::{BoxError, ByStatus, RetryLayer, RetryService, TransportErrors};
//! use retry_jitter::{CircuitBreaker, GiveUp, Policy, RetryBudget, RetryStats};
//! use std::time::Duration;
//! use tower::Layer;
//!
//! static BUDGET: RetryBudget = RetryBudget::new(500);
//! static BREAKER: CircuitBreaker =
//!     CircuitBreaker::new(0.5, 20, Duration::from_secs(10), Duration::from_secs(5));
//!
//! /// An app's state: its client of the inventory service, a type written from the docs.
//! struct App {
//!     inventory: RetryService<
//!         Client<HttpConnector, Full<Bytes>>,
//!         TransportErrors,
//!         ByStatus,
//!         Settings<&'static RetryBudget, Duration, Unset, (Breaker, Unset)>,
//!     >,
//! }
//!
//! let layer = RetryLayer::new(Policy::default())
//!     .budget(&BUDGET)
//!     .timeout(Duration::from_secs(2))
//!     .breaker(&BREAKER);
//! let client = Client::builder(TokioExecutor::new()).build_http();
//! let app = App { inventory: layer.layer(client) };
//!
//! // With closures, whose types have no name, box the service (tower's `BoxCloneService`).
//! let logged = RetryLayer::new(Policy::default())
//!     .give_up(|f: &Failed<'_, BoxError>, g: &GiveUp| eprintln!("inventory: {} ({f})", g.reason))
//!     .stats(|s: &RetryStats| eprintln!("inventory: {} attempts", s.attempts));
//! let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
//! let boxed: tower::util::BoxCloneService<http::Request<Full<Bytes>>, http::Response<hyper::body::Incoming>, BoxError> =
//!     tower::util::BoxCloneService::new(logged.layer(client));
//! # let _ = (app, boxed);
//! # }
//! ```
//!
//! **When it does not compile.** Over a body the layer cannot replay (a `Limited<Full<Bytes>>`, a
//! stream), `.oneshot(req)` and `.ready().await?.call(req)` fail with rustc's own error:
//!
//! ```text
//! error[E0599]: the method `oneshot` exists for struct `RetryService<…>`, but its trait bounds were not satisfied
//! ```
//!
//! (`ready` in the second form). It points at `RetryService`'s definition and its parameters
//! (`C = TransportErrors`, …, `M = HttpRequests`) and says `RetryService<…>: Service<_>` is
//! not satisfied: none of that is yours to fix. The body is.
//!
//! Send `Full<Bytes>`, `Empty<Bytes>` or `String`; box a streaming body (`BodyExt::boxed`,
//! `BodyExt::boxed_unsync`); for a `Clone` body of your own, `.clone_bodies()`. A request that is
//! not an `http::Request` fails the same way: `.clone_requests()`. `Service::call(&mut svc, req)`
//! shows the crate's own message instead, naming the body type.
//!
//! # reqwest-middleware
//!
//! `retry_jitter::reqwest_middleware::RetryMiddleware` (feature `reqwest-middleware`) is the same
//! loop as a `reqwest_middleware::Middleware`: each attempt sends `req.try_clone()` (a streaming
//! body is sent once), responses are classified by `check`'s rules and `Retry-After` is honoured
//! (reqwest-retry's backoff policy never sees the response, so it cannot honour one).
//!
//! ```toml
//! [dependencies]
//! retry-jitter = { version = "0.1", features = ["reqwest-middleware"] } # Rust 1.88
//! reqwest = "0.13"
//! reqwest-middleware = "0.5"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! axum = "0.8" # only for the stand-in server the program starts on loopback
//! ```
//!
//! `cargo run --example guide_reqwest_middleware --features reqwest-middleware`:
//!
//! ```rust,no_run
#![doc = include_str!("../../examples/guide_reqwest_middleware.rs")]
//! ```
//!
//! The same hooks and guards, with the middleware's error in the `Failed`; the middleware is a
//! value of a type with a name, so it can be stored as well:
//!
//! ```rust
//! # #[cfg(feature = "reqwest-middleware")] {
//! use retry_jitter::http::Failed;
//! use retry_jitter::budget::HostBudgets;
//! use retry_jitter::builder::{Settings, Throttle};
//! use retry_jitter::hooks::Unset;
//! use retry_jitter::reqwest_middleware::{ByStatus, RetryMiddleware, TransportErrors};
//! use retry_jitter::{AdaptiveThrottle, CancelToken, GiveUp, Policy, RetryEvent, RetryStats};
//! use std::time::Duration;
//!
//! static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(60));
//!
//! // A timeout and a throttle (and the default budget, one per host): a type written from the docs.
//! let plain: RetryMiddleware<TransportErrors, ByStatus, Settings<HostBudgets, Duration, Unset, (Unset, Throttle)>> =
//!     RetryMiddleware::new(Policy::default())
//!         .timeout(Duration::from_secs(2))
//!         .throttle(&THROTTLE);
//!
//! let shutdown = CancelToken::new();
//! let logged = RetryMiddleware::new(Policy::default())
//!     .notify(|f: &Failed<'_, reqwest_middleware::Error>, ev: &RetryEvent| {
//!         eprintln!("attempt {} failed ({f}), retrying in {:?}", ev.attempt, ev.delay)
//!     })
//!     .give_up(|f: &Failed<'_, reqwest_middleware::Error>, g: &GiveUp| eprintln!("gave up: {} ({f})", g.reason))
//!     .stats(|s: &RetryStats| eprintln!("{} attempts", s.attempts))
//!     .cancel(&shutdown)
//!     .stats_in_response();
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new()).with(logged).build();
//! # let _ = (plain, client);
//! # }
//! ```
//!
//! # What each face sends again, by default
//!
//! Both faces classify the same way unless `.on` / `.on_ok` replace a side:
//!
//! | | `RetryLayer` (`tower`) | `RetryMiddleware` (`reqwest-middleware`) |
//! |---|---|---|
//! | errors | [`TransportErrors`](crate::tower::TransportErrors): its own `timeout`, a refused or reset connection, hyper's failed connect and closed connection, an HTTP/2 stream refused or beyond a `GOAWAY`, a `tonic::Status` by the gRPC table; anything else stops (a `String` error is tried once) | reqwest's errors by their `Transient` table, its own `timeout`; another middleware's error stops |
//! | responses | [`ByStatus`](crate::tower::ByStatus): `408`, `425`, `429`, `5xx` but `501`/`505`, waiting a `Retry-After` up to `cap` (a longer one ends the call); a `grpc-status` by the gRPC table. `.clone_requests()` takes every `Ok` | the same table, `Retry-After` as for `RetryLayer` |
//! | the server's word | `x-should-retry`, `stripe-should-retry`, `x-envoy-overloaded` win over the table, every field line heard, "don't" winning | the same |
//! | methods | the whole table for `GET`, `HEAD`, `OPTIONS`, `TRACE`, `PUT`, `DELETE` and keyed requests; for `POST`, `PATCH`, …: only a failed connect, a refused or unprocessed HTTP/2 stream, `408`, `425`, `429`, `503`, or `x-should-retry: true`. A gRPC call keeps the gRPC table | the same |
//!
//! A classifier of your own decides for every method. The inner service's error reaches `.on`
//! boxed, as a `Box<dyn std::error::Error + Send + Sync>`, and is read by downcasting:
//!
//! ```rust
//! use retry_jitter::tower::RetryLayer;
//! use retry_jitter::Policy;
//! use std::time::Duration;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! type BoxError = Box<dyn std::error::Error + Send + Sync>;
//!
//! #[tokio::main]
//! async fn main() {
//!     // A tower service that is not HTTP, whose errors are `std::io::Error`s: retry a timed-out
//!     // read only; every `Ok` is the answer.
//!     let layer = RetryLayer::new(Policy::new().with_base(Duration::from_millis(1)))
//!         .clone_requests()
//!         .on(|e: &BoxError| {
//!             e.downcast_ref::<std::io::Error>()
//!                 .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
//!         });
//!     let calls = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
//!     let seen = calls.clone();
//!     let read = service_fn(move |key: &'static str| {
//!         let n = seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
//!         async move {
//!             match n {
//!                 0 => Err(std::io::Error::from(std::io::ErrorKind::TimedOut)),
//!                 _ => Ok::<_, std::io::Error>(format!("value of {key}")),
//!             }
//!         }
//!     });
//!     let svc = ServiceBuilder::new().layer(layer).service(read);
//!     assert_eq!(svc.oneshot("a").await.unwrap(), "value of a"); // timed out once, then read
//! }
//! ```
//!
//! `cargo run --example web_service --features reqwest,metrics` runs an axum service whose handler
//! calls a flaky upstream (a second axum server) with `#[retry]` and `check`, both on loopback, and
//! prints what each request cost upstream; `tests/web/web.rs` asserts against the real servers that a
//! `503` with `Retry-After: 1` waits at least a second, a `404` is tried once, a `429` storm stops
//! at `attempts`, a refused connection is retried then returned, a server that never answers is
//! cut at the `timeout`, a stalled or 256 MiB error body is cut at its bounds, and a `200` cut
//! mid-body is retried. `cargo run --example connect` retries a sync `TcpStream::connect` until a
//! listener that starts late comes up. `tests/middleware/clients.rs`, `tests/writes/writes.rs` and
//! `tests/middleware/server_word.rs` count on real servers on loopback what each face sends; the layer's cost on a first-attempt success is in
//! [BENCHMARKS.md](https://github.com/retry-jitter/retry-jitter/blob/main/BENCHMARKS.md).
