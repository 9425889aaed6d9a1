//! A call's figures ([`RetryStats`]), kept by a [`Recorder`] among the call's guards: the
//! loop tells it of each wait and hedge and of the end, and it hands the figures to the
//! `stats` hook.

use core::time::Duration;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

use crate::policy::{Clock, GiveUpReason, RetryStats, Unset};
use crate::run::guard::Guard;

/// What hears a call's [`RetryStats`] when it ends: any `Fn(&RetryStats)`; [`Unset`] keeps
/// nothing (and its recorder reads no clock).
#[diagnostic::on_unimplemented(
    message = "`stats` needs a `Fn(&RetryStats)`, not `{Self}`",
    label = "not a `Fn(&retry_jitter::RetryStats)`",
    note = "write `stats = |s: &RetryStats| …`, or name a `fn(&RetryStats)`"
)]
pub trait StatsHook {
    /// Whether anything hears the figures: `false` only for [`Unset`], whose recorder is
    /// nothing at all.
    const ACTIVE: bool = true;
    /// The call ended with these figures.
    fn stats(&self, stats: &RetryStats);
}

impl<F: Fn(&RetryStats)> StatsHook for F {
    #[inline(always)]
    fn stats(&self, stats: &RetryStats) {
        self(stats);
    }
}

impl StatsHook for Unset {
    const ACTIVE: bool = false;
    #[inline(always)]
    fn stats(&self, _: &RetryStats) {}
}

/// One call's figures as they are counted, for the `stats` hook `H`. Made when the call
/// starts (its clock read then); as a guard (`&Recorder`), it counts the waits and hedges the
/// loop reports, and at the end hands [`RetryStats`] to `H`. Atomics, not cells: an async
/// call's future that holds it stays `Send`.
///
/// ```
/// use retry_jitter::__private::{Guard, Recorder};
/// use retry_jitter::RetryStats;
/// use std::time::Duration;
/// let rec = Recorder::new(|s: &RetryStats| assert_eq!((s.attempts, s.waited), (2, Duration::from_millis(5))), retry_jitter::sleep::now, "f");
/// let guard = &rec;
/// Guard::<Result<(), ()>>::waiting(&guard, Duration::from_millis(5), retry_jitter::sleep::now);
/// std::thread::sleep(Duration::from_millis(6));
/// Guard::<Result<(), ()>>::finished(&guard, 2, None, retry_jitter::sleep::now);
/// ```
#[derive(Debug)]
pub struct Recorder<H> {
    hook: H,
    function: &'static str,
    start: Option<Instant>,
    hedges: AtomicU32,
    /// The waits reported, in nanoseconds.
    waited: AtomicU64,
    /// When the last wait ends, in nanoseconds after `start`.
    wait_end: AtomicU64,
}

impl<H: StatsHook> Recorder<H> {
    /// The recorder of a call of `function` starting now on `clock`.
    #[inline(always)]
    pub fn new(hook: H, clock: Clock, function: &'static str) -> Self {
        Recorder {
            hook,
            function,
            start: H::ACTIVE.then(clock),
            hedges: AtomicU32::new(0),
            waited: AtomicU64::new(0),
            wait_end: AtomicU64::new(0),
        }
    }

    /// Time since the start, in nanoseconds (saturated).
    fn since_start(&self, clock: Clock) -> u64 {
        let elapsed = self.start.map_or(Duration::ZERO, |start| {
            clock().saturating_duration_since(start)
        });
        u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
    }
}

impl<R, H: StatsHook> Guard<R> for &Recorder<H> {
    #[inline(always)]
    fn waiting(&self, delay: Duration, clock: Clock) {
        if H::ACTIVE {
            let delay = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
            self.waited.fetch_add(delay, Ordering::Relaxed);
            let end = self.since_start(clock).saturating_add(delay);
            self.wait_end.store(end, Ordering::Relaxed);
        }
    }
    #[inline(always)]
    fn hedged(&self) {
        if H::ACTIVE {
            self.hedges.fetch_add(1, Ordering::Relaxed);
        }
    }
    #[inline(always)]
    fn finished(&self, calls: u32, gave_up: Option<GiveUpReason>, clock: Clock) {
        if H::ACTIVE {
            finished(self, calls, gave_up, clock);
        }
    }
}

/// The figures, handed to the hook: a wait the call ended during (a cancel) counts what was
/// slept of it.
#[cold]
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
    rec.hook.stats(&RetryStats {
        function: rec.function,
        attempts: calls,
        hedges: rec.hedges.load(Ordering::Relaxed),
        waited: Duration::from_nanos(waited),
        elapsed: Duration::from_nanos(now),
        gave_up,
    });
}
