//! A chain of services on loopback (issue 30), one test binary: the calls each tier receives
//! with and without `ChainLayer`, what a hop carries down (attempt counts, "don't retry", the
//! caller's deadline) through `RetryLayer` and `RetryMiddleware`, and what a stranger's request
//! can do to a service under `ChainLayer`. Each module is gated on the features it needs, so
//! the binary builds with any of them off.

#[cfg(feature = "tower")]
mod chain;
#[cfg(all(feature = "tower", feature = "tonic", feature = "reqwest-middleware"))]
mod hops;
#[cfg(all(feature = "tower", feature = "reqwest-middleware"))]
mod trust;

#[cfg(all(feature = "tower", feature = "tonic", feature = "reqwest-middleware"))]
#[path = "../support/grpc_raw.rs"]
mod grpc_raw;
#[cfg(feature = "tower")]
#[path = "../support/loopback.rs"]
mod loopback;
#[cfg(all(feature = "tower", feature = "tonic", feature = "reqwest-middleware"))]
#[path = "../support/my_body.rs"]
mod my_body;
