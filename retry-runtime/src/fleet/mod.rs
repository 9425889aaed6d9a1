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

/// A budget many calls share, as the retry loop uses it: asked before each retry (and hedge),
/// told when a call begins and when it succeeds. [`RetryBudget`] is one; implement it for a
/// budget of your own shape and pass `&YOURS` to `budget = …` or [`Retry::budget`](crate::Retry::budget).
///
/// `clock` is the loop's clock (tokio's under a paused test clock, the system's, or the
/// `clock = …` key's): read it only where the budget needs the time.
///
/// ```
/// use retry_runtime::{sleep::Clock, SharedBudget};
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
/// let r = retry_runtime::Retry::new(retry_runtime::Policy::new().with_base(std::time::Duration::ZERO))
///     .budget(&QUOTA)
///     .call(|| { calls += 1; Err::<(), _>("down") });
/// assert_eq!((r, calls), (Err("down"), 2)); // one retry, then the quota is spent
/// ```
pub trait SharedBudget: Sync {
    /// A call begins: its first attempt is made (a budget shaped as a share of the calls made
    /// counts it here). Default: nothing.
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
    /// A call succeeded after `retries` granted retries (`0`: at its first attempt). Default:
    /// nothing.
    #[inline(always)]
    fn succeeded_after(&self, retries: u32) {
        let _ = retries;
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
    #[inline(always)]
    fn refund_retry(&self) {
        RatioBudget::refund_retry(self);
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
/// use retry_runtime::{Budget, NoBudget, RetryBudget};
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
/// use retry_runtime::{Budget, NoBudget};
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
/// dropped during the wait, a hook unwinding, the deadline reached) unless [`Owed::spend`]
/// says the retry runs.
#[derive(Default)]
pub struct Owed<'b>(Option<&'b dyn SharedBudget>);

impl<'b> Owed<'b> {
    /// What was just taken from `budget` for one retry (nothing without a budget).
    #[inline(always)]
    pub(crate) fn taken<S: SharedBudget>(budget: Option<&'b S>) -> Self {
        Owed(budget.map(|b| b as &dyn SharedBudget))
    }

    /// The retry runs: its share is spent.
    #[inline(always)]
    pub(crate) fn spend(&mut self) {
        self.0 = None;
    }
}

impl Drop for Owed<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(budget) = self.0.take() {
            budget.refund_retry();
        }
    }
}
