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
    let (lo, hi) = (lo.as_nanos(), hi.as_nanos());
    let n = with_rng(|rng| {
        // Almost every wait fits in u64 nanoseconds (584 years): draw that, it is cheaper.
        if hi <= u64::MAX as u128 {
            rng.random_range(lo as u64..=hi as u64) as u128
        } else {
            rng.random_range(lo..=hi)
        }
    });
    from_nanos(n)
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
