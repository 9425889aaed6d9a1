//! The jitter's randomness: one small generator per thread, seeded from the OS on first use.
//!
//! No lock and no allocation per draw.
//!
//! Nothing here is held across an `.await`: a draw borrows the thread's generator for the draw
//! alone, so retried futures stay `Send`.
//!
//! No dependency either: the generator (rand's `SmallRng`, draw for draw) and its range draws
//! (rand's `random_range`) are written out here.
//!
//! The seed comes from std's `RandomState`, whose keys are the OS's randomness.
//!
//! rand, rand_core and getrandom cost a user's cold build more than the rest of this crate.
//!
//! The tests check each draw against rand's.

use core::cell::Cell;
use core::time::Duration;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

thread_local! {
    // The generator's state, all zero until this thread's first draw seeds it.
    //
    // xoshiro never reaches the zero state.
    //
    // A `Cell` of plain words: no borrow flag, no destructor.
    //
    // A draw reads the state and writes it back, and nothing else.
    static RNG: Cell<[u64; 4]> = const { Cell::new([0; 4]) };
}

/// xoshiro256++, the generator behind rand's `SmallRng` on 64-bit targets.
///
/// Written out here so its state can live in a `Cell`.
///
/// Seeded alike, it draws exactly what `SmallRng` does.
struct Xoshiro([u64; 4]);

impl Xoshiro {
    /// rand's `Xoshiro256PlusPlus::seed_from_u64`: four words of SplitMix64.
    fn seed_from_u64(mut state: u64) -> Self {
        const PHI: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut s = [0; 4];
        for word in &mut s {
            state = state.wrapping_add(PHI);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *word = z ^ (z >> 31);
        }
        Xoshiro(s)
    }

    /// A state from the OS's randomness, never all zero.
    ///
    /// Four words hashed with a fresh `RandomState`, whose SipHash keys std draws from the OS
    /// once per thread, stepping them for each new one.
    ///
    /// So no two threads, and no two seedings, start alike.
    fn from_os() -> Self {
        let keys = RandomState::new();
        let s = [0_u8, 1, 2, 3].map(|word| keys.hash_one(word));
        if s == [0; 4] {
            return Self::seed_from_u64(0);
        }
        Xoshiro(s)
    }

    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let out = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        out
    }

    /// A `u128` as rand draws one: the low word first.
    fn next_u128(&mut self) -> u128 {
        let low = u128::from(self.next_u64());
        (u128::from(self.next_u64()) << 64) | low
    }
}

/// A number drawn uniformly in `[0, n]` (both included), without drawing at all for `n = 0`.
///
/// Exactly what `rng.random_range(0..=n)` draws: rand's method, Canon's.
///
/// One wide multiply; a second only when the first may be biased.
///
/// So a seeded schedule is the one rand would draw.
#[inline]
pub(crate) fn up_to(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    with_rng(|rng| {
        let Some(range) = n.checked_add(1) else {
            return rng.next_u64();
        };
        let (mut result, lo) = wmul(rng.next_u64(), range);
        if lo > range.wrapping_neg() {
            let (hi, _) = wmul(rng.next_u64(), range);
            result += u64::from(lo.checked_add(hi).is_none());
        }
        result
    })
}

/// `a · b` as (high word, low word).
#[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
fn wmul(a: u64, b: u64) -> (u64, u64) {
    let wide = u128::from(a) * u128::from(b);
    ((wide >> 64) as u64, wide as u64)
}

/// A wait drawn uniformly in `[lo, hi]` (both included); `lo` when `hi <= lo`.
///
/// For a backoff whose bounds do not fit in `u64` nanoseconds (584 years).
///
/// The others draw with [`up_to`].
pub(crate) fn uniform(lo: Duration, hi: Duration) -> Duration {
    if hi <= lo {
        return lo;
    }
    let (lo, hi) = (lo.as_nanos(), hi.as_nanos());
    if let (Ok(lo), Ok(hi)) = (u64::try_from(lo), u64::try_from(hi)) {
        return Duration::from_nanos(lo + up_to(hi - lo));
    }
    from_nanos(with_rng(|rng| lo + up_to_wide(rng, hi - lo)))
}

/// [`up_to`] for `u128`: what `rng.random_range(lo..=lo + n)` draws above `lo`.
fn up_to_wide(rng: &mut Xoshiro, n: u128) -> u128 {
    let Some(range) = n.checked_add(1) else {
        return rng.next_u128();
    };
    let (mut result, lo) = wmul_wide(rng.next_u128(), range);
    if lo > range.wrapping_neg() {
        let (hi, _) = wmul_wide(rng.next_u128(), range);
        result += u128::from(lo.checked_add(hi).is_none());
    }
    result
}

/// `a · b` as (high word, low word), for `u128`: four 64-bit products.
fn wmul_wide(a: u128, b: u128) -> (u128, u128) {
    const LOW: u128 = u64::MAX as u128;
    let (a_hi, a_lo, b_hi, b_lo) = (a >> 64, a & LOW, b >> 64, b & LOW);
    let lo_lo = a_lo * b_lo;
    let (cross_1, cross_2) = (a_hi * b_lo, a_lo * b_hi);
    let mid = (lo_lo >> 64) + (cross_1 & LOW) + (cross_2 & LOW);
    let low = (lo_lo & LOW) | (mid << 64);
    let high = a_hi * b_hi + (cross_1 >> 64) + (cross_2 >> 64) + (mid >> 64);
    (high, low)
}

/// `f` with this thread's generator, seeded from the OS on first use.
#[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
fn with_rng<T>(f: impl FnOnce(&mut Xoshiro) -> T) -> T {
    // Two accesses of one closure each, the state read and written back.
    //
    // Small enough to be inlined, each is an address computed from the thread pointer.
    //
    // The state stays in registers in between.
    let mut state = RNG.with(Cell::get);
    if state[0] | state[1] | state[2] | state[3] == 0 {
        seed_from_os();
        state = RNG.with(Cell::get);
    }
    let mut rng = Xoshiro(state);
    let out = f(&mut rng);
    RNG.with(|cell| cell.set(rng.0));
    out
}

/// Seed this thread's generator from the OS.
#[cold]
#[inline(never)]
fn seed_from_os() {
    RNG.with(|cell| cell.set(Xoshiro::from_os().0));
}

/// Replace this thread's generator with one seeded from `seed`.
pub(crate) fn seed(seed: u64) {
    RNG.with(|cell| cell.set(Xoshiro::seed_from_u64(seed).0));
}

/// A `Duration` from a count of nanoseconds that is at most `Duration::MAX`'s.
pub(crate) fn from_nanos(n: u128) -> Duration {
    const NANOS_PER_SEC: u128 = 1_000_000_000;
    let secs = n / NANOS_PER_SEC;
    if secs > u64::MAX as u128 {
        return Duration::MAX;
    }
    Duration::new(secs as u64, (n % NANOS_PER_SEC) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// The draws are rand's `SmallRng` and `random_range(0..=n)`, number for number.
    ///
    /// So a seeded schedule is rand's.
    #[test]
    fn up_to_draws_what_random_range_draws() {
        for n in [
            1,
            2,
            3,
            199_999_999,
            200_000_000,
            30_000_000_000,
            u64::MAX / 3,
            u64::MAX - 1,
        ] {
            seed(n ^ 0x5eed);
            let ours: Vec<u64> = (0..64).map(|_| up_to(n)).collect();
            let mut rand = SmallRng::seed_from_u64(n ^ 0x5eed);
            let theirs: Vec<u64> = (0..64).map(|_| rand.random_range(0..=n)).collect();
            assert_eq!(ours, theirs, "n = {n}");
        }
        seed(1);
        let mut rand = SmallRng::seed_from_u64(1);
        assert_eq!(up_to(u64::MAX), rand.random_range(0..=u64::MAX));
        let (lo, hi) = (Duration::from_secs(u64::MAX / 2), Duration::MAX);
        seed(2);
        let mut rand = SmallRng::seed_from_u64(2);
        let theirs = from_nanos(rand.random_range(lo.as_nanos()..=hi.as_nanos()));
        assert_eq!(uniform(lo, hi), theirs);
    }

    /// The draws above `u64` are rand's too.
    ///
    /// The widening multiply, and the second draw where the first may be biased, at ranges of
    /// every size up to `u128::MAX`.
    #[test]
    fn wide_draws_are_what_random_range_draws() {
        for n in [
            1,
            u128::from(u64::MAX),
            u128::MAX / 3,
            u128::MAX - 1,
            u128::MAX,
        ] {
            seed(7);
            let ours: Vec<u128> = (0..64)
                .map(|_| with_rng(|rng| up_to_wide(rng, n)))
                .collect();
            let mut rand = SmallRng::seed_from_u64(7);
            let theirs: Vec<u128> = (0..64).map(|_| rand.random_range(0..=n)).collect();
            assert_eq!(ours, theirs, "n = {n}");
        }
        assert_eq!(wmul_wide(3, 5), (0, 15));
        assert_eq!(wmul_wide(1 << 64, 1 << 64), (1, 0));
        assert_eq!(wmul_wide(u128::MAX, 2), (1, u128::MAX - 1));
        assert_eq!(wmul_wide(u128::MAX, u128::MAX), (u128::MAX - 1, 1));
    }

    #[test]
    fn up_to_zero_draws_nothing() {
        seed(3);
        assert_eq!(up_to(0), 0);
        let after = up_to(1000);
        seed(3);
        assert_eq!(up_to(1000), after);
    }
}
