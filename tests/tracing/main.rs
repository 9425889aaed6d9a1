//! Feature `tracing`, one test binary: the events a retry and a give-up emit, their fields, and
//! what their metadata says of where they come from. Every subscriber here is set for its own
//! test's thread (`with_default`), none for the process.

#[cfg(feature = "tracing")]
mod events;
#[cfg(feature = "tracing")]
mod metadata;

#[cfg(feature = "tracing")]
#[path = "../support/trace_recorder.rs"]
mod trace_recorder;
