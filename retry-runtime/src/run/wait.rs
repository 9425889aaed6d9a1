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
