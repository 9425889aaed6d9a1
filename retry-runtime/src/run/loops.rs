//! The one retry loop's plumbing, driven by the macro's expansion and the closure API alike:
//! the blocking loop, the async loops' per-call state, and the step after each attempt.

use core::future::Future;
use core::marker::PhantomData;
use core::ops::ControlFlow;
use core::time::Duration;
use std::time::Instant;

use crate::fleet::{Budget, Owed, SharedBudget};
use crate::run::hedge::{hedged, Hedge, LastError};
use crate::run::hooks::{GiveUpHook, Hooks, Trace};
use crate::run::sleep::{self, Clock};
pub use crate::run::state::start_time;
use crate::run::state::{Classify, Notify, RetryState};
use crate::{Decision, GiveUp, GiveUpReason, Policy, RetryEvent};

/// The retry machinery of one call after its first failure: the [`RetryState`], and the
/// budget's share for a retry that has not run yet (given back if it never does). Nothing here
/// has the function's `Result` type: a retried `async fn`'s future, which holds this across
/// every `.await`, is `Send` whatever `T` and `E` are.
struct Failing<'h> {
    state: RetryState,
    owed: Owed<'h>,
}

/// A wait the loop is about to sleep: its length, and the last error while a deadline may end
/// the call after the wait (`None` without one: nothing of `E` is kept through the wait).
pub type Pause<E> = (Duration, Option<E>);

impl<'h> Failing<'h> {
    fn new((policy, clock, start): (&Policy, Clock, Option<Instant>)) -> Self {
        Failing {
            state: RetryState::resume(*policy, clock, start),
            owed: Owed::default(),
        }
    }

    /// After a failed attempt (`cut`: by the deadline): `Break` with the outcome if retrying
    /// ends on it, `Continue` with the wait before the next attempt.
    #[inline(always)]
    fn failed<R: IsResult, H: Serves<R>>(
        &mut self,
        outcome: R,
        hooks: &'h H,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, Pause<R::Err>> {
        let (delay, owed, outcome) = hooks.step_inline(&mut self.state, outcome, function, cut)?;
        // The previous retry's share was spent when it ran (`resumed`): nothing is given
        // back here, and no drop of the old value is compiled.
        self.owed.spend();
        self.owed = owed;
        // Kept through the wait only where the deadline may end the call after it.
        let last = if self.state.has_deadline() {
            outcome.into_err()
        } else {
            None
        };
        ControlFlow::Continue((delay, last))
    }

    /// After a wait, before the next attempt: `Break` with the last error if the deadline
    /// passed during the wait (however long the timer overslept, no attempt starts past it),
    /// else the retry runs and its share is spent.
    #[inline(always)]
    fn resumed<R: IsResult, H: Serves<R>>(
        &mut self,
        last: Option<R::Err>,
        hooks: &H,
        function: &'static str,
    ) -> ControlFlow<R> {
        if let Some(last) = last {
            if self.state.past_deadline() {
                // The retry never runs: its share goes back.
                self.owed = Owed::default();
                let (reason, last) = (GiveUpReason::Elapsed, R::from_err(last));
                return ControlFlow::Break(hooks.give_up(&self.state, last, reason, function));
            }
        }
        self.owed.spend();
        ControlFlow::Continue(())
    }
}

/// The state of one call of a retry loop written in the function (an `async fn`'s, a
/// `#[track_caller]` fn's, [`Retry::call_async_with`](crate::Retry::call_async_with)'s),
/// built only when its first attempt fails: until then an empty pointer.
///
/// The policy (by reference: a constant one is an address, not a copy at every failure), the
/// clock and the start time are passed in, not kept, so that a policy known at compile time
/// stays a constant, and the state lives in a box allocated at the first failure:
/// a retried `async fn`'s future grows by one word for it, not by the whole state. Dropping it
/// during a wait gives the budget back the share of the retry that never ran. `R`, the
/// function's return type, is only named (so that the loop's calls infer against it): the
/// state holds nothing of it.
pub struct LoopState<'h, R> {
    state: Option<Box<Failing<'h>>>,
    returns: PhantomData<fn() -> R>,
}

impl<R> Drop for LoopState<'_, R> {
    /// The state, if any, is dropped out of line (it gives back the share of a retry that
    /// never ran): the success path, which never has one, keeps its registers.
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(failing) = self.state.take() {
            drop_failing(failing);
        }
    }
}

#[cold]
#[inline(never)]
fn drop_failing(failing: Box<Failing<'_>>) {
    drop(failing);
}

impl<R> Default for LoopState<'_, R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'h, R> LoopState<'h, R> {
    /// Before the first attempt.
    #[inline(always)]
    pub const fn new() -> Self {
        LoopState {
            state: None,
            returns: PhantomData,
        }
    }

    /// After a failed attempt (check [`succeeded`] first: the success path must not come
    /// here); `cut` when the deadline cut it. `Break` with the outcome if retrying ends on it,
    /// `Continue` with the wait before the next attempt and what [`resumed`](LoopState::resumed)
    /// needs after it.
    #[cold]
    #[inline(never)]
    pub fn failed<H: Serves<R>>(
        &mut self,
        now: (&Policy, Clock, Option<Instant>),
        outcome: R,
        hooks: &'h H,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, Pause<R::Err>>
    where
        R: IsResult,
    {
        let failing = self.state.get_or_insert_with(|| {
            hooks.begin(now.1);
            Box::new(Failing::new(now))
        });
        failing.failed(outcome, hooks, function, cut)
    }

    /// After a wait, before the next attempt, with the `last` error [`failed`](LoopState::failed)
    /// handed on: `Break` with it if the deadline passed during the wait.
    #[cold]
    #[inline(never)]
    pub fn resumed<H: Serves<R>>(
        &mut self,
        last: Option<R::Err>,
        hooks: &H,
        function: &'static str,
    ) -> ControlFlow<R>
    where
        R: IsResult,
    {
        match &mut self.state {
            Some(failing) => failing.resumed(last, hooks, function),
            None => ControlFlow::Continue(()),
        }
    }

    /// An attempt succeeded: give the budget its due (the first attempt's, or what this
    /// call's retries took), and after failures report the recovery.
    #[inline(always)]
    pub fn succeeded<C, N, G, B: Budget, T: Trace<R>>(
        &self,
        hooks: &Hooks<C, N, G, B, T>,
        function: &'static str,
        clock: Clock,
    ) {
        // A recovery is reported only where something hears of it (the metrics, a trace);
        // otherwise this is the budget's payment alone, and no branch without a budget.
        if cfg!(feature = "metrics") || !Trace::<R>::is_silent(&hooks.trace) {
            if let Some(failing) = &self.state {
                return recovered(hooks, &failing.state, function);
            }
        }
        match &self.state {
            None => hooks.first_try(clock),
            Some(failing) => hooks.pay(failing.state.budget_retries()),
        }
    }

    /// [`succeeded`](LoopState::succeeded) for any hooks that serve `R` (the closure API's).
    #[inline(always)]
    pub(crate) fn succeeded_with<H: Serves<R>>(
        &self,
        hooks: &H,
        function: &'static str,
        clock: Clock,
    ) {
        match &self.state {
            None => {
                hooks.begin(clock);
                hooks.pay(0);
            }
            Some(failing) => hooks.recovered(&failing.state, function),
        }
    }
}

/// A call succeeded after failed (or hedged) calls: the budget gets back what its retries
/// took, and the metrics and the trace hear of it.
#[cold]
#[inline(never)]
fn recovered<R, C, N, G, B: Budget, T: Trace<R>>(
    hooks: &Hooks<C, N, G, B, T>,
    state: &RetryState,
    function: &'static str,
) {
    hooks.pay(state.budget_retries());
    #[cfg(feature = "metrics")]
    crate::run::metrics::recovered(function);
    // The elapsed time is read (a clock read, with `tracing`) only for a trace that shows it.
    if !Trace::<R>::is_silent(&hooks.trace) {
        let calls = state.failed_calls().saturating_add(1);
        hooks.trace.recovered(function, calls, state.elapsed());
    }
}

/// The timer of an async loop for one wait, boxed: the retried future then holds a pointer,
/// not a timer, and a first-call success (which never sleeps) allocates nothing. A zero wait
/// is no timer at all (and no allocation).
#[inline]
pub fn sleep_boxed<F, S>(delay: Duration, sleep: S) -> Wait<F>
where
    F: Future<Output = ()>,
    S: FnOnce(Duration) -> F,
{
    Wait((!delay.is_zero()).then(|| Box::pin(sleep(delay))))
}

/// One wait of an async retry loop: a boxed timer, or none for a zero wait.
pub struct Wait<F>(Option<core::pin::Pin<Box<F>>>);

impl<F: Future<Output = ()>> Future for Wait<F> {
    type Output = ();

    #[inline]
    fn poll(
        self: core::pin::Pin<&mut Self>,
        cx: &mut core::task::Context<'_>,
    ) -> core::task::Poll<()> {
        match &mut self.get_mut().0 {
            Some(timer) => timer.as_mut().poll(cx),
            None => core::task::Poll::Ready(()),
        }
    }
}

/// Whether an attempt succeeded. The loops test this first and return the outcome at once:
/// measured, handing a success through `ControlFlow` cost an async fn 8 ns.
#[inline(always)]
pub fn succeeded<R: IsResult>(outcome: &R) -> bool {
    outcome.as_err().is_none()
}

/// The loops' entry points for a function returning `R`, as `Loop::<R>::…`: the return type
/// is named once, in the path, so every error about it (`R` is not a `Result`) has the same
/// span, the return type's, and the compiler reports it once.
pub struct Loop<R>(PhantomData<fn() -> R>);

impl<R> Loop<R> {
    /// [`run_blocking`].
    #[inline(always)]
    pub fn run_blocking<C, N, G, B, T, F>(
        policy: Policy,
        hooks: &Hooks<C, N, G, B, T>,
        function: &'static str,
        op: F,
    ) -> R
    where
        R: IsResult,
        C: Classify<R::Err>,
        N: Notify<R::Err>,
        G: GiveUpHook<R::Err>,
        B: Budget,
        T: Trace<R>,
        F: FnMut() -> R,
    {
        run_blocking(policy, hooks, function, op)
    }

    /// [`succeeded`].
    #[inline(always)]
    pub fn succeeded(outcome: &R) -> bool
    where
        R: IsResult,
    {
        succeeded(outcome)
    }

    /// [`LoopState::failed`].
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    pub fn failed<'h, C, N, G, B, T>(
        attempts: &mut LoopState<'h, R>,
        now: (&Policy, Clock, Option<Instant>),
        outcome: R,
        hooks: &'h Hooks<C, N, G, B, T>,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, Pause<R::Err>>
    where
        R: IsResult,
        C: Classify<R::Err>,
        N: Notify<R::Err>,
        G: GiveUpHook<R::Err>,
        B: Budget,
        T: Trace<R>,
    {
        attempts.failed(now, outcome, hooks, function, cut)
    }

    /// The hedging loop (`hedge = …`): [`hedge`](crate::hedge).
    /// (A plain `fn` returning the loop's future, not an `async fn` around it, which would
    /// keep its arguments and that future twice.)
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn hedged<'h, C, N, G, B, T, F, Fut, S, SFut, M, K>(
        now: (Policy, Clock, Option<Instant>),
        hooks: &'h Hooks<C, N, G, B, T>,
        function: &'static str,
        hedge: Hedge,
        timeout: Option<(Duration, M)>,
        sleep: S,
        make: F,
        last: K,
    ) -> impl Future<Output = R> + use<'h, R, C, N, G, B, T, F, Fut, S, SFut, M, K>
    where
        R: IsResult,
        K: LastError<R::Err>,
        C: Classify<R::Err>,
        N: Notify<R::Err>,
        G: GiveUpHook<R::Err>,
        B: Budget,
        T: Trace<R>,
        F: FnMut() -> Fut,
        Fut: Future<Output = R>,
        S: FnMut(Duration) -> SFut,
        SFut: Future<Output = ()>,
        M: Fn(crate::TimedOut) -> R,
    {
        hedged(now, hooks, function, hedge, timeout, sleep, make, last)
    }

    /// [`LoopState::resumed`].
    #[inline(always)]
    pub fn resumed<C, N, G, B, T>(
        attempts: &mut LoopState<'_, R>,
        last: Option<R::Err>,
        hooks: &Hooks<C, N, G, B, T>,
        function: &'static str,
    ) -> ControlFlow<R>
    where
        R: IsResult,
        C: Classify<R::Err>,
        N: Notify<R::Err>,
        G: GiveUpHook<R::Err>,
        B: Budget,
        T: Trace<R>,
    {
        attempts.resumed(last, hooks, function)
    }
}

/// Hooks that serve a function returning `R`: every bound the loops need, in one place.
/// (The `Loop::<R>` entry points spell the bounds out instead, so that a mistake in a hook is
/// reported at the user's key.)
pub trait Serves<R> {
    /// One turn of every retry loop after a failure (`cut`: an attempt cut by the deadline,
    /// which ends the call): a success (of a later attempt) pays the budget back and breaks
    /// out; an error retrying ends on is reported to `give_up` and the trace and breaks out;
    /// a retried error comes back with the wait and the budget's tokens its retry owes.
    #[allow(clippy::type_complexity)]
    fn step<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, (Duration, Owed<'h>, R)>;

    /// [`step`](Serves::step), inlined whole into the loop that calls it (the blocking loop,
    /// `LoopState`): the hooks' types and a constant policy then leave only what they do.
    #[allow(clippy::type_complexity)]
    fn step_inline<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, (Duration, Owed<'h>, R)>;

    /// Retrying ends with `outcome` (an error) for `reason`: tell the trace and the `give_up`
    /// hook, and hand the outcome back.
    fn give_up(
        &self,
        state: &RetryState,
        outcome: R,
        reason: GiveUpReason,
        function: &'static str,
    ) -> R;

    /// A call begins (its first attempt is made): the budget counts it.
    fn begin(&self, clock: Clock);

    /// A success pays the budget back: the first-try reward, or what the call's retries took.
    fn pay(&self, budget_retries: u32);

    /// A call succeeded after failed (or hedged) calls: pay the budget back and report it.
    fn recovered(&self, state: &RetryState, function: &'static str);

    /// What the classifier says of a failed `outcome` (a hedged call decides with it while
    /// other attempts still run).
    fn decide(&self, outcome: &R) -> Decision;

    /// A hedge is about to start: take its budget tokens (`false`, no hedge, if there are
    /// none), and tell the `notify` hook and the trace.
    fn hedge(&self, state: &mut RetryState, event: &RetryEvent) -> bool;
}

impl<C, N, G, B: Budget, T> Hooks<C, N, G, B, T> {
    /// A call begins (its first attempt is made): the budget counts it. Nothing at all
    /// without a budget.
    #[inline(always)]
    fn begin(&self, clock: Clock) {
        if let Some(budget) = self.budget.get() {
            budget.begin(clock);
        }
    }

    /// A call succeeded at its first attempt: the budget counts the call and takes the
    /// first-try reward. Nothing at all without a budget.
    #[inline(always)]
    fn first_try(&self, clock: Clock) {
        if let Some(budget) = self.budget.get() {
            budget.begin(clock);
            budget.succeeded_after(0);
        }
    }

    /// A success pays the budget back: the first-try reward (no retries), or what the call's
    /// retries took. Nothing at all without a budget.
    #[inline(always)]
    fn pay(&self, budget_retries: u32) {
        if let Some(budget) = self.budget.get() {
            budget.succeeded_after(budget_retries);
        }
    }
}

impl<R, C, N, G, B, T> Serves<R> for Hooks<C, N, G, B, T>
where
    R: IsResult,
    C: Classify<R::Err>,
    N: Notify<R::Err>,
    G: GiveUpHook<R::Err>,
    B: Budget,
    T: Trace<R>,
{
    #[inline]
    fn step<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, (Duration, Owed<'h>, R)> {
        step(self, state, outcome, function, cut, false)
    }

    #[inline(always)]
    fn step_inline<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, (Duration, Owed<'h>, R)> {
        step(self, state, outcome, function, cut, true)
    }

    fn give_up(
        &self,
        state: &RetryState,
        outcome: R,
        reason: GiveUpReason,
        function: &'static str,
    ) -> R {
        let give_up = GiveUp {
            reason,
            calls: state.failed_calls(),
            function,
        };
        self.trace.give_up(&outcome, &give_up);
        #[cfg(feature = "metrics")]
        crate::run::metrics::give_up(function, reason);
        if let Some(error) = outcome.as_err() {
            self.give_up.give_up(error, &give_up);
        }
        outcome
    }

    #[inline(always)]
    fn begin(&self, clock: Clock) {
        Hooks::begin(self, clock);
    }

    #[inline(always)]
    fn pay(&self, budget_retries: u32) {
        Hooks::pay(self, budget_retries);
    }

    fn recovered(&self, state: &RetryState, function: &'static str) {
        recovered(self, state, function);
    }

    fn decide(&self, outcome: &R) -> Decision {
        outcome
            .as_err()
            .map_or(Decision::Stop, |error| self.on.classify(error))
    }

    fn hedge(&self, state: &mut RetryState, event: &RetryEvent) -> bool {
        if !state.take_tokens(self.budget.get()) {
            return false;
        }
        self.notify.hedge(event);
        self.trace.hedge(event);
        #[cfg(feature = "metrics")]
        crate::run::metrics::hedge(event.function);
        true
    }
}

/// [`Serves::step`]; `inline`: with the classification and the wait inlined too (a constant).
#[allow(clippy::type_complexity)]
#[inline(always)]
fn step<'h, R, C, N, G, B, T>(
    hooks: &'h Hooks<C, N, G, B, T>,
    state: &mut RetryState,
    outcome: R,
    function: &'static str,
    cut: bool,
    inline: bool,
) -> ControlFlow<R, (Duration, Owed<'h>, R)>
where
    R: IsResult,
    C: Classify<R::Err>,
    N: Notify<R::Err>,
    G: GiveUpHook<R::Err>,
    B: Budget,
    T: Trace<R>,
{
    let Some(error) = outcome.as_err() else {
        recovered(hooks, state, function);
        return ControlFlow::Break(outcome);
    };
    let step = if cut {
        Err(state.end(GiveUpReason::Elapsed))
    } else {
        state.retry_step(error, hooks, function, inline)
    };
    match step {
        Ok((delay, owed)) => {
            hooks.trace.retry(&outcome, &state.event(delay, function));
            #[cfg(feature = "metrics")]
            crate::run::metrics::retry(function, delay);
            ControlFlow::Continue((delay, owed, outcome))
        }
        Err(reason) => ControlFlow::Break(Serves::give_up(hooks, state, outcome, reason, function)),
    }
}

/// The blocking retry loop shared by [`Retry::call`](crate::Retry::call) and sync `#[retry]` functions. The first
/// attempt runs before anything else exists: a success returns without a store.
#[inline]
pub fn run_blocking<R, H, F>(policy: Policy, hooks: &H, function: &'static str, mut op: F) -> R
where
    R: IsResult,
    H: Serves<R>,
    F: FnMut() -> R,
{
    let start = start_time(&policy, sleep::now);
    let first = op();
    if succeeded(&first) {
        hooks.begin(sleep::now);
        hooks.pay(0);
        return first;
    }
    retry_blocking(policy, start, first, hooks, function, op)
}

#[cold]
#[inline(never)]
fn retry_blocking<R, H, F>(
    policy: Policy,
    start: Option<Instant>,
    first: R,
    hooks: &H,
    function: &'static str,
    mut op: F,
) -> R
where
    R: IsResult,
    H: Serves<R>,
    F: FnMut() -> R,
{
    hooks.begin(sleep::now);
    let mut failing = Failing::new((&policy, sleep::now, start));
    let mut outcome = first;
    loop {
        let last = match failing.failed(outcome, hooks, function, false) {
            ControlFlow::Break(outcome) => return outcome,
            ControlFlow::Continue((delay, last)) => {
                sleep::sleep_blocking(delay);
                last
            }
        };
        if let ControlFlow::Break(outcome) = failing.resumed(last, hooks, function) {
            return outcome;
        }
        outcome = op();
    }
}

/// The `Result` a retried function returns, seen through any alias (`io::Result<T>`…).
#[diagnostic::on_unimplemented(
    message = "`#[retry]` needs a function that returns a `Result`, not `{Self}`",
    label = "this must be a `Result<T, E>` (or an alias of one, like `io::Result<T>`)",
    note = "retrying decides on the error: return `Result<{Self}, YourError>`"
)]
pub trait IsResult {
    /// The error type.
    type Err;
    /// The error, if this is one.
    fn as_err(&self) -> Option<&Self::Err>;
    /// The error, if this is one, taken out.
    fn into_err(self) -> Option<Self::Err>;
    /// An outcome that is this error.
    fn from_err(error: Self::Err) -> Self;
}

impl<T, E> IsResult for Result<T, E> {
    type Err = E;
    #[inline]
    fn as_err(&self) -> Option<&E> {
        self.as_ref().err()
    }
    #[inline]
    fn into_err(self) -> Option<E> {
        self.err()
    }
    #[inline(always)]
    fn from_err(error: E) -> Self {
        Err(error)
    }
}
