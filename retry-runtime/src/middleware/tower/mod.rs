//! tower: the retry loop as a [`Layer`](tower_layer::Layer) (feature `tower`), for hyper's client, tonic's
//! `Channel` and any other tower service.
//!
//! [`RetryLayer`] is built like the closure API [`Retry`](crate::Retry).
//!
//! Its service runs the loop `#[retry]` runs: full jitter, budgets, `timeout`, hedging,
//! `Retry-After`.
//!
//! [`ChainLayer`] is the server end of a hop: the caller's deadline bounds its handlers' retries.
//!
//! The guide's `http_clients` page has the walkthrough; its `chain` page covers chains.
//!
//! - **Requests.** An `http::Request<B>` is replayed by its body type ([`ReplayBody`](body::ReplayBody)).
//!   - Bodies up to 64 KiB are replayed ([`RetryLayer::with_body_limit`]).
//!   - A larger body is sent once, without an error: the first answer is the answer.
//!   - `Full<Bytes>`, `Empty<Bytes>` and `String` are cloned per attempt ([`Cloned`](body::Cloned)).
//!   - Other bodies are recorded while sent ([`Replayer`](body::Replayer), [`WrapBody`](body::WrapBody)).
//!   - A body the server answered before it was sent whole is not sent again.
//!   - [`RetryLayer::clone_bodies`] clones a `Clone` body type of your own.
//!   - [`RetryLayer::clone_requests`] clones any `Req: Clone` and takes every `Ok` as the answer.
//! - **Responses** are classified by [`ByStatus`]: [`classify_status`](crate::http::classify_status),
//!   honouring `Retry-After`.
//!   - With feature `tonic`, a `grpc-status` header is classified by
//!     [`tonic::classify`](crate::tonic::classify).
//!   - [`RetryLayer::on_ok`] replaces the response classifier.
//!   - A retried response is dropped; the one handed to the caller is never retried.
//! - **Errors** of the inner service are classified by [`TransportErrors`].
//!   - [`RetryLayer::on`] replaces that classifier.
//!   - The service's error is [`BoxError`].
//! - **Writes are sent once** unless proven safe.
//!   - A non-idempotent method without an `Idempotency-Key` is retried only on proof it was not
//!     applied.
//!   - The proofs: a failed connect, a refused or unprocessed HTTP/2 stream, `408`, `425`,
//!     `429`, `503`, or `x-should-retry: true`.
//!   - Never a `500`, `502`, `504`, the layer's `timeout`, or a connection closed after sending.
//!   - [`RetryLayer::idempotent`] vouches for every request.
//!   - [`RetryLayer::idempotency_key`] gives each write a key and retries it on the whole table.
//!   - A gRPC answer keeps the gRPC table.
//! - **A budget per host, by default** ([`HostBudgets`](crate::budget::HostBudgets)).
//!   - Each host's retries stay within 20% of its calls over 10 s, plus 10 a second.
//!   - [`RetryLayer::budget`] puts your budget in its place.
//!   - [`RetryLayer::budget_none`](crate::builder::RetryBuilder::budget_none) removes it.
//!   - Requests without an authority share one budget.
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
