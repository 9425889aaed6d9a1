//! tower: the retry loop as a [`Layer`] (feature `tower`), for hyper's client, tonic's
//! `Channel` and any other tower service.
//!
//! [`RetryLayer`] is built like the closure API [`Retry`](crate::Retry), and its service runs
//! the same loop `#[retry]` runs: full jitter, budgets, `timeout`, hedging, `Retry-After`.
//! [`ChainLayer`] is the server end of a hop in a chain of services: the caller's deadline
//! bounds every retry loop its handlers run, and a tier that already retried tells its caller
//! not to retry again.
//!
//! - **Requests.** An `http::Request<B>` is made replayable by its body type ([`ReplayBody`](body::ReplayBody)),
//!   up to a limit (64 KiB; [`RetryLayer::with_body_limit`]): each
//!   retry sends the same bytes again, and the inner service takes the body type it always
//!   did. http-body-util's `Full<Bytes>` and `Empty<Bytes>`, and `String`, are cloned for each
//!   attempt ([`Cloned`](body::Cloned): a `Full`'s bytes are shared, not copied), so hyper-util's
//!   `Client<HttpConnector, Full<Bytes>>` is wrapped as it is. Any other body is buffered
//!   while it is sent and replayed ([`Replayer`](body::Replayer)), wrapped again in its type
//!   ([`WrapBody`](body::WrapBody)): http-body-util's `BoxBody` and `UnsyncBoxBody`, and with feature
//!   `tonic`, `tonic::body::Body` (a `Channel`'s). A body larger than the limit is sent once
//!   and never retried — no error for that: the first answer is the answer. Whether a recorded
//!   body can be sent again is decided per attempt, once its call ends, from that attempt's
//!   body alone: sent whole, or given back unfinished by a connection that failed (the next
//!   attempt sends the recorded bytes, then the rest), it can; answered by the server before
//!   it was sent whole (a streaming upload answered early), it cannot, nor can one its
//!   transport still holds half a second after its call failed. A hedge waits for the body:
//!   recorded whole, or given back by an attempt that failed. A `Clone`
//!   body of another type (one of your own): [`RetryLayer::clone_bodies`] clones it for each
//!   attempt, everything else as above. A request that is not HTTP:
//!   [`RetryLayer::clone_requests`] clones any `Req: Clone`, as tower's own `Retry` does, and
//!   takes every `Ok` as the answer; it does not read the request (no status table, method
//!   rule, key or hop headers: the bullets below are the HTTP modes').
//! - **Responses** are classified by [`classify_status`](crate::http::classify_status),
//!   honouring `Retry-After` ([`ByStatus`]); with feature `tonic`, a response whose headers
//!   carry `grpc-status` (a trailers-only gRPC error, as tonic servers send) by
//!   [`tonic::classify`](crate::tonic::classify) instead. [`RetryLayer::on_ok`] replaces it.
//!   A response that is retried is dropped before the retry; the one handed to the caller is
//!   never retried, so a streaming response is read only by the caller.
//! - **Errors** of the inner service (its `Error: Into<BoxError>`) are classified by
//!   [`TransportErrors`]; [`RetryLayer::on`] replaces it. The service's error is [`BoxError`].
//! - **Writes are sent once** unless proven safe: an HTTP request whose method is not
//!   idempotent (`POST`, `PATCH`, …) and which carries no `Idempotency-Key` (nor
//!   `X-Idempotency-Key`) is retried by the default classifiers only on what proves it was not
//!   applied — a failed connect, an HTTP/2 stream the server refused or never processed (above
//!   a `GOAWAY`'s last stream id), `408`, `425`, `429`, `503`, or the
//!   server's `x-should-retry: true` — never on a `500`, `502`, `504`, the layer's own
//!   `timeout` or a connection closed after it was sent. [`RetryLayer::idempotent`] vouches for
//!   every request; [`RetryLayer::idempotency_key`] gives each such request a key (the same on
//!   every attempt) and retries it on the whole table. A gRPC answer keeps the gRPC table.
//! - **A budget per host, by default** ([`HostBudgets`]): the retries to each host (the
//!   request's authority) stay within 20% of its calls over 10 s plus 10 a second, so a host
//!   that is down gets about 1.2 attempts per call, not five, while a handful of calls retries
//!   as without one. [`RetryLayer::budget`] puts one budget of yours in its place,
//!   [`RetryLayer::budget_none`](RetryBuilder::budget_none) none. A request that is not HTTP,
//!   or whose URI has no authority, shares one budget with the others like it.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! use bytes::Bytes;
//! use http_body_util::{combinators::BoxBody, BodyExt, Full};
//! use retry_jitter::tower::RetryLayer;
//! use retry_jitter::Policy;
//! use std::convert::Infallible;
//! use std::sync::atomic::{AtomicU32, Ordering};
//! use std::sync::Arc;
//! use tower::{Service, ServiceExt};
//!
//! type Body = BoxBody<Bytes, Infallible>;
//!
//! // An upstream that answers 503 twice, then 200 with the body it received.
//! let calls = Arc::new(AtomicU32::new(0));
//! let seen = calls.clone();
//! let upstream = tower::service_fn(move |req: http::Request<Body>| {
//!     let n = seen.fetch_add(1, Ordering::SeqCst);
//!     async move {
//!         let body = req.into_body().collect().await?.to_bytes();
//!         let status = if n < 2 { 503 } else { 200 };
//!         Ok::<_, Infallible>(http::Response::builder().status(status).body(body).unwrap())
//!     }
//! });
//! let mut svc = tower::ServiceBuilder::new()
//!     .layer(RetryLayer::new(Policy::default()).with_name("upstream"))
//!     .service(upstream);
//! let req = http::Request::post("/orders").body(Full::from("one order").boxed()).unwrap();
//! let resp = svc.ready().await.unwrap().call(req).await.unwrap();
//! assert_eq!((resp.status().as_u16(), resp.body().as_ref()), (200, &b"one order"[..]));
//! assert_eq!(calls.load(Ordering::SeqCst), 3);
//! # }
//! ```

pub mod body;
mod chain;
mod classify;
pub mod future;
mod layer;
mod replay;
mod service;

use tower_layer::Layer;
use tower_service::Service;

pub use crate::fleet::HostBudgets;
pub use crate::middleware::builder::{Breaker, RetryBuilder, Settings, Throttle};
pub use crate::policy::Unset;
pub use chain::{in_chain, out_of_chain, ChainLayer, ChainService};
pub use classify::{ByStatus, TransportErrors};
pub use layer::{RetryLayer, RetryService};
pub use replay::{CloneBodies, CloneRequests, HttpRequests};

/// The error of a [`RetryLayer`]'s service: the inner service's error, boxed (tower's
/// convention), or [`TimedOut`](crate::TimedOut) when an attempt ran past
/// [`RetryLayer::timeout`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The largest request body replayed by default: 64 KiB. A larger body is sent once.
pub(crate) const DEFAULT_BODY_LIMIT: usize = 64 * 1024;
