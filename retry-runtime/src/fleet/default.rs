//! The budget every retry loop has unless told otherwise: a [`RatioBudget`] of Finagle's
//! shape (20% of the calls over 10 s, a floor of 10 retries a second).
//!
//! Its calls are counted with no clock reading or read-modify-write.
//!
//! They share no cache line either.
//!
//! # How it counts
//!
//! A call ([`SharedBudget::begin`]) adds one to its thread's *stripe*.
//!
//! A stripe is a counter on a cache line only that thread writes.
//!
//! So the add is a plain load and store.
//!
//! It is no `lock`-prefixed instruction.
//!
//! Threads calling one function never take each other's lines.
//!
//! Stripes are handed to threads process-wide.
//!
//! A thread has the same index in every budget.
//!
//! The first 16 threads alive at once each own one.
//!
//! They own it until they exit.
//!
//! A thread beyond them atomically adds to one shared counter.
//!
//! That is the whole success path: no clock, no compare-and-swap.
//!
//! The counters only grow.
//!
//! When a retry asks for a share (or [`DefaultBudget::available`] is read), the calls counted
//! since the last look are *folded* into the ratio budget's window.
//!
//! The fold runs under a lock only those take.
//!
//! The calls' own times are not known.
//!
//! So the calls are spread evenly over the slots since the last fold.
//!
//! Calls found after a silence longer than the window count only for the window's share: an
//! hour of healthy traffic does not fund a retry storm.
//!
//! The first call of all reads the clock once, so the first fold knows how long the counters
//! have counted; the window is allocated then too.
//!
//! A budget never called is all zeros.
//!
//! So a `static` of it costs the binary nothing (`.bss`).

use core::fmt;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use core::time::Duration;
use std::cell::Cell;
use std::sync::{Arc, Mutex, MutexGuard};

use super::window::SLOTS;
use super::{Budget, Charge, RatioBudget, RetryTicket, SharedBudget};
use crate::policy::Clock;

/// The stripes threads own, one each.
const OWNED: usize = 16;
/// The index of the counter threads beyond the owners share.
const SHARED: usize = OWNED;
/// A thread that has not asked for a stripe yet.
const UNASSIGNED: usize = usize::MAX;

/// One call counter, alone on its cache line and the next.
///
/// x86's adjacent-line prefetch pulls lines in pairs.
#[repr(align(128))]
struct Stripe(AtomicU64);

/// The stripes owned now, one bit each.
static CLAIMED: AtomicU32 = AtomicU32::new(0);

std::thread_local! {
    /// This thread's stripe: owned (below [`OWNED`]), [`SHARED`], or [`UNASSIGNED`].
    static STRIPE: Cell<usize> = const { Cell::new(UNASSIGNED) };
    /// The owned stripe this thread gives back when it exits.
    static CLAIM: Cell<Option<Claim>> = const { Cell::new(None) };
}

/// A stripe this thread owns, given back when it exits.
struct Claim(usize);

impl Drop for Claim {
    fn drop(&mut self) {
        // Never write the stripe again.
        //
        // A destructor running after this one may still call.
        let _ = STRIPE.try_with(|s| s.set(SHARED));
        CLAIMED.fetch_and(!(1 << self.0), Ordering::Release);
    }
}

/// This thread's stripe.
///
/// [`UNASSIGNED`] before its first call, [`SHARED`] while exiting.
#[inline]
fn stripe() -> usize {
    STRIPE.try_with(Cell::get).unwrap_or(SHARED)
}

/// Claim a free owned stripe for this thread.
///
/// If none is free, take the shared counter.
#[cold]
#[inline(never)]
fn assign() -> usize {
    let mut claimed = CLAIMED.load(Ordering::Acquire);
    let i = loop {
        let free = (!claimed).trailing_zeros() as usize;
        if free >= OWNED {
            break SHARED;
        }
        match CLAIMED.compare_exchange_weak(
            claimed,
            claimed | (1 << free),
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => break free,
            Err(now) => claimed = now,
        }
    };
    if i != SHARED && CLAIM.try_with(|c| c.set(Some(Claim(i)))).is_err() {
        // The thread is exiting: it could not return the stripe.
        CLAIMED.fetch_and(!(1 << i), Ordering::Release);
        return SHARED;
    }
    let _ = STRIPE.try_with(|s| s.set(i));
    i
}

/// What the folds keep between them.
///
/// It is all zeros until the budget's first call.
struct Folded {
    /// The last fold's slot plus one (0: none yet).
    slot: u64,
    /// Each counter's value at the last fold.
    seen: [u64; OWNED + 1],
    /// The window calls are folded into, made at the first call.
    ratio: Option<Box<RatioBudget>>,
}

impl Folded {
    /// The window, made by the budget's first call.
    ///
    /// Before any call, its first fold makes it.
    fn ratio(&mut self) -> &RatioBudget {
        self.ratio.get_or_insert_with(|| {
            Box::new(RatioBudget::new(
                DefaultBudget::RATIO,
                DefaultBudget::MIN_PER_SEC,
                DefaultBudget::WINDOW,
            ))
        })
    }
}

/// The retry budget every loop has unless given another (`budget = &X`, `.budget(&X)`) or none
/// (`budget = none`, `.budget_none()`).
///
/// Every loop: a `#[retry]` function, a [`Retry`](crate::Retry), and each host of a
/// [`RetryLayer`](crate::tower::RetryLayer) or `RetryMiddleware`.
///
/// Retries (hedges included) are allowed while, over the trailing 10 s, they stay within 20%
/// of the calls plus 10 a second.
///
/// Finagle's, Linkerd's, reqwest's and Gateway API's budgets share this shape.
///
/// A handful of calls retries exactly as without a budget.
///
/// The floor, 100 retries over any 10 s, covers them.
///
/// A fleet of callers sends a dependency that is down at most 1.2 attempts per call, plus the
/// floor, where five attempts each would send five.
///
/// Unlike [`RatioBudget`], a call is counted without reading the clock.
///
/// It goes on its thread's own counter (module docs).
///
/// Success costs a thread-local read, then a load and store.
///
/// Only the calling thread writes that stripe's line.
///
/// Calls enter the window when a retry asks.
///
/// They are spread evenly over the time since the last ask.
///
/// Calls found after a silence longer than the window count for the window's share.
///
/// ```
/// use retry_jitter::sleep;
/// use retry_jitter::budget::DefaultBudget;
///
/// static BUDGET: DefaultBudget = DefaultBudget::new();
/// assert_eq!(BUDGET.available(sleep::now), 100); // the floor: 10 a second over 10 s
/// for _ in 0..1_000 {
///     retry_jitter::budget::SharedBudget::begin(&BUDGET, sleep::now); // a call
/// }
/// assert_eq!(BUDGET.available(sleep::now), 300); // plus 20% of 1,000 calls
/// ```
pub struct DefaultBudget {
    /// Calls counted per stripe: owned ones, then the shared.
    ///
    /// The counts only grow.
    counted: [Stripe; OWNED + 1],
    /// Whether a call was ever counted.
    ///
    /// The first one reads the clock.
    started: AtomicBool,
    /// What the folds keep, and the window.
    ///
    /// Held while folding, taking or giving back a share.
    ///
    /// Only the retry path takes it.
    folded: Mutex<Folded>,
}

impl DefaultBudget {
    /// The share of the calls retried.
    pub const RATIO: f64 = 0.2;
    /// The retries a second allowed whatever the calls.
    pub const MIN_PER_SEC: u32 = 10;
    /// The window calls and retries are counted over.
    pub const WINDOW: Duration = Duration::from_secs(10);

    /// A budget with nothing counted: the floor's 100 retries available.
    ///
    /// ```
    /// use retry_jitter::budget::DefaultBudget;
    /// static B: DefaultBudget = DefaultBudget::new();
    /// assert_eq!(B.available(retry_jitter::sleep::now), 100);
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        DefaultBudget {
            counted: [const { Stripe(AtomicU64::new(0)) }; OWNED + 1],
            started: AtomicBool::new(false),
            folded: Mutex::new(Folded {
                slot: 0,
                seen: [0; OWNED + 1],
                ratio: None,
            }),
        }
    }

    /// The budget's state, whoever panicked holding it (nothing here panics).
    fn folded(&self) -> MutexGuard<'_, Folded> {
        self.folded.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The retries the budget would grant now, one after another.
    ///
    /// The calls counted so far are folded in first.
    ///
    /// ```
    /// use retry_jitter::sleep;
    /// use retry_jitter::budget::DefaultBudget;
    /// let b = DefaultBudget::new();
    /// assert_eq!(b.available(sleep::now), 100);
    /// ```
    pub fn available(&self, clock: Clock) -> u32 {
        let mut folded = self.fold(clock);
        folded.ratio().available(clock)
    }

    /// [`SharedBudget::begin`] the first time on this stripe.
    ///
    /// Or on a thread without a stripe yet, or on the shared counter.
    #[cold]
    #[inline(never)]
    fn begin_cold<T>(&self, i: usize, clock: Clock, out: T) -> T {
        if !self.started.load(Ordering::Acquire) {
            self.start(clock);
        }
        match if i == UNASSIGNED { assign() } else { i } {
            i if i < OWNED => {
                let c = &self.counted[i].0;
                c.store(c.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
            }
            _ => {
                self.counted[SHARED].0.fetch_add(1, Ordering::Relaxed);
            }
        }
        out
    }

    /// The first call: its clock reading starts the counters' timeline.
    #[cold]
    #[inline(never)]
    fn start(&self, clock: Clock) {
        let mut folded = self.folded();
        let slot = folded.ratio().slot_now(clock);
        if folded.slot == 0 {
            folded.slot = slot + 1;
        }
        self.started.store(true, Ordering::Release);
    }

    /// Fold the calls since the last fold into the window.
    ///
    /// They are spread evenly over the slots since then.
    ///
    /// The clock's own slot is included.
    ///
    /// Only those still in the window keep their share.
    ///
    /// Returns the state, still held, for the share to be taken.
    fn fold(&self, clock: Clock) -> MutexGuard<'_, Folded> {
        let mut folded = self.folded();
        let slot = folded.ratio().slot_now(clock);
        let mut calls: u64 = 0;
        for (stripe, seen) in self.counted.iter().zip(folded.seen.iter_mut()) {
            let now = stripe.0.load(Ordering::Acquire);
            calls = calls.saturating_add(now.wrapping_sub(*seen));
            *seen = now;
        }
        // The slots the calls came over.
        //
        // They run from the last fold's to now's, both included.
        let over = match folded.slot {
            0 => 1,
            last => slot.saturating_sub(last - 1).saturating_add(1),
        };
        folded.slot = slot.saturating_add(1).max(folded.slot);
        if calls == 0 {
            return folded;
        }
        // Of `over` slots, the last `kept` are in the window.
        //
        // Their share of the calls is spread over them.
        //
        // Slot `slot - k` gets its part, the newest the rest.
        //
        // The share is to the nearest call.
        //
        // So one call after a silence still counts.
        let kept = over.min(SLOTS as u64);
        let share =
            (u128::from(calls) * u128::from(kept) + u128::from(over / 2)) / u128::from(over);
        let calls = u64::try_from(share).unwrap_or(u64::MAX);
        let per_slot = calls / kept;
        let extra = calls % kept;
        let ratio = folded.ratio();
        for k in 0..kept {
            let share = per_slot + u64::from(k < extra);
            ratio.begin_many(
                slot.saturating_sub(k),
                u32::try_from(share).unwrap_or(u32::MAX),
            );
        }
        folded
    }
}

impl Default for DefaultBudget {
    /// [`DefaultBudget::new`].
    ///
    /// ```
    /// let b = retry_jitter::budget::DefaultBudget::default();
    /// assert_eq!(b.available(retry_jitter::sleep::now), 100);
    /// ```
    fn default() -> Self {
        DefaultBudget::new()
    }
}

impl SharedBudget for DefaultBudget {
    /// A load and a store on this thread's stripe.
    ///
    /// Beyond 16 live threads, an atomic add.
    ///
    /// The very first time, a clock reading.
    #[inline]
    fn begin(&self, clock: Clock) {
        self.first_success(clock, ());
    }
    /// [`begin`](SharedBudget::begin); its `succeeded` is nothing.
    ///
    /// Its cold part, a tail call, hands `out` back.
    #[inline]
    fn first_success<T>(&self, clock: Clock, out: T) -> T {
        let i = stripe();
        if i < OWNED {
            // Only this thread writes this stripe: no read-modify-write needed.
            //
            // A stripe at zero never counted a call of this budget.
            //
            // So the budget may not have begun.
            let c = &self.counted[i].0;
            let n = c.load(Ordering::Relaxed);
            if n != 0 {
                c.store(n.wrapping_add(1), Ordering::Relaxed);
                return out;
            }
        }
        self.begin_cold(i, clock, out)
    }
    /// Every charge is one retry of the ratio.
    ///
    /// It is taken after the counted calls are folded in.
    fn take_retry(&self, _: Charge, clock: Clock) -> Option<RetryTicket> {
        self.fold(clock).ratio().take_retry(clock)
    }
    #[inline]
    fn refund(&self, ticket: RetryTicket) {
        self.folded().ratio().refund(ticket);
    }
}

/// A [`Retry`](crate::Retry)'s own budget, what [`Retry::new`](crate::Retry::new) gives it.
///
/// A [`DefaultBudget`] shared by the `Retry` with its clones only.
///
/// [`budget`](crate::Retry::budget) or [`budget_none`](crate::Retry::budget_none) replaces it.
///
/// ```
/// use retry_jitter::hooks::Budget;
/// use retry_jitter::budget::OwnBudget;
/// let own = OwnBudget::default();
/// let clone = own.clone();
/// assert!(std::ptr::eq(own.get().unwrap(), clone.get().unwrap()));
/// ```
#[derive(Clone, Debug, Default)]
pub struct OwnBudget(Arc<DefaultBudget>);

impl Budget for OwnBudget {
    type Shared = DefaultBudget;
    #[inline]
    fn get(&self) -> Option<&DefaultBudget> {
        Some(&self.0)
    }
}

impl fmt::Debug for DefaultBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let counted: u64 = self
            .counted
            .iter()
            .map(|s| s.0.load(Ordering::Relaxed))
            .fold(0, u64::wrapping_add);
        f.debug_struct("DefaultBudget")
            .field("ratio", &self.folded().ratio)
            .field("counted", &counted)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64 as Nanos;
    use std::time::Instant;

    /// A hand-moved clock, shared by this module's tests.
    ///
    /// Each test has its own budget.
    ///
    /// A test reads its budget only while holding `LOCK`.
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
        // 100 calls a second for an hour, no retry asked.
        //
        // The clock is read once, at the first.
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
    fn more_threads_than_stripes_count_every_call_and_give_their_stripes_back() {
        let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let b = DefaultBudget::new();
        // 40 live threads: 16 own stripes, the rest share one.
        let go = std::sync::Barrier::new(40);
        std::thread::scope(|s| {
            for _ in 0..40 {
                s.spawn(|| {
                    go.wait();
                    calls(&b, 1_000);
                    go.wait();
                });
            }
        });
        assert_eq!(b.available(clock), 100 + 8_000);
        // They exited and gave their stripes back.
        //
        // The next threads own them and count as well.
        //
        // Only bits of threads alive elsewhere in this process stay set.
        std::thread::scope(|s| {
            for _ in 0..16 {
                s.spawn(|| calls(&b, 500));
            }
        });
        assert_eq!(b.available(clock), 100 + 8_000 + 1_600);
    }

    #[test]
    fn a_refund_after_its_slot_left_the_window_grants_nothing_more() {
        let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let b = DefaultBudget::new();
        calls(&b, 1);
        let late = b.take_retry(Charge::Retry, clock).unwrap();
        let early = b.take_retry(Charge::Retry, clock).unwrap();
        b.refund(early);
        assert_eq!(b.available(clock), 99); // 100 + 0.2 - 2 + 1
        advance(Duration::from_secs(11));
        // The slot left the window, its retries with it.
        //
        // The floor remains, and the refund is dropped.
        b.refund(late);
        assert_eq!(b.available(clock), 100);
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
