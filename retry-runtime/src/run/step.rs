//! The step after each attempt, which every loop takes: the blocking and async loops in
//! `loops`, the hedging loop in `hedge`.
//!
//! It says what an outcome is ([`Verdict`]).
//!
//! For a failed one, the step classifies, decides and draws.
//!
//! It also charges the budget and tells the hooks ([`LoopHooks`]).

use core::ops::ControlFlow;
use core::time::Duration;

use crate::fleet::{Budget, Charge};
use crate::policy::deadline::Started;
use crate::policy::{CancelToken, Clock};
use crate::policy::{Classify, ClassifyOk};
use crate::policy::{Decision, GiveUp, GiveUpReason, RetryEvent};
use crate::run::account::{Account, RetryShare};
use crate::run::guard::Guard;
use crate::run::hooks::Notify;
use crate::run::hooks::{GiveUpHook, Hooks};
use crate::run::state::RetryState;
use crate::run::trace::Trace;

/// What an attempt's outcome is to the loop.
///
/// Taken (an `Ok` that `on_ok`, if any, accepts), a failure (an error), or an `Ok` value
/// `on_ok` retries, with its decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A success: the call returns it.
    Accepted,
    /// An error: the classifier decides.
    Failed,
    /// An `Ok` value `on_ok` retries, as it decided.
    RetryOk(Decision),
}

impl Verdict {
    /// Whether the call returns the outcome at once, a success.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub fn accepted(self) -> bool {
        matches!(self, Verdict::Accepted)
    }
}

/// What `on_ok` makes of `outcome`.
///
/// Without `on_ok` ([`AcceptOk`](crate::AcceptOk)) this is `Accepted` for every `Ok`.
///
/// This then costs what testing for an error costs.
///
/// The loops test this first, returning a success at once.
///
/// Handed through `ControlFlow`, a success would cost an `async fn` more.
#[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
pub fn verdict<R: IsResult, O: ClassifyOk<R::Ok>>(outcome: &R, on_ok: &O) -> Verdict {
    match outcome.as_ok() {
        None => Verdict::Failed,
        Some(value) => match on_ok.classify_ok(value) {
            Decision::Stop => Verdict::Accepted,
            decision => Verdict::RetryOk(decision),
        },
    }
}

/// A call succeeded after failed (or hedged) calls.
///
/// The budget gets back what its retries took.
///
/// The metrics and the trace hear of the recovery.
#[cold]
#[inline(never)]
pub(crate) fn recovered<R, C, N, G, B: Budget, T: Trace<R>, O, Gd: Guard<R>>(
    hooks: &Hooks<C, N, G, B, T, O, Gd>,
    state: &RetryState,
    function: &'static str,
) {
    hooks.succeeded::<R>(Some(state), state.clock(), function);
    #[cfg(feature = "metrics")]
    crate::run::metrics::recovered(state.listening(), function);
    // The elapsed time is read only for traces showing it.
    //
    // With `tracing`, that read is a clock read.
    if !Trace::<R>::is_silent(&hooks.trace) {
        let calls = state.failed_calls().saturating_add(1);
        hooks.trace.recovered(function, calls, state.elapsed());
    }
}

/// Hooks serving a function returning `R`: every bound the loops need, in one place.
///
/// The `Loop::<R>` entry points spell the bounds out instead.
///
/// Spelled out, a mistake in a hook is reported at the user's key.
pub trait LoopHooks<R> {
    /// One turn of every retry loop after a failure.
    ///
    /// `cut`: an attempt the deadline cut, ending the call.
    ///
    /// `verdict`: what [`LoopHooks::verdict`] said of it.
    ///
    /// - A success (of a later attempt) pays the budget back and breaks out.
    /// - An outcome retrying ends on is reported to `give_up` and the trace, and breaks out.
    /// - A retried one comes back with its wait and the budget share its retry owes.
    #[allow(clippy::type_complexity)]
    #[inline]
    fn step<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        verdict: Verdict,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, (Duration, RetryShare<'h>, R)> {
        self.step_as(state, outcome, verdict, function, cut, false)
    }

    /// [`step`](LoopHooks::step), inlined whole into the blocking loop (`LoopState`).
    ///
    /// The hooks' types and a constant policy then leave only their work.
    #[allow(clippy::type_complexity)]
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn step_inline<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        verdict: Verdict,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, (Duration, RetryShare<'h>, R)> {
        self.step_as(state, outcome, verdict, function, cut, true)
    }

    /// [`step`](LoopHooks::step); `inline`: with the classification and the wait inlined too
    /// (a constant).
    #[doc(hidden)]
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn step_as<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        verdict: Verdict,
        function: &'static str,
        cut: bool,
        inline: bool,
    ) -> ControlFlow<R, (Duration, RetryShare<'h>, R)>;

    /// Retrying ends with `outcome` for `reason`.
    ///
    /// The trace, metrics, `give_up` hook and guards' `finished` hear of it.
    ///
    /// The outcome is handed back.
    #[doc(hidden)]
    fn report(
        &self,
        state: Option<&RetryState>,
        outcome: R,
        reason: GiveUpReason,
        function: &'static str,
        clock: Clock,
    ) -> R;

    /// Retrying ends with `outcome` for `reason`.
    ///
    /// The outcome is an error, or an `Ok` that `on_ok` retried.
    ///
    /// Tell the trace and `give_up` hook; hand the outcome back.
    fn give_up(
        &self,
        state: &RetryState,
        outcome: R,
        reason: GiveUpReason,
        function: &'static str,
    ) -> R;

    /// What an attempt's `outcome` is.
    ///
    /// It is taken, an error, or an `Ok` that `on_ok` retries.
    fn verdict(&self, outcome: &R) -> Verdict;

    /// The call's retry state begins.
    ///
    /// That happens when the call's first attempt failed, or its first hedge is due.
    ///
    /// The budget counts the call then, and only then.
    fn begin(&self, call: Started) -> RetryState;

    /// A call succeeded, at its first attempt or after its retry state began.
    ///
    /// At the first attempt, `state` is `None`.
    ///
    /// At its first attempt, the budget counts the call.
    ///
    /// The budget hears what its retries and hedges took.
    ///
    /// The guards are told.
    ///
    /// Nothing is reported: [`recovered`](LoopHooks::recovered) reports.
    fn succeeded(&self, state: Option<&RetryState>, clock: Clock, function: &'static str);

    /// A call succeeded at its first attempt, with `out`.
    ///
    /// The guards are told, then the budget counts the call.
    ///
    /// Then `out` is handed back.
    ///
    /// So the budget's rare work, out of line, is the success path's tail call.
    ///
    /// What [`succeeded`](LoopHooks::succeeded) does with `None`.
    fn first_success(&self, clock: Clock, function: &'static str, out: R) -> R;

    /// Before an attempt, the guards are asked.
    ///
    /// `state` is the call's state, `None` before its first attempt.
    ///
    /// If they refuse, `Some` with the call's final outcome.
    ///
    /// That outcome is already reported as a give-up.
    fn admit(&self, state: Option<&RetryState>, clock: Clock, function: &'static str) -> Option<R>;

    /// A call succeeded after failed (or hedged) calls.
    ///
    /// Pay the budget back and report the recovery.
    fn recovered(&self, state: &RetryState, function: &'static str);

    /// What the classifier (or `on_ok`) says of a failed `outcome`.
    ///
    /// The outcome's verdict is `verdict`.
    ///
    /// A hedged call decides with this while other attempts still run.
    ///
    /// The budget hears of a failure it would retry
    /// ([`SharedBudget::failed`](crate::SharedBudget::failed)).
    fn decide(&self, outcome: &R, verdict: Verdict, clock: Clock) -> Decision;

    /// A hedge is about to start.
    ///
    /// Ask the guards and take its budget share.
    ///
    /// `false`, no hedge, if either refuses.
    ///
    /// Then tell the `notify` hook and the trace.
    fn hedge(&self, state: &mut RetryState, event: &RetryEvent) -> bool;

    /// The call's cancel token, if any.
    ///
    /// Without `cancel`, it is a constant `None`.
    fn cancel(&self) -> Option<&CancelToken>;

    /// Whether the function awaits a hook with the last outcome.
    ///
    /// The hook is awaited after the step.
    ///
    /// A constant `false` without such a hook.
    ///
    /// With one, the outcome is kept through the wait.
    fn awaits(&self) -> bool;

    /// Whether the call was cancelled.
    ///
    /// Without a token, never: the check compiles to nothing.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn cancelled(&self) -> bool {
        self.cancel().is_some_and(CancelToken::is_cancelled)
    }
}

impl<C, N, G, B: Budget, T, O, Gd> Hooks<C, N, G, B, T, O, Gd> {
    /// [`LoopHooks::begin`]: the call is counted.
    ///
    /// Nothing at all without a budget.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn begin(&self, call: Started) -> RetryState {
        Account::begin(self.budget.get(), call.clock);
        RetryState::resume(call)
    }

    /// [`LoopHooks::succeeded`].
    ///
    /// At the first attempt (`state`: `None`), the budget counts the call.
    ///
    /// The budget also hears the call took nothing.
    ///
    /// Else the budget hears what the call's retries and hedges took.
    ///
    /// The guards hear of an answered call.
    ///
    /// Nothing at all without a budget or a guard.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn succeeded<R>(
        &self,
        state: Option<&RetryState>,
        clock: Clock,
        function: &'static str,
    ) where
        Gd: Guard<R>,
    {
        let Some(state) = state else {
            return self.first_success::<R, ()>(clock, function, ());
        };
        state.account().succeeded(self.budget.get());
        self.guard.answered(true, clock);
        self.guard.ended(true, clock, function);
        let calls = state.failed_calls().saturating_add(1);
        self.guard.finished(calls, None, clock);
    }

    /// [`LoopHooks::first_success`], and [`succeeded`](Hooks::succeeded) with `None` (`out`
    /// then `()`).
    ///
    /// The guards are told first, then the budget.
    ///
    /// The budget's [`first_success`](crate::SharedBudget::first_success) hands `out` back.
    ///
    /// That order lets the budget's cold part be a tail call.
    ///
    /// The guards and the budget hear of the same success.
    ///
    /// Neither reads the other.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn first_success<R, Out>(
        &self,
        clock: Clock,
        function: &'static str,
        out: Out,
    ) -> Out
    where
        Gd: Guard<R>,
    {
        self.guard.answered(true, clock);
        self.guard.ended(true, clock, function);
        self.guard.finished(1, None, clock);
        Account::first_success(self.budget.get(), clock, out)
    }
}

impl<R, C, N, G, B, T, O, Gd> LoopHooks<R> for Hooks<C, N, G, B, T, O, Gd>
where
    R: IsResult,
    C: Classify<R::Err>,
    N: Notify<R::Err>,
    G: GiveUpHook<R::Err>,
    B: Budget,
    T: Trace<R>,
    O: ClassifyOk<R::Ok>,
    Gd: Guard<R>,
{
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn step_as<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        verdict: Verdict,
        function: &'static str,
        cut: bool,
        inline: bool,
    ) -> ControlFlow<R, (Duration, RetryShare<'h>, R)> {
        // The throttle hears whether the service answered.
        //
        // An answer is an `Ok`, or an error that retrying stops on.
        let step = match (verdict, outcome.as_err()) {
            _ if cut => {
                // Cut by the caller's deadline, an attempt says nothing of the service.
                if !state.deadline_is_callers() {
                    self.guard.answered(false, state.clock());
                }
                Err(state.end(GiveUpReason::Elapsed))
            }
            // Cancelled (`cancel = …`), no retry is made.
            //
            // The call ends with this outcome.
            //
            // That is before any wait is drawn, budget taken or `notify` told.
            //
            // A `Decision::Stop` still says `Stopped`. Without a token, no code.
            (Verdict::RetryOk(decision), _) => {
                self.guard.answered(true, state.clock());
                if decision != Decision::Stop && LoopHooks::<R>::cancelled(self) {
                    Err(state.end(GiveUpReason::Cancelled))
                } else {
                    state.decided_step::<R::Err, _, _, _, _, _, _, _>(
                        decision, None, self, function, inline,
                    )
                }
            }
            (_, Some(error)) => {
                // An attempt that never reached the server's application is resent at once.
                //
                // No count, no wait, nothing taken or told.
                //
                // A `No` but for gRPC's layer, where this folds away.
                if state.transparent(self.on.transparent(error)) {
                    self.guard.transparent();
                    return ControlFlow::Continue((Duration::ZERO, RetryShare::default(), outcome));
                }
                let decision = self.on.classify(error);
                self.guard
                    .answered(decision == Decision::Stop, state.clock());
                if decision != Decision::Stop && LoopHooks::<R>::cancelled(self) {
                    Err(state.end(GiveUpReason::Cancelled))
                } else {
                    state.decided_step(decision, Some(error), self, function, inline)
                }
            }
            (_, None) => {
                recovered(self, state, function);
                return ControlFlow::Break(outcome);
            }
        };
        match step {
            Ok((delay, owed)) => {
                let event = state.event(delay, function, outcome.as_err().is_none());
                self.guard.waiting(&event, state.clock());
                self.trace.retry(&outcome, &event);
                #[cfg(feature = "metrics")]
                crate::run::metrics::retry(state.listening(), function, delay);
                ControlFlow::Continue((delay, owed, outcome))
            }
            Err(reason) => {
                ControlFlow::Break(LoopHooks::give_up(self, state, outcome, reason, function))
            }
        }
    }

    fn report(
        &self,
        state: Option<&RetryState>,
        outcome: R,
        reason: GiveUpReason,
        function: &'static str,
        clock: Clock,
    ) -> R {
        let give_up = GiveUp {
            reason,
            calls: state.map_or(0, RetryState::failed_calls),
            function,
            ok: outcome.as_err().is_none(),
        };
        self.trace.give_up(&outcome, &give_up);
        let attempts = state.map(|state| state.policy().attempts());
        crate::policy::scope::gave_up(reason, give_up.calls, attempts);
        #[cfg(feature = "metrics")]
        crate::run::metrics::give_up(
            state.map_or_else(crate::run::metrics::listening, RetryState::listening),
            function,
            reason,
        );
        match outcome.as_err() {
            Some(error) => self.give_up.give_up(error, &give_up),
            None => self.give_up.give_up_ok(&give_up),
        }
        self.guard.finished(give_up.calls, Some(reason), clock);
        outcome
    }

    fn give_up(
        &self,
        state: &RetryState,
        outcome: R,
        reason: GiveUpReason,
        function: &'static str,
    ) -> R {
        // The breaker counts the call.
        //
        // A success if the service answered, else a failure.
        //
        // An `Ok` or a `Decision::Stop` means the service answered.
        let answered = reason == GiveUpReason::Stopped || outcome.as_err().is_none();
        // Ended by the caller's deadline, the call counts as a drop.
        //
        // A drop is not counted at all.
        if reason != GiveUpReason::Elapsed || !state.deadline_is_callers() {
            self.guard.ended(answered, state.clock(), function);
        }
        self.report(Some(state), outcome, reason, function, state.clock())
    }

    fn admit(&self, state: Option<&RetryState>, clock: Clock, function: &'static str) -> Option<R> {
        let (outcome, reason) = self.guard.before(state.is_none(), clock, function).err()?;
        // The breaker let a call through, then the throttle stopped it.
        //
        // To the breaker, that call is a failure.
        //
        // One the breaker refused never began.
        if reason != GiveUpReason::CircuitOpen {
            self.guard.ended(false, clock, function);
        }
        Some(self.report(state, outcome, reason, function, clock))
    }

    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn verdict(&self, outcome: &R) -> Verdict {
        verdict(outcome, &self.on_ok)
    }

    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn begin(&self, call: Started) -> RetryState {
        Hooks::begin(self, call)
    }

    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn succeeded(&self, state: Option<&RetryState>, clock: Clock, function: &'static str) {
        Hooks::succeeded::<R>(self, state, clock, function);
    }

    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn first_success(&self, clock: Clock, function: &'static str, out: R) -> R {
        Hooks::first_success::<R, R>(self, clock, function, out)
    }

    fn recovered(&self, state: &RetryState, function: &'static str) {
        recovered(self, state, function);
    }

    fn decide(&self, outcome: &R, verdict: Verdict, clock: Clock) -> Decision {
        let (decision, answered) = match (verdict, outcome.as_err()) {
            (Verdict::RetryOk(decision), _) => (decision, true),
            (_, Some(error)) => {
                let decision = self.on.classify(error);
                (decision, decision == Decision::Stop)
            }
            (_, None) => (Decision::Stop, true),
        };
        self.guard.answered(answered, clock);
        // A failure the loop would retry, while other attempts run.
        //
        // The budget hears of it as the step tells it of the last attempt's failure.
        if decision != Decision::Stop {
            Account::failed(self.budget.get(), clock);
        }
        decision
    }

    #[inline]
    fn cancel(&self) -> Option<&CancelToken> {
        self.guard.cancel()
    }

    #[inline]
    fn awaits(&self) -> bool {
        self.guard.awaits()
    }

    fn hedge(&self, state: &mut RetryState, event: &RetryEvent) -> bool {
        // A cancelled call starts no hedge.
        if LoopHooks::<R>::cancelled(self) {
            return false;
        }
        // A hedge the throttle rejects is not started.
        if self
            .guard
            .before(false, state.clock(), event.function)
            .is_err()
        {
            return false;
        }
        // Owed until the hedge starts.
        //
        // Should a hook unwind, the share goes back.
        let Some(mut owed) = state.take_share(self.budget.get(), Charge::Hedge) else {
            return false;
        };
        self.guard.hedged();
        self.notify.hedge(event);
        self.trace.hedge(event);
        #[cfg(feature = "metrics")]
        crate::run::metrics::hedge(state.listening(), event.function);
        owed.spend();
        true
    }
}

/// The `Result` a retried function returns, seen through any alias.
///
/// For example, `io::Result<T>`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`#[retry]` needs a function that returns a `Result`, not `{Self}`",
    label = "this must be a `Result<T, E>` (or an alias of one, like `io::Result<T>`)",
    note = "retrying decides on the error: return `Result<{Self}, YourError>`"
)]
pub trait IsResult {
    /// The value type.
    type Ok;
    /// The error type.
    type Err;
    /// The value, if this is one.
    fn as_ok(&self) -> Option<&Self::Ok>;
    /// The error, if this is one.
    fn as_err(&self) -> Option<&Self::Err>;
    /// An outcome that is this error.
    fn from_err(error: Self::Err) -> Self;
    /// Nothing: `#[retry]`'s check that the function returns a `Result`.
    ///
    /// Called as `IsResult::returned(PhantomData::<Ret>)` at the return type.
    ///
    /// So a type that is not one gets this trait's message alone.
    ///
    /// A method of the trait's own carries no "required by a bound in" a function of ours.
    #[inline]
    fn returned(_: core::marker::PhantomData<Self>) {}
}

// Not recommended: a misuse's error is this trait's message alone.
//
// It shows neither the impl nor this file's path.
#[diagnostic::do_not_recommend]
impl<T, E> IsResult for Result<T, E> {
    type Ok = T;
    type Err = E;
    #[inline]
    fn as_ok(&self) -> Option<&T> {
        self.as_ref().ok()
    }
    #[inline]
    fn as_err(&self) -> Option<&E> {
        self.as_ref().err()
    }
    #[inline]
    fn from_err(error: E) -> Self {
        Err(error)
    }
}
