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
pub use refused::{CircuitOpen, Throttled, TimedOut};
pub use throttle::AdaptiveThrottle;

use crate::policy::Clock;

/// A budget many calls share, as the retry loop uses it: asked before each retry (and hedge),
/// told when a call begins and when it succeeds. [`RetryBudget`] is one; implement it for a
/// budget of your own shape and pass `&YOURS` to `budget = …` or [`Retry::budget`](crate::Retry::budget).
///
/// `clock` is the loop's clock (tokio's under a paused test clock, the system's, or the
/// `clock = …` key's): read it only where the budget needs the time.
///
/// ```
/// use retry_jitter::{sleep::Clock, SharedBudget};
/// use std::sync::atomic::{AtomicU32, Ordering};
///
/// /// At most `n` retries, ever.
/// struct Quota(AtomicU32);
///
/// impl SharedBudget for Quota {
///     fn try_retry(&self, _: Clock) -> bool {
///         self.0.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1)).is_ok()
///     }
///     fn refund_retry(&self) { self.0.fetch_add(1, Ordering::Relaxed); }
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
    /// One retry (or hedge) is about to be made: take what it costs, or `false` to refuse it
    /// (the call then ends with its last error, [`GiveUpReason::BudgetEmpty`](crate::GiveUpReason::BudgetEmpty)).
    fn try_retry(&self, clock: Clock) -> bool;
    /// A retry that [`try_retry`](SharedBudget::try_retry) granted never ran (the future
    /// dropped during the wait, a hook panicked, the deadline came first): give it back.
    fn refund_retry(&self);
    /// What the retry loops call to take a retry's share: [`try_retry`](SharedBudget::try_retry),
    /// with a ticket that [`refund`](SharedBudget::refund) is handed should the retry not run.
    /// Default: `try_retry`, and a ticket that names nothing. A budget whose shares leave it
    /// over time ([`RatioBudget`]) puts in the ticket where the share was taken.
    #[inline(always)]
    fn take_retry(&self, clock: Clock) -> Option<RetryTicket> {
        self.try_retry(clock).then_some(RetryTicket::NONE)
    }
    /// What the retry loops call to give back a share [`take_retry`](SharedBudget::take_retry)
    /// granted to a retry that never ran. Default: [`refund_retry`](SharedBudget::refund_retry).
    #[inline(always)]
    fn refund(&self, ticket: RetryTicket) {
        let _ = ticket;
        self.refund_retry();
    }
    /// A call succeeded after `retries` granted retries (`0`: at its first attempt). Default:
    /// nothing.
    #[inline(always)]
    fn succeeded_after(&self, retries: u32) {
        let _ = retries;
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
    fn try_retry(&self, clock: Clock) -> bool {
        RatioBudget::try_retry(self, clock)
    }
    /// Without its ticket, nothing can be given back (see [`RatioBudget::refund`]).
    #[inline(always)]
    fn refund_retry(&self) {}
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
    fn try_retry(&self, _: Clock) -> bool {
        RetryBudget::try_retry(self)
    }
    #[inline(always)]
    fn refund_retry(&self) {
        RetryBudget::refund_retry(self);
    }
    #[inline(always)]
    fn succeeded_after(&self, retries: u32) {
        RetryBudget::succeeded_after(self, retries);
    }
}

/// Where a loop finds its budget, if it has one: a `&` of any [`SharedBudget`] (a
/// `&RetryBudget`), or [`NoBudget`].
///
/// ```
/// use retry_jitter::RetryBudget;
/// use retry_jitter::hooks::{Budget, NoBudget};
/// static B: RetryBudget = RetryBudget::new(10);
/// assert!((&B).get().is_some());
/// assert!(NoBudget.get().is_none());
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

/// No budget: retries are limited by the policy alone, and no atomic is touched.
///
/// ```
/// use retry_jitter::hooks::{Budget, NoBudget};
/// assert!(NoBudget.get().is_none());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NoBudget;

impl Budget for NoBudget {
    type Shared = RetryBudget;
    #[inline(always)]
    fn get(&self) -> Option<&RetryBudget> {
        None
    }
}

/// The share of a retry that has not run yet: given back when this is dropped (the future
/// dropped during the wait, a hook unwinding, the deadline reached) unless [`RetryShare::spend`]
/// says the retry runs.
#[derive(Default)]
pub struct RetryShare<'b>(Option<(&'b dyn SharedBudget, RetryTicket)>);

impl<'b> RetryShare<'b> {
    /// What was just taken from `budget` for one retry, as `ticket` names it (nothing
    /// without a budget).
    #[inline(always)]
    pub(crate) fn taken<S: SharedBudget>(budget: Option<&'b S>, ticket: RetryTicket) -> Self {
        RetryShare(budget.map(|b| (b as &dyn SharedBudget, ticket)))
    }

    /// The retry runs: its share is spent.
    #[inline(always)]
    pub(crate) fn spend(&mut self) {
        self.0 = None;
    }
}

impl Drop for RetryShare<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some((budget, ticket)) = self.0.take() {
            budget.refund(ticket);
        }
    }
}
