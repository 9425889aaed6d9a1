//! Stopping a call's retries from outside it: [`CancelToken`].
//!
//! The token's state is made at its first use (a clone, a cancel, a wait), not by `new`.
//!
//! So `new` is a `const fn` and a token can be a `static`, while its clones share one state.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

/// Stops the retries of the calls given it (`#[retry(cancel = &TOKEN)]`,
/// [`Retry::cancel`](crate::Retry::cancel)).
///
/// Once [`cancel`](CancelToken::cancel) is called, a wait between attempts ends at once, a
/// blocking one too.
///
/// No further attempt starts.
///
/// The call returns its last error, reported as
/// [`GiveUpReason::Cancelled`](crate::GiveUpReason::Cancelled).
///
/// In an `async fn` (and [`call_async`](crate::Retry::call_async)), an attempt running after a
/// failure is dropped at once; the call returns the error before it.
///
/// A call's first attempt always runs to its end: there would be no error to return otherwise.
///
/// So does a sync attempt (a thread cannot be interrupted), and a hedged call's.
///
/// To abandon an `async` call during its first attempt, drop its future: for example in a
/// `tokio::select!` against [`cancelled`](CancelToken::cancelled).
///
/// `new` is a `const fn`, so a token can be a `static`.
///
/// A clone is cheap (a reference count) and shares the token's state: cancelling either
/// cancels both.
///
/// Cancelling is for good: a token cannot be reset.
///
/// ```
/// use retry_jitter::{CancelToken, Policy, Retry};
/// use std::time::Duration;
///
/// static SHUTDOWN: CancelToken = CancelToken::new();
///
/// let stop = SHUTDOWN.clone(); // shares SHUTDOWN's state
/// let worker = std::thread::spawn(|| {
///     Retry::new(Policy::new().with_base(Duration::from_secs(3600)).with_cap(Duration::from_secs(3600)))
///         .cancel(&SHUTDOWN)
///         .call(|| Err::<(), _>("down"))
/// });
/// std::thread::sleep(Duration::from_millis(20));
/// stop.cancel(); // the worker's wait (up to an hour) ends now
/// assert_eq!(worker.join().unwrap(), Err("down"));
/// assert!(SHUTDOWN.is_cancelled());
/// ```
pub struct CancelToken {
    shared: OnceLock<Arc<Shared>>,
}

/// What a token and its clones share.
#[derive(Default)]
struct Shared {
    cancelled: AtomicBool,
    /// The async waits registered, and a lock for the blocking ones' condition variable.
    waiters: Mutex<Waiters>,
    woken: Condvar,
}

#[derive(Default)]
struct Waiters {
    next: u64,
    wakers: Vec<(u64, Waker)>,
}

fn lock(waiters: &Mutex<Waiters>) -> MutexGuard<'_, Waiters> {
    waiters.lock().unwrap_or_else(PoisonError::into_inner)
}

impl CancelToken {
    /// A token not cancelled. Allocates nothing: its state is made at its first clone, cancel
    /// or wait.
    ///
    /// ```
    /// use retry_jitter::CancelToken;
    /// static STOP: CancelToken = CancelToken::new();
    /// assert!(!STOP.is_cancelled());
    /// ```
    pub const fn new() -> Self {
        CancelToken {
            shared: OnceLock::new(),
        }
    }

    fn shared(&self) -> &Arc<Shared> {
        self.shared.get_or_init(Arc::default)
    }

    /// Cancel: every call given this token or a clone of it stops retrying.
    ///
    /// A wait ends at once, and no attempt starts. Calling it again does nothing.
    ///
    /// ```
    /// use retry_jitter::CancelToken;
    /// let token = CancelToken::new();
    /// let clone = token.clone();
    /// clone.cancel();
    /// assert!(token.is_cancelled());
    /// ```
    pub fn cancel(&self) {
        let shared = self.shared();
        let wakers = {
            // Set under the lock: a blocking wait checks it under the lock before it sleeps.
            //
            // So the notification below cannot fall between its check and its sleep.
            let mut waiters = lock(&shared.waiters);
            if shared.cancelled.swap(true, Ordering::AcqRel) {
                return;
            }
            core::mem::take(&mut waiters.wakers)
        };
        shared.woken.notify_all();
        for (_, waker) in wakers {
            waker.wake();
        }
    }

    /// Whether [`cancel`](CancelToken::cancel) was called on this token or a clone of it. One
    /// atomic load.
    ///
    /// ```
    /// use retry_jitter::CancelToken;
    /// assert!(!CancelToken::new().is_cancelled());
    /// ```
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.shared
            .get()
            .is_some_and(|shared| shared.cancelled.load(Ordering::Acquire))
    }

    /// A future that is ready once the token is cancelled: to drop an `async` call mid-attempt
    /// (`tokio::select!`), or anything else of your own.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use retry_jitter::CancelToken;
    /// let token = CancelToken::new();
    /// let out = tokio::select! {
    ///     _ = token.cancelled() => "cancelled",
    ///     _ = async { token.cancel(); std::future::pending::<()>().await } => "never",
    /// };
    /// assert_eq!(out, "cancelled");
    /// # }
    /// ```
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled {
            token: self,
            id: None,
        }
    }

    /// Block the thread for `delay`, or until the token is cancelled: `true` if it was (at
    /// once, if it already was).
    pub(crate) fn sleep(&self, delay: Duration) -> bool {
        let shared = self.shared();
        let end = Instant::now().checked_add(delay);
        let mut waiters = lock(&shared.waiters);
        loop {
            if shared.cancelled.load(Ordering::Acquire) {
                return true;
            }
            let left = match end {
                Some(end) => end.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(u64::from(u32::MAX)),
            };
            if left.is_zero() {
                return false;
            }
            waiters = shared
                .woken
                .wait_timeout(waiters, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Default for CancelToken {
    fn default() -> Self {
        Self::new()
    }
}

impl Clone for CancelToken {
    /// A token sharing this one's state (made now, if it had none yet).
    fn clone(&self) -> Self {
        CancelToken {
            shared: OnceLock::from(Arc::clone(self.shared())),
        }
    }
}

impl core::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// The future of [`CancelToken::cancelled`]: ready once the token is cancelled.
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct Cancelled<'a> {
    token: &'a CancelToken,
    /// Its waker's place among the token's, once registered.
    id: Option<u64>,
}

impl Future for Cancelled<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if this.token.is_cancelled() {
            return Poll::Ready(());
        }
        let shared = this.token.shared();
        let mut waiters = lock(&shared.waiters);
        if shared.cancelled.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        let waker = cx.waker();
        let id = this.id;
        match waiters.wakers.iter_mut().find(|(i, _)| Some(*i) == id) {
            Some((_, known)) => {
                if !known.will_wake(waker) {
                    known.clone_from(waker);
                }
            }
            None => {
                let id = waiters.next;
                waiters.next += 1;
                waiters.wakers.push((id, waker.clone()));
                this.id = Some(id);
            }
        }
        Poll::Pending
    }
}

impl Drop for Cancelled<'_> {
    fn drop(&mut self) {
        if let (Some(id), Some(shared)) = (self.id, self.token.shared.get()) {
            let mut waiters = lock(&shared.waiters);
            if let Some(i) = waiters.wakers.iter().position(|(i, _)| *i == id) {
                waiters.wakers.swap_remove(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_static_token_and_its_clones_share_one_state() {
        static TOKEN: CancelToken = CancelToken::new();
        let clone = TOKEN.clone();
        assert!(!clone.is_cancelled());
        clone.cancel();
        assert!(TOKEN.is_cancelled());
        assert!(TOKEN.clone().is_cancelled());
    }

    #[test]
    fn a_cancelled_sleep_ends_at_once_and_an_uncancelled_one_sleeps_out() {
        let token = CancelToken::new();
        assert!(!token.sleep(Duration::from_millis(1)));
        token.cancel();
        let started = Instant::now();
        assert!(token.sleep(Duration::from_secs(3600)));
        assert!(started.elapsed() < Duration::from_secs(60));
    }

    #[test]
    fn a_dropped_wait_leaves_no_waker_behind() {
        let token = CancelToken::new();
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut wait = Box::pin(token.cancelled());
        assert!(wait.as_mut().poll(&mut cx).is_pending());
        assert!(wait.as_mut().poll(&mut cx).is_pending());
        assert_eq!(lock(&token.shared().waiters).wakers.len(), 1);
        drop(wait);
        assert!(lock(&token.shared().waiters).wakers.is_empty());
        token.cancel();
        assert!(Box::pin(token.cancelled())
            .as_mut()
            .poll(&mut cx)
            .is_ready());
    }
}
