//! The `Service` impl: one for both request modes, its bounds written once (in the one impl of
//! [`Serve`], which the `Service` impl and the [`ResponseFuture`] ask).

use core::future::poll_fn;
use core::task::{Context, Poll};

use super::future::{BoxFuture, FirstAttempt, ResponseFuture, Serve};
use super::replay::{Attempt, Replay, Saved, Verdicts};
use super::{BoxError, RetryService, Service};
use crate::fleet::Budget;
use crate::hedge::HedgeWith;
use crate::policy::Resend;
use crate::policy::{Classify, ClassifyOk};
use crate::run::timeout::AttemptTimeout;
use crate::Decision;

impl<S, Req, C, O, B, L, D, M> Serve<Req> for RetryService<S, C, O, B, L, D, M>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send,
    S::Response: Send,
    M: Replay<Req>,
    Req: Send + 'static,
    C: Classify<BoxError> + Clone + Send + Sync + 'static,
    O: ClassifyOk<S::Response> + Clone + Send + Sync + 'static,
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

impl<S, Req, C, O, B, L, D, M> Service<Req> for RetryService<S, C, O, B, L, D, M>
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
