//! The one retry loop's plumbing, driven by the macro's expansion and the closure API alike:
//! the blocking loop, the async loops' per-call state, and the step after each attempt.

use core::future::Future;
use core::marker::PhantomData;
use core::ops::ControlFlow;
use core::time::Duration;
use std::time::Instant;

use crate::fleet::{Budget, Owed, SharedBudget};
use crate::run::hedge::{hedged, Hedge, KeepLast};
use crate::run::hooks::{GiveUpHook, Hooks, Trace};
use crate::run::sleep::{self, Clock};
pub use crate::run::state::start_time;
use crate::run::state::{Classify, ClassifyOk, Notify, RetryState};
use crate::{Decision, GiveUp, GiveUpReason, Policy, RetryEvent};

/// The retry machinery of one call after its first failure: the [`RetryState`], and the
/// budget's share for a retry that has not run yet (given back if it never does). Nothing here
/// has the function's `Result` type: a retried `async fn`'s future, which holds this across
/// every `.await`, is `Send` whatever `T` and `E` are.
struct Failing<'h> {
    state: RetryState,
    owed: Owed<'h>,
}

/// A wait the loop is about to sleep: its length, and the last outcome while a deadline may end
/// the call after the wait (`None` without one: nothing of `R` is kept through the wait).
pub type Pause<R> = (Duration, Option<R>);

/// What an attempt's outcome is to the loop: taken (an `Ok` that `on_ok`, if any, accepts), a
/// failure (an error), or an `Ok` value `on_ok` retries, with its decision.
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
    #[inline(always)]
    pub fn accepted(self) -> bool {
        matches!(self, Verdict::Accepted)
    }
}

/// What `on_ok` makes of `outcome`. Without `on_ok` ([`AcceptOk`](crate::AcceptOk)) this is
/// `Accepted` for every `Ok`, and costs what testing for an error costs. The loops test this
/// first and return a success at once: measured, handing a success through `ControlFlow` cost
/// an async fn 8 ns.
#[inline(always)]
pub fn verdict<R: IsResult, O: ClassifyOk<R::Ok>>(outcome: &R, on_ok: &O) -> Verdict {
    match outcome.as_ok() {
        None => Verdict::Failed,
        Some(value) => match on_ok.classify_ok(value) {
            Decision::Stop => Verdict::Accepted,
            decision => Verdict::RetryOk(decision),
        },
    }
}

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
        verdict: Verdict,
        hooks: &'h H,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, Pause<R>> {
        let (delay, owed, outcome) =
            hooks.step_inline(&mut self.state, outcome, verdict, function, cut)?;
        // The previous retry's share was spent when it ran (`resumed`): nothing is given
        // back here, and no drop of the old value is compiled.
        self.owed.spend();
        self.owed = owed;
        // Kept through the wait only where the deadline may end the call after it.
        let last = self.state.has_deadline().then_some(outcome);
        ControlFlow::Continue((delay, last))
    }

    /// After a wait, before the next attempt: `Break` with the last outcome if the deadline
    /// passed during the wait (however long the timer overslept, no attempt starts past it),
    /// else the retry runs and its share is spent.
    #[inline(always)]
    fn resumed<R: IsResult, H: Serves<R>>(
        &mut self,
        last: Option<R>,
        hooks: &H,
        function: &'static str,
    ) -> ControlFlow<R> {
        if let Some(last) = last {
            if self.state.past_deadline() {
                // The retry never runs: its share goes back.
                self.owed = Owed::default();
                let reason = GiveUpReason::Elapsed;
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
    #[allow(clippy::too_many_arguments)]
    pub fn failed<H: Serves<R>>(
        &mut self,
        now: (&Policy, Clock, Option<Instant>),
        outcome: R,
        verdict: Verdict,
        hooks: &'h H,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, Pause<R>>
    where
        R: IsResult,
    {
        let failing = self.state.get_or_insert_with(|| {
            hooks.begin(now.1);
            Box::new(Failing::new(now))
        });
        failing.failed(outcome, verdict, hooks, function, cut)
    }

    /// The 1-based number of the attempt about to run (`attempt = n`): 1 until one fails.
    #[inline(always)]
    pub fn attempt(&self) -> u32 {
        match &self.state {
            None => 1,
            Some(failing) => failing.state.failed_calls().saturating_add(1),
        }
    }

    /// After a wait, before the next attempt, with the `last` error [`failed`](LoopState::failed)
    /// handed on: `Break` with it if the deadline passed during the wait.
    #[cold]
    #[inline(never)]
    pub fn resumed<H: Serves<R>>(
        &mut self,
        last: Option<R>,
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
    pub fn succeeded<C, N, G, B: Budget, T: Trace<R>, O>(
        &self,
        hooks: &Hooks<C, N, G, B, T, O>,
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
fn recovered<R, C, N, G, B: Budget, T: Trace<R>, O>(
    hooks: &Hooks<C, N, G, B, T, O>,
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

/// The loops' entry points for a function returning `R`, as `Loop::<R>::…`: the return type
/// is named once, in the path, so every error about it (`R` is not a `Result`) has the same
/// span, the return type's, and the compiler reports it once.
pub struct Loop<R>(PhantomData<fn() -> R>);

impl<R> Loop<R> {
    /// [`run_blocking`].
    #[inline(always)]
    pub fn run_blocking<C, N, G, B, T, O, F>(
        policy: Policy,
        hooks: &Hooks<C, N, G, B, T, O>,
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
        O: ClassifyOk<R::Ok>,
        F: FnMut(u32) -> R,
    {
        run_blocking(policy, hooks, function, op)
    }

    /// [`verdict`], with the hooks' `on_ok`.
    #[inline(always)]
    pub fn verdict<C, N, G, B, T, O>(outcome: &R, hooks: &Hooks<C, N, G, B, T, O>) -> Verdict
    where
        R: IsResult,
        O: ClassifyOk<R::Ok>,
    {
        verdict(outcome, &hooks.on_ok)
    }

    /// [`LoopState::failed`].
    #[inline(always)]
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    pub fn failed<'h, C, N, G, B, T, O>(
        attempts: &mut LoopState<'h, R>,
        now: (&Policy, Clock, Option<Instant>),
        outcome: R,
        verdict: Verdict,
        hooks: &'h Hooks<C, N, G, B, T, O>,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, Pause<R>>
    where
        R: IsResult,
        C: Classify<R::Err>,
        N: Notify<R::Err>,
        G: GiveUpHook<R::Err>,
        B: Budget,
        T: Trace<R>,
        O: ClassifyOk<R::Ok>,
    {
        attempts.failed(now, outcome, verdict, hooks, function, cut)
    }

    /// The hedging loop (`hedge = …`): [`hedge`](crate::hedge).
    /// (A plain `fn` returning the loop's future, not an `async fn` around it, which would
    /// keep its arguments and that future twice.)
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn hedged<'h, C, N, G, B, T, O, F, Fut, S, SFut, M, K>(
        now: (Policy, Clock, Option<Instant>),
        hooks: &'h Hooks<C, N, G, B, T, O>,
        function: &'static str,
        hedge: Hedge,
        timeout: Option<(Duration, M)>,
        sleep: S,
        make: F,
        last: K,
    ) -> impl Future<Output = R> + use<'h, R, C, N, G, B, T, O, F, Fut, S, SFut, M, K>
    where
        R: IsResult,
        K: KeepLast<R>,
        C: Classify<R::Err>,
        N: Notify<R::Err>,
        G: GiveUpHook<R::Err>,
        B: Budget,
        T: Trace<R>,
        O: ClassifyOk<R::Ok>,
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = R>,
        S: FnMut(Duration) -> SFut,
        SFut: Future<Output = ()>,
        M: Fn(crate::TimedOut) -> R,
    {
        hedged(now, hooks, function, hedge, timeout, sleep, make, last)
    }

    /// [`LoopState::resumed`].
    #[inline(always)]
    pub fn resumed<C, N, G, B, T, O>(
        attempts: &mut LoopState<'_, R>,
        last: Option<R>,
        hooks: &Hooks<C, N, G, B, T, O>,
        function: &'static str,
    ) -> ControlFlow<R>
    where
        R: IsResult,
        C: Classify<R::Err>,
        N: Notify<R::Err>,
        G: GiveUpHook<R::Err>,
        B: Budget,
        T: Trace<R>,
        O: ClassifyOk<R::Ok>,
    {
        attempts.resumed(last, hooks, function)
    }
}

/// Hooks that serve a function returning `R`: every bound the loops need, in one place.
/// (The `Loop::<R>` entry points spell the bounds out instead, so that a mistake in a hook is
/// reported at the user's key.)
pub trait Serves<R> {
    /// One turn of every retry loop after a failure (`cut`: an attempt cut by the deadline,
    /// which ends the call; `verdict`: what [`Serves::verdict`] said of it): a success (of a
    /// later attempt) pays the budget back and breaks out; an outcome retrying ends on is
    /// reported to `give_up` and the trace and breaks out; a retried one comes back with the
    /// wait and the budget's share its retry owes.
    #[allow(clippy::type_complexity)]
    fn step<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        verdict: Verdict,
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
        verdict: Verdict,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, (Duration, Owed<'h>, R)>;

    /// Retrying ends with `outcome` (an error, or an `Ok` `on_ok` retried) for `reason`: tell
    /// the trace and the `give_up` hook, and hand the outcome back.
    fn give_up(
        &self,
        state: &RetryState,
        outcome: R,
        reason: GiveUpReason,
        function: &'static str,
    ) -> R;

    /// What an attempt's `outcome` is: taken, an error, or an `Ok` that `on_ok` retries.
    fn verdict(&self, outcome: &R) -> Verdict;

    /// A call begins (its first attempt is made): the budget counts it.
    fn begin(&self, clock: Clock);

    /// A success pays the budget back: the first-try reward, or what the call's retries took.
    fn pay(&self, budget_retries: u32);

    /// A call succeeded after failed (or hedged) calls: pay the budget back and report it.
    fn recovered(&self, state: &RetryState, function: &'static str);

    /// What the classifier (or `on_ok`) says of a failed `outcome` whose verdict is
    /// `verdict` (a hedged call decides with it while other attempts still run).
    fn decide(&self, outcome: &R, verdict: Verdict) -> Decision;

    /// A hedge is about to start: take its budget share (`false`, no hedge, if there is none),
    /// and tell the `notify` hook and the trace.
    fn hedge(&self, state: &mut RetryState, event: &RetryEvent) -> bool;
}

impl<C, N, G, B: Budget, T, O> Hooks<C, N, G, B, T, O> {
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

impl<R, C, N, G, B, T, O> Serves<R> for Hooks<C, N, G, B, T, O>
where
    R: IsResult,
    C: Classify<R::Err>,
    N: Notify<R::Err>,
    G: GiveUpHook<R::Err>,
    B: Budget,
    T: Trace<R>,
    O: ClassifyOk<R::Ok>,
{
    #[inline]
    fn step<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        verdict: Verdict,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, (Duration, Owed<'h>, R)> {
        step(self, state, outcome, verdict, function, cut, false)
    }

    #[inline(always)]
    fn step_inline<'h>(
        &'h self,
        state: &mut RetryState,
        outcome: R,
        verdict: Verdict,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, (Duration, Owed<'h>, R)> {
        step(self, state, outcome, verdict, function, cut, true)
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
            ok: outcome.as_err().is_none(),
        };
        self.trace.give_up(&outcome, &give_up);
        #[cfg(feature = "metrics")]
        crate::run::metrics::give_up(function, reason);
        match outcome.as_err() {
            Some(error) => self.give_up.give_up(error, &give_up),
            None => self.give_up.give_up_ok(&give_up),
        }
        outcome
    }

    #[inline(always)]
    fn verdict(&self, outcome: &R) -> Verdict {
        verdict(outcome, &self.on_ok)
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

    fn decide(&self, outcome: &R, verdict: Verdict) -> Decision {
        match (verdict, outcome.as_err()) {
            (Verdict::RetryOk(decision), _) => decision,
            (_, Some(error)) => self.on.classify(error),
            (_, None) => Decision::Stop,
        }
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
fn step<'h, R, C, N, G, B, T, O>(
    hooks: &'h Hooks<C, N, G, B, T, O>,
    state: &mut RetryState,
    outcome: R,
    verdict: Verdict,
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
    O: ClassifyOk<R::Ok>,
{
    let step = match (verdict, outcome.as_err()) {
        _ if cut => Err(state.end(GiveUpReason::Elapsed)),
        (Verdict::RetryOk(decision), _) => {
            state.decided_step::<R::Err, _, _, _, _, _, _>(decision, None, hooks, function, inline)
        }
        (_, Some(error)) => state.retry_step(error, hooks, function, inline),
        (_, None) => {
            recovered(hooks, state, function);
            return ControlFlow::Break(outcome);
        }
    };
    match step {
        Ok((delay, owed)) => {
            let event = state.event(delay, function, outcome.as_err().is_none());
            hooks.trace.retry(&outcome, &event);
            #[cfg(feature = "metrics")]
            crate::run::metrics::retry(function, delay);
            ControlFlow::Continue((delay, owed, outcome))
        }
        Err(reason) => ControlFlow::Break(Serves::give_up(hooks, state, outcome, reason, function)),
    }
}

/// The blocking retry loop shared by [`Retry::call`](crate::Retry::call) and sync `#[retry]`
/// functions; `op` is handed the 1-based number of the attempt. The first attempt runs before
/// anything else exists: a success returns without a store.
#[inline]
pub fn run_blocking<R, H, F>(policy: Policy, hooks: &H, function: &'static str, mut op: F) -> R
where
    R: IsResult,
    H: Serves<R>,
    F: FnMut(u32) -> R,
{
    let start = start_time(&policy, sleep::now);
    let first = op(1);
    let verdict = hooks.verdict(&first);
    if verdict.accepted() {
        hooks.begin(sleep::now);
        hooks.pay(0);
        return first;
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
    H: Serves<R>,
    F: FnMut(u32) -> R,
{
    hooks.begin(sleep::now);
    let mut failing = Failing::new((&policy, sleep::now, start));
    let (mut outcome, mut verdict) = (first, verdict);
    loop {
        let last = match failing.failed(outcome, verdict, hooks, function, false) {
            ControlFlow::Break(outcome) => return outcome,
            ControlFlow::Continue((delay, last)) => {
                sleep::sleep_blocking(delay);
                last
            }
        };
        if let ControlFlow::Break(outcome) = failing.resumed(last, hooks, function) {
            return outcome;
        }
        outcome = op(failing.state.failed_calls().saturating_add(1));
        verdict = hooks.verdict(&outcome);
        if verdict.accepted() {
            hooks.recovered(&failing.state, function);
            return outcome;
        }
    }
}

/// The `Result` a retried function returns, seen through any alias (`io::Result<T>`…).
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
}

impl<T, E> IsResult for Result<T, E> {
    type Ok = T;
    type Err = E;
    #[inline(always)]
    fn as_ok(&self) -> Option<&T> {
        self.as_ref().ok()
    }
    #[inline]
    fn as_err(&self) -> Option<&E> {
        self.as_ref().err()
    }
    #[inline(always)]
    fn from_err(error: E) -> Self {
        Err(error)
    }
}
