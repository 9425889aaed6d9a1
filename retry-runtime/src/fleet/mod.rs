//! Guarding the service a fleet of callers share: budgets that bound the retries of many calls.
//! Below the loop: a guard that needs the time is handed the loop's clock.

mod breaker;
mod budget;
mod ratio;
mod refused;
mod throttle;
mod window;

pub use breaker::{Admission, BreakerState, CircuitBreaker};
pub use budget::RetryBudget;
pub use ratio::RatioBudget;
pub use refused::{CircuitOpen, Throttled};
pub use throttle::AdaptiveThrottle;

use crate::policy::Clock;
use crate::policy::Unset;

/// A budget many calls share, as the retry loop uses it: asked before each retry (and hedge),
/// told when a call begins and when it succeeds. [`RetryBudget`] is one; implement it for a
/// budget of your own shape and pass `&YOURS` to `budget = …` or [`Retry::budget`](crate::Retry::budget).
///
/// `clock` is the loop's clock (tokio's under a paused test clock, the system's, or the
/// `clock = …` key's): read it only where the budget needs the time.
///
/// ```
/// use retry_jitter::{Clock, RetryTicket, SharedBudget};
/// use std::sync::atomic::{AtomicU32, Ordering};
///
/// /// At most `n` retries, ever.
/// struct Quota(AtomicU32);
///
/// impl SharedBudget for Quota {
///     fn take_retry(&self, _: Clock) -> Option<RetryTicket> {
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
    /// A call's first attempt was made (a budget shaped as a share of the calls made counts
    /// it here). The loops call it as the first attempt ends, before any retry is asked for:
    /// a call still in its first attempt has paid nothing yet, and one dropped then asks for
    /// no retry. Default: nothing.
    #[inline(always)]
    fn begin(&self, clock: Clock) {
        let _ = clock;
    }
    /// One retry (or hedge) is about to be made: take what it costs, or `None` to refuse it
    /// (the call then ends with its last error, [`GiveUpReason::BudgetEmpty`](crate::GiveUpReason::BudgetEmpty)).
    /// The ticket is what [`refund`](SharedBudget::refund) is handed should the retry not
    /// run: [`RetryTicket::NONE`] for a budget that keeps no account of where a share was
    /// taken; [`RatioBudget`]'s names the slot of its window.
    fn take_retry(&self, clock: Clock) -> Option<RetryTicket>;
    /// [`take_retry`](SharedBudget::take_retry) for a retry after a
    /// [`Decision::RateLimited`](crate::Decision::RateLimited), which a budget may price apart
    /// ([`RetryBudget::with_costs`]). Default: `take_retry`.
    #[inline(always)]
    fn take_rate_limited(&self, clock: Clock) -> Option<RetryTicket> {
        self.take_retry(clock)
    }
    /// A retry that [`take_retry`](SharedBudget::take_retry) granted never ran (the future
    /// dropped during the wait, a hook panicked, the deadline came first): give it back.
    fn refund(&self, ticket: RetryTicket);
    /// A call succeeded after `retries` granted retries (`0`: at its first attempt). Default:
    /// nothing.
    #[inline(always)]
    fn succeeded_after(&self, retries: u32) {
        let _ = retries;
    }
    /// A call succeeded after `retries` granted retries, `rate_limited` of them taken with
    /// [`take_rate_limited`](SharedBudget::take_rate_limited). Default:
    /// [`succeeded_after(retries)`](SharedBudget::succeeded_after).
    #[inline(always)]
    fn recovered(&self, retries: u32, rate_limited: u32) {
        let _ = rate_limited;
        self.succeeded_after(retries);
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
    #[inline(always)]
    fn begin(&self, clock: Clock) {
        RatioBudget::begin(self, clock);
    }
    #[inline(always)]
    fn take_retry(&self, clock: Clock) -> Option<RetryTicket> {
        RatioBudget::take_retry(self, clock)
    }
    #[inline(always)]
    fn refund(&self, ticket: RetryTicket) {
        RatioBudget::refund(self, ticket);
    }
}

impl SharedBudget for RetryBudget {
    #[inline(always)]
    fn take_retry(&self, _: Clock) -> Option<RetryTicket> {
        RetryBudget::try_retry(self).then_some(RetryTicket::NONE)
    }
    #[inline(always)]
    fn take_rate_limited(&self, _: Clock) -> Option<RetryTicket> {
        self.try_take(self.rate_limited_cost())
            .then_some(RetryTicket::RATE_LIMITED)
    }
    #[inline(always)]
    fn refund(&self, ticket: RetryTicket) {
        match ticket {
            RetryTicket::RATE_LIMITED => self.give_back(self.rate_limited_cost()),
            _ => RetryBudget::refund_retry(self),
        }
    }
    #[inline(always)]
    fn succeeded_after(&self, retries: u32) {
        RetryBudget::succeeded_after(self, retries);
    }
    #[inline(always)]
    fn recovered(&self, retries: u32, rate_limited: u32) {
        if rate_limited == 0 {
            return RetryBudget::succeeded_after(self, retries);
        }
        let others = retries.saturating_sub(rate_limited);
        let rate_limited = rate_limited.saturating_mul(self.rate_limited_cost());
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
pub trait Budget {
    /// The budget's type.
    type Shared: SharedBudget;
    /// The budget.
    fn get(&self) -> Option<&Self::Shared>;
}

impl<S: SharedBudget> Budget for &S {
    type Shared = S;
    #[inline(always)]
    fn get(&self) -> Option<&S> {
        Some(self)
    }
}

impl Budget for Unset {
    type Shared = RetryBudget;
    #[inline(always)]
    fn get(&self) -> Option<&RetryBudget> {
        None
    }
}
