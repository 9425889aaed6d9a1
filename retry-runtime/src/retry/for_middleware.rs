//! What the middleware faces ask of a [`Retry`] besides running it.

#[cfg(feature = "tower")]
use crate::fleet::Budget;
use crate::policy::Unset;
#[cfg(feature = "tower")]
use crate::run::hedge::HedgeWith;
use crate::run::timeout::AttemptTimeout;

use super::Retry;

#[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
impl<C, N, G, B, T, L, D, O> Retry<C, N, G, B, T, L, D, O, (Unset, Unset)> {
    /// The same retry with a single call: how the middleware faces send a request whose body
    /// cannot be sent twice (over the replay limit, or streaming), keeping its timeout.
    pub(crate) fn once(mut self) -> Self {
        self.policy = self.policy.with_attempts(1);
        self
    }

    /// The same retry, hedged only where `hedge` holds: a face's request that may not be sent
    /// twice (a write without a key) is never hedged.
    pub(crate) fn hedge_if(self, hedge: bool) -> Retry<C, N, G, B, T, L, Option<D>, O> {
        Retry {
            policy: self.policy,
            hooks: self.hooks,
            name: self.name,
            timeout: self.timeout,
            hedge: hedge.then_some(self.hedge),
        }
    }

    /// Whether a face may run the first attempt itself and enter
    /// [`call_async`](Retry::call_async) only once it failed: nothing of the loop's acts before
    /// or during a first attempt (no timeout races it, no hedge starts beside it, no
    /// `max_elapsed` reads the clock before it; no guard can refuse it: the faces set none).
    #[cfg(feature = "tower")]
    pub(crate) fn first_attempt_alone<E>(&self) -> bool
    where
        L: AttemptTimeout<E>,
        D: HedgeWith,
    {
        self.timeout.limit().is_none()
            && self.hedge.hedge().is_none()
            && self.policy.max_elapsed().is_none()
    }

    /// The limits of a call beginning now, for the headers its attempts carry across a hop.
    #[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
    pub(crate) fn hop_limits<E>(&self) -> crate::middleware::HopLimits
    where
        L: AttemptTimeout<E>,
    {
        let timeout = self.timeout.limit().map(|(timeout, _)| timeout);
        crate::middleware::HopLimits::start(timeout, self.policy.max_elapsed())
    }

    /// What the loop does when a first attempt succeeds (the budget's due), for a face that
    /// ran that attempt itself ([`first_attempt_alone`](Retry::first_attempt_alone)).
    #[cfg(feature = "tower")]
    pub(crate) fn first_succeeded<V, E>(&self)
    where
        B: Budget,
    {
        self.hooks
            .succeeded::<Result<V, E>>(None, crate::sleep::tokio_now, self.name);
    }
}
