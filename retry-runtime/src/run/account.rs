//! A call's account with its shared budget, and when the budget hears of the call.
//!
//! Every loop reaches the budget only through [`Account`]: `#[retry]`'s blocking and async
//! loops, the closure API's, the hedged race, and through them the tower and reqwest faces.
//!
//! It does so at the moments its methods name, one [`SharedBudget`] method each:
//!
//! | the loop's moment | `Account` | the budget hears |
//! |---|---|---|
//! | the first attempt succeeded | [`first_success`](Account::first_success) | `begin`, then `succeeded(Taken::NONE)` |
//! | the first attempt failed, or the first hedge is due while it runs (the call's retry state begins, `LoopHooks::begin`) | [`begin`](Account::begin) | `begin` |
//! | an attempt failed with an error to retry (a retry follows or not) | [`failed`](Account::failed) | `failed` |
//! | a retry (`Charge::Retry`, `Charge::RateLimited`) or a hedge (`Charge::Hedge`) is about to start | [`take`](Account::take) | `take_retry(charge)` |
//! | a share taken was not used (its [`RetryShare`] dropped unspent) | | `refund` |
//! | a later attempt succeeded | [`succeeded`](Account::succeeded) | `succeeded(taken)` |

use crate::fleet::{Charge, RetryTicket, SharedBudget, Taken};
use crate::policy::Clock;

/// What one call has taken from its budget, and the moments the budget hears of the call (the
/// module's table).
///
/// Without a budget (`None`) each of them is nothing at all.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Account {
    /// Retries and hedges the budget granted, by charge: what a later success gives back.
    taken: Taken,
}

impl Account {
    /// The call's first attempt failed, or its first hedge is due: the call is counted.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn begin<S: SharedBudget>(budget: Option<&S>, clock: Clock) {
        if let Some(budget) = budget {
            budget.begin(clock);
        }
    }

    /// The call's first attempt succeeded: the call is counted, and succeeded having taken
    /// nothing.
    ///
    /// `out`, the call's outcome, is handed back: the budget may end the success path with a
    /// tail call.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn first_success<S: SharedBudget, T>(budget: Option<&S>, clock: Clock, out: T) -> T {
        match budget {
            Some(budget) => budget.first_success(clock, out),
            None => out,
        }
    }

    /// An attempt failed with an error the loop would retry, whether a retry follows or not.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn failed<S: SharedBudget>(budget: Option<&S>, clock: Clock) {
        if let Some(budget) = budget {
            budget.failed(clock);
        }
    }

    /// A retry or a hedge is about to start: take its share, `None` if the budget refuses it.
    ///
    /// The share is given back if what is returned is dropped before it runs.
    #[inline]
    pub(crate) fn take<'b, S: SharedBudget>(
        &mut self,
        budget: Option<&'b S>,
        clock: Clock,
        charge: Charge,
    ) -> Option<RetryShare<'b>> {
        match budget {
            Some(budget) => {
                let ticket = budget.take_retry(charge, clock)?;
                self.taken.count(charge);
                Some(RetryShare(Some((budget as &dyn SharedBudget, ticket))))
            }
            None => Some(RetryShare(None)),
        }
    }

    /// What the call's retries and hedges took.
    #[inline]
    pub(crate) fn taken(&self) -> Taken {
        self.taken
    }

    /// A later attempt succeeded: the budget hears what the call's retries and hedges took.
    #[inline(always)] // the fail4 rows (scripts/instructions.sh): without it, +4 to +150
    pub(crate) fn succeeded<S: SharedBudget>(&self, budget: Option<&S>) {
        if let Some(budget) = budget {
            budget.succeeded(self.taken);
        }
    }
}

/// The share of a retry that has not run yet.
///
/// It is refunded when this is dropped, unless [`spend`](RetryShare::spend) says the retry
/// runs.
///
/// Dropped: the future dropped during the wait, a hook unwinding, the deadline reached.
#[derive(Default)]
pub struct RetryShare<'b>(Option<(&'b dyn SharedBudget, RetryTicket)>);

impl RetryShare<'_> {
    /// The retry runs: its share is spent.
    #[inline]
    pub(crate) fn spend(&mut self) {
        self.0 = None;
    }
}

impl Drop for RetryShare<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some((budget, ticket)) = self.0.take() {
            budget.refund(ticket);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::RetryBudget;
    use crate::run::sleep;

    #[test]
    fn a_dropped_share_is_refunded_and_a_spent_one_is_not() {
        let budget = RetryBudget::new(10);
        let mut account = Account::default();
        let share = account
            .take(Some(&budget), sleep::now, Charge::Retry)
            .unwrap();
        assert_eq!(budget.available(), 5);
        drop(share);
        assert_eq!(budget.available(), 10);
        let mut share = account
            .take(Some(&budget), sleep::now, Charge::Hedge)
            .unwrap();
        share.spend();
        drop(share);
        assert_eq!(budget.available(), 5);
        assert_eq!(account.taken.retries + account.taken.hedges, 2);
    }

    #[test]
    fn without_a_budget_every_share_is_granted() {
        let mut account = Account::default();
        assert!(account
            .take::<RetryBudget>(None, sleep::now, Charge::Retry)
            .is_some());
        assert_eq!(account.taken, Taken::NONE);
    }
}
