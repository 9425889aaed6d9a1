//! The budget every retry loop has unless told otherwise: a [`RatioBudget`] of Finagle's
//! shape (20% of the calls over 10 s, a floor of 10 retries a second) whose calls are counted
//! without a clock reading and without a shared cache line.
//!
//! # How it counts
//!
//! A call ([`SharedBudget::begin`]) adds one to a counter of its thread's *stripe*: eight
//! counters, each on a cache line of its own, a thread keeping its stripe for life, so that
//! threads calling the same function do not take a line from each other. That is the whole
//! success path: no clock, no compare-and-swap. The counters are *folded* into the ratio
//! budget's window when a retry asks for a share (or [`DefaultBudget::available`] is read),
//! under a lock that only those take: the calls since the last fold are spread over the slots
//! since the last fold, evenly (their own times are not known), so that those found
//! after a silence longer than the window count only for the window's share of them (an hour
//! of healthy traffic does not fund a retry storm). The first call of all reads the clock once,
//! so that the first fold knows how long the counters have been counting.

use core::fmt;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use core::time::Duration;
use std::cell::Cell;
use std::sync::{Arc, Mutex};

use super::window::SLOTS;
use super::{Budget, Charge, RatioBudget, RetryTicket, SharedBudget};
use crate::policy::Clock;

/// The stripes a budget's calls are counted in.
const STRIPES: usize = 8;

/// One stripe's count of calls not folded yet, alone on its cache line.
#[repr(align(64))]
struct Stripe(AtomicU64);

/// The stripe the next thread to count a call takes.
static NEXT_STRIPE: AtomicU64 = AtomicU64::new(0);

std::thread_local! {
    /// This thread's stripe, `usize::MAX` until it first counts a call.
    static STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// This thread's stripe: given round-robin at its first call, so that up to eight threads
/// never share one.
#[inline(always)]
fn stripe() -> usize {
    STRIPE
        .try_with(|s| {
            let i = s.get();
            if i < STRIPES {
                i
            } else {
                let i = NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) as usize % STRIPES;
                s.set(i);
                i
            }
        })
        .unwrap_or(0)
}

/// The retry budget a `#[retry]` function, a [`Retry`](crate::Retry) and each host of a
/// [`RetryLayer`](crate::tower::RetryLayer) or `RetryMiddleware` has unless given another
/// (`budget = &X`, `.budget(&X)`) or none (`budget = none`, `.budget_none()`): retries
/// (hedges included) allowed while, over the trailing 10 s, they stay within 20% of the calls
/// made plus 10 a second — the shape of Finagle's, Linkerd's, reqwest's and Gateway API's
/// retry budgets. So a handful of calls retries exactly as without a budget (the floor: 100
/// retries over any 10 s), and a fleet of callers sends a dependency that is down at most 1.2
/// attempts per call, plus the floor, where five attempts each would send five.
///
/// Unlike [`RatioBudget`], a call is counted without reading the clock, on a counter of its
/// thread's own (module docs): the success path is a thread-local read and one atomic add, and
/// threads calling the same function do not contend for a cache line. The calls are brought
/// into the window when a retry asks, spread evenly over the time since the last retry asked:
/// so a call is dated by that spread, not by its own clock reading, and calls found after a
/// silence longer than the window count for the window's share of them.
///
/// ```
/// use retry_jitter::{sleep, DefaultBudget};
///
/// static BUDGET: DefaultBudget = DefaultBudget::new();
/// assert_eq!(BUDGET.available(sleep::now), 100); // the floor: 10 a second over 10 s
/// for _ in 0..1_000 {
///     retry_jitter::SharedBudget::begin(&BUDGET, sleep::now); // a call
/// }
/// assert_eq!(BUDGET.available(sleep::now), 300); // plus 20% of 1,000 calls
/// ```
pub struct DefaultBudget {
    /// The calls counted and not folded yet, per stripe.
    pending: [Stripe; STRIPES],
    /// Whether a call was ever counted (the first one reads the clock).
    started: AtomicBool,
    /// The slot of the last fold plus one (0: none yet), held while folding.
    folded: Mutex<u64>,
    /// The window the calls are folded into.
    ratio: RatioBudget,
}

impl DefaultBudget {
    /// The share of the calls retried.
    pub const RATIO: f64 = 0.2;
    /// The retries a second allowed whatever the calls.
    pub const MIN_PER_SEC: u32 = 10;
    /// The window calls and retries are counted over.
    pub const WINDOW: Duration = Duration::from_secs(10);

    /// A budget with nothing counted yet: the floor's 100 retries available.
    ///
    /// ```
    /// use retry_jitter::DefaultBudget;
    /// static B: DefaultBudget = DefaultBudget::new();
    /// assert_eq!(B.ratio().ratio(), 0.2);
    /// ```
    #[must_use]
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        DefaultBudget {
            pending: [const { Stripe(AtomicU64::new(0)) }; STRIPES],
            started: AtomicBool::new(false),
            folded: Mutex::new(0),
            ratio: RatioBudget::new(Self::RATIO, Self::MIN_PER_SEC, Self::WINDOW),
        }
    }

    /// [`new`](DefaultBudget::new) under loom, whose atomics cannot be made in `const`.
    #[must_use]
    #[cfg(loom)]
    pub fn new() -> Self {
        DefaultBudget {
            pending: core::array::from_fn(|_| Stripe(AtomicU64::new(0))),
            started: AtomicBool::new(false),
            folded: Mutex::new(0),
            ratio: RatioBudget::new(Self::RATIO, Self::MIN_PER_SEC, Self::WINDOW),
        }
    }

    /// The window the calls are folded into, for its figures (its ratio, floor, window).
    ///
    /// ```
    /// let b = retry_jitter::DefaultBudget::new();
    /// assert_eq!(b.ratio().min_per_sec(), 10);
    /// ```
    pub const fn ratio(&self) -> &RatioBudget {
        &self.ratio
    }

    /// The retries the budget would grant now, one after the other (the calls counted so far
    /// folded in first).
    ///
    /// ```
    /// use retry_jitter::{sleep, DefaultBudget};
    /// let b = DefaultBudget::new();
    /// assert_eq!(b.available(sleep::now), 100);
    /// ```
    pub fn available(&self, clock: Clock) -> u32 {
        self.fold(clock);
        self.ratio.available(clock)
    }

    /// The first call: the clock's reading starts the counters' time line.
    #[cold]
    #[inline(never)]
    fn start(&self, clock: Clock) {
        let slot = self.ratio.slot_now(clock);
        let mut folded = self.folded.lock().unwrap_or_else(|e| e.into_inner());
        if *folded == 0 {
            *folded = slot + 1;
        }
        self.started.store(true, Ordering::Release);
    }

    /// Count the calls the stripes hold in the window: spread evenly over the slots since the
    /// last fold (the clock's own included), of which only those still in the window keep
    /// theirs.
    fn fold(&self, clock: Clock) {
        let slot = self.ratio.slot_now(clock);
        let mut folded = self.folded.lock().unwrap_or_else(|e| e.into_inner());
        let mut calls: u64 = 0;
        for stripe in &self.pending {
            calls = calls.saturating_add(stripe.0.swap(0, Ordering::AcqRel));
        }
        // The slots the calls came over: from the last fold's to now's, both included.
        let over = match *folded {
            0 => 1,
            last => slot.saturating_sub(last - 1).saturating_add(1),
        };
        *folded = slot.saturating_add(1).max(*folded);
        drop(folded);
        if calls == 0 {
            return;
        }
        // Of `over` slots, the last `kept` are in the window: their share of the calls (to the
        // nearest call: one call after a silence still counts) is spread over them, slot
        // `slot - k` getting its part, the remainder the latest ones.
        let kept = over.min(SLOTS as u64);
        let share =
            (u128::from(calls) * u128::from(kept) + u128::from(over / 2)) / u128::from(over);
        let calls = u64::try_from(share).unwrap_or(u64::MAX);
        let per_slot = calls / kept;
        let extra = calls % kept;
        for k in 0..kept {
            let share = per_slot + u64::from(k < extra);
            self.ratio.begin_many(
                slot.saturating_sub(k),
                u32::try_from(share).unwrap_or(u32::MAX),
            );
        }
    }
}

impl Default for DefaultBudget {
    /// [`DefaultBudget::new`].
    ///
    /// ```
    /// let b = retry_jitter::DefaultBudget::default();
    /// assert_eq!(b.ratio().window(), std::time::Duration::from_secs(10));
    /// ```
    fn default() -> Self {
        DefaultBudget::new()
    }
}

impl SharedBudget for DefaultBudget {
    /// One atomic add on this thread's stripe (and, the very first time, a clock reading).
    #[inline(always)]
    fn begin(&self, clock: Clock) {
        if !self.started.load(Ordering::Relaxed) {
            self.start(clock);
        }
        self.pending[stripe()].0.fetch_add(1, Ordering::Relaxed);
    }
    /// Every charge is one retry of the ratio, taken after the calls counted are folded in.
    fn take_retry(&self, _: Charge, clock: Clock) -> Option<RetryTicket> {
        self.fold(clock);
        self.ratio.take_retry(clock)
    }
    #[inline]
    fn refund(&self, ticket: RetryTicket) {
        self.ratio.refund(ticket);
    }
}

/// A [`Retry`](crate::Retry)'s own budget, what [`Retry::new`](crate::Retry::new) gives it: a
/// [`DefaultBudget`] the `Retry` shares with its clones (and with nothing else), until
/// [`budget`](crate::Retry::budget) or [`budget_none`](crate::Retry::budget_none) replaces it.
///
/// ```
/// use retry_jitter::hooks::Budget;
/// use retry_jitter::OwnBudget;
/// let own = OwnBudget::default();
/// let clone = own.clone();
/// assert!(std::ptr::eq(own.get().unwrap(), clone.get().unwrap()));
/// ```
#[derive(Clone, Debug, Default)]
pub struct OwnBudget(Arc<DefaultBudget>);

impl Budget for OwnBudget {
    type Shared = DefaultBudget;
    #[inline(always)]
    fn get(&self) -> Option<&DefaultBudget> {
        Some(&self.0)
    }
}

impl fmt::Debug for DefaultBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pending: u64 = self
            .pending
            .iter()
            .map(|s| s.0.load(Ordering::Relaxed))
            .sum();
        f.debug_struct("DefaultBudget")
            .field("ratio", &self.ratio)
            .field("pending", &pending)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64 as Nanos;
    use std::time::Instant;

    /// A clock tests move by hand, shared by the tests of this module (each test its own
    /// budget, reading it only while holding `LOCK`).
    static BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    static OFFSET: Nanos = Nanos::new(0);
    static LOCK: Mutex<()> = Mutex::new(());

    fn clock() -> Instant {
        *BASE.get_or_init(Instant::now) + Duration::from_nanos(OFFSET.load(Ordering::SeqCst))
    }

    fn advance(d: Duration) {
        OFFSET.fetch_add(d.as_nanos() as u64, Ordering::SeqCst);
    }

    fn calls(b: &DefaultBudget, n: u32) {
        for _ in 0..n {
            b.begin(clock);
        }
    }

    fn granted(b: &DefaultBudget, asked: u32) -> u32 {
        (0..asked)
            .filter(|_| b.take_retry(Charge::Retry, clock).is_some())
            .count() as u32
    }

    #[test]
    fn a_handful_of_calls_retries_as_without_a_budget() {
        let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let b = DefaultBudget::new();
        calls(&b, 3);
        // 3 calls × 4 retries each: well within the floor.
        assert_eq!(granted(&b, 12), 12);
    }

    #[test]
    fn a_burst_gets_the_floor_and_a_fifth_of_its_calls() {
        let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let b = DefaultBudget::new();
        calls(&b, 10_000);
        assert_eq!(granted(&b, 10_000), 100 + 2_000);
        advance(Duration::from_secs(11));
        // The window moved on: the floor again.
        assert_eq!(granted(&b, 10_000), 100);
    }

    #[test]
    fn an_hour_of_calls_funds_only_the_windows_share() {
        let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let b = DefaultBudget::new();
        // 100 calls a second for an hour, no retry asked (the clock read once, at the first).
        for _ in 0..3_600 {
            calls(&b, 100);
            advance(Duration::from_secs(1));
        }
        // 360,000 calls spread over the 5,761 slots of 625 ms from the first call's to now's,
        // both included: the window's 16 hold 999.8 of them, to the nearest call 1,000, 20% of
        // which is 200 retries.
        assert_eq!(granted(&b, 100_000), 100 + 200);
    }

    #[test]
    fn one_call_after_a_silence_still_counts() {
        let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let b = DefaultBudget::new();
        calls(&b, 1);
        assert_eq!(granted(&b, 1_000), 100); // 0.2 of a retry: not a whole one yet
        advance(Duration::from_secs(11));
        calls(&b, 5);
        // 5 calls after 17 slots of silence: spread over 18 slots, 16 in the window, 4.4
        // calls; to the nearest, 4: with the floor back (the first slot left the window),
        // 100 + 0.8 retries.
        assert_eq!(granted(&b, 1_000), 100);
        calls(&b, 1);
        // 0.8 + 0.2: one more.
        assert_eq!(granted(&b, 1_000), 1);
    }

    #[test]
    fn threads_count_every_call() {
        let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let b = DefaultBudget::new();
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| calls(&b, 5_000));
            }
        });
        assert_eq!(b.available(clock), 100 + 8_000);
    }
}
