//! A retry budget that is a share of the calls made: a ratio over a sliding window, lock-free.
//!
//! # How it counts
//!
//! The window is cut into 16 slots of `window / 16` (whole nanoseconds, at least 1 ns):
//! the budget's *granularity*. Two rings of 16 atomics count, per slot, the first attempts and
//! the retries made in it, each tagged with the slot's number so that a slot left behind by the
//! clock is recognised and emptied (its counts leave the window) by whoever reaches it first,
//! exactly once (a compare-and-swap on the slot). One more atomic holds the balance: in
//! millionths of a retry, `ratio × first attempts + min_per_sec × window − retries` over the
//! slots in the window. A retry is granted by a compare-and-swap on it that never takes it
//! below zero, so two threads can never both take the last retry.
//!
//! A first attempt ([`RatioBudget::begin`]) is one relaxed atomic add on a counter of calls
//! begun; it reads no clock. The calls begun are *dated* (moved into a slot) by the next clock
//! reading: every [`RatioBudget::try_retry`] and [`RatioBudget::available`], and one
//! `begin` in 64, the first one included. They are dated to the clock reading before them, the
//! earliest time they can have been made, so a call leaves the window at the latest when it
//! should, and the budget never grants more than the ratio allows.

use core::fmt;
use core::time::Duration;
use std::sync::OnceLock;
use std::time::Instant;

#[cfg(not(loom))]
use core::sync::atomic::{AtomicI64, AtomicU64, Ordering};
// Under `--cfg loom`, the budget's atomics are loom's, so that `tests/loom.rs` can explore every
// interleaving of concurrent calls, retries and refunds.
#[cfg(loom)]
use loom::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use crate::policy::Clock;

/// The slots the window is cut into.
const SLOTS: usize = 16;
/// What one retry costs in the balance: the ratio is counted in millionths, so that 0.6 is
/// 600,000 of them, exactly 60%.
const UNIT: i64 = 1_000_000;
/// One `begin` in this many reads the clock to date the calls begun since the last reading.
const DATE_EVERY: u64 = 64;
/// The largest ratio.
const MAX_RATIO: f64 = 10.0;
/// The floor is kept below this (in millionths of a retry), so the balance never overflows.
const MAX_FLOOR: u128 = 1 << 60;

/// A retry budget shared by every call that uses it: retries (hedges included) are allowed
/// while, over the trailing `window`, they stay within `ratio ×` the first attempts made plus
/// `min_per_sec × window` — Finagle's `RetryBudget`, exact and lock-free.
///
/// Where [`RetryBudget`](crate::RetryBudget) (the AWS token bucket) suits a client, this suits
/// a service's outbound calls: however many calls come in, their retries add at most `ratio`
/// to the load they make on the dependency (20% → 1.2 calls per call when it is down), and the
/// floor lets a quiet service still retry its rare failure.
///
/// - **Exact**: the ratio is counted in millionths (`0.6` is 60%, not the 100% that truncating
///   `1 / 0.6` to a whole number of calls per retry would give), and over a window the retries
///   granted to callers asking for more are exactly
///   `floor(ratio × first attempts + min_per_sec × window_secs)`, however many threads ask.
/// - **Window**: cut into 16 slots of `window / 16`: a call or retry counts from its slot until
///   16 slots later, for between 15/16 of the window and the whole window. The first attempts
///   are dated without reading the clock for each (see [`begin`](RatioBudget::begin)): to the
///   clock reading before them, so they may leave the window up to 64 calls early, never late.
/// - **Cheap on success**: a first attempt is one relaxed atomic add, and one in 64 reads the
///   clock; a success is nothing.
///
/// `const`-constructible, so it lives in a `static`:
///
/// ```
/// use retry_runtime::{sleep, RatioBudget};
/// use std::time::Duration;
///
/// // Retries up to 20% of the calls, plus 10 a second, over the last 10 s.
/// static BUDGET: RatioBudget = RatioBudget::new(0.2, 10, Duration::from_secs(10));
///
/// for _ in 0..1_000 {
///     BUDGET.begin(sleep::now); // a call's first attempt
/// }
/// // 20% of 1,000 calls, plus 10 a second over 10 s.
/// assert_eq!(BUDGET.available(sleep::now), 300);
/// let granted = (0..1_000).filter(|_| BUDGET.try_retry(sleep::now)).count();
/// assert_eq!(granted, 300);
/// ```
pub struct RatioBudget {
    /// What a first attempt adds to the balance: the ratio in millionths.
    per_call: i64,
    min_per_sec: u32,
    window: Duration,
    /// A slot's length.
    slot_nanos: u64,
    /// The first clock reading: slots are numbered from it.
    origin: OnceLock<Instant>,
    /// First attempts made, ever.
    begun: AtomicU64,
    /// First attempts moved into a slot, ever.
    dated: AtomicU64,
    /// 1 + the slot of the latest clock reading that dated first attempts (0: none yet).
    dated_at: AtomicU64,
    /// The latest slot the clock reached: every slot older than `head - 15` has been emptied.
    head: AtomicU64,
    /// `ratio × first attempts + floor − retries` in the window, in millionths of a retry.
    balance: AtomicI64,
    /// Per slot, its number (low 32 bits) and the first attempts dated in it.
    calls: [AtomicU64; SLOTS],
    /// Per slot, its number and the retries granted in it.
    retries: [AtomicU64; SLOTS],
}

/// Which ring a count goes to.
#[derive(Clone, Copy)]
enum Ring {
    Calls,
    Retries,
}

/// A slot's word: its number's low 32 bits, and a count.
const fn pack(tag: u32, count: u32) -> u64 {
    ((tag as u64) << 32) | count as u64
}

const fn unpack(word: u64) -> (u32, u32) {
    ((word >> 32) as u32, word as u32)
}

/// Whether slot number `a` (its low 32 bits) comes after `b`.
const fn later(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl RatioBudget {
    /// Retries up to `ratio` of the first attempts made over the trailing `window`, plus
    /// `min_per_sec` a second over it (`min_per_sec × window` in all).
    ///
    /// `ratio` is taken to the nearest millionth: `0.2` is 20%, `0.6` 60%, `10.0` ten retries
    /// per call. `window` is cut into 16 slots (see [`granularity`](RatioBudget::granularity)).
    ///
    /// # Panics
    ///
    /// If `ratio` is negative, above 10.0 or NaN, or `window` is zero (a window that holds no
    /// call). In a `static` or a `const` that is a compile-time error:
    ///
    /// ```compile_fail
    /// use retry_runtime::RatioBudget;
    /// static BAD: RatioBudget = RatioBudget::new(-0.1, 10, std::time::Duration::from_secs(10));
    /// ```
    ///
    /// ```should_panic
    /// let ratio: f64 = "NaN".parse().unwrap();
    /// let _ = retry_runtime::RatioBudget::new(ratio, 10, std::time::Duration::from_secs(10));
    /// ```
    ///
    /// ```
    /// use retry_runtime::RatioBudget;
    /// use std::time::Duration;
    /// static B: RatioBudget = RatioBudget::new(0.6, 0, Duration::from_secs(1));
    /// assert_eq!(B.ratio(), 0.6);
    /// ```
    #[must_use]
    #[cfg(not(loom))]
    pub const fn new(ratio: f64, min_per_sec: u32, window: Duration) -> Self {
        let (per_call, floor, slot_nanos) = Self::shape(ratio, min_per_sec, window);
        RatioBudget {
            per_call,
            min_per_sec,
            window,
            slot_nanos,
            origin: OnceLock::new(),
            begun: AtomicU64::new(0),
            dated: AtomicU64::new(0),
            dated_at: AtomicU64::new(0),
            head: AtomicU64::new(0),
            balance: AtomicI64::new(floor),
            calls: [const { AtomicU64::new(0) }; SLOTS],
            retries: [const { AtomicU64::new(0) }; SLOTS],
        }
    }

    /// [`new`](RatioBudget::new) on loom's atomics, which cannot be made in `const`.
    #[must_use]
    #[cfg(loom)]
    pub fn new(ratio: f64, min_per_sec: u32, window: Duration) -> Self {
        let (per_call, floor, slot_nanos) = Self::shape(ratio, min_per_sec, window);
        RatioBudget {
            per_call,
            min_per_sec,
            window,
            slot_nanos,
            origin: OnceLock::new(),
            begun: AtomicU64::new(0),
            dated: AtomicU64::new(0),
            dated_at: AtomicU64::new(0),
            head: AtomicU64::new(0),
            balance: AtomicI64::new(floor),
            calls: core::array::from_fn(|_| AtomicU64::new(0)),
            retries: core::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// The arguments checked and turned into the ratio in millionths, the floor in millionths
    /// of a retry, and a slot's length.
    const fn shape(ratio: f64, min_per_sec: u32, window: Duration) -> (i64, i64, u64) {
        // `!(a && b)` rather than `a || b`: NaN fails both comparisons.
        if !(ratio >= 0.0 && ratio <= MAX_RATIO) {
            panic!("RatioBudget::new: the ratio must be in 0.0..=10.0 (not negative, not NaN)");
        }
        if window.is_zero() {
            panic!("RatioBudget::new: the window must be longer than zero");
        }
        let per_call = (ratio * UNIT as f64 + 0.5) as i64;
        let nanos = window.as_nanos();
        // min_per_sec × window_secs retries, in millionths: min × nanos / 1,000.
        let mut floor = min_per_sec as u128 * nanos / 1_000;
        if floor > MAX_FLOOR {
            floor = MAX_FLOOR;
        }
        let mut slot = nanos / SLOTS as u128;
        if slot == 0 {
            slot = 1;
        } else if slot > u64::MAX as u128 {
            slot = u64::MAX as u128;
        }
        (per_call, floor as i64, slot as u64)
    }

    /// The share of the first attempts that may be retried, to the millionth.
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = retry_runtime::RatioBudget::new(0.2, 10, Duration::from_secs(10));
    /// assert_eq!(b.ratio(), 0.2);
    /// ```
    pub const fn ratio(&self) -> f64 {
        self.per_call as f64 / UNIT as f64
    }

    /// The retries a second allowed whatever the calls (the floor is `min_per_sec × window`).
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = retry_runtime::RatioBudget::new(0.2, 10, Duration::from_secs(10));
    /// assert_eq!(b.min_per_sec(), 10);
    /// ```
    pub const fn min_per_sec(&self) -> u32 {
        self.min_per_sec
    }

    /// The window calls and retries are counted over.
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = retry_runtime::RatioBudget::new(0.2, 10, Duration::from_secs(10));
    /// assert_eq!(b.window(), Duration::from_secs(10));
    /// ```
    pub const fn window(&self) -> Duration {
        self.window
    }

    /// The length of one of the window's 16 slots: `window / 16`, in whole nanoseconds (at
    /// least 1). A call or retry counts from the start of its slot until 16 slots later.
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = retry_runtime::RatioBudget::new(0.2, 10, Duration::from_secs(10));
    /// assert_eq!(b.granularity(), Duration::from_millis(625));
    /// ```
    pub const fn granularity(&self) -> Duration {
        Duration::from_nanos(self.slot_nanos)
    }

    /// A call makes its first attempt: it adds `ratio` of a retry to the budget.
    ///
    /// One relaxed atomic add; one call in 64 (the first one included) also reads `clock` to
    /// date the calls begun since the last reading (see the type's documentation).
    ///
    /// ```
    /// use retry_runtime::{sleep, RatioBudget};
    /// use std::time::Duration;
    /// let b = RatioBudget::new(0.5, 0, Duration::from_secs(10));
    /// b.begin(sleep::now);
    /// b.begin(sleep::now);
    /// assert_eq!(b.available(sleep::now), 1);
    /// ```
    #[inline]
    pub fn begin(&self, clock: Clock) {
        let n = self.begun.fetch_add(1, Ordering::Relaxed);
        if n % DATE_EVERY == 0 {
            self.refresh(clock);
        }
    }

    /// Take one retry's (or hedge's) share: `false`, taking nothing, when the retries in the
    /// window already reach `ratio ×` its first attempts plus the floor.
    ///
    /// ```
    /// use retry_runtime::{sleep, RatioBudget};
    /// use std::time::Duration;
    /// let b = RatioBudget::new(0.0, 1, Duration::from_secs(2)); // the floor alone: 2
    /// assert!(b.try_retry(sleep::now));
    /// assert!(b.try_retry(sleep::now));
    /// assert!(!b.try_retry(sleep::now));
    /// ```
    pub fn try_retry(&self, clock: Clock) -> bool {
        let slot = self.refresh(clock);
        let took = self
            .balance
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |b| {
                (b >= UNIT).then(|| b - UNIT)
            })
            .is_ok();
        if !took {
            return false;
        }
        if self.add(Ring::Retries, slot, 1) == 1 {
            true
        } else {
            // This thread's slot left the window while it was taking (it slept longer than
            // the window), or the slot's count is full: the retry is not made.
            self.balance.fetch_add(UNIT, Ordering::AcqRel);
            false
        }
    }

    /// A retry that took its share did not run after all (its future was dropped during the
    /// wait, a hook panicked, the deadline came first): give it back. Reads no clock.
    ///
    /// The retry given back is the oldest one still in the window: exact when that is the
    /// one that did not run (or when they are in the same slot), and otherwise stricter than
    /// exact, by one retry, until the oldest one's slot leaves the window. A retry whose slot
    /// already left the window has nothing left to give back; then a younger one's is.
    ///
    /// ```
    /// use retry_runtime::{sleep, RatioBudget};
    /// use std::time::Duration;
    /// let b = RatioBudget::new(0.0, 1, Duration::from_secs(1));
    /// assert!(b.try_retry(sleep::now));
    /// assert_eq!(b.available(sleep::now), 0);
    /// b.refund_retry();
    /// assert_eq!(b.available(sleep::now), 1);
    /// ```
    pub fn refund_retry(&self) {
        let head = self.head.load(Ordering::Acquire);
        for number in head.saturating_sub(SLOTS as u64 - 1)..=head {
            let slot = &self.retries[number as usize % SLOTS];
            let tag = number as u32;
            let mut word = slot.load(Ordering::Acquire);
            loop {
                let (t, count) = unpack(word);
                if t != tag || count == 0 {
                    break;
                }
                match slot.compare_exchange_weak(
                    word,
                    pack(tag, count - 1),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => {
                        self.balance.fetch_add(UNIT, Ordering::AcqRel);
                        return;
                    }
                    Err(now) => word = now,
                }
            }
        }
    }

    /// A call succeeded after `retries` retries (0: at its first attempt). Nothing to do: a
    /// ratio budget counts calls when they begin and retries when they are taken, whatever
    /// they return. Kept beside [`RetryBudget::succeeded_after`](crate::RetryBudget::succeeded_after).
    ///
    /// ```
    /// use retry_runtime::{sleep, RatioBudget};
    /// use std::time::Duration;
    /// let b = RatioBudget::new(0.0, 1, Duration::from_secs(1));
    /// b.succeeded_after(3);
    /// assert_eq!(b.available(sleep::now), 1);
    /// ```
    #[inline(always)]
    pub fn succeeded_after(&self, retries: u32) {
        let _ = retries;
    }

    /// The retries the budget would grant now, one after the other.
    ///
    /// ```
    /// use retry_runtime::{sleep, RatioBudget};
    /// use std::time::Duration;
    /// let b = RatioBudget::new(0.25, 0, Duration::from_secs(10));
    /// for _ in 0..10 {
    ///     b.begin(sleep::now);
    /// }
    /// assert_eq!(b.available(sleep::now), 2); // 2.5 retries' worth
    /// ```
    pub fn available(&self, clock: Clock) -> u32 {
        self.refresh(clock);
        let retries = self.balance.load(Ordering::Acquire).max(0) / UNIT;
        u32::try_from(retries).unwrap_or(u32::MAX)
    }

    /// Read the clock: empty the slots it has left behind, date the calls begun since the last
    /// reading, and return the slot it is in.
    fn refresh(&self, clock: Clock) -> u64 {
        let now = clock();
        let origin = *self.origin.get_or_init(|| now);
        let nanos = now.saturating_duration_since(origin).as_nanos() / u128::from(self.slot_nanos);
        let slot = u64::try_from(nanos).unwrap_or(u64::MAX);
        self.sweep(slot);
        self.date(slot);
        slot
    }

    /// The clock is in slot `now`: empty every slot it left behind since the last reading.
    fn sweep(&self, now: u64) {
        let head = self.head.fetch_max(now, Ordering::AcqRel);
        if head >= now {
            return;
        }
        let from = if now - head >= SLOTS as u64 {
            now + 1 - SLOTS as u64
        } else {
            head + 1
        };
        // After a silence of 2^30 slots, a slot's 32-bit number may look younger than it is.
        let long_silence = now - head >= 1 << 30;
        for number in from..=now {
            self.enter(Ring::Calls, number, long_silence);
            self.enter(Ring::Retries, number, long_silence);
        }
    }

    /// Bring the slot of `number` in `ring` to that number, emptying what an older slot there
    /// counted (with `any`, whatever other slot): `false` if it already holds a younger one.
    fn enter(&self, ring: Ring, number: u64, any: bool) -> bool {
        let slot = self.ring(ring, number);
        let tag = number as u32;
        let mut word = slot.load(Ordering::Acquire);
        loop {
            let (t, count) = unpack(word);
            if t == tag {
                return true;
            }
            if later(t, tag) && !any {
                return false;
            }
            match slot.compare_exchange_weak(
                word,
                pack(tag, 0),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    self.expire(ring, count);
                    word = pack(tag, 0);
                }
                Err(seen) => word = seen,
            }
        }
    }

    /// Count `n` in slot `number` of `ring`: how many were counted (0 if that slot has left
    /// the window, fewer than `n` if its count is full).
    fn add(&self, ring: Ring, number: u64, n: u32) -> u32 {
        let slot = self.ring(ring, number);
        let tag = number as u32;
        let mut word = slot.load(Ordering::Acquire);
        loop {
            let (t, count) = unpack(word);
            if t != tag {
                if !self.enter(ring, number, false) {
                    return 0;
                }
                word = slot.load(Ordering::Acquire);
                continue;
            }
            let n = n.min(u32::MAX - count);
            if n == 0 {
                return 0;
            }
            match slot.compare_exchange_weak(
                word,
                pack(tag, count + n),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return n,
                Err(seen) => word = seen,
            }
        }
    }

    /// `count` first attempts or retries left the window: take them out of the balance.
    fn expire(&self, ring: Ring, count: u32) {
        if count == 0 {
            return;
        }
        let count = i64::from(count);
        match ring {
            Ring::Calls => self
                .balance
                .fetch_sub(count * self.per_call, Ordering::AcqRel),
            Ring::Retries => self.balance.fetch_add(count * UNIT, Ordering::AcqRel),
        };
    }

    /// Move the first attempts begun since the last dating into a slot: the one of the clock
    /// reading before them, the earliest they can have been made (`now` for the first ones).
    fn date(&self, now: u64) {
        let at = self.dated_at.load(Ordering::Acquire);
        let begun = self.begun.load(Ordering::Acquire);
        if let Ok(dated) = self
            .dated
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |d| {
                (begun > d).then_some(begun)
            })
        {
            let n = u32::try_from(begun - dated).unwrap_or(u32::MAX);
            let number = at.checked_sub(1).unwrap_or(now);
            let counted = self.add(Ring::Calls, number, n);
            if counted > 0 {
                self.balance
                    .fetch_add(i64::from(counted) * self.per_call, Ordering::AcqRel);
            }
        }
        self.dated_at.fetch_max(now + 1, Ordering::AcqRel);
    }

    fn ring(&self, ring: Ring, number: u64) -> &AtomicU64 {
        let i = number as usize % SLOTS;
        match ring {
            Ring::Calls => &self.calls[i],
            Ring::Retries => &self.retries[i],
        }
    }
}

impl Default for RatioBudget {
    /// Finagle's default: 20% of the calls, 10 retries a second, over 10 s.
    ///
    /// ```
    /// let b = retry_runtime::RatioBudget::default();
    /// assert_eq!((b.ratio(), b.min_per_sec()), (0.2, 10));
    /// ```
    fn default() -> Self {
        RatioBudget::new(0.2, 10, Duration::from_secs(10))
    }
}

impl fmt::Debug for RatioBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RatioBudget")
            .field("ratio", &self.ratio())
            .field("min_per_sec", &self.min_per_sec)
            .field("window", &self.window)
            .field(
                "balance",
                &(self.balance.load(Ordering::Relaxed) as f64 / UNIT as f64),
            )
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn fixed() -> Instant {
        static AT: OnceLock<Instant> = OnceLock::new();
        *AT.get_or_init(Instant::now)
    }

    #[test]
    fn slot_numbers_compare_across_the_wrap() {
        assert!(later(1, 0));
        assert!(!later(0, 1));
        assert!(later(0, u32::MAX));
        assert!(!later(5, 5));
    }

    #[test]
    fn a_ratio_is_counted_in_millionths_rounded() {
        for (ratio, per_call) in [
            (0.01, 10_000),
            (0.2, 200_000),
            (0.6, 600_000),
            (10.0, 10_000_000),
        ] {
            assert_eq!(
                RatioBudget::new(ratio, 0, Duration::from_secs(1)).per_call,
                per_call
            );
        }
        assert_eq!(
            RatioBudget::new(1e-7, 0, Duration::from_secs(1)).per_call,
            0
        );
    }

    #[test]
    fn the_floor_is_min_per_sec_times_the_window_and_saturates() {
        let b = RatioBudget::new(0.0, 10, Duration::from_millis(1_500));
        assert_eq!(b.available(fixed), 15);
        let huge = RatioBudget::new(10.0, u32::MAX, Duration::MAX);
        assert_eq!(huge.balance.load(Ordering::Relaxed), MAX_FLOOR as i64);
        assert_eq!(huge.slot_nanos, u64::MAX);
        let tiny = RatioBudget::new(1.0, 0, Duration::from_nanos(3));
        assert_eq!(tiny.granularity(), Duration::from_nanos(1));
    }

    #[test]
    #[should_panic(expected = "ratio must be in 0.0..=10.0")]
    fn a_ratio_above_ten_panics() {
        let _ = RatioBudget::new(10.000_001, 0, Duration::from_secs(1));
    }

    #[test]
    #[should_panic(expected = "ratio must be in 0.0..=10.0")]
    fn a_negative_ratio_panics() {
        let _ = RatioBudget::new(-0.0001, 0, Duration::from_secs(1));
    }

    #[test]
    #[should_panic(expected = "window must be longer than zero")]
    fn a_zero_window_panics() {
        let _ = RatioBudget::new(0.2, 10, Duration::ZERO);
    }

    #[test]
    fn a_full_slot_refuses_rather_than_forgets() {
        let b = RatioBudget::new(0.0, 0, Duration::from_secs(1));
        b.retries[0].store(pack(0, u32::MAX), Ordering::Relaxed);
        b.balance.store(2 * UNIT, Ordering::Relaxed);
        assert!(!b.try_retry(fixed));
        assert_eq!(b.available(fixed), 2);
    }
}
