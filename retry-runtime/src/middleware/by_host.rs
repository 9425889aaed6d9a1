//! How a middleware's call finds its budget from its request's authority.
//!
//! One per host by default ([`HostBudgets`]); else the one it was given, or none.

use std::sync::Arc;

use crate::fleet::{Budget, DefaultBudget, HostBudgets, SharedBudget};
use crate::policy::Unset;

/// A middleware's budget as each call finds its own, from the request's authority.
///
/// - A [`HostBudgets`] gives the host's.
/// - A `&S` ([`budget`](crate::tower::RetryBuilder::budget)) gives itself.
/// - An `Option<Arc<S>>` gives the one it holds.
/// - [`Unset`] gives none.
///
/// Not a trait to implement.
#[doc(hidden)]
pub trait ByHost {
    /// That budget, as the call's loop holds it.
    type Of<'a>: Budget + Send + Sync
    where
        Self: 'a;
    /// Which budget a request to `authority` uses, found once, as its call starts.
    ///
    /// `0` for a budget not kept per host, which asks nothing.
    fn host<'k>(&self, authority: impl FnOnce() -> Option<&'k str>) -> u8;
    /// The budget `host` names.
    fn of(&self, host: u8) -> Self::Of<'_>;
}

impl ByHost for HostBudgets {
    type Of<'a> = &'a DefaultBudget;
    #[inline]
    fn host<'k>(&self, authority: impl FnOnce() -> Option<&'k str>) -> u8 {
        self.find(authority())
    }
    #[inline]
    fn of(&self, host: u8) -> &DefaultBudget {
        self.budget(host)
    }
}

impl<S: SharedBudget> ByHost for &S {
    type Of<'a>
        = &'a S
    where
        Self: 'a;
    #[inline]
    fn host<'k>(&self, _: impl FnOnce() -> Option<&'k str>) -> u8 {
        0
    }
    #[inline]
    fn of(&self, _: u8) -> &S {
        self
    }
}

/// A budget the middleware owns, shared by its clones (gRPC's throttle of one channel), or
/// none.
///
/// Every request uses it, whatever its host.
impl<S: SharedBudget + Send> ByHost for Option<Arc<S>> {
    type Of<'a>
        = Option<&'a S>
    where
        Self: 'a;
    #[inline]
    fn host<'k>(&self, _: impl FnOnce() -> Option<&'k str>) -> u8 {
        0
    }
    #[inline]
    fn of(&self, _: u8) -> Option<&S> {
        self.as_deref()
    }
}

impl ByHost for Unset {
    type Of<'a> = Unset;
    #[inline]
    fn host<'k>(&self, _: impl FnOnce() -> Option<&'k str>) -> u8 {
        0
    }
    #[inline]
    fn of(&self, _: u8) -> Unset {
        Unset
    }
}
