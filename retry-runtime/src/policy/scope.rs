//! The scope a server's request runs in when it is one hop of a chain of services
//! ([`ChainLayer`](crate::tower::ChainLayer)).
//!
//! It holds the caller's deadline, which every retry loop polled inside the scope keeps to.
//!
//! And whether one of them gave up on a failure it would have retried but for a limit: the tier
//! then answers its caller "don't retry".
//!
//! The scope is a thread-local set while the request's future is polled.
//!
//! A loop polled outside every scope reads one thread-local `bool` where it reads its deadline.
//!
//! In a process that never made a scope, it reads one atomic `bool`.

#[cfg(feature = "tower")]
pub(crate) use scoped::*;

#[cfg(feature = "tower")]
mod scoped {
    use core::cell::{Cell, RefCell};
    use core::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Instant;

    /// One request's scope: its caller's deadline (on tokio's clock).
    ///
    /// And whether a loop inside it gave up on what it would have retried.
    #[derive(Debug)]
    pub(crate) struct Scope {
        pub(crate) deadline: Option<Instant>,
        pub(crate) gave_up: AtomicBool,
    }

    impl Scope {
        pub(crate) fn new(deadline: Option<Instant>) -> Arc<Self> {
            // Written once: a store on every request would bounce the line between cores.
            if !SCOPES.load(Ordering::Relaxed) {
                SCOPES.store(true, Ordering::Relaxed);
            }
            Arc::new(Scope {
                deadline,
                gave_up: AtomicBool::new(false),
            })
        }

        /// Whether a loop inside it gave up on what it would have retried.
        pub(crate) fn gave_up(&self) -> bool {
            self.gave_up.load(Ordering::Relaxed)
        }
    }

    /// Whether this process ever made a scope: until it has, no loop reads a thread-local.
    ///
    /// A loop reads its deadline on every attempt that has a `timeout`.
    ///
    /// A `RetryLayer` asks at every request whether it is in a scope.
    ///
    /// Without `ChainLayer` that is one relaxed load, whatever the platform's thread-locals
    /// cost.
    ///
    /// On this crate's benchmark rows the two read the same.
    static SCOPES: AtomicBool = AtomicBool::new(false);

    std::thread_local! {
        /// Whether a scope is being polled on this thread: what a loop outside every scope
        /// reads.
        ///
        /// A `bool` with no destructor: the cheapest thread-local there is.
        static IN_SCOPE: Cell<bool> = const { Cell::new(false) };
        /// The scope being polled on this thread, moved in by [`enter`] for the poll.
        static CURRENT: RefCell<Option<Arc<Scope>>> = const { RefCell::new(None) };
    }

    /// Run `poll` inside the scope `slot` holds, moved into the thread's for the poll and back
    /// after it.
    ///
    /// The previous one is restored, even if it unwinds.
    ///
    /// Scopes nest: a tier serving a request another layer already scoped.
    ///
    /// An empty `slot` runs `poll` as it is.
    pub(crate) fn enter<O>(slot: &mut Option<Arc<Scope>>, poll: impl FnOnce() -> O) -> O {
        if slot.is_none() {
            return poll();
        }
        swap(slot, poll)
    }

    /// Run `poll` outside every scope, the one being polled (if any) restored after it.
    pub(crate) fn outside<O>(poll: impl FnOnce() -> O) -> O {
        if !in_scope() {
            return poll();
        }
        swap(&mut None, poll)
    }

    /// Run `poll` with the thread's scope that of `slot` (none for an empty one).
    ///
    /// Moved in for the poll and back after it; the previous one restored even if it unwinds.
    fn swap<O>(slot: &mut Option<Arc<Scope>>, poll: impl FnOnce() -> O) -> O {
        struct Restore<'a> {
            slot: &'a mut Option<Arc<Scope>>,
            previous: Option<Arc<Scope>>,
        }
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                let previous = self.previous.take();
                IN_SCOPE.with(|cell| cell.set(previous.is_some()));
                *self.slot = CURRENT.with(|cell| cell.replace(previous));
            }
        }
        let entered = slot.is_some();
        let previous = CURRENT.with(|cell| cell.replace(slot.take()));
        IN_SCOPE.with(|cell| cell.set(entered));
        let _restore = Restore { slot, previous };
        poll()
    }

    /// What `f` reads of the scope being polled, if there is one.
    #[inline]
    fn with_current<O>(f: impl FnOnce(&Scope) -> O) -> Option<O> {
        if !in_scope() {
            return None;
        }
        CURRENT.with(|cell| cell.borrow().as_deref().map(f))
    }

    /// Whether a scope is being polled on this thread.
    #[inline]
    pub(crate) fn in_scope() -> bool {
        SCOPES.load(Ordering::Relaxed) && IN_SCOPE.with(Cell::get)
    }

    /// The scope being polled, shared (to hand to a task the request spawns).
    pub(crate) fn current() -> Option<Arc<Scope>> {
        if !in_scope() {
            return None;
        }
        CURRENT.with(|cell| cell.borrow().clone())
    }

    /// The caller's deadline, inside a scope that has one.
    #[inline]
    pub(crate) fn caller_deadline() -> Option<Instant> {
        scope_deadline().flatten()
    }

    /// Inside a scope, its caller's deadline (`Some(None)`: a caller that sent none); `None`
    /// outside every scope.
    #[inline]
    pub(crate) fn scope_deadline() -> Option<Option<Instant>> {
        with_current(|scope| scope.deadline)
    }

    /// A loop inside the scope (if any) gave up on a failure it would have retried but for a
    /// limit, or its downstream said "don't retry".
    ///
    /// The tier's answer says so to its caller.
    #[cold]
    pub(crate) fn mark_gave_up() {
        with_current(|scope| scope.gave_up.store(true, Ordering::Relaxed));
    }
}

/// Without feature `tower` there is no scope: every loop is outside one.
#[cfg(not(feature = "tower"))]
#[inline]
pub(crate) fn caller_deadline() -> Option<std::time::Instant> {
    None
}

/// Without feature `tower` every loop is outside a scope.
#[cfg(all(not(feature = "tower"), feature = "reqwest-middleware"))]
#[inline]
pub(crate) fn scope_deadline() -> Option<Option<std::time::Instant>> {
    None
}

/// Without feature `tower` there is no scope to tell.
#[cfg(not(feature = "tower"))]
#[inline]
pub(crate) fn mark_gave_up() {}

/// A loop ended for `reason` after `calls` failed calls, allowed `attempts`.
///
/// `attempts` is `None` when its guards refused it before its first attempt, where its policy
/// is not at hand.
///
/// Inside a scope, marks the scope "don't retry" when [`marks`] says so.
#[inline]
pub(crate) fn gave_up(reason: crate::GiveUpReason, calls: u32, attempts: Option<u32>) {
    if marks(reason, calls, attempts) {
        mark_gave_up();
    }
}

/// Whether a loop that ended for `reason` after `calls` failed calls, allowed `attempts`,
/// tells its chain's caller "don't retry".
///
/// That is `x-should-retry: false`, or gRPC's `grpc-retry-pushback-ms: -1`.
///
/// Only when it retried, or would have retried but for a limit of retrying.
///
/// The one place this is decided, reason by reason:
///
/// - [`Attempts`](crate::GiveUpReason::Attempts): it retried, and made every call allowed
///   (`calls > 1`).
/// - [`Elapsed`](crate::GiveUpReason::Elapsed),
///   [`BudgetEmpty`](crate::GiveUpReason::BudgetEmpty),
///   [`Throttled`](crate::GiveUpReason::Throttled),
///   [`CircuitOpen`](crate::GiveUpReason::CircuitOpen),
///   [`HintBeyondCap`](crate::GiveUpReason::HintBeyondCap): a limit kept a loop that retries
///   from retrying.
///   - The limits: time, the budget, the throttle, the breaker, the cap on a server's wait.
///   - Its caller would meet the same limit.
///   - Not a loop of one attempt: it would not have retried anyway.
/// - [`Stopped`](crate::GiveUpReason::Stopped): its classifier said the failure is not worth
///   retrying.
///   - A downstream's own "don't retry" marks the scope where it is read, in the HTTP and gRPC
///     classifiers, whatever the loop does next.
/// - [`Cancelled`](crate::GiveUpReason::Cancelled): the loop's token ended it (a shutdown, a
///   caller gone).
///   - That is not a limit of retrying, whether it had retried or not.
///   - Another replica may still serve the caller.
///
/// A loop of one attempt (`attempts = 1`, a tier told to fail fast) never marks.
///
/// It leaves the retry to its caller.
///
/// One its breaker or throttle refused before its first attempt (`attempts` unknown) marks as a
/// loop that retries does.
pub(crate) fn marks(reason: crate::GiveUpReason, calls: u32, attempts: Option<u32>) -> bool {
    use crate::GiveUpReason::{
        Attempts, BudgetEmpty, Cancelled, CircuitOpen, Elapsed, HintBeyondCap, Stopped, Throttled,
    };
    let retries = attempts.is_none_or(|attempts| attempts > 1);
    match reason {
        Attempts => calls > 1,
        Elapsed | BudgetEmpty | Throttled | CircuitOpen | HintBeyondCap => retries,
        Stopped | Cancelled => false,
    }
}
