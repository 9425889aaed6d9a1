//! What the loop asks the fleet's per-attempt and per-call guards, and tells them.
//!
//! The guards are the adaptive throttle and the circuit breaker, driven at the right moments of
//! the one loop.
//!
//! And the call's [`CancelToken`], which the loop reads before each retry and races each wait
//! against.

use crate::fleet::{
    AdaptiveThrottle, Admission, BreakerState, CircuitBreaker, CircuitOpen, Throttled,
};
use crate::policy::Unset;
use crate::policy::{CancelToken, Clock, GiveUpReason, RetryEvent};

/// A call's guards, as the retry loop drives them.
///
/// Asked before each attempt; told when an attempt was answered and when the call ended.
///
/// [`Unset`] (no throttle, no breaker) is nothing at all.
///
/// `R` is the call's outcome: a guard that refuses an attempt makes its error.
///
/// ```
/// use retry_jitter::hooks::Unset;
/// use retry_jitter::__private::Guard;
/// assert!(Guard::<Result<(), ()>>::before(&Unset, true, retry_jitter::sleep::now, "f").is_ok());
/// ```
pub trait Guard<R> {
    /// An attempt is about to be made (`first`: the call's first).
    ///
    /// To refuse it, `Err` with the outcome and the reason to end the call with.
    ///
    /// Default: let it through.
    #[inline]
    fn before(
        &self,
        first: bool,
        clock: Clock,
        function: &'static str,
    ) -> Result<(), (R, GiveUpReason)> {
        let _ = (first, clock, function);
        Ok(())
    }
    /// An attempt ended; `answered`: the service answered it (an `Ok`, or an error classified
    /// `Decision::Stop`). Default: nothing.
    #[inline]
    fn answered(&self, answered: bool, clock: Clock) {
        let _ = (answered, clock);
    }
    /// A call that was let through ended: `success` for an `Ok` or a `Decision::Stop`.
    /// Default: nothing.
    #[inline]
    fn ended(&self, success: bool, clock: Clock, function: &'static str) {
        let _ = (success, clock, function);
    }
    /// The call's cancel token (`cancel = …`), if it has one.
    ///
    /// None by default: a constant the loop's checks fold away with.
    #[inline]
    fn cancel(&self) -> Option<&CancelToken> {
        None
    }
    /// A retry's wait of `event.delay` is about to be slept. Default: nothing.
    #[inline]
    fn waiting(&self, event: &RetryEvent, clock: Clock) {
        let _ = (event, clock);
    }
    /// Whether the function awaits a hook with the last outcome after each step.
    ///
    /// An `async fn`'s awaited `notify` does: the loop then keeps the outcome. Default: no.
    #[inline]
    fn awaits(&self) -> bool {
        false
    }
    /// A hedge started. Default: nothing.
    #[inline]
    fn hedged(&self) {}
    /// An attempt that never reached the server's application is sent again, uncounted (a
    /// transparent retry). Default: nothing.
    #[inline]
    fn transparent(&self) {}
    /// The call ended, once, whatever ended it.
    ///
    /// After `calls` calls of the body; `None` on success, else why retrying ended.
    ///
    /// Default: nothing.
    #[inline]
    fn finished(&self, calls: u32, gave_up: Option<GiveUpReason>, clock: Clock) {
        let _ = (calls, gave_up, clock);
    }
}

impl<R> Guard<R> for Unset {}

/// `Guard` for a type wrapping other guards: every method handed to them (`$inner`, a field).
///
/// But `cancel` where the wrapper has a token of its own.
///
/// The one forwarding, for `Cancellable`, `WithStats` and `Borrowed`.
macro_rules! forward_guard {
    (impl[$($gen:tt)*] $ty:ty => $inner:tt: $p:ident $(, cancel: $token:ident)?) => {
        impl<$($gen)*, R> $crate::run::guard::Guard<R> for $ty
        where
            $p: $crate::run::guard::Guard<R>,
        {
            #[inline]
            fn before(
                &self,
                first: bool,
                clock: $crate::policy::Clock,
                function: &'static str,
            ) -> Result<(), (R, $crate::policy::GiveUpReason)> {
                self.$inner.before(first, clock, function)
            }
            #[inline]
            fn answered(&self, answered: bool, clock: $crate::policy::Clock) {
                self.$inner.answered(answered, clock);
            }
            #[inline]
            fn ended(&self, success: bool, clock: $crate::policy::Clock, function: &'static str) {
                self.$inner.ended(success, clock, function);
            }
            #[inline]
            fn cancel(&self) -> Option<&$crate::policy::CancelToken> {
                forward_guard!(@cancel self, $inner $(, $token)?)
            }
            #[inline]
            fn waiting(&self, event: &$crate::policy::RetryEvent, clock: $crate::policy::Clock) {
                self.$inner.waiting(event, clock);
            }
            #[inline]
            fn awaits(&self) -> bool {
                self.$inner.awaits()
            }
            #[inline]
            fn hedged(&self) {
                self.$inner.hedged();
            }
            #[inline]
            fn transparent(&self) {
                self.$inner.transparent();
            }
            #[inline]
            fn finished(
                &self,
                calls: u32,
                gave_up: Option<$crate::policy::GiveUpReason>,
                clock: $crate::policy::Clock,
            ) {
                self.$inner.finished(calls, gave_up, clock);
            }
        }
    };
    (@cancel $this:ident, $inner:tt) => {
        $this.$inner.cancel()
    };
    (@cancel $this:ident, $inner:tt, $token:ident) => {
        Some(core::borrow::Borrow::<$crate::policy::CancelToken>::borrow(&$this.$token))
    };
}
pub(crate) use forward_guard;

/// Both guards: the first is asked first.
///
/// The breaker, which refuses whole calls, comes before the throttle, which refuses attempts.
impl<R, A: Guard<R>, B: Guard<R>> Guard<R> for (A, B) {
    #[inline]
    fn before(
        &self,
        first: bool,
        clock: Clock,
        function: &'static str,
    ) -> Result<(), (R, GiveUpReason)> {
        self.0.before(first, clock, function)?;
        self.1.before(first, clock, function)
    }
    #[inline]
    fn answered(&self, answered: bool, clock: Clock) {
        self.0.answered(answered, clock);
        self.1.answered(answered, clock);
    }
    #[inline]
    fn ended(&self, success: bool, clock: Clock, function: &'static str) {
        self.0.ended(success, clock, function);
        self.1.ended(success, clock, function);
    }
    #[inline]
    fn cancel(&self) -> Option<&CancelToken> {
        match self.0.cancel() {
            Some(token) => Some(token),
            None => self.1.cancel(),
        }
    }
    #[inline]
    fn waiting(&self, event: &RetryEvent, clock: Clock) {
        self.0.waiting(event, clock);
        self.1.waiting(event, clock);
    }
    #[inline]
    fn awaits(&self) -> bool {
        self.0.awaits() || self.1.awaits()
    }
    #[inline]
    fn hedged(&self) {
        self.0.hedged();
        self.1.hedged();
    }
    #[inline]
    fn transparent(&self) {
        self.0.transparent();
        self.1.transparent();
    }
    #[inline]
    fn finished(&self, calls: u32, gave_up: Option<GiveUpReason>, clock: Clock) {
        self.0.finished(calls, gave_up, clock);
        self.1.finished(calls, gave_up, clock);
    }
}

/// A call's [`CancelToken`] among its guards (`cancel = …`, [`Retry::cancel`](crate::Retry::cancel)).
///
/// It refuses nothing and hears nothing; the loop reads it.
///
/// ```
/// use retry_jitter::CancelToken;
/// use retry_jitter::__private::{Cancelling, Guard};
/// static STOP: CancelToken = CancelToken::new();
/// let g = Cancelling::new(&STOP);
/// assert!(Guard::<Result<(), ()>>::cancel(&g).is_some());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Cancelling<'a>(&'a CancelToken);

impl<'a> Cancelling<'a> {
    /// The guard of `token`.
    pub const fn new(token: &'a CancelToken) -> Self {
        Cancelling(token)
    }
}

impl<R> Guard<R> for Cancelling<'_> {
    #[inline]
    fn cancel(&self) -> Option<&CancelToken> {
        Some(self.0)
    }
}

/// A refused attempt's outcome is `Err(E::from(refusal))`.
///
/// For the closure API's guards, which know nothing of `E` until a call.
#[derive(Clone, Copy, Debug, Default)]
pub struct IntoErr;

impl<V, E: From<Throttled>> Guard<Result<V, E>> for ThrottleGuard<'_, IntoErr> {
    fn before(
        &self,
        first: bool,
        clock: Clock,
        function: &'static str,
    ) -> Result<(), (Result<V, E>, GiveUpReason)> {
        ThrottleGuard::new(self.throttle, |t| Err(E::from(t))).before(first, clock, function)
    }
    fn answered(&self, answered: bool, clock: Clock) {
        self.throttle.answered(clock, answered);
    }
    #[inline]
    fn ended(&self, _: bool, _: Clock, _: &'static str) {}
}

impl<V, E: From<CircuitOpen>> Guard<Result<V, E>> for BreakerGuard<'_, IntoErr> {
    fn before(
        &self,
        first: bool,
        clock: Clock,
        function: &'static str,
    ) -> Result<(), (Result<V, E>, GiveUpReason)> {
        BreakerGuard::new(self.breaker, |c| Err(E::from(c))).before(first, clock, function)
    }
    #[inline]
    fn answered(&self, _: bool, _: Clock) {}
    fn ended(&self, success: bool, clock: Clock, function: &'static str) {
        Guard::<Result<V, E>>::ended(
            &BreakerGuard::new(self.breaker, |c| Err::<V, E>(E::from(c))),
            success,
            clock,
            function,
        );
    }
}

/// An [`AdaptiveThrottle`] in a call, and how a rejected attempt's outcome is made.
///
/// ```
/// use retry_jitter::{AdaptiveThrottle, Throttled};
/// use retry_jitter::__private::{Guard, ThrottleGuard};
/// static T: AdaptiveThrottle = AdaptiveThrottle::new(2.0, std::time::Duration::from_secs(60));
/// let g = ThrottleGuard::new(&T, |t: Throttled| Err::<(), _>(std::io::Error::from(t)));
/// assert!(g.before(true, retry_jitter::sleep::now, "f").is_ok());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ThrottleGuard<'a, F> {
    throttle: &'a AdaptiveThrottle,
    refuse: F,
}

impl<'a, F> ThrottleGuard<'a, F> {
    /// `throttle`, whose rejected attempts end the call with `refuse(Throttled)`.
    pub const fn new(throttle: &'a AdaptiveThrottle, refuse: F) -> Self {
        ThrottleGuard { throttle, refuse }
    }
}

impl<R, F: Fn(Throttled) -> R> Guard<R> for ThrottleGuard<'_, F> {
    fn before(
        &self,
        _: bool,
        clock: Clock,
        function: &'static str,
    ) -> Result<(), (R, GiveUpReason)> {
        if self.throttle.admit(clock) {
            return Ok(());
        }
        #[cfg(feature = "metrics")]
        crate::run::metrics::throttled(function);
        let _ = function;
        Err(((self.refuse)(Throttled), GiveUpReason::Throttled))
    }
    fn answered(&self, answered: bool, clock: Clock) {
        self.throttle.answered(clock, answered);
    }
    #[inline]
    fn ended(&self, _: bool, _: Clock, _: &'static str) {}
}

/// A [`CircuitBreaker`] in a call, and how a refused call's outcome is made.
///
/// ```
/// use retry_jitter::{CircuitBreaker, CircuitOpen};
/// use retry_jitter::__private::{BreakerGuard, Guard};
/// use std::time::Duration;
/// static B: CircuitBreaker = CircuitBreaker::new(0.5, 20, Duration::from_secs(10), Duration::from_secs(5));
/// let g = BreakerGuard::new(&B, |c: CircuitOpen| Err::<(), _>(std::io::Error::from(c)));
/// assert!(g.before(true, retry_jitter::sleep::now, "f").is_ok());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct BreakerGuard<'a, F> {
    breaker: &'a CircuitBreaker,
    refuse: F,
}

impl<'a, F> BreakerGuard<'a, F> {
    /// `breaker`, whose refused calls end with `refuse(CircuitOpen)`.
    pub const fn new(breaker: &'a CircuitBreaker, refuse: F) -> Self {
        BreakerGuard { breaker, refuse }
    }
}

impl<R, F: Fn(CircuitOpen) -> R> Guard<R> for BreakerGuard<'_, F> {
    fn before(
        &self,
        first: bool,
        clock: Clock,
        function: &'static str,
    ) -> Result<(), (R, GiveUpReason)> {
        if !first {
            return Ok(());
        }
        match self.breaker.admit(clock) {
            Admission::Pass => Ok(()),
            Admission::Probe => {
                changed(function, BreakerState::HalfOpen);
                Ok(())
            }
            Admission::Refuse => Err(((self.refuse)(CircuitOpen), GiveUpReason::CircuitOpen)),
        }
    }
    #[inline]
    fn answered(&self, _: bool, _: Clock) {}
    fn ended(&self, success: bool, clock: Clock, function: &'static str) {
        if let Some(state) = self.breaker.ended(clock, success) {
            changed(function, state);
        }
    }
}

/// A call of `function` changed its breaker's state: the metrics and the trace hear of it.
#[cold]
fn changed(function: &'static str, state: BreakerState) {
    #[cfg(feature = "metrics")]
    crate::run::metrics::breaker(function, state);
    #[cfg(feature = "tracing")]
    crate::run::trace::breaker_changed(function, state);
    let _ = (function, state);
}
