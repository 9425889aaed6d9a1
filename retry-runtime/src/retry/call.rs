//! Running a [`Retry`]: `call` and `call_async`, on the loop `#[retry]` runs.

use core::future::Future;
use core::ops::ControlFlow;
use core::time::Duration;

use crate::policy::deadline::Started;
use crate::policy::{CancelToken, Clock, Unset};
use crate::run::awaiting::{at_end, at_retry, AwaitedHooks, Awaits};

use super::guards::{Cancellable, GuardPair};
use crate::run::hedge::hedged_lazily;
use crate::run::hedge::HedgeWith;
use crate::run::loops::{run_blocking, LoopHooks, LoopState};
use crate::run::state::start_time;
use crate::run::stats::{Recorder, StatsHook};
use crate::run::timeout::{AttemptTimeout, Limit, Race};
use crate::run::wait::{attempt_or_cancel, sleep_or_cancel};

use super::stats::{HookRef, StatsOf};
use super::Retry;

/// The recorder of an async call of a `Retry` whose guards are `Gd`, for an error `E`.
///
/// The guards here are its `stats` hook and its async hooks.
type AsyncRecorder<'a, Gd, E> =
    Recorder<Awaits<HookRef<'a, <Gd as StatsOf>::Hook>, <Gd as StatsOf>::Awaited, E>>;

impl<C, N, G, B, T, L, D, O, Gd> Retry<C, N, G, B, T, L, D, O, Gd> {
    with_loop_bounds! {
        /// Call the future-making `op` until its future succeeds or retrying ends.
        ///
        /// The waits are slept with `tokio::time::sleep`; `max_elapsed` is measured on tokio's
        /// clock.
        ///
        /// The future is `Send` when `op`'s futures are and `V` and `E` are.
        ///
        /// The last outcome is kept through each wait, to be returned should the policy's
        /// `max_elapsed` pass during it.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")] async fn main() {
        /// use retry_jitter::{Policy, Retry};
        /// let r = Retry::new(Policy::default());
        /// assert_eq!(r.call_async(|| async { Ok::<_, ()>(42) }).await, Ok(42));
        /// # }
        /// ```
        #[cfg(feature = "tokio")]
        #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
        pub async fn call_async<V, E, F, Fut>(&self, mut op: F) -> Result<V, E>
        where {
            F: FnMut() -> Fut,
            Fut: Future<Output = Result<V, E>>,
        }
        {
            let (sleep, clock) = (crate::sleep::tokio_sleep, crate::sleep::tokio_now);
            self.run_async(sleep, clock, |_| op()).await
        }
    }

    with_loop_bounds! {
        /// [`call_async`](Retry::call_async), handing `op` the 1-based number of the attempt it
        /// makes (each hedge its own).
        ///
        /// Use it to fail over to the next endpoint, tag an attempt in a header, or log it.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
        /// use retry_jitter::{Policy, Retry};
        /// let endpoints = ["http://a.invalid", "http://b.invalid"];
        /// let r = Retry::new(Policy::new().with_attempts(3));
        /// let used = r.call_async_with_attempt(|n| async move {
        ///     let endpoint = endpoints[(n - 1) as usize % endpoints.len()];
        ///     if n < 2 { Err(endpoint) } else { Ok(endpoint) }
        /// }).await;
        /// assert_eq!(used, Ok("http://b.invalid"));
        /// # }
        /// ```
        #[cfg(feature = "tokio")]
        #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
        pub async fn call_async_with_attempt<V, E, F, Fut>(&self, op: F) -> Result<V, E>
        where {
            F: FnMut(u32) -> Fut,
            Fut: Future<Output = Result<V, E>>,
        }
        {
            let (sleep, clock) = (crate::sleep::tokio_sleep, crate::sleep::tokio_now);
            self.run_async(sleep, clock, op).await
        }
    }

    with_loop_bounds! {
        /// [`call_async`](Retry::call_async) on any runtime.
        ///
        /// `sleep` is the timer; `clock` is the clock `max_elapsed` is measured on.
        ///
        /// Use [`sleep::now`](crate::sleep::now) unless the timer has a clock of its own.
        ///
        /// ```
        /// # #[tokio::main(flavor = "current_thread")] async fn main() {
        /// use retry_jitter::{sleep, Policy, Retry};
        /// use std::time::Duration;
        ///
        /// async fn my_sleep(d: Duration) { tokio::time::sleep(d).await }
        /// let r = Retry::new(Policy::new().with_base(Duration::from_millis(1)));
        /// let mut n = 0;
        /// let out = r.call_async_with(my_sleep, sleep::now, || { n += 1; let k = n; async move {
        ///     if k < 2 { Err("busy") } else { Ok(k) }
        /// }}).await;
        /// assert_eq!(out, Ok(2));
        /// # }
        /// ```
        pub async fn call_async_with<V, E, F, Fut, S, SFut>(
            &self,
            sleep: S,
            clock: Clock,
            mut op: F,
        ) -> Result<V, E>
        where {
            F: FnMut() -> Fut,
            Fut: Future<Output = Result<V, E>>,
            S: FnMut(Duration) -> SFut,
            SFut: Future<Output = ()>,
        }
        {
            self.run_async(sleep, clock, |_| op()).await
        }
    }

    with_loop_bounds! {
        /// The async loop, with each call's recorder where the guards have a `stats` hook.
        async fn run_async<V, E, F, Fut, S, SFut>(&self, sleep: S, clock: Clock, op: F) -> Result<V, E>
        where {
            F: FnMut(u32) -> Fut,
            Fut: Future<Output = Result<V, E>>,
            S: FnMut(Duration) -> SFut,
            SFut: Future<Output = ()>,
        }
        {
            let awaited = self.hooks.guard.awaited();
            let hook = Awaits::<_, Gd::Awaited, E>::new(HookRef(self.hooks.guard.stats_hook()));
            // Without a `stats` hook and async hooks, no recorder (nor its clock read).
            if !<Awaits<HookRef<'_, Gd::Hook>, Gd::Awaited, E> as StatsHook>::ACTIVE {
                let none: Option<(&AsyncRecorder<'_, Gd, E>, _)> = None.zip(Some(awaited));
                return self.run_async_with(&self.hooks, none, sleep, clock, op).await;
            }
            let recorder = Recorder::new(hook, clock, self.name);
            let hooks = self.with_recorder(&recorder);
            let out = self
                .run_async_with(&hooks, Some((&recorder, awaited)), sleep, clock, op)
                .await;
            let (give_up, stats) = (recorder.give_up(), recorder.stats());
            for told in at_end(awaited, &out, &give_up, &stats).into_iter().flatten() {
                told.await;
            }
            out
        }
    }

    /// The async loop every `call_async*` runs, with `hooks`: the `Retry`'s, or theirs with a
    /// call's recorder.
    ///
    /// `op` is handed the attempt's number.
    ///
    /// With `awaiting` (the call's recorder and its async hooks), an async `notify` is awaited
    /// before each wait.
    ///
    /// The hedged loop awaits none.
    #[allow(clippy::type_complexity)]
    pub(super) async fn run_async_with<V, E, H, Hk, A, F, Fut, S, SFut>(
        &self,
        hooks: &H,
        awaiting: Option<(&Recorder<Hk>, &A)>,
        mut sleep: S,
        clock: Clock,
        mut op: F,
    ) -> Result<V, E>
    where
        H: LoopHooks<Result<V, E>>,
        Hk: StatsHook,
        A: AwaitedHooks<E>,
        L: AttemptTimeout<E>,
        D: HedgeWith,
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<V, E>>,
        S: FnMut(Duration) -> SFut,
        SFut: Future<Output = ()>,
    {
        let start = start_time(&self.policy, clock);
        // The policy borrowed: the hedged entry keeps its address until the loop starts.
        let call = Started {
            policy: &self.policy,
            clock,
            start,
        };
        if let Some(hedge) = self.hedge.hedge() {
            let timeout = self
                .timeout
                .limit()
                .map(|(t, make_error)| (t, move |timed_out| Err(make_error(timed_out))));
            let name = self.name;
            return hedged_lazily(call, hooks, name, hedge, timeout, sleep, op, None).await;
        }
        let mut state = LoopState::<Result<V, E>>::new();
        let cancel = hooks.cancel();
        // With a cancel token, the last outcome is kept through an attempt after a failure.
        //
        // A cancel during that attempt drops it and ends the call with this one.
        let mut kept = None;
        loop {
            if let ControlFlow::Break(refused) = state.admit(hooks, self.name, clock) {
                return refused;
            }
            let attempt = state.attempt();
            // Raced against the token only after a failure, with a token.
            //
            // Without one, this folds away and the attempt is awaited as it is.
            let raced = cancel.zip(kept.take());
            let (outcome, cut) = match self.timeout.limit() {
                None => match raced {
                    None => (op(attempt).await, false),
                    Some((token, last)) => {
                        match attempt_or_cancel(op(attempt), last, token).await {
                            Ok(outcome) => (outcome, false),
                            Err(last) => return state.cancelled(last, hooks, self.name),
                        }
                    }
                },
                Some((timeout, timed_out)) => {
                    let Limit { duration, deadline } = Limit::of(timeout, call.owned());
                    let race = Race::new(op(attempt), sleep(duration), duration, clock);
                    let ended = match raced {
                        None => Ok(race.await),
                        Some((token, last)) => attempt_or_cancel(race, last, token).await,
                    };
                    match ended {
                        Ok(Ok(outcome)) => (outcome, false),
                        Ok(Err(t)) => (Err(timed_out(t)), deadline),
                        Err(last) => return state.cancelled(last, hooks, self.name),
                    }
                }
            };
            let verdict = hooks.verdict(&outcome);
            if verdict.accepted() {
                state.succeeded_with(hooks, self.name, clock);
                return outcome;
            }
            // The outcome is gone before the wait.
            //
            // Only the last one is kept through it, where the policy has a deadline that may end
            // the call after it.
            //
            // With a cancel token, the wait ends at once when it is cancelled.
            let (wait, last) = match state.failed(call, outcome, verdict, hooks, self.name, cut) {
                ControlFlow::Break(outcome) => return outcome,
                ControlFlow::Continue((delay, last)) => {
                    // An async `notify`, with the error kept and the recorder's event; the wait
                    // starts after it.
                    if let (true, Some((recorder, awaited))) = (A::NOTIFY, awaiting) {
                        let event = recorder.event();
                        if let Some(told) = at_retry(awaited, last.as_ref(), &event) {
                            told.await;
                        }
                        recorder.wait_starts(clock);
                    }
                    (sleep_or_cancel(delay, &mut sleep, cancel), last)
                }
            };
            wait.await;
            match state.resumed_keeping(last, hooks, self.name) {
                ControlFlow::Break(outcome) => return outcome,
                ControlFlow::Continue(last) => kept = last,
            }
        }
    }
}

impl<C, N, G, B, T, O, Gd: StatsOf> Retry<C, N, G, B, T, Unset, Unset, O, Gd> {
    with_loop_bounds! {
        /// Call `op` until it succeeds or retrying ends, sleeping the waits with
        /// [`std::thread::sleep`].
        ///
        /// ```
        /// use retry_jitter::{Policy, Retry};
        /// let r = Retry::new(Policy::default());
        /// assert_eq!(r.call(|| Ok::<_, ()>(42)), Ok(42));
        /// ```
        pub fn call<V, E>(&self, mut op: impl FnMut() -> Result<V, E>) -> Result<V, E>
        where {
        }
        {
            self.call_with_attempt(|_| op())
        }
    }

    with_loop_bounds! {
        /// [`call`](Retry::call), handing `op` the 1-based number of the attempt it makes.
        ///
        /// ```
        /// use retry_jitter::{Policy, Retry};
        /// use std::time::Duration;
        ///
        /// let mut seen = Vec::new();
        /// let r = Retry::new(Policy::new().with_attempts(3).with_base(Duration::ZERO));
        /// let out = r.call_with_attempt(|n| { seen.push(n); if n < 3 { Err(n) } else { Ok(n) } });
        /// assert_eq!((out, seen), (Ok(3), vec![1, 2, 3]));
        /// ```
        pub fn call_with_attempt<V, E>(&self, op: impl FnMut(u32) -> Result<V, E>) -> Result<V, E>
        where {
        }
        {
            if <Gd::Hook as StatsHook>::ACTIVE {
                let hook = HookRef(self.hooks.guard.stats_hook());
                let recorder = Recorder::new(hook, crate::sleep::now, self.name);
                return run_blocking(self.policy, &self.with_recorder(&recorder), self.name, op);
            }
            run_blocking(self.policy, &self.hooks, self.name, op)
        }
    }
}

impl<C, N, G, B, T, L, D, O, Gd: GuardPair> Retry<C, N, G, B, T, L, D, O, Gd> {
    /// Stop retrying once `token` is cancelled. See [`CancelToken`].
    ///
    /// A wait between attempts ends at once, the blocking wait of [`call`](Retry::call) too.
    ///
    /// No further attempt starts, and the call returns its last error
    /// ([`GiveUpReason::Cancelled`](crate::GiveUpReason::Cancelled)).
    ///
    /// The first attempt is always made.
    ///
    /// In [`call_async`](Retry::call_async), a later attempt running when the token is cancelled
    /// is dropped, and the error before it returned.
    ///
    /// A sync attempt is not interrupted.
    ///
    /// Given twice, the last token is the one read.
    ///
    /// ```
    /// use retry_jitter::{CancelToken, GiveUp, GiveUpReason, Policy, Retry};
    ///
    /// let token = CancelToken::new();
    /// let r = Retry::new(Policy::new().with_attempts(5))
    ///     .cancel(&token)
    ///     .give_up(|_: &&str, g: &GiveUp| assert_eq!(g.reason, GiveUpReason::Cancelled));
    /// let mut calls = 0;
    /// // Cancelled during the first attempt: it ends the call, no retry is made.
    /// let out = r.call(|| { calls += 1; token.cancel(); Err::<(), _>("down") });
    /// assert_eq!((out, calls), (Err("down"), 1));
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn cancel(
        self,
        token: &CancelToken,
    ) -> Retry<C, N, G, B, T, L, D, O, Cancellable<&CancelToken, Gd>> {
        self.map_guard(|guards| Cancellable::new(guards, token))
    }

    /// [`cancel`](Retry::cancel) keeping `token` itself (a middleware's, which lives as long as
    /// its client).
    #[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
    pub(crate) fn cancel_owned(
        self,
        token: CancelToken,
    ) -> Retry<C, N, G, B, T, L, D, O, Cancellable<CancelToken, Gd>> {
        self.map_guard(|guards| Cancellable::new(guards, token))
    }
}
