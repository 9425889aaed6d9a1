//! The futures of the layers' services: a [`RetryService`](super::RetryService)'s
//! [`ResponseFuture`], a [`ChainService`](super::ChainService)'s [`ChainFuture`], and the
//! scopes [`in_chain`](super::in_chain) and [`out_of_chain`](super::out_of_chain) put a future
//! in. A user meets them in types, as tower's own `tower::retry::future::ResponseFuture`.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

pub use super::chain::{ChainFuture, InChain, OutOfChain};
use super::service::{BoxFuture, FirstAttempt, Serve};
use super::BoxError;

pin_project_lite::pin_project! {
    /// The future of a [`RetryService`](super::RetryService): the first attempt's future
    /// itself, polled in place (a first-attempt success boxes no retry loop; a replayed HTTP
    /// body is still recorded as it is sent), and the boxed loop only once it failed.
    pub struct ResponseFuture<T: Serve<Req>, Req> {
        #[pin]
        state: State<T::Attempt, T::Response>,
        // The service (a clone, with its layer) and what the request mode kept: what the loop
        // needs if the first attempt is not the answer. Two fields, so that what was kept is
        // moved once, into its place in the future.
        service: Option<T>,
        kept: Option<T::Kept>,
    }
}

pin_project_lite::pin_project! {
    #[project = StateProj]
    enum State<F, R> {
        First { #[pin] future: F },
        Looping { future: BoxFuture<R> },
    }
}

impl<T: Serve<Req>, Req> ResponseFuture<T, Req> {
    /// The first attempt alone, `service` and `kept` held for the loop.
    pub(super) fn first(future: T::Attempt, service: T, kept: Option<T::Kept>) -> Self {
        ResponseFuture {
            state: State::First { future },
            service: Some(service),
            kept,
        }
    }

    /// The loop, from the first attempt on.
    pub(super) fn looping(future: BoxFuture<T::Response>) -> Self {
        ResponseFuture {
            state: State::Looping { future },
            service: None,
            kept: None,
        }
    }
}

impl<T: Serve<Req>, Req> Future for ResponseFuture<T, Req> {
    type Output = Result<T::Response, BoxError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if let StateProj::First { future } = this.state.as_mut().project() {
            let outcome = match future.poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(outcome) => outcome,
            };
            // Asked in place: an accepted response is moved once, into the output, and what
            // was kept is dropped with the future, where it is.
            let service = this.service.as_ref().expect("kept until the loop takes it");
            if matches!(&outcome, Ok(response) if service.accepts_first(response)) {
                return Poll::Ready(outcome.map_err(Into::into));
            }
            to_loop::<T, Req>(this.state.as_mut(), this.service, this.kept, outcome);
        }
        match this.state.project() {
            StateProj::Looping { future } => future.as_mut().poll(cx),
            StateProj::First { .. } => unreachable!("the first attempt's state is left above"),
        }
    }
}

/// A first attempt that is not the answer: the loop takes over, that outcome its first.
/// Out of the poll's way: a first success neither runs nor carries this.
#[cold]
#[inline(never)]
fn to_loop<T: Serve<Req>, Req>(
    mut state: Pin<&mut State<T::Attempt, T::Response>>,
    service: &mut Option<T>,
    kept: &mut Option<T::Kept>,
    outcome: Result<T::Response, T::Error>,
) {
    let (service, kept) = (service.take().expect("taken only here"), kept.take());
    let future = service.looping(kept, FirstAttempt::Answered(outcome.map_err(Into::into)));
    state.set(State::Looping { future });
}
