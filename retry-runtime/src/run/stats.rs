//! A call's figures ([`RetryStats`]), kept by a [`Recorder`] among the call's guards.
//!
//! The loop tells it of each wait and hedge and of the end; it hands the figures to the `stats`
//! hook.

use core::time::Duration;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Instant;

use crate::policy::{Clock, GiveUp, GiveUpReason, RetryEvent, RetryStats, Unset};
use crate::run::guard::Guard;

/// What hears a call's [`RetryStats`] when it ends: any `Fn(&RetryStats)`.
///
/// [`Unset`] keeps nothing, and its recorder reads no clock.
#[diagnostic::on_unimplemented(
    message = "`stats` needs a `Fn(&RetryStats)`, not `{Self}`",
    label = "not a `Fn(&retry_jitter::RetryStats)`",
    note = "write `stats = |s: &RetryStats| …`, or name a `fn(&RetryStats)`"
)]
pub trait StatsHook {
    /// Whether anything is counted: `false` only for [`Unset`], whose recorder is nothing at
    /// all.
    const ACTIVE: bool = true;
    /// Whether every call's figures are wanted, a success's too, and so its time (two clock
    /// reads).
    ///
    /// Not where only a give-up is read: an awaited `give_up` alone.
    const TIMED: bool = Self::ACTIVE;
    /// Whether an `async fn` awaits a `notify` hook with each retry's error and event.
    ///
    /// The loop then keeps the error through the wait, and the recorder the event.
    const AWAITS: bool = false;
    /// The call ended with these figures.
    fn stats(&self, stats: &RetryStats);
}

impl<F: Fn(&RetryStats)> StatsHook for F {
    #[inline]
    fn stats(&self, stats: &RetryStats) {
        self(stats);
    }
}

impl StatsHook for Unset {
    const ACTIVE: bool = false;
    #[inline]
    fn stats(&self, _: &RetryStats) {}
}

/// The hook of a recorder whose figures are read after the call.
///
/// It sits beside `H` (a sync `stats` hook, or [`Unset`]), which hears them too.
///
/// - `call_with_stats` reads `ALL` calls' figures.
/// - An `async fn` reads them for the hooks it awaits: `ALL` for an awaited `stats`, `NOTIFY`
///   for an awaited `notify`.
/// - An awaited `give_up` alone needs neither.
pub struct ReadAfter<H, const ALL: bool = true, const NOTIFY: bool = false>(pub H);

impl<H: StatsHook, const ALL: bool, const NOTIFY: bool> StatsHook for ReadAfter<H, ALL, NOTIFY> {
    const TIMED: bool = ALL || H::ACTIVE;
    const AWAITS: bool = NOTIFY;
    #[inline]
    fn stats(&self, stats: &RetryStats) {
        self.0.stats(stats);
    }
}

/// One call's figures as they are counted, for the `stats` hook `H`.
///
/// Made when the call starts, its clock read then.
///
/// As a guard (`&Recorder`), it counts the waits and hedges the loop reports.
///
/// At the end it hands [`RetryStats`] to `H`.
///
/// Atomics, not cells: an async call's future that holds it stays `Send`.
///
/// ```
/// use retry_jitter::__private::{Guard, Recorder};
/// use retry_jitter::{GiveUpReason, RetryStats};
/// let rec = Recorder::new(|s: &RetryStats| assert_eq!(s.attempts, 2), retry_jitter::sleep::now, "f");
/// Guard::<Result<(), ()>>::finished(&&rec, 2, Some(GiveUpReason::Attempts), retry_jitter::sleep::now);
/// assert_eq!(rec.give_up().map(|g| (g.reason, g.calls)), Some((GiveUpReason::Attempts, 2)));
/// ```
#[derive(Debug)]
pub struct Recorder<H> {
    hook: H,
    function: &'static str,
    start: Option<Instant>,
    hedges: AtomicU32,
    transparent: AtomicU32,
    /// The waits reported, in nanoseconds.
    waited: AtomicU64,
    /// When the last wait ends, in nanoseconds after `start`.
    wait_end: AtomicU64,
    /// The last retry's event, and the figures once the call ended.
    ///
    /// An `async fn` reads them for the hooks it awaits; `call_with_stats` returns them.
    last_event: Mutex<Option<RetryEvent>>,
    stats: OnceLock<RetryStats>,
}

impl<H: StatsHook> Recorder<H> {
    /// The recorder of a call of `function` starting now on `clock`.
    #[inline]
    pub fn new(hook: H, clock: Clock, function: &'static str) -> Self {
        Recorder {
            hook,
            function,
            start: H::TIMED.then(clock),
            hedges: AtomicU32::new(0),
            transparent: AtomicU32::new(0),
            waited: AtomicU64::new(0),
            wait_end: AtomicU64::new(0),
            last_event: Mutex::new(None),
            stats: OnceLock::new(),
        }
    }

    /// The last retry's event (before its wait).
    pub fn event(&self) -> Option<RetryEvent> {
        *self
            .last_event
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The wait of the last retry starts now, after an awaited `notify` hook.
    ///
    /// The hook's time is not counted as waited, should a cancel cut the wait (or come during
    /// the hook).
    #[inline]
    pub fn wait_starts(&self, clock: Clock) {
        if let (true, Some(event)) = (H::ACTIVE, self.event()) {
            self.wait_ends_after(nanos(event.delay), clock);
        }
    }

    /// The wait now starting lasts `delay` nanoseconds: where it ends, for a cancel that cuts
    /// it (see [`finished`]).
    #[inline]
    fn wait_ends_after(&self, delay: u64, clock: Clock) {
        let end = self.since_start(clock).saturating_add(delay);
        self.wait_end.store(end, Ordering::Relaxed);
    }

    /// The call's figures, once it ended.
    pub fn stats(&self) -> Option<RetryStats> {
        self.stats.get().copied()
    }

    /// How retrying ended with an error, once it did: what a `give_up` hook is told.
    pub fn give_up(&self) -> Option<GiveUp> {
        let stats = self.stats()?;
        Some(GiveUp {
            reason: stats.gave_up?,
            calls: stats.attempts,
            function: stats.function,
            ok: false,
        })
    }

    /// Time since the start, in nanoseconds (saturated); 0 where the call is not timed (no
    /// clock read).
    fn since_start(&self, clock: Clock) -> u64 {
        nanos(self.start.map_or(Duration::ZERO, |start| {
            clock().saturating_duration_since(start)
        }))
    }
}

/// A duration in nanoseconds, saturated.
#[inline]
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl<R, H: StatsHook> Guard<R> for &Recorder<H> {
    #[inline]
    fn waiting(&self, event: &RetryEvent, clock: Clock) {
        if H::AWAITS {
            *self
                .last_event
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(*event);
        }
        if H::ACTIVE {
            let delay = nanos(event.delay);
            self.waited.fetch_add(delay, Ordering::Relaxed);
            self.wait_ends_after(delay, clock);
        }
    }
    #[inline]
    fn awaits(&self) -> bool {
        H::AWAITS
    }
    #[inline]
    fn hedged(&self) {
        if H::ACTIVE {
            self.hedges.fetch_add(1, Ordering::Relaxed);
        }
    }
    #[inline]
    fn transparent(&self) {
        // No retry is told of a transparent one: an awaited `notify` after it finds no event,
        // rather than the last retry's again, and no wait starts.
        if H::AWAITS {
            *self
                .last_event
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = None;
        }
        if H::ACTIVE {
            self.transparent.fetch_add(1, Ordering::Relaxed);
        }
    }
    #[inline]
    fn finished(&self, calls: u32, gave_up: Option<GiveUpReason>, clock: Clock) {
        // A success is of no interest where only a give-up is read: nothing on that path.
        if H::ACTIVE && (H::TIMED || gave_up.is_some()) {
            finished(self, calls, gave_up, clock);
        }
    }
}

/// The figures, handed to the hook.
///
/// A wait the call ended during (a cancel) counts what was slept of it.
///
/// Out of line: called once a call.
#[inline(never)]
fn finished<H: StatsHook>(
    rec: &Recorder<H>,
    calls: u32,
    gave_up: Option<GiveUpReason>,
    clock: Clock,
) {
    let now = rec.since_start(clock);
    let unslept = rec.wait_end.load(Ordering::Relaxed).saturating_sub(now);
    let waited = rec.waited.load(Ordering::Relaxed).saturating_sub(unslept);
    let stats = RetryStats {
        function: rec.function,
        attempts: calls,
        hedges: rec.hedges.load(Ordering::Relaxed),
        transparent_retries: rec.transparent.load(Ordering::Relaxed),
        waited: Duration::from_nanos(waited),
        elapsed: Duration::from_nanos(now),
        gave_up,
    };
    let _ = rec.stats.set(stats);
    rec.hook.stats(&stats);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    static READS: AtomicUsize = AtomicUsize::new(0);

    fn counted() -> Instant {
        READS.fetch_add(1, Ordering::SeqCst);
        Instant::now()
    }

    #[test]
    fn a_recorder_for_an_awaited_give_up_alone_reads_no_clock_and_keeps_no_success() {
        let rec = Recorder::new(ReadAfter::<Unset, false, false>(Unset), counted, "f");
        let guard = &rec;
        Guard::<Result<(), ()>>::finished(&guard, 1, None, counted);
        assert_eq!(rec.stats(), None, "a success is not kept");
        Guard::<Result<(), ()>>::finished(&guard, 3, Some(GiveUpReason::Attempts), counted);
        let g = rec.give_up().expect("a give-up is kept");
        assert_eq!((g.reason, g.calls), (GiveUpReason::Attempts, 3));
        assert_eq!(READS.load(Ordering::SeqCst), 0, "no clock read");
        // Every call's figures (an awaited `stats`, `call_with_stats`): timed.
        let timed = Recorder::new(ReadAfter::<Unset>(Unset), counted, "f");
        Guard::<Result<(), ()>>::finished(&&timed, 1, None, counted);
        assert_eq!(timed.stats().map(|s| s.attempts), Some(1));
        assert_eq!(READS.load(Ordering::SeqCst), 2, "the start and the end");
    }
}
