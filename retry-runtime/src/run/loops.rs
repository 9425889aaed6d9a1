//! The one retry loop's plumbing, driven by the macro's expansion and the closure API alike.
//!
//! The blocking loop, the async loops' per-call state, and the step after each attempt.

use core::marker::PhantomData;
use core::ops::ControlFlow;
use core::time::Duration;
use std::time::Instant;

use crate::fleet::Budget;
use crate::policy::deadline::Started;
use crate::policy::Clock;
use crate::policy::{GiveUpReason, Policy};
use crate::run::account::RetryShare;
use crate::run::guard::Guard;
use crate::run::hooks::Hooks;
use crate::run::sleep;
pub use crate::run::state::start_time;
use crate::run::state::RetryState;
use crate::run::step::recovered;
pub use crate::run::step::{IsResult, LoopHooks, Verdict};
use crate::run::trace::Trace;

/// The retry machinery of one call after its first failure: the [`RetryState`], and the
/// budget's share for a retry that has not run yet.
///
/// That share is given back if the retry never runs.
///
/// Nothing here has the function's `Result` type.
///
/// So a retried `async fn`'s future, which holds this across every `.await`, is `Send` whatever
/// `T` and `E` are.
struct Retrying<'h> {
    state: RetryState,
    owed: RetryShare<'h>,
}

/// A wait the loop is about to sleep: its length, and the last outcome.
///
/// The outcome is kept while a deadline may end the call after the wait; `None` without one.
pub type Pause<R> = (Duration, Option<R>);

impl<'h> Retrying<'h> {
    fn new(state: RetryState) -> Self {
        Retrying {
            state,
            owed: RetryShare::default(),
        }
    }

    /// After a failed attempt (`cut`: by the deadline).
    ///
    /// `Break` with the outcome if retrying ends on it, `Continue` with the wait before the
    /// next attempt.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn failed<R: IsResult, H: LoopHooks<R>>(
        &mut self,
        outcome: R,
        verdict: Verdict,
        hooks: &'h H,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, Pause<R>> {
        let (delay, owed, outcome) =
            hooks.step_inline(&mut self.state, outcome, verdict, function, cut)?;
        // The previous retry's share was spent when it ran (`resumed`).
        //
        // Nothing is given back here, and no drop of the old value is compiled.
        self.owed.spend();
        self.owed = owed;
        // Kept through the wait where the deadline or a cancel may end the call after it.
        //
        // Or where an awaited `notify` is handed its error.
        let keep = self.state.has_deadline() || hooks.cancel().is_some() || hooks.awaits();
        let last = keep.then_some(outcome);
        ControlFlow::Continue((delay, last))
    }

    /// After a wait, before the next attempt.
    ///
    /// `Break` with the last outcome if the call was cancelled or the deadline passed during the
    /// wait.
    ///
    /// However long the timer overslept, no attempt starts past the deadline.
    ///
    /// Else the retry runs and its share is spent.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn resumed<R: IsResult, H: LoopHooks<R>>(
        &mut self,
        last: Option<R>,
        hooks: &H,
        function: &'static str,
    ) -> ControlFlow<R> {
        if let Some(last) = last {
            let reason = if hooks.cancelled() {
                Some(GiveUpReason::Cancelled)
            } else if self.state.past_deadline() {
                Some(GiveUpReason::Elapsed)
            } else {
                None
            };
            if let Some(reason) = reason {
                // The retry never runs: its share goes back.
                self.owed = RetryShare::default();
                return ControlFlow::Break(hooks.give_up(&self.state, last, reason, function));
            }
        }
        self.owed.spend();
        ControlFlow::Continue(())
    }

    /// [`resumed`](Retrying::resumed), `last` handed back to race the next attempt against the
    /// token ([`attempt_or_cancel`](crate::run::wait::attempt_or_cancel)).
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn resumed_keeping<R: IsResult, H: LoopHooks<R>>(
        &mut self,
        last: Option<R>,
        hooks: &H,
        function: &'static str,
    ) -> ControlFlow<R, Option<R>> {
        let keep = hooks.cancel().is_some() && !hooks.cancelled() && !self.state.past_deadline();
        match last {
            Some(last) if keep => {
                self.owed.spend();
                ControlFlow::Continue(Some(last))
            }
            last => {
                self.resumed(last, hooks, function)?;
                ControlFlow::Continue(None)
            }
        }
    }
}

/// The state of one call of a retry loop written in the function.
///
/// Such loops: an `async fn`'s, a `#[track_caller]` fn's,
/// [`Retry::call_async_with`](crate::Retry::call_async_with)'s.
///
/// Built only when its first attempt fails: until then an empty pointer.
///
/// The policy, the clock and the start time are passed in, not kept.
///
/// So a policy known at compile time stays a constant: an address, not a copy at every
/// failure.
///
/// The state lives in a box allocated at the first failure.
///
/// A retried `async fn`'s future grows by one word for it, not by the whole state.
///
/// Dropping it during a wait gives the budget back the share of the retry that never ran.
///
/// `R`, the function's return type, is only named, for the loop's calls to infer against.
///
/// The state holds nothing of it.
pub struct LoopState<'h, R> {
    state: Option<Box<Retrying<'h>>>,
    returns: PhantomData<fn() -> R>,
}

impl<R> Default for LoopState<'_, R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'h, R> LoopState<'h, R> {
    /// Before the first attempt.
    #[inline]
    pub const fn new() -> Self {
        LoopState {
            state: None,
            returns: PhantomData,
        }
    }

    /// The 1-based number of the attempt about to run (`attempt = n`): 1 until one fails.
    #[inline]
    pub fn attempt(&self) -> u32 {
        match &self.state {
            None => 1,
            Some(failing) => failing.state.failed_calls().saturating_add(1),
        }
    }
}

impl<'h, R: IsResult> LoopState<'h, R> {
    /// After a failed attempt; `cut` when the deadline cut it.
    ///
    /// Check [`succeeded`] first: the success path must not come here.
    ///
    /// `Break` with the outcome if retrying ends on it.
    ///
    /// `Continue` with the wait before the next attempt and what
    /// [`resumed`](LoopState::resumed) needs after it.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub fn failed<H: LoopHooks<R>>(
        &mut self,
        call: Started<&Policy>,
        outcome: R,
        verdict: Verdict,
        hooks: &'h H,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, Pause<R>> {
        let failing = self.failing(call, hooks);
        failing.failed(outcome, verdict, hooks, function, cut)
    }

    /// [`failed`](LoopState::failed) where no deadline is possible.
    ///
    /// The macro knows: no `policy`, no `max_elapsed`.
    ///
    /// So no last outcome is ever kept: `Continue` with the wait alone.
    ///
    /// That is a smaller value to hand back, and nothing of `R` to drop after it.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub fn failed_wait<H: LoopHooks<R>>(
        &mut self,
        call: Started<&Policy>,
        outcome: R,
        verdict: Verdict,
        hooks: &'h H,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, Duration> {
        let failing = self.failing(call, hooks);
        let (delay, _) = failing.failed(outcome, verdict, hooks, function, cut)?;
        ControlFlow::Continue(delay)
    }

    /// The state after a failure, made at the first one.
    ///
    /// The budget counts the call then.
    #[inline]
    fn failing<H: LoopHooks<R>>(&mut self, call: Started<&Policy>, hooks: &H) -> &mut Retrying<'h> {
        self.state
            .get_or_insert_with(|| Box::new(Retrying::new(hooks.begin(call.owned()))))
    }

    /// After a wait, before the next attempt, with the `last` error
    /// [`failed`](LoopState::failed) handed on.
    ///
    /// `Break` with it if the call was cancelled or the deadline passed during the wait.
    #[cold]
    #[inline(never)]
    pub fn resumed<H: LoopHooks<R>>(
        &mut self,
        last: Option<R>,
        hooks: &H,
        function: &'static str,
    ) -> ControlFlow<R> {
        match &mut self.state {
            Some(failing) => failing.resumed(last, hooks, function),
            None => ControlFlow::Continue(()),
        }
    }

    /// [`resumed`](LoopState::resumed), keeping the last outcome for the next attempt to race
    /// against the cancel token (`None` without one).
    #[cold]
    #[inline(never)]
    pub fn resumed_keeping<H: LoopHooks<R>>(
        &mut self,
        last: Option<R>,
        hooks: &H,
        function: &'static str,
    ) -> ControlFlow<R, Option<R>> {
        match &mut self.state {
            Some(failing) => failing.resumed_keeping(last, hooks, function),
            None => ControlFlow::Continue(None),
        }
    }

    /// A cancel dropped an attempt after a failure: a call made, so counted.
    ///
    /// The call ends with `last`, given up as [`Cancelled`](GiveUpReason::Cancelled).
    #[cold]
    #[inline(never)]
    pub fn cancelled<H: LoopHooks<R>>(&mut self, last: R, hooks: &H, function: &'static str) -> R {
        match &mut self.state {
            Some(failing) => {
                failing.state.count_running(1);
                hooks.give_up(&failing.state, last, GiveUpReason::Cancelled, function)
            }
            None => last,
        }
    }

    /// An attempt succeeded: give the budget its due.
    ///
    /// That is the first attempt's, or what this call's retries took.
    ///
    /// After failures, report the recovery.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub fn succeeded<C, N, G, B: Budget, T: Trace<R>, O, Gd: Guard<R>>(
        &self,
        hooks: &Hooks<C, N, G, B, T, O, Gd>,
        function: &'static str,
        clock: Clock,
    ) {
        // A recovery is reported only where something hears of it: the metrics, a trace.
        //
        // Otherwise this is the budget's payment alone, and no branch without a budget.
        if cfg!(feature = "metrics") || !Trace::<R>::is_silent(&hooks.trace) {
            if let Some(failing) = &self.state {
                return recovered(hooks, &failing.state, function);
            }
        }
        let state = self.state.as_ref().map(|failing| &failing.state);
        hooks.succeeded::<R>(state, clock, function);
    }

    /// [`succeeded`](LoopState::succeeded) for any hooks that serve `R` (the closure API's).
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn succeeded_with<H: LoopHooks<R>>(
        &self,
        hooks: &H,
        function: &'static str,
        clock: Clock,
    ) {
        match &self.state {
            None => hooks.succeeded(None, clock, function),
            Some(failing) => hooks.recovered(&failing.state, function),
        }
    }

    /// Before an attempt, with a throttle or a breaker.
    ///
    /// `Break` with the outcome the call ends with if they refuse it, already reported as a
    /// give-up.
    #[inline]
    pub fn admit<H: LoopHooks<R>>(
        &self,
        hooks: &H,
        function: &'static str,
        clock: Clock,
    ) -> ControlFlow<R> {
        let state = self.state.as_ref().map(|failing| &failing.state);
        match hooks.admit(state, clock, function) {
            Some(outcome) => ControlFlow::Break(outcome),
            None => ControlFlow::Continue(()),
        }
    }
}

/// The blocking retry loop shared by [`Retry::call`](crate::Retry::call) and sync `#[retry]`
/// functions.
///
/// `op` is handed the 1-based number of the attempt.
///
/// The first attempt runs before anything else exists: a success returns without a store.
#[inline]
pub fn run_blocking<R, H, F>(policy: Policy, hooks: &H, function: &'static str, mut op: F) -> R
where
    R: IsResult,
    H: LoopHooks<R>,
    F: FnMut(u32) -> R,
{
    let start = start_time(&policy, sleep::now);
    if let Some(refused) = hooks.admit(None, sleep::now, function) {
        return refused;
    }
    let first = op(1);
    let verdict = hooks.verdict(&first);
    if verdict.accepted() {
        return hooks.first_success(sleep::now, function, first);
    }
    retry_blocking(policy, start, first, verdict, hooks, function, op)
}

#[cold]
#[inline(never)]
fn retry_blocking<R, H, F>(
    policy: Policy,
    start: Option<Instant>,
    first: R,
    verdict: Verdict,
    hooks: &H,
    function: &'static str,
    mut op: F,
) -> R
where
    R: IsResult,
    H: LoopHooks<R>,
    F: FnMut(u32) -> R,
{
    let mut failing = Retrying::new(hooks.begin(Started {
        policy,
        clock: sleep::now,
        start,
    }));
    let (mut outcome, mut verdict) = (first, verdict);
    loop {
        let last = match failing.failed(outcome, verdict, hooks, function, false) {
            ControlFlow::Break(outcome) => return outcome,
            ControlFlow::Continue((delay, last)) => {
                sleep::sleep_or_cancel(delay, hooks.cancel());
                last
            }
        };
        if let ControlFlow::Break(outcome) = failing.resumed(last, hooks, function) {
            return outcome;
        }
        if let Some(refused) = hooks.admit(Some(&failing.state), sleep::now, function) {
            return refused;
        }
        outcome = op(failing.state.failed_calls().saturating_add(1));
        verdict = hooks.verdict(&outcome);
        if verdict.accepted() {
            hooks.recovered(&failing.state, function);
            return outcome;
        }
    }
}
