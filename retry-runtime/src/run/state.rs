//! The per-call retry state: the one driver behind `#[retry]` and the closure API.

use core::time::Duration;
use std::time::Instant;

use crate::fleet::{Budget, Owed, RetryTicket, SharedBudget};
use crate::run::hooks::Hooks;
use crate::run::sleep::{self, Clock};
use crate::{Decision, GiveUpReason, Policy, RetryEvent};

/// Decides, error by error, whether a failed call is retried.
///
/// Implemented for every `Fn(&E) -> D` where `D: Into<Decision>` (so `bool` works), and for
/// [`RetryAll`].
///
/// ```
/// use retry_runtime::{Classify, Decision};
///
/// let on = |e: &u16| *e >= 500;
/// assert_eq!(on.classify(&503), Decision::Retry);
/// assert_eq!(on.classify(&404), Decision::Stop);
/// ```
pub trait Classify<E> {
    /// What to do about `error`.
    fn classify(&self, error: &E) -> Decision;
}

impl<E, D: Into<Decision>, F: Fn(&E) -> D> Classify<E> for F {
    fn classify(&self, error: &E) -> Decision {
        self(error).into()
    }
}

/// The classifier used when none is given: every error is retried.
///
/// ```
/// use retry_runtime::{Classify, Decision, RetryAll};
/// assert_eq!(RetryAll.classify(&"any error"), Decision::Retry);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct RetryAll;

impl<E> Classify<E> for RetryAll {
    fn classify(&self, _: &E) -> Decision {
        Decision::Retry
    }
}

/// Decides, value by value, whether an `Ok` is retried (`on_ok`: poll until ready).
///
/// Implemented for every `Fn(&T) -> D` where `D: Into<Decision>` (so `bool` works: `true` =
/// try again), and for [`AcceptOk`], which takes every value.
///
/// ```
/// use retry_runtime::{ClassifyOk, Decision};
///
/// #[derive(PartialEq)]
/// enum Job { Pending, Done }
/// let pending = |job: &Job| *job == Job::Pending;
/// assert_eq!(pending.classify_ok(&Job::Pending), Decision::Retry);
/// assert_eq!(pending.classify_ok(&Job::Done), Decision::Stop);
/// ```
pub trait ClassifyOk<T> {
    /// What to do about `value`: [`Decision::Stop`] takes it.
    fn classify_ok(&self, value: &T) -> Decision;
}

impl<T, D: Into<Decision>, F: Fn(&T) -> D> ClassifyOk<T> for F {
    #[inline]
    fn classify_ok(&self, value: &T) -> Decision {
        self(value).into()
    }
}

/// The `on_ok` used when none is given: every `Ok` is a success (and costs nothing).
///
/// ```
/// use retry_runtime::{AcceptOk, ClassifyOk, Decision};
/// assert_eq!(AcceptOk.classify_ok(&"any value"), Decision::Stop);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct AcceptOk;

impl<T> ClassifyOk<T> for AcceptOk {
    #[inline(always)]
    fn classify_ok(&self, _: &T) -> Decision {
        Decision::Stop
    }
}

/// Told about each retry before its wait (logging, metrics).
///
/// Implemented for every `Fn(&E, &RetryEvent)`, and for [`NoNotify`].
///
/// ```
/// use retry_runtime::{Notify, RetryEvent};
///
/// let log = |e: &String, ev: &RetryEvent| eprintln!("{}: {e}, retry in {:?}", ev.function, ev.delay);
/// # let _ = &log as &dyn Notify<String>;
/// ```
#[diagnostic::on_unimplemented(
    message = "`notify` needs a `Fn(&{E}, &RetryEvent)` or a type that implements `Notify<{E}>`, not `{Self}`",
    label = "not a `Notify<{E}>`",
    note = "a closure `|e, event| …` or a `fn(&{E}, &RetryEvent)` works, as does any type with `impl Notify<{E}>`"
)]
pub trait Notify<E> {
    /// `error` ended call number `event.attempt`; the next call comes after `event.delay`.
    fn notify(&self, error: &E, event: &RetryEvent);

    /// Call number `event.attempt` has not answered within `event.delay` (`hedge = …`), and
    /// the next call starts beside it. There is no error to show: a closure `Fn(&E,
    /// &RetryEvent)` is not told (hedges are traced, and counted in [`GiveUp::calls`](crate::GiveUp::calls));
    /// implement `Notify` on a type of your own to be told.
    ///
    /// ```
    /// use retry_runtime::{Notify, RetryEvent};
    /// use std::sync::atomic::{AtomicU32, Ordering};
    ///
    /// #[derive(Default)]
    /// struct Counts { retries: AtomicU32, hedges: AtomicU32 }
    ///
    /// impl<E> Notify<E> for Counts {
    ///     fn notify(&self, _: &E, _: &RetryEvent) { self.retries.fetch_add(1, Ordering::Relaxed); }
    ///     fn hedge(&self, _: &RetryEvent) { self.hedges.fetch_add(1, Ordering::Relaxed); }
    /// }
    /// # let _ = &Counts::default() as &dyn Notify<()>;
    /// ```
    fn hedge(&self, event: &RetryEvent) {
        let _ = event;
    }

    /// Call number `event.attempt` returned an `Ok` value that `on_ok` retries, and the next
    /// call comes after `event.delay` ([`RetryEvent::ok`](crate::RetryEvent::ok)). There is no
    /// error to show: a closure `Fn(&E, &RetryEvent)` is not told; implement `Notify` on a type
    /// of your own to be told.
    ///
    /// ```
    /// use retry_runtime::{Notify, RetryEvent};
    /// struct Log;
    /// impl<E: std::fmt::Display> Notify<E> for Log {
    ///     fn notify(&self, e: &E, ev: &RetryEvent) { eprintln!("call {} failed: {e}", ev.attempt) }
    ///     fn retry_ok(&self, ev: &RetryEvent) { eprintln!("call {} not ready yet", ev.attempt) }
    /// }
    /// # let _ = &Log as &dyn Notify<String>;
    /// ```
    fn retry_ok(&self, event: &RetryEvent) {
        let _ = event;
    }
}

impl<E, F: Fn(&E, &RetryEvent)> Notify<E> for F {
    fn notify(&self, error: &E, event: &RetryEvent) {
        self(error, event);
    }
}

/// The hook used when none is given: does nothing.
///
/// ```
/// use retry_runtime::{NoNotify, Notify, RetryEvent};
/// # let _ = &NoNotify as &dyn Notify<()>;
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NoNotify;

impl<E> Notify<E> for NoNotify {
    fn notify(&self, _: &E, _: &RetryEvent) {}
}

/// When a call's first attempt begins, on `clock`: read only if the policy has a `max_elapsed`.
#[doc(hidden)]
#[inline]
pub fn start_time(policy: &Policy, clock: Clock) -> Option<Instant> {
    policy.max_elapsed().map(|_| clock())
}

/// The state of one retried call: how many calls failed, the previous wait, the start time.
///
/// Creating it costs nothing but a copy of the policy: the clock is read only when the policy
/// has a `max_elapsed`, and nothing random is drawn until a call fails.
///
/// ```
/// use retry_runtime::{Decision, GiveUpReason, Jitter, Policy, RetryState};
/// use std::time::Duration;
///
/// let mut state = RetryState::new(Policy::new().with_attempts(3).with_jitter(Jitter::None));
/// assert_eq!(state.next_wait(Decision::Retry), Ok(Duration::from_millis(200)));
/// assert_eq!(state.next_wait(Decision::Retry), Ok(Duration::from_millis(400)));
/// assert_eq!(state.next_wait(Decision::Retry), Err(GiveUpReason::Attempts));
/// assert_eq!(state.failed_calls(), 3);
/// ```
#[derive(Clone, Debug)]
pub struct RetryState {
    policy: Policy,
    failed: u32,
    prev: Duration,
    start: Option<Instant>,
    clock: Clock,
    budget_retries: u32,
    /// When the first call failed, for the trace's `recovered` event (read only with the
    /// `tracing` feature, and only when the call kept no start time).
    #[cfg(feature = "tracing")]
    first_failure: Option<Instant>,
}

impl RetryState {
    /// The state for one call under `policy`, timed on the monotonic system clock.
    ///
    /// ```
    /// use retry_runtime::{Policy, RetryState};
    /// let state = RetryState::new(Policy::default());
    /// assert_eq!(state.failed_calls(), 0);
    /// ```
    #[inline]
    pub fn new(policy: Policy) -> Self {
        Self::with_clock(policy, sleep::now)
    }

    /// The state for one call under `policy`, timed on `clock` (the clock of the timer that will
    /// sleep the waits, e.g. [`sleep::tokio_now`](crate::sleep::tokio_now)).
    ///
    /// ```
    /// use retry_runtime::{sleep, Policy, RetryState};
    /// let state = RetryState::with_clock(Policy::default(), sleep::now);
    /// # let _ = state;
    /// ```
    #[inline]
    pub fn with_clock(policy: Policy, clock: Clock) -> Self {
        Self::resume(policy, clock, start_time(&policy, clock))
    }

    /// The state of a call whose first attempt began at `start` (see [`start_time`]) and
    /// failed: the retry loops build it only then, so a first-call success never does.
    #[inline]
    pub(crate) fn resume(policy: Policy, clock: Clock, start: Option<Instant>) -> Self {
        RetryState {
            policy,
            failed: 0,
            prev: policy.backoff().base(),
            start,
            clock,
            budget_retries: 0,
            #[cfg(feature = "tracing")]
            first_failure: None,
        }
    }

    /// The policy this call runs under.
    ///
    /// ```
    /// use retry_runtime::{Policy, RetryState};
    /// assert_eq!(RetryState::new(Policy::default()).policy(), Policy::default());
    /// ```
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// How many calls have failed so far.
    ///
    /// ```
    /// use retry_runtime::{Decision, Policy, RetryState};
    /// let mut state = RetryState::new(Policy::default());
    /// let _ = state.next_wait(Decision::Stop);
    /// assert_eq!(state.failed_calls(), 1);
    /// ```
    pub fn failed_calls(&self) -> u32 {
        self.failed
    }

    /// A call just failed and `decision` says what to do: the wait before the next call, or
    /// why there is none.
    ///
    /// ```
    /// use retry_runtime::{Decision, GiveUpReason, Policy, RetryState};
    /// use std::time::Duration;
    ///
    /// let mut state = RetryState::new(Policy::default());
    /// let hint = Duration::from_secs(2);
    /// let wait = state.next_wait(Decision::RetryAfter(hint)).unwrap();
    /// assert!(wait >= hint && wait <= hint + Duration::from_millis(200));
    /// assert_eq!(state.next_wait(Decision::RetryAfter(Duration::from_secs(60))), Err(GiveUpReason::HintBeyondCap));
    /// ```
    #[inline(never)] // one call for the hedging loop; the retry loops inline `wait_after`
    pub fn next_wait(&mut self, decision: Decision) -> Result<Duration, GiveUpReason> {
        self.wait_after(decision)
    }

    /// [`next_wait`](RetryState::next_wait), inlined into the retry loops.
    #[inline(always)]
    fn wait_after(&mut self, decision: Decision) -> Result<Duration, GiveUpReason> {
        self.count_failure();
        let backoff = self.policy.backoff_ref();
        let hint = match decision {
            Decision::Stop => return Err(GiveUpReason::Stopped),
            Decision::Retry => Duration::ZERO,
            Decision::RetryAfter(hint) if hint > backoff.cap() => {
                return Err(GiveUpReason::HintBeyondCap)
            }
            Decision::RetryAfter(hint) => hint,
        };
        if self.failed >= self.policy.attempts() {
            return Err(GiveUpReason::Attempts);
        }
        // A zero base (with nothing drawn above it yet) waits zero whatever the jitter, and
        // draws nothing: known here without the draw's code, which stays out of line.
        let drawn = if backoff.base().is_zero() && self.prev.is_zero() {
            Duration::ZERO
        } else {
            backoff.draw(self.failed, self.prev)
        };
        let wait = hint.saturating_add(drawn);
        if let (Some(max), Some(start)) = (self.policy.max_elapsed(), self.start) {
            let elapsed = (self.clock)().saturating_duration_since(start);
            if elapsed.saturating_add(wait) > max {
                return Err(GiveUpReason::Elapsed);
            }
        }
        self.prev = drawn;
        Ok(wait)
    }

    /// The whole step after a failed call: classify `error` with `hooks.on`, compute the wait,
    /// take the budget's tokens, and tell `hooks.notify` about it. `Ok(wait)`
    /// to retry after `wait`, `Err(reason)` to return `error`.
    ///
    /// If `notify` panics, the tokens are given back. (The retry loops here also give them
    /// back when the retry never runs: the future dropped during the wait, the deadline
    /// reached. A loop of your own does that with [`SharedBudget::refund`](crate::SharedBudget::refund).)
    ///
    /// ```
    /// use retry_runtime::{AcceptOk, GiveUpReason, Hooks, NoBudget, NoGiveUp, NoNotify, NoTrace, Policy, RetryState};
    ///
    /// let mut state = RetryState::new(Policy::default());
    /// let on = |e: &u16| *e >= 500;
    /// let hooks = Hooks { on, notify: NoNotify, give_up: NoGiveUp, budget: NoBudget, trace: NoTrace, on_ok: AcceptOk, guard: retry_runtime::NoGuard };
    /// assert!(state.on_error(&503, &hooks, "fetch").is_ok());
    /// assert_eq!(state.on_error(&404, &hooks, "fetch"), Err(GiveUpReason::Stopped));
    /// ```
    pub fn on_error<E, C, N, G, B, T, O, Gd>(
        &mut self,
        error: &E,
        hooks: &Hooks<C, N, G, B, T, O, Gd>,
        function: &'static str,
    ) -> Result<Duration, GiveUpReason>
    where
        C: Classify<E>,
        N: Notify<E>,
        B: Budget,
    {
        let (delay, mut owed) = self.retry_step(error, hooks, function, false)?;
        owed.spend();
        Ok(delay)
    }

    /// [`on_error`](RetryState::on_error), the budget's tokens still owed: given back if what
    /// is returned is dropped before the retry runs. `inline`: the wait computed in place (the
    /// retry loops, where most of it folds away: no budget, no hook, a zero base), else by one
    /// call of [`next_wait`](RetryState::next_wait).
    #[inline(always)]
    pub(crate) fn retry_step<'h, E, C, N, G, B, T, O, Gd>(
        &mut self,
        error: &E,
        hooks: &'h Hooks<C, N, G, B, T, O, Gd>,
        function: &'static str,
        inline: bool,
    ) -> Result<(Duration, Owed<'h>), GiveUpReason>
    where
        C: Classify<E>,
        N: Notify<E>,
        B: Budget,
    {
        let decision = hooks.on.classify(error);
        self.decided_step(decision, Some(error), hooks, function, inline)
    }

    /// [`retry_step`](RetryState::retry_step) once the `decision` is made: on an error, or
    /// (`error` `None`) on an `Ok` value `on_ok` retries.
    #[inline(always)]
    pub(crate) fn decided_step<'h, E, C, N, G, B, T, O, Gd>(
        &mut self,
        decision: Decision,
        error: Option<&E>,
        hooks: &'h Hooks<C, N, G, B, T, O, Gd>,
        function: &'static str,
        inline: bool,
    ) -> Result<(Duration, Owed<'h>), GiveUpReason>
    where
        N: Notify<E>,
        B: Budget,
    {
        let delay = if inline {
            self.wait_after(decision)
        } else {
            self.next_wait(decision)
        }?;
        self.take_retry(error, delay, hooks, function)
    }

    /// The rest of a retry step once its wait is known: the budget's tokens, and `notify`.
    #[inline(always)]
    fn take_retry<'h, E, C, N, G, B, T, O, Gd>(
        &mut self,
        error: Option<&E>,
        delay: Duration,
        hooks: &'h Hooks<C, N, G, B, T, O, Gd>,
        function: &'static str,
    ) -> Result<(Duration, Owed<'h>), GiveUpReason>
    where
        N: Notify<E>,
        B: Budget,
    {
        let budget = hooks.budget.get();
        let Some(ticket) = self.take_tokens(budget) else {
            return Err(GiveUpReason::BudgetEmpty);
        };
        // Owed from here on: should `notify` unwind, the tokens go back.
        let owed = Owed::taken(budget, ticket);
        let event = self.event(delay, function, error.is_none());
        match error {
            Some(error) => hooks.notify.notify(error, &event),
            None => hooks.notify.retry_ok(&event),
        }
        Ok((delay, owed))
    }

    /// A call failed in a way that ends retrying whatever the classifier says (an attempt cut
    /// by the deadline): counted, and `reason` handed back.
    pub(crate) fn end(&mut self, reason: GiveUpReason) -> GiveUpReason {
        self.count_failure();
        reason
    }

    /// Whether this call has a deadline (`max_elapsed`) to check after each wait.
    pub(crate) fn has_deadline(&self) -> bool {
        self.policy.max_elapsed().is_some() && self.start.is_some()
    }

    /// Whether the deadline has passed: no attempt may start now.
    pub(crate) fn past_deadline(&self) -> bool {
        match (self.policy.max_elapsed(), self.start) {
            (Some(max), Some(start)) => (self.clock)().saturating_duration_since(start) > max,
            _ => false,
        }
    }

    /// The event of the retry about to wait `delay`.
    pub(crate) fn event(&self, delay: Duration, function: &'static str, ok: bool) -> RetryEvent {
        RetryEvent {
            attempt: self.failed,
            delay,
            function,
            attempts: self.policy.attempts(),
            hedge: false,
            ok,
        }
    }

    /// `running` calls still running as the call ends (hedges, `hedge = …`): calls made, so
    /// counted in [`GiveUp::calls`](crate::GiveUp::calls) and the trace's `calls`.
    pub(crate) fn count_running(&mut self, running: u32) {
        self.failed = self.failed.saturating_add(running);
    }

    /// Whether a server hint `hint`, on a failed call while others still run (`hedge = …`),
    /// lets the call go on: not beyond the cap ([`GiveUpReason::HintBeyondCap`]), nor past
    /// the deadline ([`GiveUpReason::Elapsed`]), as [`next_wait`](RetryState::next_wait) decides.
    pub(crate) fn allows_hint(&self, hint: Duration) -> Result<(), GiveUpReason> {
        if hint > self.policy.backoff_ref().cap() {
            return Err(GiveUpReason::HintBeyondCap);
        }
        if let (Some(max), Some(start)) = (self.policy.max_elapsed(), self.start) {
            let elapsed = (self.clock)().saturating_duration_since(start);
            if elapsed.saturating_add(hint) > max {
                return Err(GiveUpReason::Elapsed);
            }
        }
        Ok(())
    }

    /// A failed call: counted.
    pub(crate) fn count_failure(&mut self) {
        self.failed = self.failed.saturating_add(1);
        #[cfg(feature = "tracing")]
        if self.start.is_none() && self.first_failure.is_none() {
            self.first_failure = Some((self.clock)());
        }
    }

    /// How long the call has run: since its start if it kept one, else since its first
    /// failure (zero before that).
    pub(crate) fn elapsed(&self) -> Duration {
        #[cfg(feature = "tracing")]
        let since = self.start.or(self.first_failure);
        #[cfg(not(feature = "tracing"))]
        let since = self.start;
        since.map_or(Duration::ZERO, |t| {
            (self.clock)().saturating_duration_since(t)
        })
    }

    /// Take one retry's (or hedge's) share of `budget`: `None` if the budget refuses it, else
    /// the ticket a refund gives back. Without a budget, always granted.
    #[inline(always)]
    pub(crate) fn take_tokens<S: SharedBudget + ?Sized>(
        &mut self,
        budget: Option<&S>,
    ) -> Option<RetryTicket> {
        match budget {
            Some(budget) => {
                let ticket = budget.take_retry(self.clock)?;
                self.budget_retries += 1;
                Some(ticket)
            }
            None => Some(RetryTicket::NONE),
        }
    }

    /// The clock this call is timed on.
    pub(crate) fn clock(&self) -> Clock {
        self.clock
    }

    /// How many retries took tokens from the budget (what a later success gives back).
    pub(crate) fn budget_retries(&self) -> u32 {
        self.budget_retries
    }
}
