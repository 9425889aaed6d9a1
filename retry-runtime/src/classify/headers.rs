//! Every header name the crate reads or writes, in one place.
//!
//! Each constant says who writes it and who reads it.
//!
//! A constant only some features use is compiled only with them: a build of one feature has no
//! unused one.

use http::HeaderName;

// The server's word on a failed answer (`classify/http/mod.rs`'s `server_says_retry`).

/// The Stainless SDKs' "retry this or not": read by `server_says_retry`.
///
/// `ChainLayer` (`middleware/tower/chain.rs`) writes it `false` on a `5xx` or `429` after its
/// tier gave up.
pub(crate) const X_SHOULD_RETRY: &str = "x-should-retry";
/// Stripe's "retry this or not": read by `server_says_retry`; never written.
pub(crate) const STRIPE_SHOULD_RETRY: &str = "stripe-should-retry";
/// Envoy's load shedding, "don't retry" whatever its value: read by `server_says_retry`.
pub(crate) const X_ENVOY_OVERLOADED: &str = "x-envoy-overloaded";

// The wait a server asks for (`classify/http/retry_after.rs`, `classify/tonic.rs`).

/// RFC 9110's wait: read by `http::retry_after`.
///
/// The `http` crate's typed name, looked up without parsing a string.
pub(crate) const RETRY_AFTER: HeaderName = http::header::RETRY_AFTER;
/// AWS's wait in milliseconds: read by `http::retry_after` when `retry-after` is absent.
pub(crate) const X_AMZ_RETRY_AFTER: &str = "x-amz-retry-after";
/// gRPC's wait in milliseconds (A6), negative for "don't retry": read by `tonic::classify`.
///
/// `ChainLayer` writes it `-1` on an `UNAVAILABLE` or `RESOURCE_EXHAUSTED` after its tier gave
/// up.
#[cfg(any(feature = "tonic", feature = "tower"))]
pub(crate) const GRPC_RETRY_PUSHBACK_MS: &str = "grpc-retry-pushback-ms";

// What an attempt carries across a hop (`middleware/hops.rs`), read back by `ChainLayer`.

/// Envoy's deadline in milliseconds, the HTTP deadline unless a builder names another.
///
/// Written by `hops::stamp`; read by `ChainLayer`.
#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
pub(crate) const X_ENVOY_EXPECTED_RQ_TIMEOUT_MS: &str = "x-envoy-expected-rq-timeout-ms";
/// gRPC's deadline in its own format: up to 8 digits and a unit.
///
/// Written by `hops::stamp` on a gRPC request; read by `ChainLayer`.
#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
pub(crate) const GRPC_TIMEOUT: &str = "grpc-timeout";
/// gRPC's count of the attempts before this one (A6): written by `hops::stamp` on a gRPC retry.
#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
pub(crate) const GRPC_PREVIOUS_RPC_ATTEMPTS: &str = "grpc-previous-rpc-attempts";
/// The `http` crate's typed `content-type`: read by `hops::is_grpc`, for [`APPLICATION_GRPC`].
#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
pub(crate) const CONTENT_TYPE: HeaderName = http::header::CONTENT_TYPE;
/// The `content-type` value that marks a gRPC request or answer: read by `hops::is_grpc`.
///
/// It is a prefix: `+proto`, `+json`, … may follow.
#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
pub(crate) const APPLICATION_GRPC: &str = "application/grpc";

// gRPC's status in a trailers-only answer's headers (or in the trailers).

/// A gRPC call's status code.
///
/// Read by `ByStatus` (`middleware/tower/classify.rs`, feature `tonic`), and by `ChainLayer`
/// before it marks an answer "don't retry".
#[cfg(feature = "tower")]
pub(crate) const GRPC_STATUS: &str = "grpc-status";

// A request's idempotency key (`classify/http/method.rs`, `middleware/writes.rs`).

/// The idempotency key's header: read by `http::is_repeatable`.
///
/// `writes::give_key` writes it when the request has no key under either name.
pub(crate) const IDEMPOTENCY_KEY: &str = "idempotency-key";
/// The idempotency key's other header: read by `http::is_repeatable`.
///
/// `writes::give_key` writes it only in place of a blank one the caller set.
pub(crate) const X_IDEMPOTENCY_KEY: &str = "x-idempotency-key";
/// Every header that carries an idempotency key, [`IDEMPOTENCY_KEY`] first.
pub(crate) const IDEMPOTENCY_KEYS: [&str; 2] = [IDEMPOTENCY_KEY, X_IDEMPOTENCY_KEY];
