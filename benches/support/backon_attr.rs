//! backon's own attribute, `#[backon]` (backon-macros 1.0), on the bodies we measure ours on:
//! the success path's one multiply (`pairs::work`, as `pairs::annotated`) and the failure path's
//! call that fails 4 times with zero waits, then succeeds (`failing::flaky`, as
//! `failing::ours_flaky`). Shared by `benches/peers.rs` (criterion's times) and
//! `examples/instructions.rs` (callgrind's instruction counts).
//!
//! The attribute takes paths only (`backoff`, `sleep`, `when`, `notify`, `adjust`), no
//! expressions: a backoff other than `ExponentialBuilder::default()` is a function returning
//! the builder, and a no-op sleeper is a named function.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

use backon_macros::backon;

use super::failing::{flaky, no_sleep, zero_backon};
use super::pairs::work;

/// The success path, the attribute's defaults (`ExponentialBuilder::default()`, the default
/// sleeper), as `#[retry]`'s `pairs::annotated` takes ours.
#[backon]
#[inline(never)]
pub fn backon_annotated(x: &u64) -> Result<u64, u64> {
    work(*x)
}

/// The same, `async` (the default sleeper is tokio's; a success never sleeps).
#[backon]
#[inline(never)]
pub async fn backon_annotated_async(x: &u64) -> Result<u64, u64> {
    work(*x)
}

/// A blocking sleeper that never waits.
pub fn no_sleep_blocking(_: Duration) {}

/// The failure path: backon's exponential backoff with no wait, retrying 4 times
/// (`failing::zero_backon`, the closure rows' builder), and a no-op sleeper.
#[backon(backoff = zero_backon, sleep = no_sleep_blocking)]
#[inline(never)]
pub fn backon_attr_flaky(n: &AtomicU32) -> Result<u32, u32> {
    flaky(n)
}

/// The same, `async`.
#[backon(backoff = zero_backon, sleep = no_sleep)]
#[inline(never)]
pub async fn backon_attr_flaky_async(n: &AtomicU32) -> Result<u32, u32> {
    flaky(n)
}
