//! HTTP calls through reqwest against real servers on loopback, one test binary: retrying
//! against a flaky axum upstream and raw servers that misbehave, and a server limiting the rate
//! (HTTP 429, and gRPC's `RESOURCE_EXHAUSTED` beside it) getting its own backoff. Each module
//! is gated on the features it needs, so the binary builds with any of them off.

#[cfg(all(feature = "reqwest", feature = "tonic"))]
mod rate_limited;
#[cfg(feature = "reqwest")]
mod web;

#[cfg(feature = "reqwest")]
#[path = "../support/loopback.rs"]
mod loopback;
#[cfg(feature = "reqwest")]
#[path = "../support/upstream.rs"]
mod upstream;
