//! A retry budget that is a share of the calls made: a ratio over a sliding window, lock-free.
//!
//! # How it counts
//!
//! The window is cut into 16 slots.
//!
//! A slot lasts `window / 16`: the budget's *granularity*.
//!
//! That length is whole nanoseconds, at least 1 ns.
//!
//! Two 16-atomic rings count each slot's first attempts and retries.
//!
//! Each atomic is tagged with its slot's number.
//!
//! So a slot the clock left behind is recognised.
//!
//! Whoever reaches such a slot first empties it, exactly once.
//!
//! That takes a compare-and-swap on the slot.
//!
//! One more atomic holds the balance over the window's slots.
//!
//! It counts millionths of a retry: `ratio × first attempts + min_per_sec × window − retries`.
//!
//! A compare-and-swap grants a retry, never taking the balance negative.
//!
//! So two threads never both take the last retry.
//!
//! Each first attempt ([`RatioBudget::begin`]) reads the clock.
//!
//! It is counted in its own time's slot.
//!
//! So it leaves the window exactly when it should, at any call rate.
//!
//! That includes one call an hour.
//!
//! Its cost: a clock read, a slot compare-and-swap, a balance add.
//!
//! A granted retry comes with a [`RetryTicket`] naming its slot.
//!
//! A refund ([`RatioBudget::refund`]) gives the share back to that slot.
//!
//! It does so only while the slot is in the window.
//!
//! Once the slot has left, the refund is dropped.
//!
//! The slot's retries were given back as it left.

use core::fmt;
use core::time::Duration;

#[cfg(not(loom))]
use core::sync::atomic::{AtomicI64, AtomicU64, Ordering};
// Under `--cfg loom`, the budget's atomics are loom's.
//
// That lets `tests/loom.rs` explore every interleaving of concurrent calls, retries and refunds.
#[cfg(loom)]
use loom::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use super::window::{SlotClock, SLOTS};
use super::RetryTicket;
use crate::policy::Clock;

/// What one retry costs in the balance.
///
/// The ratio is counted in millionths, so 0.6 is 600,000 of them, exactly 60%.
const UNIT: i64 = 1_000_000;
/// The largest ratio.
const MAX_RATIO: f64 = 10.0;
/// The floor, in millionths of a retry, stays below this.
///
/// So the balance never overflows.
const MAX_FLOOR: u128 = 1 << 60;

/// A retry budget shared by every call that uses it: Finagle's `RetryBudget`, exact and
/// lock-free.
///
/// Retries (hedges included) are capped over the trailing `window`.
///
/// The cap: `ratio ×` first attempts, plus `min_per_sec × window`.
///
/// [`RetryBudget`](crate::RetryBudget) (the AWS token bucket) suits a client.
///
/// This one suits a service's outbound calls.
///
/// However many calls come in, their retries add at most `ratio` to the dependency's load.
///
/// At 20%, a down dependency sees 1.2 calls per call.
///
/// The floor lets a quiet service still retry its rare failure.
///
/// - **Exact**: the ratio is counted in millionths, so `0.6` is 60%, not the 100% a whole
///   number of calls per retry would give.
/// - Over a window, callers asking for more are granted exactly
///   `floor(ratio × first attempts + min_per_sec × window_secs)` retries, at any thread count
///   and call rate.
/// - **Window**: cut into 16 slots of `window / 16`.
/// - A call or retry counts from its slot until 16 slots later: between 15/16 of the window and
///   all of it.
/// - Each call counts in its own clock reading's slot.
/// - **Refunds**: a retry granted but never made gives its share back to its slot, through its
///   [`RetryTicket`].
/// - Once that slot leaves the window, refunds are dropped.
/// - So no sequence of takes, refunds and clock jumps grants more than the ratio allows.
/// - **Cheap on success**: a first attempt is a clock reading, a compare-and-swap on its slot
///   and an atomic add.
/// - A success is nothing.
///
/// `const`-constructible, so it lives in a `static`:
///
/// ```
/// use retry_jitter::{sleep, RatioBudget};
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
    /// The slots' time line.
    clock: SlotClock,
    /// The latest slot the clock reached.
    ///
    /// Every slot older than `head - 15` has been emptied.
    head: AtomicU64,
    /// Over the window: `ratio × first attempts + floor − retries`.
    ///
    /// It counts millionths of a retry.
    balance: AtomicI64,
    /// Per slot, its number (low 32 bits) and the first attempts made in it.
    calls: [AtomicU64; SLOTS],
    /// Per slot, its number and the retries granted in it, not given back.
    retries: [AtomicU64; SLOTS],
}

/// Which ring a count goes to.
#[derive(Clone, Copy)]
enum Ring {
    Calls,
    Retries,
}

/// A slot's word: its number's low 32 bits, a count.
const fn pack(tag: u32, count: u32) -> u64 {
    ((tag as u64) << 32) | count as u64
}

const fn unpack(word: u64) -> (u32, u32) {
    ((word >> 32) as u32, word as u32)
}

/// Whether slot number `a` (low 32 bits) comes after `b`.
const fn later(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl RatioBudget {
    /// Retries up to `ratio` of the first attempts made over the trailing `window`, plus
    /// `min_per_sec` a second over it (`min_per_sec × window` in all).
    ///
    /// `ratio` is taken to the nearest millionth.
    ///
    /// So `0.2` is 20%, `0.6` 60%, `10.0` ten retries per call.
    ///
    /// `window` is cut into 16 slots (see [`granularity`](RatioBudget::granularity)).
    ///
    /// # Panics
    ///
    /// If `ratio` is negative, above 10.0 or NaN, or `window` is zero (a window that holds no
    /// call).
    ///
    /// In a `static` or `const`, that is a compile-time error:
    ///
    /// ```compile_fail
    /// use retry_jitter::RatioBudget;
    /// static BAD: RatioBudget = RatioBudget::new(-0.1, 10, std::time::Duration::from_secs(10));
    /// ```
    ///
    /// ```should_panic
    /// let ratio: f64 = "NaN".parse().unwrap();
    /// let _ = retry_jitter::RatioBudget::new(ratio, 10, std::time::Duration::from_secs(10));
    /// ```
    ///
    /// ```
    /// use retry_jitter::RatioBudget;
    /// use std::time::Duration;
    /// static B: RatioBudget = RatioBudget::new(0.6, 0, Duration::from_secs(1));
    /// assert_eq!(B.ratio(), 0.6);
    /// ```
    #[must_use]
    #[cfg(not(loom))]
    pub const fn new(ratio: f64, min_per_sec: u32, window: Duration) -> Self {
        let (per_call, floor) = Self::shape(ratio, min_per_sec, window);
        RatioBudget {
            per_call,
            min_per_sec,
            window,
            clock: SlotClock::new(window),
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
        let (per_call, floor) = Self::shape(ratio, min_per_sec, window);
        RatioBudget {
            per_call,
            min_per_sec,
            window,
            clock: SlotClock::new(window),
            head: AtomicU64::new(0),
            balance: AtomicI64::new(floor),
            calls: core::array::from_fn(|_| AtomicU64::new(0)),
            retries: core::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// The arguments checked, and turned into millionths.
    ///
    /// The ratio becomes millionths, the floor millionths of a retry.
    const fn shape(ratio: f64, min_per_sec: u32, window: Duration) -> (i64, i64) {
        // `!(a && b)`, not `a || b`: NaN fails both comparisons.
        if !(ratio >= 0.0 && ratio <= MAX_RATIO) {
            panic!("RatioBudget::new: the ratio must be in 0.0..=10.0 (not negative, not NaN)");
        }
        if window.is_zero() {
            panic!("RatioBudget::new: the window must be longer than zero");
        }
        let per_call = (ratio * UNIT as f64 + 0.5) as i64;
        // min_per_sec × window_secs retries, in millionths.
        //
        // That is min × nanos / 1,000.
        let mut floor = min_per_sec as u128 * window.as_nanos() / 1_000;
        if floor > MAX_FLOOR {
            floor = MAX_FLOOR;
        }
        (per_call, floor as i64)
    }

    /// The share of first attempts that may be retried.
    ///
    /// It is given to the millionth.
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = retry_jitter::RatioBudget::new(0.2, 10, Duration::from_secs(10));
    /// assert_eq!(b.ratio(), 0.2);
    /// ```
    pub const fn ratio(&self) -> f64 {
        self.per_call as f64 / UNIT as f64
    }

    /// The retries a second allowed whatever the calls.
    ///
    /// The floor is `min_per_sec × window`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = retry_jitter::RatioBudget::new(0.2, 10, Duration::from_secs(10));
    /// assert_eq!(b.min_per_sec(), 10);
    /// ```
    pub const fn min_per_sec(&self) -> u32 {
        self.min_per_sec
    }

    /// The window calls and retries are counted over.
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = retry_jitter::RatioBudget::new(0.2, 10, Duration::from_secs(10));
    /// assert_eq!(b.window(), Duration::from_secs(10));
    /// ```
    pub const fn window(&self) -> Duration {
        self.window
    }

    /// The length of one of the window's 16 slots.
    ///
    /// That is `window / 16`.
    ///
    /// It is whole nanoseconds, at least 1.
    ///
    /// A call or retry counts from the start of its slot until 16 slots later.
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = retry_jitter::RatioBudget::new(0.2, 10, Duration::from_secs(10));
    /// assert_eq!(b.granularity(), Duration::from_millis(625));
    /// ```
    pub const fn granularity(&self) -> Duration {
        Duration::from_nanos(self.clock.slot_nanos())
    }

    /// A call made its first attempt: it adds `ratio` of a retry to the budget.
    ///
    /// It counts in the slot of `clock`'s reading now.
    ///
    /// It leaves the window with that slot.
    ///
    /// The retry loops call this as a first attempt ends.
    ///
    /// ```
    /// use retry_jitter::{sleep, RatioBudget};
    /// use std::time::Duration;
    /// let b = RatioBudget::new(0.5, 0, Duration::from_secs(10));
    /// b.begin(sleep::now);
    /// b.begin(sleep::now);
    /// assert_eq!(b.available(sleep::now), 1);
    /// ```
    #[inline]
    pub fn begin(&self, clock: Clock) {
        let slot = self.refresh(clock);
        let counted = self.add(Ring::Calls, slot, 1);
        if counted > 0 {
            self.balance.fetch_add(self.per_call, Ordering::AcqRel);
        }
    }

    /// Take one retry's (or hedge's) share.
    ///
    /// `false`, taking nothing, when the window's retries reach the cap.
    ///
    /// The cap: `ratio ×` the window's first attempts, plus the floor.
    ///
    /// A share taken here is never given back.
    ///
    /// [`take_retry`](RatioBudget::take_retry) gives the ticket a refund needs.
    ///
    /// ```
    /// use retry_jitter::{sleep, RatioBudget};
    /// use std::time::Duration;
    /// let b = RatioBudget::new(0.0, 1, Duration::from_secs(2)); // the floor alone: 2
    /// assert!(b.try_retry(sleep::now));
    /// assert!(b.try_retry(sleep::now));
    /// assert!(!b.try_retry(sleep::now));
    /// ```
    pub fn try_retry(&self, clock: Clock) -> bool {
        self.take_retry(clock).is_some()
    }

    /// Take one retry's (or hedge's) share, as [`try_retry`](RatioBudget::try_retry) does.
    ///
    /// `None` when the budget is spent.
    ///
    /// Else the ticket naming the slot it was taken in.
    ///
    /// [`refund`](RatioBudget::refund) uses it should the retry not run.
    ///
    /// ```
    /// use retry_jitter::{sleep, RatioBudget};
    /// use std::time::Duration;
    /// let b = RatioBudget::new(0.0, 1, Duration::from_secs(1)); // the floor alone: 1
    /// let ticket = b.take_retry(sleep::now).unwrap();
    /// assert!(b.take_retry(sleep::now).is_none());
    /// b.refund(ticket);
    /// assert_eq!(b.available(sleep::now), 1);
    /// ```
    pub fn take_retry(&self, clock: Clock) -> Option<RetryTicket> {
        let slot = self.refresh(clock);
        self.balance
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |b| {
                (b >= UNIT).then(|| b - UNIT)
            })
            .ok()?;
        if self.add(Ring::Retries, slot, 1) == 1 {
            Some(RetryTicket::new(slot))
        } else {
            // This thread's slot left the window while it was taking.
            //
            // The thread slept longer than the window.
            //
            // Or the slot's count is full.
            //
            // Either way, the retry is not made.
            self.balance.fetch_add(UNIT, Ordering::AcqRel);
            None
        }
    }

    /// A retry that [`take_retry`](RatioBudget::take_retry) granted did not run after all.
    ///
    /// Give its share back to its slot, if that slot is still in the window.
    ///
    /// Causes: the future was dropped mid-wait, or a hook panicked.
    ///
    /// Or the deadline came first.
    ///
    /// A refund after the slot left the window is dropped.
    ///
    /// The slot's retries were given back as it left.
    ///
    /// Reads no clock.
    ///
    /// The retry loops here do this by themselves.
    ///
    /// ```
    /// use retry_jitter::{sleep, RatioBudget};
    /// use std::time::Duration;
    /// let b = RatioBudget::new(0.0, 1, Duration::from_secs(1));
    /// let ticket = b.take_retry(sleep::now).unwrap();
    /// assert_eq!(b.available(sleep::now), 0);
    /// b.refund(ticket);
    /// assert_eq!(b.available(sleep::now), 1);
    /// ```
    pub fn refund(&self, ticket: RetryTicket) {
        let number = ticket.slot();
        // Slots before `head - 15` have left the window, or are leaving it now.
        //
        // The thread that moved `head` empties such a slot next.
        //
        // Then the tag check below fails.
        if number.saturating_add(SLOTS as u64) <= self.head.load(Ordering::Acquire) {
            return;
        }
        let slot = self.ring(Ring::Retries, number);
        let tag = number as u32;
        let mut word = slot.load(Ordering::Acquire);
        loop {
            let (t, count) = unpack(word);
            if t != tag || count == 0 {
                return;
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

    /// A call succeeded after `retries` retries (0: first attempt).
    ///
    /// Nothing to do: a ratio budget ignores what calls return.
    ///
    /// It counts calls as they begin, retries when taken.
    ///
    /// Kept beside [`RetryBudget::succeeded_after`](crate::RetryBudget::succeeded_after).
    ///
    /// ```
    /// use retry_jitter::{sleep, RatioBudget};
    /// use std::time::Duration;
    /// let b = RatioBudget::new(0.0, 1, Duration::from_secs(1));
    /// b.succeeded_after(3);
    /// assert_eq!(b.available(sleep::now), 1);
    /// ```
    #[inline]
    pub fn succeeded_after(&self, retries: u32) {
        let _ = retries;
    }

    /// The retries the budget would grant now, one after another.
    ///
    /// ```
    /// use retry_jitter::{sleep, RatioBudget};
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

    /// Read the clock, as every method does.
    ///
    /// Return the number of the slot it is in.
    #[inline]
    pub(crate) fn slot_now(&self, clock: Clock) -> u64 {
        self.refresh(clock)
    }

    /// `n` first attempts counted at once in slot `slot`.
    ///
    /// That slot is the clock's, just read.
    ///
    /// [`DefaultBudget`](crate::budget::DefaultBudget) folds its counters into this.
    pub(crate) fn begin_many(&self, slot: u64, n: u32) {
        if n == 0 {
            return;
        }
        let counted = self.add(Ring::Calls, slot, n);
        if counted > 0 {
            self.balance
                .fetch_add(i64::from(counted) * self.per_call, Ordering::AcqRel);
        }
    }

    /// Read the clock and empty the slots it left behind.
    ///
    /// Return the slot it is in.
    #[inline]
    fn refresh(&self, clock: Clock) -> u64 {
        let slot = self.clock.slot_of(self.clock.nanos(clock));
        if slot > self.head.load(Ordering::Acquire) {
            self.sweep(slot);
        }
        slot
    }

    /// The clock is in slot `now`.
    ///
    /// Empty every slot it left behind since the last reading.
    #[cold]
    #[inline(never)]
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
        // After 2^30 silent slots, a slot's number may mislead.
        //
        // Its low 32 bits may make it look younger than it is.
        let long_silence = now - head >= 1 << 30;
        for number in from..=now {
            self.enter(Ring::Calls, number, long_silence);
            self.enter(Ring::Retries, number, long_silence);
        }
    }

    /// Bring the slot of `number` in `ring` to that number.
    ///
    /// It empties what an older slot there counted.
    ///
    /// With `any`, it empties any other slot's count.
    ///
    /// `false` if it already holds a younger one.
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

    /// Count `n` in slot `number` of `ring`.
    ///
    /// Return how many were counted.
    ///
    /// 0 if that slot has left the window.
    ///
    /// Fewer than `n` if its count is full.
    #[inline]
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

    /// `count` first attempts or retries left the window.
    ///
    /// Take them out of the balance.
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

    fn ring(&self, ring: Ring, number: u64) -> &AtomicU64 {
        let i = number as usize % SLOTS;
        match ring {
            Ring::Calls => &self.calls[i],
            Ring::Retries => &self.retries[i],
        }
    }
}

impl Default for RatioBudget {
    /// Finagle's default: 20% of calls, 10 retries a second.
    ///
    /// The window is 10 s.
    ///
    /// ```
    /// let b = retry_jitter::RatioBudget::default();
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
mod tests;
