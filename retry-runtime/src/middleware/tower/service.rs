//! The `Service` impl: one for both request modes, its bounds written once; and its future,
//! [`ResponseFuture`] (public as `tower::future::ResponseFuture`).

use core::future::{poll_fn, Future};
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};

use super::replay::{Attempt, Replay, Saved, Verdicts};
use super::{BoxError, RetryService, Service};
use crate::fleet::Budget;
use crate::hedge::HedgeWith;
use crate::policy::Resend;
use crate::policy::{Classify, ClassifyOk};
use crate::run::timeout::AttemptTimeout;
use crate::Decision;

/// The loop's future, boxed: what a call becomes once its first attempt failed (or at once,
/// with a timeout, a hedge or a `max_elapsed`, which act during the first attempt).
pub type BoxFuture<R> = Pin<Box<dyn Future<Output = Result<R, BoxError>> + Send>>;

/// A call's first attempt, handed to the loop as its first attempt: still to be awaited, or
/// already answered (and not accepted).
pub enum FirstAttempt<F, R> {
    /// Sent to the inner service: its future.
    Sent(F),
    /// Answered, and not accepted: the loop classifies it as its first outcome.
    Answered(Result<R, BoxError>),
}

/// How a [`RetryService`] serves a `Req`: its one impl carries every bound (the inner
/// service's, the request mode's, the layer's settings'), so the `Service` impl and the
/// [`ResponseFuture`] ask only `Serve<Req>`.
pub trait Serve<Req>: Sized {
    /// The inner service's response.
    type Response;
    /// The inner service's error.
    type Error: Into<BoxError>;
    /// The inner service's future: a call's first attempt.
    type Attempt: Future<Output = Result<Self::Response, Self::Error>>;
    /// What the request mode keeps of a request for the next attempts: what the
    /// classifiers share, and what the attempts own.
    type Saved;

    /// The inner service's `poll_ready`.
    fn poll_inner(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>>;

    /// A call: its first attempt sent to the service made ready, and the loop started at once
    /// when it acts during the first attempt (a timeout, a hedge, a `max_elapsed`).
    fn start(&mut self, req: Req) -> ResponseFuture<Self, Req>;

    /// Whether a first attempt's response is the call's answer: `on_ok` accepts it (and the
    /// loop's bookkeeping of a first success is done). Asked of the response in place, so
    /// that an accepted one is moved once, into the call's output.
    fn accepts_first(&self, response: &Self::Response) -> bool;

    /// The loop, its first attempt `first`; the next ones sent to clones of the service, each
    /// with the request the mode replays from `kept` (`None`: the request is sent once).
    fn looping(
        self,
        kept: Option<Self::Saved>,
        first: FirstAttempt<Self::Attempt, Self::Response>,
    ) -> BoxFuture<Self::Response>;
}

impl<S, Req, On, OnOk, B, L, D, M> Serve<Req> for RetryService<S, On, OnOk, B, L, D, M>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send,
    S::Response: Send,
    M: Replay<Req>,
    Req: Send + 'static,
    On: Classify<BoxError> + Clone + Send + Sync + 'static,
    OnOk: ClassifyOk<S::Response> + Clone + Send + Sync + 'static,
    B: Budget + Clone + Send + Sync + 'static,
    L: AttemptTimeout<BoxError> + Clone + Send + Sync + 'static,
    D: HedgeWith + Clone + Send + Sync + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Attempt = S::Future;
    type Saved = Saved<M, Req>;

    fn poll_inner(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn start(&mut self, mut req: Req) -> ResponseFuture<Self, Req> {
        let retry = &self.layer.retry;
        let kept = self.layer.only.mode.keep(
            &mut req,
            usize::try_from(self.layer.only.limit).unwrap_or(usize::MAX),
            self.layer.writes,
            || retry.hop_limits::<BoxError>().left(),
        );
        // The first attempt goes to the service made ready; the others to clones of it.
        let first = self.inner.call(req);
        // The clone is made in place, inside the future: a first-attempt success copies no
        // more than it must. (The layer's settings are copied, not shared behind an `Arc`: its
        // count would be one shared cache line written by every request on every core.)
        if self.layer.retry.first_attempt_alone::<BoxError>() {
            ResponseFuture::first(first, self.clone(), kept)
        } else {
            ResponseFuture::looping(self.clone().looping(kept, FirstAttempt::Sent(first)))
        }
    }

    #[inline]
    fn accepts_first(&self, response: &S::Response) -> bool {
        let accepted = self.layer.on_ok.classify_ok(response) == Decision::Stop;
        if accepted {
            self.layer.retry.first_succeeded::<S::Response, BoxError>();
        }
        accepted
    }

    // Out of line: the loop's future is built once per call that needs it, and kept out of
    // `call`'s frame (a first success's path).
    #[inline(never)]
    fn looping(
        self,
        kept: Option<Saved<M, Req>>,
        first: FirstAttempt<S::Future, S::Response>,
    ) -> BoxFuture<S::Response> {
        let RetryService {
            inner: template,
            layer,
        } = self;
        Box::pin(async move {
            let limits = layer.retry.hop_limits::<BoxError>();
            let resend = kept
                .as_ref()
                .map_or(Resend::Any, |kept| M::resend(kept, layer.writes));
            // A hedge is a second send: only of a request that may be sent again.
            let retry = match kept {
                Some(_) => layer.retry.hedge_if(resend == Resend::Any),
                None => layer.retry.once().hedge_if(false),
            };
            let (shared, owned) = match kept {
                Some((shared, owned)) => (Some(shared), Some(owned)),
                None => (None, None),
            };
            let shared = shared.as_ref();
            // A request that cannot be sent again (an HTTP body over the limit, or answered
            // before it was sent whole) ends the call on that attempt's outcome. Each attempt
            // judges its own request as it ends; for one cut by its timeout, which judged
            // nothing, what the call kept says.
            let verdicts = &Verdicts::default();
            let again = move || {
                verdicts
                    .take()
                    .unwrap_or_else(|| shared.is_some_and(M::replayable))
            };
            let (on, on_ok) = (&layer.on, &layer.on_ok);
            let retry = retry
                .on(move |e: &BoxError| {
                    if again() {
                        on.classify_for(e, resend)
                    } else {
                        Decision::Stop
                    }
                })
                .on_ok(move |r: &S::Response| {
                    if again() {
                        on_ok.classify_ok_for(r, resend)
                    } else {
                        Decision::Stop
                    }
                });
            let (mut first, mut sent) = (Some(first), 0);
            retry
                .call_async(move || {
                    sent += 1;
                    // Nothing borrowed from the call is held across an await but what is
                    // `Sync` by the bounds: the service is cloned here, the request made from
                    // what the attempts own, and the mode's future borrows only what is shared.
                    let first = first.take();
                    let next = first.is_none().then(|| {
                        let (shared, owned) = shared
                            .zip(owned.clone())
                            .expect("a request sent once is not retried");
                        let mode = layer.only.mode.clone();
                        (template.clone(), M::clone_attempt(shared, owned), mode)
                    });
                    let attempt_number = sent;
                    let attempt = async move {
                        let (attempt, outcome) = match (first, next) {
                            (Some(FirstAttempt::Sent(first)), _) => {
                                let attempt = Attempt::<M, Req>::new(shared, 0);
                                (attempt, first.await.map_err(Into::into))
                            }
                            (Some(FirstAttempt::Answered(outcome)), _) => {
                                (Attempt::new(shared, 0), outcome)
                            }
                            (None, Some((mut svc, req, mode))) => {
                                let (mut req, body) = req.await;
                                let attempt = Attempt::new(shared, body);
                                mode.stamp(&mut req, attempt_number, || limits.left());
                                let outcome = async {
                                    poll_fn(|cx| svc.poll_ready(cx)).await.map_err(Into::into)?;
                                    svc.call(req).await.map_err(Into::into)
                                };
                                (attempt, outcome.await)
                            }
                            (None, None) => unreachable!("each attempt has its service"),
                        };
                        attempt.judged(outcome, verdicts).await
                    };
                    crate::middleware::attempt(attempt, sent - 1)
                })
                .await
        })
    }
}

impl<S, Req, On, OnOk, B, L, D, M> Service<Req> for RetryService<S, On, OnOk, B, L, D, M>
where
    Self: Serve<Req>,
{
    type Response = <Self as Serve<Req>>::Response;
    type Error = BoxError;
    type Future = ResponseFuture<Self, Req>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.poll_inner(cx)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        self.start(req)
    }
}

/// The future of a [`RetryService`](super::RetryService) serving a `Req`: a
/// [`RetryFuture`] with the parts of `T`'s call spelled out.
pub type ResponseFuture<T, Req> = RetryFuture<
    T,
    Req,
    <T as Serve<Req>>::Attempt,
    <T as Serve<Req>>::Response,
    <T as Serve<Req>>::Saved,
>;

pin_project_lite::pin_project! {
    /// The future of a [`RetryService`](super::RetryService), named [`ResponseFuture`]: the
    /// first attempt's future `F` itself, polled in place (a first-attempt success boxes no
    /// retry loop; a replayed HTTP body is still recorded as it is sent), and the boxed loop
    /// only once it failed.
    ///
    /// Its parameters are its fields' types, so that the struct itself asks nothing of
    /// them: a request the service cannot retry is reported once, as what the service lacks,
    /// not again as a bound of this future.
    pub struct RetryFuture<T, Req, F, R, K> {
        #[pin]
        state: State<F, R>,
        // The service (a clone, with its layer) and what the request mode kept: what the loop
        // needs if the first attempt is not the answer. Two fields, so that what was kept is
        // moved once, into its place in the future.
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
    kept: &mut Option<T::Saved>,
    outcome: Result<T::Response, T::Error>,
) {
    let (service, kept) = (service.take().expect("taken only here"), kept.take());
    let future = service.looping(kept, FirstAttempt::Answered(outcome.map_err(Into::into)));
    state.set(State::Looping { future });
}
