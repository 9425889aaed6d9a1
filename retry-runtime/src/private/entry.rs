//! The loops' entry points for `#[retry]`'s expansion, as `Loop::<R>::…`.
//!
//! Each forwards to the loop in `run/` with its bounds spelled out.
//!
//! So a key's mistake is reported at the key, and every error about the return type once.

use core::future::Future;
use core::marker::PhantomData;
use core::ops::ControlFlow;
use core::time::Duration;

use crate::fleet::Budget;
use crate::policy::deadline::Started;
use crate::policy::Clock;
use crate::policy::{Classify, ClassifyOk, Policy};
use crate::run::guard::Guard;
use crate::run::hedge::{hedged_lazily, Hedge, KeepLast};
use crate::run::hooks::{GiveUpHook, Hooks, Notify};
use crate::run::loops::{run_blocking, IsResult, LoopState, Pause, Verdict};
use crate::run::sleep;
use crate::run::step::verdict;
use crate::run::trace::Trace;
use crate::run::wait::{sleep_or_cancel, CancelWait};

/// The loops' entry points for a function returning `R`, as `Loop::<R>::…`.
///
/// The return type is named once, in the path.
///
/// So every error about it (`R` is not a `Result`) has the same span, the return type's, and
/// is reported once.
pub struct Loop<R>(PhantomData<fn() -> R>);

impl<R> Loop<R> {
    /// [`run_blocking`].
    #[inline]
    pub fn run_blocking<C, N, G, B, T, O, Gd, F>(
        policy: Policy,
        hooks: &Hooks<C, N, G, B, T, O, Gd>,
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
        Gd: Guard<R>,
        F: FnMut(u32) -> R,
    {
        run_blocking(policy, hooks, function, op)
    }

    /// The wait of an async loop with a cancel token (`cancel = …`): [`sleep_or_cancel`].
    #[inline(always)] // fail4_async (scripts/instructions.sh): +8 without it
    pub fn sleep_or_cancel<'h, C, N, G, B, T, O, Gd, F, S>(
        delay: Duration,
        sleep: S,
        hooks: &'h Hooks<C, N, G, B, T, O, Gd>,
    ) -> CancelWait<'h, F>
    where
        Gd: Guard<R>,
        F: Future<Output = ()>,
        S: FnOnce(Duration) -> F,
    {
        sleep_or_cancel(delay, sleep, hooks.guard.cancel())
    }

    /// The blocking wait of a loop with a cancel token (`cancel = …`): ends at once should the
    /// token be cancelled.
    #[inline]
    pub fn sleep_blocking_or_cancel<C, N, G, B, T, O, Gd>(
        delay: Duration,
        hooks: &Hooks<C, N, G, B, T, O, Gd>,
    ) where
        Gd: Guard<R>,
    {
        sleep::sleep_or_cancel(delay, hooks.guard.cancel());
    }

    /// [`verdict`], with the hooks' `on_ok`.
    #[inline(always)] // fail4_async (scripts/instructions.sh): +8 without it
    pub fn verdict<C, N, G, B, T, O, Gd>(
        outcome: &R,
        hooks: &Hooks<C, N, G, B, T, O, Gd>,
    ) -> Verdict
    where
        R: IsResult,
        O: ClassifyOk<R::Ok>,
        Gd: Guard<R>,
    {
        verdict(outcome, &hooks.on_ok)
    }

    /// [`LoopState::failed`].
    #[inline(always)] // fail4_async (scripts/instructions.sh): +8 without it
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    pub fn failed<'h, C, N, G, B, T, O, Gd>(
        attempts: &mut LoopState<'h, R>,
        call: Started<&Policy>,
        outcome: R,
        verdict: Verdict,
        hooks: &'h Hooks<C, N, G, B, T, O, Gd>,
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
        Gd: Guard<R>,
    {
        attempts.failed(call, outcome, verdict, hooks, function, cut)
    }

    /// [`LoopState::failed_wait`].
    #[inline(always)] // fail4_async (scripts/instructions.sh): +8 without it
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    pub fn failed_wait<'h, C, N, G, B, T, O, Gd>(
        attempts: &mut LoopState<'h, R>,
        call: Started<&Policy>,
        outcome: R,
        verdict: Verdict,
        hooks: &'h Hooks<C, N, G, B, T, O, Gd>,
        function: &'static str,
        cut: bool,
    ) -> ControlFlow<R, Duration>
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
        attempts.failed_wait(call, outcome, verdict, hooks, function, cut)
    }

    /// The hedging loop (`hedge = …`): [`hedge`](crate::hedge).
    ///
    /// `call`'s policy is a `Policy` or a borrow of one.
    ///
    /// A borrowed `const` (the attribute's policy of literals) is not kept in the future, only
    /// its address.
    ///
    /// A plain `fn` returning the loop's future: an `async fn` around it would keep its
    /// arguments and that future twice.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn hedged<'h, P, C, N, G, B, T, O, Gd, F, Fut, S, SFut, M, K>(
        call: Started<P>,
        hooks: &'h Hooks<C, N, G, B, T, O, Gd>,
        function: &'static str,
        hedge: Hedge,
        timeout: Option<(Duration, M)>,
        sleep: S,
        make: F,
        last: K,
    ) -> impl Future<Output = R> + use<'h, P, R, C, N, G, B, T, O, Gd, F, Fut, S, SFut, M, K>
    where
        P: core::borrow::Borrow<Policy>,
        R: IsResult,
        K: KeepLast<R>,
        C: Classify<R::Err>,
        N: Notify<R::Err>,
        G: GiveUpHook<R::Err>,
        B: Budget,
        T: Trace<R>,
        O: ClassifyOk<R::Ok>,
        Gd: Guard<R>,
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = R>,
        S: FnMut(Duration) -> SFut,
        SFut: Future<Output = ()>,
        M: Fn(crate::policy::TimedOut) -> R,
    {
        hedged_lazily(call, hooks, function, hedge, timeout, sleep, make, last)
    }

    /// [`LoopState::admit`].
    #[inline(always)] // fail4_async (scripts/instructions.sh): +8 without it
    pub fn admit<C, N, G, B, T, O, Gd>(
        attempts: &LoopState<'_, R>,
        hooks: &Hooks<C, N, G, B, T, O, Gd>,
        function: &'static str,
        clock: Clock,
    ) -> ControlFlow<R>
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
        attempts.admit(hooks, function, clock)
    }

    /// [`LoopState::resumed`].
    #[inline(always)] // fail4_async (scripts/instructions.sh): +8 without it
    pub fn resumed<C, N, G, B, T, O, Gd>(
        attempts: &mut LoopState<'_, R>,
        last: Option<R>,
        hooks: &Hooks<C, N, G, B, T, O, Gd>,
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
        Gd: Guard<R>,
    {
        attempts.resumed(last, hooks, function)
    }
}
