//! The jitter's randomness: one small generator per thread, seeded from the OS on first use.
//!
//! No lock and no allocation per draw. Nothing here is held across an `.await`: a draw borrows
//! the thread's generator for the draw alone, so retried futures stay `Send`.

use core::cell::RefCell;
use core::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::backoff::from_nanos;

thread_local! {
    static RNG: RefCell<Option<SmallRng>> = const { RefCell::new(None) };
}

/// A wait drawn uniformly in `[lo, hi]` (both included); `lo` when `hi <= lo`.
pub(crate) fn uniform(lo: Duration, hi: Duration) -> Duration {
    if hi <= lo {
        return lo;
    }
    // Almost every wait fits in u64 nanoseconds (584 years): draw that, without u128 arithmetic.
    if let (Some(lo), Some(hi)) = (nanos_u64(lo), nanos_u64(hi)) {
        return Duration::from_nanos(with_rng(|rng| rng.random_range(lo..=hi)));
    }
    let (lo, hi) = (lo.as_nanos(), hi.as_nanos());
    from_nanos(with_rng(|rng| rng.random_range(lo..=hi)))
}

/// `d` in nanoseconds, if that fits in a u64.
#[inline]
fn nanos_u64(d: Duration) -> Option<u64> {
    d.as_secs()
        .checked_mul(1_000_000_000)?
        .checked_add(u64::from(d.subsec_nanos()))
}

fn with_rng<T>(f: impl FnOnce(&mut SmallRng) -> T) -> T {
    RNG.with(|cell| {
        let mut slot = cell.borrow_mut();
        f(slot.get_or_insert_with(SmallRng::from_os_rng))
    })
}

/// Replace this thread's generator with one seeded from `seed`.
pub(crate) fn seed(seed: u64) {
    RNG.with(|cell| *cell.borrow_mut() = Some(SmallRng::seed_from_u64(seed)));
}
