//! The waits of the async loops: a boxed timer (none for a zero wait).
//!
//! And the same, raced against the call's cancel token.

use core::future::Future;
use core::time::Duration;

use crate::policy::{CancelToken, Cancelled};

/// The timer of an async loop for one wait, boxed.
///
/// The retried future then holds a pointer, not a timer.
///
/// A first-call success, which never sleeps, allocates nothing.
///
/// A zero wait is no timer at all, and no allocation.
#[inline]
pub fn sleep_boxed<F, S>(delay: Duration, sleep: S) -> Wait<F>
where
    F: Future<Output = ()>,
    S: FnOnce(Duration) -> F,
{
    Wait((!delay.is_zero()).then(|| Box::pin(sleep(delay))))
}

/// One wait of an async retry loop: a boxed timer, or none for a zero wait.
pub struct Wait<F>(Option<core::pin::Pin<Box<F>>>);

impl<F: Future<Output = ()>> Future for Wait<F> {
    type Output = ();

    #[inline]
    fn poll(
        self: core::pin::Pin<&mut Self>,
        cx: &mut core::task::Context<'_>,
    ) -> core::task::Poll<()> {
        match &mut self.get_mut().0 {
            Some(timer) => timer.as_mut().poll(cx),
            None => core::task::Poll::Ready(()),
        }
    }
}

/// [`sleep_boxed`], ended at once should `cancel` (the call's token, if any) be cancelled.
///
/// Without a token it is that wait alone.
#[inline]
pub fn sleep_or_cancel<F, S>(
    delay: Duration,
    sleep: S,
    cancel: Option<&CancelToken>,
) -> CancelWait<'_, F>
where
    F: Future<Output = ()>,
    S: FnOnce(Duration) -> F,
{
    OrCancel {
        future: sleep_boxed(delay, sleep),
        cancel: cancel.map(CancelToken::cancelled),
    }
}

/// One wait of an async retry loop with a cancel token.
///
/// Over when the timer is, or when the token is cancelled (`None`), whichever comes first.
pub type CancelWait<'a, F> = OrCancel<'a, Wait<F>>;

/// `future`, raced against the call's cancel token, if any.
///
/// `Some` with its output, or `None` once the token is cancelled first.
///
/// Polled first: a future that ends as the token is cancelled stands.
pub struct OrCancel<'a, F> {
    future: F,
    cancel: Option<Cancelled<'a>>,
}

impl<F: Future + Unpin> Future for OrCancel<'_, F> {
    type Output = Option<F::Output>;

    #[inline]
    fn poll(
        self: core::pin::Pin<&mut Self>,
        cx: &mut core::task::Context<'_>,
    ) -> core::task::Poll<Self::Output> {
        let this = self.get_mut();
        if let core::task::Poll::Ready(output) = core::pin::Pin::new(&mut this.future).poll(cx) {
            return core::task::Poll::Ready(Some(output));
        }
        match &mut this.cancel {
            Some(cancel) => core::pin::Pin::new(cancel).poll(cx).map(|()| None),
            None => core::task::Poll::Pending,
        }
    }
}

/// An attempt of an async loop after a failure (`last`, the outcome before it), raced against
/// the call's `token`.
///
/// Should the token be cancelled before it ends, it is dropped, and `Err(last)` handed back for
/// the call to end with.
///
/// Else `Ok` with its outcome.
pub async fn attempt_or_cancel<F: Future, R>(
    attempt: F,
    last: R,
    token: &CancelToken,
) -> Result<F::Output, R> {
    let raced = OrCancel {
        future: core::pin::pin!(attempt),
        cancel: Some(token.cancelled()),
    };
    raced.await.ok_or(last)
}
