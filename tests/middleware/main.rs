//! The middleware faces, one test binary: `RetryLayer` and `RetryMiddleware` against real
//! servers on loopback — hyper's, tonic's and reqwest-middleware's clients, the loop's hooks
//! and guards, the default budget per host, the server's word on retrying, and what the faces
//! emit with feature `tracing` (each subscriber set for its own test's thread only). Each
//! module is gated on the features it needs, so the binary builds with any of them off.

#[cfg(all(feature = "tower", feature = "reqwest-middleware"))]
mod budget;
#[cfg(all(feature = "tower", feature = "tonic", feature = "reqwest-middleware"))]
mod clients;
#[cfg(feature = "tracing")]
mod events;
#[cfg(all(feature = "tower", feature = "reqwest-middleware"))]
mod hooks;
#[cfg(all(feature = "tower", feature = "reqwest-middleware", feature = "tracing"))]
mod resend_count;
#[cfg(all(feature = "tower", feature = "reqwest-middleware"))]
mod server_word;

#[cfg(all(feature = "tower", feature = "tonic", feature = "reqwest-middleware"))]
#[path = "../support/grpc_raw.rs"]
mod grpc_raw;
#[cfg(all(feature = "tower", feature = "reqwest-middleware"))]
#[path = "../support/loopback.rs"]
mod loopback;
#[cfg(all(feature = "tower", feature = "reqwest-middleware"))]
#[path = "../support/scripted.rs"]
mod scripted;
#[cfg(feature = "tracing")]
#[path = "../support/trace_recorder.rs"]
mod trace_recorder;
