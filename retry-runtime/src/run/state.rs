//! The per-call retry state: the one driver behind `#[retry]` and the closure API.

use core::time::Duration;
use std::time::Instant;

use crate::fleet::{Budget, Charge, SharedBudget, Taken};
use crate::policy::deadline::Started;
use crate::policy::Backoff;
use crate::policy::Clock;
use crate::policy::{Classify, Decision, GiveUpReason, Policy, RetryEvent, Transparent};
use crate::run::account::{Account, RetryShare};
use crate::run::hooks::{Hooks, Notify};
use crate::run::sleep;

/// When a call's first attempt begins, on `clock`.
///
/// Read only if the policy has a `max_elapsed`.
#[doc(hidden)]
#[inline]
pub fn start_time(policy: &Policy, clock: Clock) -> Option<Instant> {
    policy.max_elapsed().map(|_| clock())
}

/// `RetryState::transparent_at` of a call that makes no transparent retry.
const NO_TRANSPARENT: u32 = u32::MAX;

/// The state of one retried call.
///
/// It holds the failure count, the previous wait, and the start time.
///
/// Creating it costs nothing but a copy of the policy.
///
/// The clock is read only if the policy has `max_elapsed`.
///
/// Nothing random is drawn until a call fails.
///
/// With feature `metrics`, the state asks once whether a recorder listens.
///
/// The answer holds for the call.
///
/// ```
/// use retry_jitter::{Decision, GiveUpReason, Jitter, Policy};
/// use retry_jitter::hooks::RetryState;
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
    /// The policy, the clock and the start time.
    call: Started,
    /// Calls made that did not succeed: each failed one.
    ///
    /// Once a hedged call ends, attempts still running beside its last one count too.
    ///
    /// They were made.
    calls_spent: u32,
    /// The failed calls counted when gRPC's backoff last restarted.
    ///
    /// A server's pushback restarts it ([`Backoff::grpc`](crate::Backoff::grpc)).
    ///
    /// The retry after is the backoff's first. Zero otherwise.
    restart: u32,
    /// The attempt last resent transparently: 0 for none.
    ///
    /// The attempt number is 1-based, as `calls_spent + 1`.
    ///
    /// [`NO_TRANSPARENT`] in a hedged call.
    transparent_at: u32,
    /// The backoff's base and cap in nanoseconds, converted once for the call.
    ///
    /// Present where the backoff's waits are drawn the common way, inline.
    ///
    /// The common way is full jitter, with bounds within 584 years.
    full: Option<(u64, u64)>,
    prev: Duration,
    /// What the call took from its budget.
    account: Account,
    /// When the first call failed, for the trace's `recovered` event.
    ///
    /// Read only with feature `tracing`, and only if the call kept no start time.
    #[cfg(feature = "tracing")]
    first_failure: Option<Instant>,
    /// Whether a metrics recorder listened as the state began (feature `metrics`).
    ///
    /// The call's events are reported only if one did.
    ///
    /// The question is not asked again.
    #[cfg(feature = "metrics")]
    listening: bool,
}

impl RetryState {
    /// One call's state under `policy`, on the system monotonic clock.
    ///
    /// ```
    /// use retry_jitter::Policy;
    /// use retry_jitter::hooks::RetryState;
    /// let state = RetryState::new(Policy::default());
    /// assert_eq!(state.failed_calls(), 0);
    /// ```
    #[inline]
    pub fn new(policy: Policy) -> Self {
        Self::with_clock(policy, sleep::now)
    }

    /// The state for one call under `policy`, timed on `clock`.
    ///
    /// `clock` is the clock of the timer sleeping the waits.
    ///
    /// One such clock is [`sleep::tokio_now`](crate::sleep::tokio_now).
    ///
    /// ```
    /// use retry_jitter::{sleep, Policy};
    /// use retry_jitter::hooks::RetryState;
    /// let state = RetryState::with_clock(Policy::default(), sleep::now);
    /// # let _ = state;
    /// ```
    #[inline]
    pub fn with_clock(policy: Policy, clock: Clock) -> Self {
        let start = start_time(&policy, clock);
        Self::resume(Started {
            policy,
            clock,
            start,
        })
    }

    /// The state of a `call` whose first attempt failed.
    ///
    /// The call's start is kept as [`start_time`] says.
    ///
    /// The retry loops build this state only then.
    ///
    /// A first-call success never builds one.
    #[inline]
    pub(crate) fn resume(call: Started) -> Self {
        RetryState {
            call,
            calls_spent: 0,
            restart: 0,
            transparent_at: 0,
            full: call.policy.backoff().full_nanos(),
            prev: call.policy.backoff().base(),
            account: Account::default(),
            #[cfg(feature = "tracing")]
            first_failure: None,
            #[cfg(feature = "metrics")]
            listening: crate::run::metrics::listening(),
        }
    }

    /// Whether a metrics recorder listened when this state began.
    ///
    /// If so, this state's events are reported.
    #[cfg(feature = "metrics")]
    #[inline]
    pub(crate) fn listening(&self) -> bool {
        self.listening
    }

    /// The policy this call runs under.
    ///
    /// ```
    /// use retry_jitter::Policy;
    /// use retry_jitter::hooks::RetryState;
    /// assert_eq!(RetryState::new(Policy::default()).policy(), Policy::default());
    /// ```
    pub fn policy(&self) -> Policy {
        self.call.policy
    }

    /// How many calls have failed so far.
    ///
    /// Once a hedged call has ended, calls still running then count too.
    ///
    /// They were made.
    ///
    /// ```
    /// use retry_jitter::{Decision, Policy};
    /// use retry_jitter::hooks::RetryState;
    /// let mut state = RetryState::new(Policy::default());
    /// let _ = state.next_wait(Decision::Stop);
    /// assert_eq!(state.failed_calls(), 1);
    /// ```
    pub fn failed_calls(&self) -> u32 {
        self.calls_spent
    }

    /// What this call's retries and hedges took from its budget.
    ///
    /// The amount is split by [`Charge`].
    ///
    /// A loop of your own passes it to [`SharedBudget::succeeded`] when the call succeeds.
    ///
    /// ```
    /// use retry_jitter::hooks::{AcceptOk, Hooks, Unset};
    /// use retry_jitter::{Policy, RetryBudget};
    /// use retry_jitter::budget::SharedBudget;
    /// use retry_jitter::hooks::RetryState;
    ///
    /// static BUDGET: RetryBudget = RetryBudget::new(10);
    /// let hooks = Hooks { on: |_: &u16| true, notify: Unset, give_up: Unset, budget: &BUDGET, trace: Unset, on_ok: AcceptOk, guard: Unset };
    /// let mut state = RetryState::new(Policy::default());
    /// assert!(state.on_error(&503, &hooks, "fetch").is_ok()); // a retry: 5 tokens taken
    /// assert_eq!((state.taken().retries, BUDGET.available()), (1, 5));
    /// BUDGET.succeeded(state.taken()); // the retry succeeded: they come back
    /// assert_eq!(BUDGET.available(), 10);
    /// ```
    pub fn taken(&self) -> Taken {
        self.account.taken()
    }

    /// A call just failed and `decision` says what to do.
    ///
    /// It returns the wait before the next call, or why there is none.
    ///
    /// ```
    /// use retry_jitter::{Decision, GiveUpReason, Policy};
    /// use retry_jitter::hooks::RetryState;
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
    ///
    /// A plain retry's wait is drawn in place.
    ///
    /// Hint and rate-limit waits are drawn out of line.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn wait_after(&mut self, decision: Decision) -> Result<Duration, GiveUpReason> {
        self.count_failure();
        match decision {
            Decision::Retry => {}
            Decision::Stop => return Err(GiveUpReason::Stopped),
            Decision::RetryAfter(hint) => return self.hinted_wait(hint),
            Decision::RateLimited => {
                if self.calls_spent >= self.call.policy.attempts() {
                    return Err(GiveUpReason::Attempts);
                }
                return self.rate_limited_wait();
            }
        }
        if self.calls_spent >= self.call.policy.attempts() {
            return Err(GiveUpReason::Attempts);
        }
        let drawn = self.draw();
        if self.call.passed_after(drawn) {
            return Err(GiveUpReason::Elapsed);
        }
        self.prev = drawn;
        Ok(drawn)
    }

    /// The next retry's wait under the backoff, as drawn.
    ///
    /// It is drawn inline where the bounds were converted for the call.
    ///
    /// They are converted for full jitter, the crate's shape.
    ///
    /// Otherwise the draw takes one function call.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn draw(&self) -> Duration {
        let k = self.calls_spent - self.restart;
        match self.full {
            Some((base, cap)) => Backoff::full_draw(base, cap, k),
            None => self.call.policy.backoff_ref().draw(k, self.prev),
        }
    }

    /// The wait after a server's hint ([`Decision::RetryAfter`]).
    ///
    /// It is the hint plus the backoff's draw.
    ///
    /// If the hint passes the cap, retrying ends.
    ///
    /// Under gRPC's backoff, a pushback waits exactly its hint.
    ///
    /// The hint may be of any length; the deadline still bounds it.
    ///
    /// The backoff then starts again.
    #[cold]
    #[inline(never)]
    fn hinted_wait(&mut self, hint: Duration) -> Result<Duration, GiveUpReason> {
        let grpc = self.call.policy.backoff_ref().is_grpc();
        if !grpc && hint > self.call.policy.backoff_ref().cap() {
            return Err(GiveUpReason::HintBeyondCap);
        }
        if self.calls_spent >= self.call.policy.attempts() {
            return Err(GiveUpReason::Attempts);
        }
        let drawn = if grpc { Duration::ZERO } else { self.draw() };
        let wait = hint.saturating_add(drawn);
        if self.call.passed_after(wait) {
            return Err(GiveUpReason::Elapsed);
        }
        if grpc {
            self.restart = self.calls_spent;
        } else {
            self.prev = drawn;
        }
        Ok(wait)
    }

    /// The wait after a [`Decision::RateLimited`]: drawn as usual, from `rate_limited_base`.
    ///
    /// Out of line: a server limiting the rate is rare.
    #[cold]
    #[inline(never)]
    fn rate_limited_wait(&mut self) -> Result<Duration, GiveUpReason> {
        let drawn = self.rate_limited_draw(self.calls_spent);
        if self.call.passed_after(drawn) {
            return Err(GiveUpReason::Elapsed);
        }
        self.prev = drawn;
        Ok(drawn)
    }

    /// A wait drawn for retry `k` after a [`Decision::RateLimited`].
    ///
    /// It is drawn from the policy's `rate_limited_base`, with the backoff's jitter and cap.
    pub(crate) fn rate_limited_draw(&self, k: u32) -> Duration {
        let policy = self.call.policy;
        let backoff = policy.backoff();
        crate::policy::Backoff::new(policy.rate_limited_base(), backoff.cap())
            .with_jitter(backoff.jitter())
            .delay(k, self.prev)
    }

    /// The whole step after a failed call.
    ///
    /// It classifies `error` with `hooks.on` and computes the wait.
    ///
    /// It takes the budget's tokens and tells `hooks.notify`.
    ///
    /// `Ok(wait)` to retry after `wait`, `Err(reason)` to return `error`.
    ///
    /// If `notify` panics, the tokens are given back.
    ///
    /// The retry loops here also give the tokens back if the retry never runs.
    ///
    /// It never runs if the future drops during the wait, or the deadline is reached.
    ///
    /// A loop of your own does that with [`SharedBudget::refund`](crate::budget::SharedBudget::refund).
    ///
    /// ```
    /// use retry_jitter::{GiveUpReason, Policy};
    /// use retry_jitter::hooks::RetryState;
    /// use retry_jitter::hooks::{AcceptOk, Hooks, Unset};
    ///
    /// let mut state = RetryState::new(Policy::default());
    /// let on = |e: &u16| *e >= 500;
    /// let hooks = Hooks { on, notify: Unset, give_up: Unset, budget: Unset, trace: Unset, on_ok: AcceptOk, guard: Unset };
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

    /// [`on_error`](RetryState::on_error), the budget's tokens still owed.
    ///
    /// The tokens are given back if what is returned drops before the retry runs.
    ///
    /// `inline`: the wait is computed in place, as in the retry loops.
    ///
    /// In those loops, most of that work folds away.
    ///
    /// Else it is one call of [`next_wait`](RetryState::next_wait).
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn retry_step<'h, E, C, N, G, B, T, O, Gd>(
        &mut self,
        error: &E,
        hooks: &'h Hooks<C, N, G, B, T, O, Gd>,
        function: &'static str,
        inline: bool,
    ) -> Result<(Duration, RetryShare<'h>), GiveUpReason>
    where
        C: Classify<E>,
        N: Notify<E>,
        B: Budget,
    {
        let decision = hooks.on.classify(error);
        self.decided_step(decision, Some(error), hooks, function, inline)
    }

    /// [`retry_step`](RetryState::retry_step) once the `decision` is made.
    ///
    /// It runs on an error, or on an `Ok` value that `on_ok` retries.
    ///
    /// For such an `Ok`, `error` is `None`.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn decided_step<'h, E, C, N, G, B, T, O, Gd>(
        &mut self,
        decision: Decision,
        error: Option<&E>,
        hooks: &'h Hooks<C, N, G, B, T, O, Gd>,
        function: &'static str,
        inline: bool,
    ) -> Result<(Duration, RetryShare<'h>), GiveUpReason>
    where
        N: Notify<E>,
        B: Budget,
    {
        // Before the attempts are checked: the last attempt's failure counts too.
        if decision != Decision::Stop {
            Account::failed(hooks.budget.get(), self.clock());
        }
        let delay = if inline {
            self.wait_after(decision)
        } else {
            self.next_wait(decision)
        }?;
        let charge = match decision {
            Decision::RateLimited => Charge::RateLimited,
            _ => Charge::Retry,
        };
        self.take_retry(error, delay, charge, hooks, function)
    }

    /// The rest of a retry step once its wait is known.
    ///
    /// It takes the budget's tokens, then tells `notify`.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    fn take_retry<'h, E, C, N, G, B, T, O, Gd>(
        &mut self,
        error: Option<&E>,
        delay: Duration,
        charge: Charge,
        hooks: &'h Hooks<C, N, G, B, T, O, Gd>,
        function: &'static str,
    ) -> Result<(Duration, RetryShare<'h>), GiveUpReason>
    where
        N: Notify<E>,
        B: Budget,
    {
        // Owed from here: should `notify` unwind, the share goes back.
        let Some(owed) = self.take_share(hooks.budget.get(), charge) else {
            return Err(GiveUpReason::BudgetEmpty);
        };
        let event = self.event(delay, function, error.is_none());
        match error {
            Some(error) => hooks.notify.notify(error, &event),
            None => hooks.notify.retry_ok(&event),
        }
        Ok((delay, owed))
    }

    /// A call failed in a way no classifier can retry.
    ///
    /// Such a failure is an attempt cut by the deadline.
    ///
    /// It is counted, and `reason` handed back.
    pub(crate) fn end(&mut self, reason: GiveUpReason) -> GiveUpReason {
        self.count_failure();
        reason
    }

    /// Whether this call checks a deadline after each wait.
    ///
    /// The deadline is `max_elapsed`, or its caller's.
    ///
    /// Inlined: without a deadline, the check folds into a test the loop already made.
    #[inline]
    pub(crate) fn has_deadline(&self) -> bool {
        self.call.has_deadline()
    }

    /// Whether this call keeps its caller's deadline, not its own.
    ///
    /// The caller's deadline is a chain's scope.
    pub(crate) fn deadline_is_callers(&self) -> bool {
        self.call.deadline().is_some_and(|d| d.callers)
    }

    /// Whether the deadline has passed: no attempt may start now.
    pub(crate) fn past_deadline(&self) -> bool {
        self.call.passed_after(Duration::ZERO)
    }

    /// The event of the retry about to wait `delay`.
    pub(crate) fn event(&self, delay: Duration, function: &'static str, ok: bool) -> RetryEvent {
        RetryEvent {
            attempt: self.calls_spent,
            delay,
            function,
            attempts: self.call.policy.attempts(),
            hedge: false,
            ok,
        }
    }

    /// Counts `running` calls (hedges, `hedge = …`) still running as the call ends.
    ///
    /// They were made, so they count in [`GiveUp::calls`](crate::GiveUp::calls).
    ///
    /// They also count in the trace's `calls`.
    pub(crate) fn count_running(&mut self, running: u32) {
        self.calls_spent = self.calls_spent.saturating_add(running);
    }

    /// Whether a server hint `hint` lets the call go on.
    ///
    /// The hint came on a failed call while others still run (`hedge = …`).
    ///
    /// The hint must not pass the cap ([`GiveUpReason::HintBeyondCap`]).
    ///
    /// Nor may it pass the deadline ([`GiveUpReason::Elapsed`]).
    ///
    /// Both are decided as [`next_wait`](RetryState::next_wait) decides them.
    ///
    /// Under gRPC's backoff, a pushback may be of any length: only the deadline bounds it.
    pub(crate) fn allows_hint(&self, hint: Duration) -> Result<(), GiveUpReason> {
        let backoff = self.call.policy.backoff_ref();
        if !backoff.is_grpc() && hint > backoff.cap() {
            return Err(GiveUpReason::HintBeyondCap);
        }
        if self.call.passed_after(hint) {
            return Err(GiveUpReason::Elapsed);
        }
        Ok(())
    }

    /// Whether the attempt that just failed as `kind` says is resent.
    ///
    /// If so, it is resent at once and uncounted: gRFC A6's transparent retry.
    ///
    /// An attempt that never left the client is resent, until the call's deadline.
    ///
    /// Without a deadline, it is resent once per attempt: never a spin.
    ///
    /// One the server's transport did not hand on is resent once per attempt.
    #[inline]
    pub(crate) fn transparent(&mut self, kind: Transparent) -> bool {
        let attempt = self.calls_spent.saturating_add(1);
        let again = match kind {
            Transparent::No => return false,
            _ if self.transparent_at == NO_TRANSPARENT => return false,
            Transparent::NotSentOnWire if self.has_deadline() => !self.past_deadline(),
            _ => self.transparent_at != attempt,
        };
        if again {
            self.transparent_at = attempt;
        }
        again
    }

    /// The state of a hedged call, which makes no transparent retry.
    ///
    /// Its copies' failures are counted while others run, and its attempts are its copies: a
    /// resend would take a copy's place.
    #[inline]
    pub(crate) fn without_transparent_retries(mut self) -> Self {
        self.transparent_at = NO_TRANSPARENT;
        self
    }

    /// A failed call: counted.
    pub(crate) fn count_failure(&mut self) {
        self.calls_spent = self.calls_spent.saturating_add(1);
        #[cfg(feature = "tracing")]
        if self.call.start.is_none() && self.first_failure.is_none() {
            self.first_failure = Some((self.call.clock)());
        }
    }

    /// How long the call has run.
    ///
    /// It is measured from the call's start if kept, else from its first failure.
    ///
    /// Zero before that.
    pub(crate) fn elapsed(&self) -> Duration {
        #[cfg(feature = "tracing")]
        let since = self.call.start.or(self.first_failure);
        #[cfg(not(feature = "tracing"))]
        let since = self.call.start;
        since.map_or(Duration::ZERO, |t| {
            (self.call.clock)().saturating_duration_since(t)
        })
    }

    /// Take the share of `budget` a retry or hedge costs.
    ///
    /// `charge` says which.
    ///
    /// `None` if the budget refuses it.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn take_share<'b, S: SharedBudget>(
        &mut self,
        budget: Option<&'b S>,
        charge: Charge,
    ) -> Option<RetryShare<'b>> {
        self.account.take(budget, self.call.clock, charge)
    }

    /// The clock this call is timed on.
    pub(crate) fn clock(&self) -> Clock {
        self.call.clock
    }

    /// What the call took from its budget.
    pub(crate) fn account(&self) -> &Account {
        &self.account
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn within(wait: Duration, ceiling: Duration) -> bool {
        wait >= ceiling.mul_f64(0.8) && wait <= ceiling.mul_f64(1.2)
    }

    #[test]
    fn under_grpcs_backoff_a_pushback_is_the_wait_exactly_and_the_backoff_starts_again() {
        let policy =
            Policy::new()
                .with_attempts(6)
                .with_backoff(Backoff::grpc(ms(100), ms(1000), 2.0));
        let mut state = RetryState::new(policy);
        let first = state.next_wait(Decision::Retry).unwrap();
        let second = state.next_wait(Decision::Retry).unwrap();
        // Past the max backoff: honoured, not given up.
        //
        // A6 honours the server's word.
        let pushed = state.next_wait(Decision::RetryAfter(ms(5000))).unwrap();
        let again = state.next_wait(Decision::Retry).unwrap();
        let zero = state
            .next_wait(Decision::RetryAfter(Duration::ZERO))
            .unwrap();
        assert!(
            within(first, ms(100)) && within(second, ms(200)),
            "{first:?} {second:?}"
        );
        assert_eq!((pushed, zero), (ms(5000), Duration::ZERO));
        assert!(within(again, ms(100)), "{again:?}");
        // The attempts still bound a pushback.
        assert_eq!(
            state.next_wait(Decision::RetryAfter(ms(1))),
            Err(GiveUpReason::Attempts)
        );
        // While other attempts run (hedged), the same holds.
        //
        // A pushback past the max is waited.
        assert_eq!(state.allows_hint(ms(60_000)), Ok(()));
        // The crate's own backoff keeps its rule.
        //
        // Under it, a hint past the cap ends retrying.
        let mut state = RetryState::new(Policy::new().with_cap(ms(1000)));
        assert_eq!(
            state.allows_hint(ms(5000)),
            Err(GiveUpReason::HintBeyondCap)
        );
        assert_eq!(
            state.next_wait(Decision::RetryAfter(ms(5000))),
            Err(GiveUpReason::HintBeyondCap)
        );
    }
}
