//! Guarding the service a fleet of callers share: budgets that bound the retries of many calls.
//!
//! Below the loop: a guard that needs the time is handed the loop's clock.

mod breaker;
mod budget;
mod default;
mod hosts;
mod ratio;
mod refused;
mod throttle;
mod throttling;
mod window;

pub use breaker::{Admission, BreakerState, CircuitBreaker};
pub use budget::RetryBudget;
pub use default::{DefaultBudget, OwnBudget};
pub use hosts::HostBudgets;
pub use ratio::RatioBudget;
pub use refused::{CircuitOpen, Throttled};
pub use throttle::AdaptiveThrottle;
pub use throttling::RetryThrottling;

use crate::policy::Clock;
use crate::policy::Unset;

/// A budget many calls share, as the retry loop uses it: one method per moment of a call.
///
/// - A call is counted ([`begin`](SharedBudget::begin)) when its first attempt ends or its
///   first hedge is due, whichever comes first.
/// - Each attempt that fails with an error the loop would retry is told of
///   ([`failed`](SharedBudget::failed)).
/// - Each retry and hedge is charged just before it starts
///   ([`take_retry`](SharedBudget::take_retry), which may refuse it).
/// - A share granted to a retry that never ran is given back ([`refund`](SharedBudget::refund)).
/// - A call that succeeds says what its retries and hedges took
///   ([`succeeded`](SharedBudget::succeeded); [`Taken::NONE`] at its first attempt).
///
/// Every loop tells it at these moments, and only these: `#[retry]`'s, the closure API's,
/// hedged or not, and the tower and reqwest faces.
///
/// [`RetryBudget`] is one.
///
/// Implement it for a budget of your own shape, and pass `&YOURS` to `budget = …` or
/// [`Retry::budget`](crate::Retry::budget).
///
/// `clock` is the loop's clock (tokio's under a paused test clock, the system's, or the
/// `clock = …` key's): read it only where the budget needs the time.
///
/// ```
/// use retry_jitter::budget::{Charge, RetryTicket, SharedBudget};
/// use retry_jitter::time::Clock;
/// use std::sync::atomic::{AtomicU32, Ordering};
///
/// /// At most `n` retries, ever; hedges are free.
/// struct Quota(AtomicU32);
///
/// impl SharedBudget for Quota {
///     fn take_retry(&self, charge: Charge, _: Clock) -> Option<RetryTicket> {
///         if charge == Charge::Hedge {
///             return Some(RetryTicket::NONE);
///         }
///         let left = self.0.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
///         left.ok().map(|_| RetryTicket::NONE)
///     }
///     fn refund(&self, _: RetryTicket) { self.0.fetch_add(1, Ordering::Relaxed); }
/// }
///
/// static QUOTA: Quota = Quota(AtomicU32::new(1));
/// let mut calls = 0;
/// let r = retry_jitter::Retry::new(retry_jitter::Policy::new().with_base(std::time::Duration::ZERO))
///     .budget(&QUOTA)
///     .call(|| { calls += 1; Err::<(), _>("down") });
/// assert_eq!((r, calls), (Err("down"), 2)); // one retry, then the quota is spent
/// ```
pub trait SharedBudget: Sync {
    /// A call is counted: its first attempt ended, or its first hedge is due while that attempt
    /// still runs.
    ///
    /// A call still in its first attempt has paid nothing; one dropped then asks for nothing.
    ///
    /// Default: nothing.
    #[inline]
    fn begin(&self, clock: Clock) {
        let _ = clock;
    }
    /// An attempt failed with an error the loop would retry (its classifier did not say
    /// [`Decision::Stop`](crate::Decision::Stop)).
    ///
    /// Told whether a retry follows or not, before [`take_retry`](SharedBudget::take_retry).
    ///
    /// [`RetryThrottling`] counts these. Default: nothing.
    #[inline]
    fn failed(&self, clock: Clock) {
        let _ = clock;
    }
    /// A retry or a hedge (`charge` says which) is about to start: take what it costs.
    ///
    /// `None` refuses it.
    ///
    /// A refused retry ends the call with its last error
    /// ([`GiveUpReason::BudgetEmpty`](crate::GiveUpReason::BudgetEmpty)); a refused hedge is
    /// not started.
    ///
    /// The ticket is handed to [`refund`](SharedBudget::refund) should the retry not run.
    ///
    /// [`RetryTicket::NONE`] suits a budget that keeps no account of where a share was taken.
    fn take_retry(&self, charge: Charge, clock: Clock) -> Option<RetryTicket>;
    /// A share [`take_retry`](SharedBudget::take_retry) granted was not used: give it back.
    ///
    /// The future dropped during the wait, a hook panicked, or the deadline came first.
    fn refund(&self, ticket: RetryTicket);
    /// A call succeeded; `taken` is what its retries and hedges took
    /// ([`Taken::NONE`]: it succeeded at its first attempt). Default: nothing.
    #[inline]
    fn succeeded(&self, taken: Taken) {
        let _ = taken;
    }

    /// A call succeeded at its first attempt: [`begin`](SharedBudget::begin), then
    /// [`succeeded`](SharedBudget::succeeded) with [`Taken::NONE`], handing `out` back.
    ///
    /// A budget whose rare work is out of line ([`DefaultBudget`]) can end the success path with
    /// a tail call.
    ///
    /// Not for a budget to change: the loop's, not the budget's.
    #[doc(hidden)]
    #[inline]
    fn first_success<T>(&self, clock: Clock, out: T) -> T
    where
        Self: Sized,
    {
        self.begin(clock);
        self.succeeded(Taken::NONE);
        out
    }
}

/// What a share of a budget is taken for ([`SharedBudget::take_retry`]).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Charge {
    /// A retry after a failure.
    Retry,
    /// A retry after a [`Decision::RateLimited`](crate::Decision::RateLimited) (a 429, a
    /// server's "slow down"), which a budget may price apart ([`RetryBudget::with_costs`]).
    RateLimited,
    /// A hedge: another attempt started beside one that has not answered (`hedge = …`).
    Hedge,
}

/// What one call's retries and hedges took from its budget, by [`Charge`], told to
/// [`SharedBudget::succeeded`] when the call succeeds.
///
/// ```
/// use retry_jitter::budget::Taken;
/// assert_eq!(Taken::NONE.total(), 0);
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Taken {
    /// Shares taken for [`Charge::Retry`].
    pub retries: u32,
    /// Shares taken for [`Charge::RateLimited`].
    pub rate_limited: u32,
    /// Shares taken for [`Charge::Hedge`].
    pub hedges: u32,
}

impl Taken {
    /// Nothing taken: a call that succeeded at its first attempt.
    pub const NONE: Taken = Taken {
        retries: 0,
        rate_limited: 0,
        hedges: 0,
    };

    /// Every share taken, of every kind.
    ///
    /// ```
    /// use retry_jitter::budget::{Charge, Taken};
    /// let mut taken = Taken::NONE;
    /// taken.count(Charge::Retry);
    /// taken.count(Charge::Hedge);
    /// assert_eq!(taken.total(), 2);
    /// ```
    pub const fn total(&self) -> u32 {
        self.retries
            .saturating_add(self.rate_limited)
            .saturating_add(self.hedges)
    }

    /// One more share taken for `charge`.
    pub fn count(&mut self, charge: Charge) {
        let n = match charge {
            Charge::Retry => &mut self.retries,
            Charge::RateLimited => &mut self.rate_limited,
            Charge::Hedge => &mut self.hedges,
        };
        *n = n.saturating_add(1);
    }
}

/// Which share of a budget one granted retry took, for [`SharedBudget::refund`] to give it
/// back to: [`RatioBudget`]'s names the slot of its window the retry was counted in.
///
/// ```
/// use retry_jitter::{sleep, RatioBudget};
/// let b = RatioBudget::new(0.0, 1, std::time::Duration::from_secs(1));
/// let ticket = b.take_retry(sleep::now).unwrap();
/// b.refund(ticket);
/// assert_eq!(b.available(sleep::now), 1);
/// ```
///
/// Not `Clone`: a refund consumes it, so one retry's share is given back once at most.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct RetryTicket(u64);

impl RetryTicket {
    /// The ticket of a budget that keeps no account of where a share was taken.
    pub const NONE: RetryTicket = RetryTicket(u64::MAX);

    /// [`RetryBudget`]'s ticket of a retry after a `RateLimited`: refunded at that price.
    pub(crate) const RATE_LIMITED: RetryTicket = RetryTicket(u64::MAX - 1);

    /// A ticket for slot `slot`.
    pub(crate) const fn new(slot: u64) -> Self {
        RetryTicket(slot)
    }

    /// The slot it names.
    pub(crate) const fn slot(&self) -> u64 {
        self.0
    }
}

impl SharedBudget for RatioBudget {
    #[inline]
    fn begin(&self, clock: Clock) {
        RatioBudget::begin(self, clock);
    }
    /// Every charge is one retry of the ratio.
    #[inline]
    fn take_retry(&self, _: Charge, clock: Clock) -> Option<RetryTicket> {
        RatioBudget::take_retry(self, clock)
    }
    #[inline]
    fn refund(&self, ticket: RetryTicket) {
        RatioBudget::refund(self, ticket);
    }
}

impl SharedBudget for RetryBudget {
    /// A retry or a hedge costs [`retry_cost`](RetryBudget::retry_cost), a rate-limited
    /// retry [`rate_limited_cost`](RetryBudget::rate_limited_cost).
    #[inline]
    fn take_retry(&self, charge: Charge, _: Clock) -> Option<RetryTicket> {
        match charge {
            Charge::RateLimited => self
                .try_take(self.rate_limited_cost())
                .then_some(RetryTicket::RATE_LIMITED),
            Charge::Retry | Charge::Hedge => {
                RetryBudget::try_retry(self).then_some(RetryTicket::NONE)
            }
        }
    }
    #[inline]
    fn refund(&self, ticket: RetryTicket) {
        match ticket {
            RetryTicket::RATE_LIMITED => self.give_back(self.rate_limited_cost()),
            _ => RetryBudget::refund_retry(self),
        }
    }
    /// Gives back what the call's retries and hedges took, or the first-try reward if they
    /// took nothing.
    #[inline]
    fn succeeded(&self, taken: Taken) {
        if taken.rate_limited == 0 {
            return RetryBudget::succeeded_after(self, taken.total());
        }
        let others = taken.retries.saturating_add(taken.hedges);
        let rate_limited = taken.rate_limited.saturating_mul(self.rate_limited_cost());
        self.give_back(
            others
                .saturating_mul(self.retry_cost())
                .saturating_add(rate_limited),
        );
    }
}

/// Where a loop finds its budget, if it has one: a `&` of any [`SharedBudget`] (a
/// `&RetryBudget`), or [`Unset`].
///
/// ```
/// use retry_jitter::RetryBudget;
/// use retry_jitter::hooks::{Budget, Unset};
/// static B: RetryBudget = RetryBudget::new(10);
/// assert!((&B).get().is_some());
/// assert!(Unset.get().is_none());
/// ```
#[doc(hidden)]
pub trait Budget {
    /// The budget's type.
    type Shared: SharedBudget;
    /// The budget.
    fn get(&self) -> Option<&Self::Shared>;
}

impl<S: SharedBudget> Budget for &S {
    type Shared = S;
    #[inline]
    fn get(&self) -> Option<&S> {
        Some(self)
    }
}

/// A budget that may be absent: a middleware's own, shared by its clones behind an `Arc`
/// (gRPC's throttle of one channel), or none.
impl<S: SharedBudget> Budget for Option<&S> {
    type Shared = S;
    #[inline]
    fn get(&self) -> Option<&S> {
        *self
    }
}

impl Budget for Unset {
    type Shared = RetryBudget;
    #[inline]
    fn get(&self) -> Option<&RetryBudget> {
        None
    }
}
