//! The waits of the async loops: a boxed timer (none for a zero wait), and the same raced
//! against the call's cancel token.

use core::future::Future;
use core::time::Duration;

use crate::policy::{CancelToken, Cancelled};

/// The timer of an async loop for one wait, boxed: the retried future then holds a pointer,
/// not a timer, and a first-call success (which never sleeps) allocates nothing. A zero wait
/// is no timer at all (and no allocation).
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

/// [`sleep_boxed`], ended at once should `cancel` (the call's token, if any) be cancelled:
/// without a token it is that wait alone.
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
    CancelWait {
        wait: sleep_boxed(delay, sleep),
        cancel: cancel.map(CancelToken::cancelled),
    }
}

/// One wait of an async retry loop with a cancel token: ready when the timer is, or when the
/// token is cancelled, whichever comes first.
pub struct CancelWait<'a, F> {
    wait: Wait<F>,
    cancel: Option<Cancelled<'a>>,
}

impl<F: Future<Output = ()>> Future for CancelWait<'_, F> {
    type Output = ();

    #[inline]
    fn poll(
        self: core::pin::Pin<&mut Self>,
        cx: &mut core::task::Context<'_>,
    ) -> core::task::Poll<()> {
        let this = self.get_mut();
        if let Some(cancel) = &mut this.cancel {
            if core::pin::Pin::new(cancel).poll(cx).is_ready() {
                return core::task::Poll::Ready(());
            }
        }
        core::pin::Pin::new(&mut this.wait).poll(cx)
    }
}

/// An attempt of an async loop with a cancel token, after a failure (`last`, the outcome
/// before it): dropped should the token be cancelled before it ends, and `Err(last)` handed
/// back for the call to end with. The first attempt (no `last`), or a call without a token,
/// runs to its end: `Ok` with its outcome. Polled first, an attempt that ends as the token is
/// cancelled stands.
pub async fn attempt_or_cancel<F, R>(
    attempt: F,
    last: Option<R>,
    cancel: Option<&CancelToken>,
) -> Result<F::Output, R>
where
    F: Future,
{
    let (Some(last), Some(token)) = (last, cancel) else {
        return Ok(attempt.await);
    };
    let mut attempt = core::pin::pin!(attempt);
    let mut cancelled = core::pin::pin!(token.cancelled());
    let ended = core::future::poll_fn(|cx| {
        if let core::task::Poll::Ready(outcome) = attempt.as_mut().poll(cx) {
            return core::task::Poll::Ready(Some(outcome));
        }
        cancelled.as_mut().poll(cx).map(|()| None)
    })
    .await;
    ended.ok_or(last)
}
