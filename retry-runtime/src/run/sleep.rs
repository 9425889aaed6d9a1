//! Timers and clocks: blocking sleep for sync code, tokio's sleep for async code.
//!
//! Each timer has its clock, and `max_elapsed` and `timeout` are measured on it.
//!
//! - With `std::thread::sleep`, the monotonic system clock ([`now`]).
//! - For `async fn`s, tokio's clock ([`tokio_now`], feature `tokio`), so a paused test clock
//!   works.
//! - That holds also when the timer is given with `sleep = path`.
//! - Or the clock given with `clock = path`.

use core::time::Duration;
use std::time::Instant;

use crate::policy::CancelToken;

/// The monotonic system clock, moved forward by the waits that
/// [`testing::record_sleeps`](crate::testing::record_sleeps) recorded instead of sleeping.
///
/// ```
/// let a = retry_jitter::sleep::now();
/// assert!(retry_jitter::sleep::now() >= a);
/// ```
pub fn now() -> Instant {
    let now = Instant::now();
    match crate::testing::recorded_offset() {
        Some(offset) => now.checked_add(offset).unwrap_or(now),
        None => now,
    }
}

/// Block the thread for `delay` (`std::thread::sleep`), or record the wait instead when running
/// inside [`testing::record_sleeps`](crate::testing::record_sleeps).
///
/// ```
/// retry_jitter::sleep::sleep_blocking(std::time::Duration::from_millis(1));
/// ```
#[inline]
#[doc(hidden)]
pub fn sleep_blocking(delay: Duration) {
    // A zero wait (`base = "0ns"`, `Jitter::Full` drawing 0) is not a syscall.
    if !crate::testing::record(delay) && !delay.is_zero() {
        std::thread::sleep(delay);
    }
}

/// [`sleep_blocking`], ended at once should `cancel` (the call's token, if any) be cancelled.
///
/// Without a token, that sleep alone.
#[inline]
pub(crate) fn sleep_or_cancel(delay: Duration, cancel: Option<&CancelToken>) {
    match cancel {
        None => sleep_blocking(delay),
        Some(token) => {
            if !crate::testing::record(delay) && !delay.is_zero() {
                token.sleep(delay);
            }
        }
    }
}

/// tokio's clock (`tokio::time::Instant::now`), paused and advanced in tests like tokio's timer.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let a = retry_jitter::sleep::tokio_now();
/// assert!(retry_jitter::sleep::tokio_now() >= a);
/// # }
/// ```
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub fn tokio_now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// tokio's timer: `tokio::time::sleep`. Needs a tokio runtime with the time driver enabled.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// retry_jitter::sleep::tokio_sleep(std::time::Duration::from_millis(1)).await;
/// # }
/// ```
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
#[doc(hidden)]
pub async fn tokio_sleep(delay: Duration) {
    tokio::time::sleep(delay).await;
}
