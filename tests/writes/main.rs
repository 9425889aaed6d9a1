//! What `RetryLayer` and `RetryMiddleware` send again, one test binary: never a write twice
//! unless it is safe, the bodies hyper users send replayed byte-exact, and a body's fate decided
//! from its own attempt whichever task runs first. Each module is gated on the features it
//! needs, so the binary builds with any of them off.

#[cfg(feature = "tower")]
mod bodies;
#[cfg(feature = "tower")]
mod body_races;
#[cfg(all(feature = "tower", feature = "reqwest-middleware"))]
mod writes;

#[cfg(feature = "tower")]
#[path = "../support/h2_frames.rs"]
#[allow(dead_code)] // body_races uses its accept loop and its close only; writes, all of it
mod h2_frames;
#[cfg(feature = "tower")]
#[path = "../support/loopback.rs"]
mod loopback;
#[cfg(all(feature = "tower", feature = "reqwest-middleware"))]
#[path = "../support/my_body.rs"]
mod my_body;
