//! The futures of the layers' services.
//!
//! - A [`RetryService`](super::RetryService)'s [`RetryFuture`].
//! - A [`ChainLayer`](super::ChainLayer)'s future.
//! - The scopes [`in_chain`](super::in_chain) and [`out_of_chain`](super::out_of_chain) put a
//!   future in.
//!
//! A user meets them in types, as tower's own `tower::retry::future::ResponseFuture`.
//!
//! Beside `ResponseFuture` is `Serve`, what it asks of the service.
//!
//! `Serve` is hidden, not a trait to implement; its one impl is in service.rs.
//!
//! The trait's `start` returns the future, and the future names the trait: the two live in one
//! file.

use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};

pub use super::chain::{ChainFuture, InChain, OutOfChain};
use super::BoxError;

/// The loop's future, boxed: what a call becomes once its first attempt failed.
///
/// Or at once, with a timeout, a hedge or a `max_elapsed`, which act during the first attempt.
#[doc(hidden)]
pub type BoxFuture<R> = Pin<Box<dyn Future<Output = Result<R, BoxError>> + Send>>;

/// A call's first attempt, handed to the loop as its first attempt.
///
/// Still to be awaited, or already answered (and not accepted).
#[doc(hidden)]
pub enum FirstAttempt<F, R> {
    /// Sent to the inner service: its future.
    Sent(F),
    /// Answered, and not accepted: the loop classifies it as its first outcome.
    Answered(Result<R, BoxError>),
}

/// How a [`RetryService`](super::RetryService) serves a `Req`.
///
/// Its one impl carries every bound: the inner service's, the request mode's, the layer's
/// settings'.
///
/// So the `Service` impl and the [`ResponseFuture`] ask only `Serve<Req>`.
#[doc(hidden)]
pub trait Serve<Req>: Sized {
    /// The inner service's response.
    type Response;
    /// The inner service's error.
    type Error: Into<BoxError>;
    /// The inner service's future: a call's first attempt.
    type Attempt: Future<Output = Result<Self::Response, Self::Error>>;
    /// What the request mode keeps of a request for the next attempts.
    ///
    /// What the classifiers share, and what the attempts own.
    type Saved;

    /// The inner service's `poll_ready`.
    fn poll_inner(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>>;

    /// A call: its first attempt sent to the service made ready.
    ///
    /// The loop starts at once when it acts during the first attempt: a timeout, a hedge, a
    /// `max_elapsed`.
    fn start(&mut self, req: Req) -> ResponseFuture<Self, Req>;

    /// [`start`](Serve::start) for a service made for this one call (the gRPC layer's).
    ///
    /// It moves into the call's future, where `start` copies itself.
    fn start_owned(self, req: Req) -> ResponseFuture<Self, Req>;

    /// Whether a first attempt's response is the call's answer: `on_ok` accepts it.
    ///
    /// The loop's bookkeeping of a first success is then done.
    ///
    /// Asked of the response in place: an accepted one is moved once, into the call's output.
    fn accepts_first(&self, response: &Self::Response) -> bool;

    /// The loop, its first attempt `first`; the next ones sent to clones of the service.
    ///
    /// Each is sent with the request the mode replays from `kept` (`None`: the request is sent
    /// once).
    fn looping(
        self,
        kept: Option<Self::Saved>,
        first: FirstAttempt<Self::Attempt, Self::Response>,
    ) -> BoxFuture<Self::Response>;
}

/// The future of a [`RetryService`](super::RetryService) serving a `Req`: a
/// [`RetryFuture`] with the parts of `T`'s call spelled out.
#[doc(hidden)]
pub type ResponseFuture<T, Req> = RetryFuture<
    T,
    Req,
    <T as Serve<Req>>::Attempt,
    <T as Serve<Req>>::Response,
    <T as Serve<Req>>::Saved,
>;

pin_project_lite::pin_project! {
    /// The future of a [`RetryService`](super::RetryService), named `ResponseFuture`.
    ///
    /// The first attempt's future `F` itself is polled in place.
    ///
    /// A first-attempt success boxes no retry loop; a replayed HTTP body is still recorded as
    /// it is sent.
    ///
    /// The boxed loop comes only once the first attempt failed.
    ///
    /// Its parameters are its fields' types, so the struct itself asks nothing of them.
    ///
    /// A request the service cannot retry is reported once, as what the service lacks, not
    /// again as a bound of this future.
    pub struct RetryFuture<T, Req, F, R, K> {
        #[pin]
        state: State<F, R>,
        // The service (a clone, with its layer) and what the request mode kept.
        //
        // The loop needs them if the first attempt is not the answer.
        //
        // Two fields, so what was kept is moved once, into its place in the future.
        service: Option<T>,
        kept: Option<K>,
        request: PhantomData<fn(Req)>,
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
    pub(super) fn first(future: T::Attempt, service: T, kept: Option<T::Saved>) -> Self {
        RetryFuture {
            state: State::First { future },
            service: Some(service),
            kept,
            request: PhantomData,
        }
    }

    /// The loop, from the first attempt on.
    pub(super) fn looping(future: BoxFuture<T::Response>) -> Self {
        RetryFuture {
            state: State::Looping { future },
            service: None,
            kept: None,
            request: PhantomData,
        }
    }
}

impl<T, Req, F, R, K> Future for RetryFuture<T, Req, F, R, K>
where
    T: Serve<Req, Attempt = F, Response = R, Saved = K>,
    F: Future<Output = Result<R, T::Error>>,
{
    type Output = Result<R, BoxError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if let StateProj::First { future } = this.state.as_mut().project() {
            let outcome = match future.poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(outcome) => outcome,
            };
            // Asked in place: an accepted response is moved once, into the output.
            //
            // What was kept is dropped with the future, where it is.
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
///
/// Out of the poll's way: a first success neither runs nor carries this.
#[cold]
#[inline(never)]
fn to_loop<T: Serve<Req>, Req>(
    mut state: Pin<&mut State<T::Attempt, T::Response>>,
    service: &mut Option<T>,
    kept: &mut Option<T::Saved>,
    outcome: Result<T::Response, T::Error>,
) {
    let (service, kept) = (service.take().expect("taken only here"), kept.take());
    let future = service.looping(kept, FirstAttempt::Answered(outcome.map_err(Into::into)));
    state.set(State::Looping { future });
}
