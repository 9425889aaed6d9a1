//! A call's account with its shared budget: every loop charges and pays back through
//! [`Account`], so when a call is counted, charged and refunded is written once.

use crate::fleet::{RetryTicket, SharedBudget};
use crate::policy::Clock;

/// What one call has taken from its budget, and the moments the budget hears of the call:
/// [`begin`](Account::begin) (its first attempt was made), [`first_success`](Account::first_success),
/// [`take`](Account::take) (a retry or a hedge), a refund (a [`RetryShare`] dropped before its
/// retry ran) and [`recovered`](Account::recovered) (a success after retries).
///
/// Without a budget (`None`) each of them is nothing at all.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Account {
    /// Retries and hedges the budget granted: what a later success gives back.
    taken: u32,
    /// Of those, the retries after a `Decision::RateLimited`, which a budget may price apart.
    rate_limited: u32,
}

impl Account {
    /// A call's first attempt was made. A call whose first attempt fails is counted here, as
    /// the attempt ends; one that succeeds at once, in [`first_success`](Account::first_success).
    #[inline(always)]
    pub(crate) fn begin<S: SharedBudget>(budget: Option<&S>, clock: Clock) {
        if let Some(budget) = budget {
            budget.begin(clock);
        }
    }

    /// A call's first attempt succeeded: the call is counted and the first-try reward paid.
    #[inline(always)]
    pub(crate) fn first_success<S: SharedBudget>(budget: Option<&S>, clock: Clock) {
        if let Some(budget) = budget {
            budget.begin(clock);
            budget.succeeded_after(0);
        }
    }

    /// Take one retry's (or hedge's) share: `None` if the budget refuses it. The share is
    /// given back if what is returned is dropped before the retry runs.
    #[inline(always)]
    pub(crate) fn take<'b, S: SharedBudget>(
        &mut self,
        budget: Option<&'b S>,
        clock: Clock,
        rate_limited: bool,
    ) -> Option<RetryShare<'b>> {
        match budget {
            Some(budget) => {
                let ticket = if rate_limited {
                    budget.take_rate_limited(clock)?
                } else {
                    budget.take_retry(clock)?
                };
                self.taken += 1;
                self.rate_limited += u32::from(rate_limited);
                Some(RetryShare(Some((budget as &dyn SharedBudget, ticket))))
            }
            None => Some(RetryShare(None)),
        }
    }

    /// The call succeeded after failed (or hedged) attempts: the budget gets back what they
    /// took (the first-try reward if none took anything).
    #[inline(always)]
    pub(crate) fn recovered<S: SharedBudget>(&self, budget: Option<&S>) {
        if let Some(budget) = budget {
            budget.recovered(self.taken, self.rate_limited);
        }
    }
}

/// The share of a retry that has not run yet: refunded when this is dropped (the future
/// dropped during the wait, a hook unwinding, the deadline reached) unless
/// [`spend`](RetryShare::spend) says the retry runs.
#[derive(Default)]
pub struct RetryShare<'b>(Option<(&'b dyn SharedBudget, RetryTicket)>);

impl RetryShare<'_> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::RetryBudget;
    use crate::run::sleep;

    #[test]
    fn a_dropped_share_is_refunded_and_a_spent_one_is_not() {
        let budget = RetryBudget::new(10);
        let mut account = Account::default();
        let share = account.take(Some(&budget), sleep::now, false).unwrap();
        assert_eq!(budget.available(), 5);
        drop(share);
        assert_eq!(budget.available(), 10);
        let mut share = account.take(Some(&budget), sleep::now, false).unwrap();
        share.spend();
        drop(share);
        assert_eq!(budget.available(), 5);
        assert_eq!(account.taken, 2);
    }

    #[test]
    fn without_a_budget_every_share_is_granted() {
        let mut account = Account::default();
        assert!(account
            .take::<RetryBudget>(None, sleep::now, false)
            .is_some());
        assert_eq!(account.taken, 0);
    }
}
