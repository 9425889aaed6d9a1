//! The hedging loop: the first attempt raced against one timer in place.
//!
//! Once that attempt fails or the hedge delay passes, another loop takes over.
//!
//! That loop starts hedges beside the first attempt.

use core::borrow::Borrow;
use core::future::Future;
use core::ops::ControlFlow;
use core::pin::{pin, Pin};
use core::task::Poll;
use core::time::Duration;
use std::time::Instant;

use super::{Hedge, LatencyHistogram};
use crate::policy::deadline::Started;
use crate::policy::Clock;
use crate::run::state::RetryState;
use crate::run::step::{IsResult, LoopHooks};
use crate::run::timeout::Limit;
use crate::{Decision, GiveUpReason, Policy, RetryEvent, TimedOut};

/// One poll of an attempt and, if limited, its timer.
///
/// The attempt is polled first, so it can ask the time it has left.
///
/// See [`poll_race_within`](crate::run::timeout::poll_race_within).
fn poll_attempt<F: Future, T: Future<Output = ()>>(
    fut: Pin<&mut F>,
    timer: Option<Pin<&mut T>>,
    (info, clock): (&mut Running, Clock),
    cx: &mut core::task::Context<'_>,
) -> Poll<Result<F::Output, TimedOut>> {
    match (timer, info.limit) {
        (Some(timer), Some(limit)) => {
            crate::run::timeout::poll_race_within(fut, timer, &mut info.end, (limit, clock), cx)
        }
        _ => fut.poll(cx).map(Ok),
    }
}

/// What the loop remembers of a running attempt.
#[derive(Clone, Copy, Default)]
struct Running {
    /// Its limit is the time left before the deadline.
    ///
    /// Cut by that limit, the attempt ends the call.
    deadline: bool,
    /// When it began, for the latency histogram.
    began: Option<Instant>,
    /// Its time limit, if any, and when that ends.
    ///
    /// The end is learnt at its first pending poll.
    limit: Option<Duration>,
    end: Option<Instant>,
}

impl Running {
    /// An attempt starting now, under `limit`.
    ///
    /// Its start is read only for a `histogram`.
    #[inline]
    fn new(limit: Option<Limit>, histogram: Option<&LatencyHistogram>, clock: Clock) -> Self {
        Running {
            deadline: limit.is_some_and(|l| l.deadline),
            began: histogram.map(|_| clock()),
            limit: limit.map(|l| l.duration),
            end: None,
        }
    }

    /// What is left of its limit now.
    ///
    /// The limit's end was learnt at the attempt's first pending poll.
    ///
    /// The whole limit if it was never polled pending.
    fn limit_left(&self, clock: Clock) -> Option<Duration> {
        let limit = self.limit?;
        Some(match self.end {
            Some(end) => end.saturating_duration_since(clock()),
            None => limit,
        })
    }
}

pin_project_lite::pin_project! {
    /// The hedged call's first attempt, before the hedge.
    ///
    /// It holds the attempt and one timer.
    ///
    /// The timer is for its limit or the hedge delay.
    ///
    /// Whichever ends first is armed; the other is not.
    ///
    /// A limit ending first cuts the attempt before any hedge.
    ///
    /// A hedge delay ending first starts the loop.
    ///
    /// The loop arms what is left of the limit.
    struct BeforeHedge<Fut, SFut> {
        #[pin]
        lead: Option<Fut>,
        #[pin]
        timer: Option<SFut>,
        info: Running,
        // Whether the timer is the attempt's limit, not the hedge delay.
        //
        // A limit timer cuts the attempt.
        cuts: bool,
        clock: Clock,
    }
}

impl<Fut: Future, SFut: Future<Output = ()>> BeforeHedge<Fut, SFut> {
    /// The one timer: the attempt's limit, or the hedge delay.
    ///
    /// The limit is armed if it ends first (or alone).
    ///
    /// It also returns whether the timer is the limit, which cuts the attempt.
    fn timer(limit: Option<Duration>, delay: Option<Duration>) -> (Option<Duration>, bool) {
        match (limit, delay) {
            (Some(limit), Some(delay)) if delay < limit => (Some(delay), false),
            (Some(limit), _) => (Some(limit), true),
            (None, delay) => (delay, false),
        }
    }
}

/// Ready with the attempt's outcome once it ends.
///
/// `Err` if its limit cut it.
///
/// Ready with `None` once the hedge delay passes.
impl<Fut: Future, SFut: Future<Output = ()>> Future for BeforeHedge<Fut, SFut> {
    type Output = Option<Result<Fut::Output, TimedOut>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut core::task::Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let clock = *this.clock;
        if let Some(fut) = this.lead.as_pin_mut() {
            let polled = match this.info.limit {
                Some(limit) => {
                    crate::run::timeout::poll_within(fut, &mut this.info.end, (limit, clock), cx)
                }
                None => fut.poll(cx),
            };
            if let Poll::Ready(outcome) = polled {
                return Poll::Ready(Some(Ok(outcome)));
            }
        }
        match this.timer.as_pin_mut() {
            Some(armed) => armed.poll(cx).map(|()| this.cuts.then_some(Err(TimedOut))),
            None => Poll::Pending,
        }
    }
}

/// An attempt's end as the loop steps it.
///
/// It returns the attempt's outcome, and whether the deadline cut it.
///
/// A cut attempt's outcome is made the function's error.
///
/// An answer's latency is recorded for a `pNN` hedge.
#[inline]
fn ended_attempt<R, M: Fn(TimedOut) -> R>(
    outcome: Result<R, TimedOut>,
    (info, histogram, clock): (&Running, Option<&LatencyHistogram>, Clock),
    timeout: &Option<(Duration, M)>,
) -> (R, bool) {
    match outcome {
        Ok(outcome) => {
            if let (Some(h), Some(began)) = (histogram, info.began) {
                h.record(clock().saturating_duration_since(began));
            }
            (outcome, false)
        }
        // Only a limited attempt has a timer that cuts it.
        Err(timed_out) => match timeout {
            Some((_, make_error)) => (make_error(timed_out), info.deadline),
            None => unreachable!("an attempt without a limit is never cut"),
        },
    }
}

/// The delay before the next hedge, once `started` attempts have.
///
/// None once they are all started.
#[inline]
fn next_hedge_delay(hedge: &Hedge, started: u32, policy: &Policy) -> Option<Duration> {
    hedge.delay().filter(|_| started < policy.attempts())
}

/// Awaits a pinned future, its poll inlined right there.
///
/// `.await` on the pin would call `Pin<&mut F>`'s own `poll`.
///
/// That `poll` is a generic `fn`.
///
/// LLVM keeps that `poll` out of line once `BeforeHedge`'s poll is inlined into it.
///
/// That costs a call, its spills and its return, per poll.
struct InlinedPoll<'a, F>(Pin<&'a mut F>);

impl<F: Future> Future for InlinedPoll<'_, F> {
    type Output = F::Output;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut core::task::Context<'_>) -> Poll<F::Output> {
        self.0.as_mut().poll(cx)
    }
}

// Public only for `#[retry]`'s expansion (`__private::Discard`, the bound on
// `__private::Loop::hedged`).
//
// Hidden from the docs, like the rest of `__private`.
/// Where the hedging loop holds its last outcome during backoff.
///
/// An `Option<R>` where a deadline may end the call after the wait.
///
/// [`Discard`] where none can.
///
/// The loop's future then holds nothing of `R`.
///
/// That future is then `Send` whatever the `T` and `E` of `R` are.
#[doc(hidden)]
pub trait KeepLast<R> {
    /// Keep `outcome` through the wait.
    fn keep(&mut self, outcome: R);
    /// The outcome kept, if any.
    fn take(&mut self) -> Option<R>;
}

impl<R> KeepLast<R> for Option<R> {
    #[inline]
    fn keep(&mut self, outcome: R) {
        *self = Some(outcome);
    }
    #[inline]
    fn take(&mut self) -> Option<R> {
        Option::take(self)
    }
}

/// Keeps nothing: for a call that has no deadline.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Discard;

impl<R> KeepLast<R> for Discard {
    #[inline]
    fn keep(&mut self, _: R) {}
    #[inline]
    fn take(&mut self) -> Option<R> {
        None
    }
}

/// The hedging retry loop, shared by two entry points.
///
/// They are `#[retry(hedge = …)]` and [`Retry::hedge`](crate::Retry::hedge).
///
/// - At most `call.policy.attempts()` calls of `make`.
/// - A new one beside the running ones whenever the latest has not answered within `hedge`'s
///   delay.
/// - The usual backoff wait when none runs.
/// - The first success returned, the other attempts dropped.
///
/// `timeout`: each attempt's limit.
///
/// `timeout` also makes the outcome of an attempt its limit cut.
///
/// `sleep` sleeps the waits, hedge delays and limits.
///
/// `call` is the call's policy, clock and start (see [`Started`]).
///
/// `last` keeps the last outcome through a backoff wait.
///
/// It does so only where a deadline may end the call (see [`KeepLast`]).
///
/// This entry runs the first attempt and one timer in place.
///
/// The timer is the attempt's time limit or the hedge delay, whichever ends first.
///
/// Once the first attempt fails or the hedge delay passes, the loop takes over.
///
/// That loop ([`hedged`]) is boxed, and takes over the attempt's slot.
///
/// A call whose first attempt answers in time pays for one attempt and one timer.
///
/// It does not pay for the loop.
///
/// This is a plain `fn` returning an `async move` block.
///
/// An `async fn` would keep its arguments twice.
#[allow(clippy::too_many_arguments, clippy::manual_async_fn)]
#[inline]
pub(crate) fn hedged_lazily<'h, P, R, H, F, Fut, S, SFut, M, K>(
    call: Started<P>,
    hooks: &'h H,
    function: &'static str,
    hedge: Hedge,
    timeout: Option<(Duration, M)>,
    mut sleep: S,
    mut make: F,
    mut last: K,
) -> impl Future<Output = R> + use<'h, P, R, H, F, Fut, S, SFut, M, K>
where
    P: Borrow<Policy>,
    R: IsResult,
    K: KeepLast<R>,
    H: LoopHooks<R>,
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = R>,
    S: FnMut(Duration) -> SFut,
    SFut: Future<Output = ()>,
    M: Fn(TimedOut) -> R,
{
    async move {
        if let Some(refused) = hooks.admit(None, call.clock, function) {
            return refused;
        }
        // Borrowed until the loop starts, copied then.
        //
        // A `const` policy is not kept at all.
        let limit = timeout.as_ref().map(|(t, _)| Limit::of(*t, call.owned()));
        let info = Running::new(limit, hedge.histogram(), call.clock);
        // The hedge delay, if a hedge is to come.
        //
        // Worked out again after the first attempt, from the same arguments.
        //
        // It is not kept beside the attempt.
        let (timer, cuts) = BeforeHedge::<Fut, SFut>::timer(
            info.limit,
            next_hedge_delay(&hedge, 1, call.policy.borrow()),
        );
        let mut first = pin!(BeforeHedge {
            lead: Some(make(1)),
            timer: timer.map(&mut sleep),
            info,
            cuts,
            clock: call.clock,
        });
        // In a block: no `R` is in scope at the loop's `.await`.
        let (slots, seeds) = {
            let ended = InlinedPoll(first.as_mut()).await;
            let mut first = first.as_mut().project();
            let mut owed = crate::run::account::RetryShare::default();
            let waiting = ended.is_some();
            // The first attempt ended, or the hedge delay passed.
            //
            // An ended attempt is stepped here, before the loop.
            //
            // The loop then holds nothing of `R`.
            //
            // Like the unhedged loops', the loop's future is `Send` whatever `T` and `E` are.
            //
            // The exception is when `last` keeps an outcome.
            let (state, lead_timer, timer, delay) = match ended {
                Some(outcome) => {
                    let info = (&*first.info, hedge.histogram(), call.clock);
                    let (outcome, cut) = ended_attempt(outcome, info, &timeout);
                    let verdict = hooks.verdict(&outcome);
                    if verdict.accepted() {
                        hooks.succeeded(None, call.clock, function);
                        return outcome;
                    }
                    // None runs: the loop's state begins, with the usual step.
                    //
                    // The backoff wait goes in the loop's timer.
                    first.lead.set(None);
                    first.timer.set(None);
                    let mut state = hooks.begin(call.owned()).without_transparent_retries();
                    match hooks.step(&mut state, outcome, verdict, function, cut) {
                        ControlFlow::Break(outcome) => return outcome,
                        ControlFlow::Continue((delay, tokens, outcome)) => {
                            owed = tokens;
                            if state.has_deadline() || hooks.cancel().is_some() {
                                last.keep(outcome);
                            }
                            // The next attempt's start sets the hedge delay again.
                            (state, None, Some(sleep(delay)), Duration::ZERO)
                        }
                    }
                }
                None => {
                    first.timer.set(None);
                    // The attempt runs on, under its limit's remainder.
                    //
                    // The hedge due now reports the delay that passed.
                    //
                    // A `pNN` one reports the percentile as read now.
                    let left = first.info.limit_left(call.clock);
                    let state = hooks.begin(call.owned()).without_transparent_retries();
                    let delay =
                        next_hedge_delay(&hedge, 1, call.policy.borrow()).unwrap_or_default();
                    (state, left.map(&mut sleep), None, delay)
                }
            };
            let slots = (lead_timer, timer, *first.info, delay);
            (slots, (state, owed, waiting))
        };
        let lead = first.project().lead;
        let run = hedged(
            call.owned(),
            hooks,
            function,
            hedge,
            timeout,
            sleep,
            make,
            last,
            lead,
            slots,
            seeds,
        );
        Box::pin(run).await
    }
}

/// The hedging loop once the first attempt failed or the hedge delay passed.
///
/// See [`hedged_lazily`].
///
/// - `lead`: the first attempt's slot, in place.
/// - `slots`: its timer (its limit's remainder) and its record.
/// - `slots` also holds the timer and the hedge delay.
/// - The timer is the backoff wait if `waiting`; else the hedge is due now.
/// - `seeds`: the call's state, and the budget's share of a retry not yet made.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
async fn hedged<R, H, F, Fut, S, SFut, M, K>(
    call: Started,
    hooks: &H,
    function: &'static str,
    hedge: Hedge,
    timeout: Option<(Duration, M)>,
    mut sleep: S,
    mut make: F,
    mut last: K,
    mut lead: Pin<&mut Option<Fut>>,
    (lead_timer, timer, mut lead_info, mut hedge_delay): (
        Option<SFut>,
        Option<SFut>,
        Running,
        Duration,
    ),
    (mut state, mut owed, mut waiting): (RetryState, crate::run::account::RetryShare<'_>, bool),
) -> R
where
    R: IsResult,
    K: KeepLast<R>,
    H: LoopHooks<R>,
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = R>,
    S: FnMut(Duration) -> SFut,
    SFut: Future<Output = ()>,
    M: Fn(TimedOut) -> R,
{
    let (mut lead_timer, mut timer) = (pin!(lead_timer), pin!(timer));
    let histogram = hedge.histogram();
    // gRPC's backoff brings gRPC's hedging rules (`Backoff::grpc`).
    let a6 = call.policy.backoff_ref().is_grpc();
    let mut started = 1u32;
    // An attempt answered "slow down" while others ran.
    //
    // That answer is `RateLimited`, or a server hint.
    //
    // Nothing new (attempt, hedge, retry) starts until the wait it asked for ends.
    let mut not_before: Option<Instant> = None;
    let held_for = |not_before: Option<Instant>| {
        not_before.map_or(Duration::ZERO, |t| {
            t.saturating_duration_since((call.clock)())
        })
    };
    // The first attempt is in place; hedges are boxed.
    //
    // Only a hedged call allocates.
    #[allow(clippy::type_complexity)]
    let mut others: Vec<(Running, Pin<Box<Fut>>, Option<Pin<Box<SFut>>>)> = Vec::new();
    // One timer for hedge delay and backoff wait, never both.
    //
    // The wait comes only when no attempt runs.
    //
    // Then no hedge is due.
    //
    // `waiting` says which it is.

    // Start the next attempt, in the lead's place if free.
    //
    // Then arm the next hedge.
    macro_rules! begin {
        () => {{
            started += 1;
            let limit = timeout.as_ref().map(|(t, _)| Limit::of(*t, call));
            let info = Running::new(limit, histogram, call.clock);
            let fut = make(started);
            let limit_timer = limit.map(|l| sleep(l.duration));
            if lead.is_none() {
                lead.set(Some(fut));
                lead_timer.set(limit_timer);
                lead_info = info;
            } else {
                others.push((info, Box::pin(fut), limit_timer.map(Box::pin)));
            }
            match next_hedge_delay(&hedge, started, &call.policy) {
                Some(delay) => {
                    hedge_delay = delay;
                    timer.set(Some(sleep(delay)));
                }
                None => timer.set(None),
            }
        }};
    }

    // The hedge delay is over: the latest attempt is late.
    //
    // `true` if the next attempt may start beside it.
    //
    // The deadline, the guards and the budget decide.
    macro_rules! hedge_due {
        () => {{
            let event = RetryEvent {
                attempt: started,
                delay: hedge_delay,
                function,
                attempts: call.policy.attempts(),
                hedge: true,
                ok: false,
            };
            !state.past_deadline() && hooks.hedge(&mut state, &event)
        }};
    }

    // The hedge delay passed while the first attempt runs: hedge now.
    if !waiting && hedge_due!() {
        begin!();
    }
    // With a cancel token (`cancel = …`), cancelling ends a backoff wait at once.
    let mut cancelled = hooks.cancel().map(crate::policy::CancelToken::cancelled);
    core::future::poll_fn(|cx| loop {
        // 1. The attempts: the first to end is handled.
        //
        // The others run on.
        let mut ended = None;
        if let Some(fut) = lead.as_mut().as_pin_mut() {
            let info = (&mut lead_info, call.clock);
            if let Poll::Ready(outcome) =
                poll_attempt(fut, lead_timer.as_mut().as_pin_mut(), info, cx)
            {
                lead.set(None);
                lead_timer.set(None);
                ended = Some((outcome, lead_info));
            }
        }
        let mut i = 0;
        while ended.is_none() && i < others.len() {
            let (info, fut, timer) = &mut others[i];
            match poll_attempt(
                fut.as_mut(),
                timer.as_mut().map(Pin::as_mut),
                (info, call.clock),
                cx,
            ) {
                Poll::Ready(outcome) => ended = Some((outcome, others.swap_remove(i).0)),
                Poll::Pending => i += 1,
            }
        }
        if let Some((outcome, info)) = ended {
            let (outcome, cut) = ended_attempt(outcome, (&info, histogram, call.clock), &timeout);
            let verdict = hooks.verdict(&outcome);
            // Running attempts are calls made too (`GiveUp::calls`, the trace's).
            let running = || u32::from(lead.is_some()).saturating_add(others.len() as u32);
            if verdict.accepted() {
                if started > 1 {
                    state.count_running(running());
                    hooks.recovered(&state, function);
                } else {
                    hooks.succeeded(Some(&state), call.clock, function);
                }
                return Poll::Ready(outcome);
            }
            let running = running();
            if running > 0 && !cut {
                // Others run: this error ends the call only if final.
                //
                // It is final if it must not be retried.
                //
                // It is also final if its server hint exceeds what the call may wait.
                let hint = match hooks.decide(&outcome, verdict, call.clock) {
                    Decision::Stop => Err(GiveUpReason::Stopped),
                    Decision::RetryAfter(hint) => state.allows_hint(hint).map(|()| hint),
                    // The wait a retry after it would draw, capped.
                    //
                    // Past the deadline, no attempt starts; running ones go on.
                    Decision::RateLimited => {
                        Ok(state.rate_limited_draw(state.failed_calls().saturating_add(1)))
                    }
                    Decision::Retry => Ok(Duration::ZERO),
                };
                match hint {
                    Err(reason) => {
                        state.count_running(running);
                        let reason = state.end(reason);
                        return Poll::Ready(hooks.give_up(&state, outcome, reason, function));
                    }
                    // The server asked for time: no attempt starts before then.
                    //
                    // The next hedge waits at least that long.
                    Ok(hint) if !hint.is_zero() => {
                        let until = (call.clock)() + hint;
                        not_before = Some(not_before.map_or(until, |t| t.max(until)));
                        if !waiting && timer.is_some() && !a6 {
                            hedge_delay = hedge_delay.max(hint);
                            timer.set(Some(sleep(hedge_delay)));
                        }
                    }
                    Ok(_) => {}
                }
                // gRPC's rule (A6, with its backoff) applies here.
                //
                // After a failure a hedge may follow, the next hedge goes at once.
                //
                // Given a server's pushback, it goes when the pushback says.
                if let (true, false, Ok(hint)) = (a6, waiting, hint) {
                    if timer.is_some() {
                        hedge_delay = hint;
                        timer.set(Some(sleep(hint)));
                    }
                }
                state.count_failure();
                continue;
            }
            // None runs, or the deadline cut one: the usual step.
            //
            // A deadline cut ends all the attempts.
            state.count_running(running);
            match hooks.step(&mut state, outcome, verdict, function, cut) {
                ControlFlow::Break(outcome) => return Poll::Ready(outcome),
                ControlFlow::Continue((delay, tokens, outcome)) => {
                    owed = tokens;
                    if state.has_deadline() || hooks.cancel().is_some() {
                        last.keep(outcome);
                    }
                    // Not shorter than what an earlier "slow down" asked for.
                    timer.set(Some(sleep(delay.max(held_for(not_before)))));
                    waiting = true;
                }
            }
        }
        let Some(armed) = timer.as_mut().as_pin_mut() else {
            return Poll::Pending;
        };
        let cut_short = waiting
            && cancelled
                .as_mut()
                .is_some_and(|c| Pin::new(c).poll(cx).is_ready());
        if !cut_short && armed.poll(cx).is_pending() {
            return Poll::Pending;
        }
        timer.set(None);
        // 2. The backoff wait is over, or cancelled.
        //
        // Nothing else ran meanwhile.
        if waiting {
            waiting = false;
            if let Some(outcome) = last.take() {
                let reason = if hooks.cancelled() {
                    Some(GiveUpReason::Cancelled)
                } else if state.past_deadline() {
                    Some(GiveUpReason::Elapsed)
                } else {
                    None
                };
                if let Some(reason) = reason {
                    // The retry never runs: its tokens go back.
                    drop(core::mem::take(&mut owed));
                    return Poll::Ready(hooks.give_up(&state, outcome, reason, function));
                }
            }
            owed.spend();
            if let Some(refused) = hooks.admit(Some(&state), call.clock, function) {
                return Poll::Ready(refused);
            }
            begin!();
            continue;
        }
        // 3. The hedge delay is over: a hedge, unless refused.
        //
        // The attempts running go on.
        if hedge_due!() {
            begin!();
            continue;
        }
        return Poll::Pending;
    })
    .await
}
