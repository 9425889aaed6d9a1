//! The `Service` impl: one for both request modes.
//!
//! Its bounds are written once, in the one impl of [`Serve`], which the `Service` impl and the
//! [`ResponseFuture`] ask.

use core::future::poll_fn;
use core::task::{Context, Poll};

use super::future::{BoxFuture, FirstAttempt, ResponseFuture, Serve};
use super::replay::{Attempt, Replay, Saved, Verdicts};
use super::{BoxError, RetryService, Service};
use crate::hedge::HedgeWith;
use crate::middleware::builder::Settings;
use crate::middleware::failure::{poll, Failure, GiveUpFailed, NotifyFailed};
use crate::middleware::ByHost;
use crate::middleware::{NotSent, NOT_REPLAYABLE};
use crate::policy::Resend;
use crate::policy::Transparently;
use crate::policy::{Classify, ClassifyOk, Transparent};
use crate::retry::StatsOf;
use crate::retry::{PutsStats, Unguarded};
use crate::run::awaiting::AwaitedHooks;
use crate::run::guard::Guard;
use crate::run::timeout::AttemptTimeout;
use crate::Decision;

/// A failed attempt of the layer, to its loop.
///
/// The inner service's error, boxed, or a response retried for its status.
type Lost<Resp> = Failure<BoxError, Resp>;

/// A call's start, for [`Serve::start`] and [`Serve::start_owned`]: its request kept, its
/// first attempt sent to the service made ready, then the future, holding the service
/// `$held` makes for the request's host.
macro_rules! start {
    ($service:ident, $req:ident, |$host:ident| $held:expr) => {{
        let retry = &$service.layer.retry;
        let $host = retry.host(|| M::authority(&$req));
        let kept = $service.layer.only.mode.keep(
            &mut $req,
            usize::try_from($service.layer.only.limit).unwrap_or(usize::MAX),
            $service.layer.writes,
            || retry.hop_limits::<Lost<S::Response>>().left(),
        );
        // The first attempt goes to the service made ready; the others to clones of it.
        let first = $service.inner.call($req);
        if $service
            .layer
            .retry
            .first_attempt_alone::<Lost<S::Response>>()
        {
            ResponseFuture::first(first, $held, kept)
        } else {
            ResponseFuture::looping($held.looping(kept, FirstAttempt::Sent(first)))
        }
    }};
}

impl<S, Req, C, O, N, G, B, L, D, Gd, M> Serve<Req>
    for RetryService<S, C, O, Settings<B, L, D, Gd, N, G>, M>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send,
    S::Response: Send,
    M: Replay<Req>,
    Req: Send + 'static,
    C: Classify<BoxError> + Clone + Send + Sync + 'static,
    O: ClassifyOk<S::Response> + Clone + Send + Sync + 'static,
    N: NotifyFailed<BoxError> + Clone + Send + Sync + 'static,
    G: GiveUpFailed<BoxError> + Clone + Send + Sync + 'static,
    B: ByHost + Clone + Send + Sync + 'static,
    L: AttemptTimeout<Lost<S::Response>> + Clone + Send + Sync + 'static,
    D: HedgeWith + Clone + Send + Sync + 'static,
    Gd: Guard<Result<S::Response, Lost<S::Response>>>
        + StatsOf
        + Unguarded
        + PutsStats<S::Response>
        + Clone
        + Send
        + Sync
        + 'static,
    Gd::Hook: Sync,
    Gd::Awaited: AwaitedHooks<Lost<S::Response>> + Sync,
{
    type Response = S::Response;
    type Error = S::Error;
    type Attempt = S::Future;
    type Saved = Saved<M, Req>;

    fn poll_inner(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    #[inline]
    fn start(&mut self, mut req: Req) -> ResponseFuture<Self, Req> {
        // The clone is made in place, inside the future: a first-attempt success copies no
        // more than it must.
        //
        // The layer's settings are copied, not shared behind an `Arc`.
        //
        // An `Arc`'s count would be one shared cache line written by every request on every
        // core.
        //
        // The default budget's table is the exception: its `Arc` is counted once per call.
        start!(self, req, |host| self.for_call(host))
    }

    #[inline]
    fn start_owned(mut self, mut req: Req) -> ResponseFuture<Self, Req> {
        start!(self, req, |host| {
            self.layer.only.host = host;
            self
        })
    }

    #[inline]
    fn accepts_first(&self, response: &S::Response) -> bool {
        let on_ok = &self.layer.on_ok;
        let accepted = on_ok.classify_ok(response) == Decision::Stop
            && !(on_ok.stop_is_failure() && on_ok.failure_status(response).is_some());
        if accepted {
            self.layer
                .retry
                .first_succeeded::<S::Response, Lost<S::Response>>(self.layer.only.host);
        }
        accepted
    }

    // Out of line: the loop's future is built once per call that needs it.
    //
    // It is kept out of `call`'s frame, a first success's path.
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
            let limits = layer.retry.hop_limits::<Lost<S::Response>>();
            let resend = kept
                .as_ref()
                .map_or(Resend::Any, |kept| M::resend(kept, layer.writes));
            let once = kept.is_none();
            let (shared, owned) = match kept {
                Some((shared, owned)) => (Some(shared), Some(owned)),
                None => (None, None),
            };
            let shared = shared.as_ref();
            // A request that cannot be sent again ends the call on that attempt's outcome.
            //
            // That is an HTTP body over the limit, or one answered before it was sent whole.
            //
            // Each attempt judges its own request as it ends.
            //
            // For one cut by its timeout, which judged nothing, what the call kept says.
            let verdicts = &Verdicts::default();
            let replayable = move |verdict: Option<bool>| {
                verdict.unwrap_or_else(|| shared.is_some_and(M::replayable))
            };
            let again = move || replayable(verdicts.take());
            let (on, on_ok) = (&layer.on, &layer.on_ok);
            // What the "not sent again" event says of the request: its head, where kept.
            #[cfg(feature = "tracing")]
            let target = owned.as_ref().and_then(M::target);
            #[cfg(feature = "tracing")]
            let described = target
                .as_ref()
                .map(|(method, uri)| crate::middleware::describe::Described::uri(method, uri));
            #[cfg(feature = "tracing")]
            let shown = described
                .as_ref()
                .map(|d| d as &(dyn core::fmt::Display + Sync));
            #[cfg(not(feature = "tracing"))]
            let shown = None;
            let not_sent = NotSent::new(layer.level(), layer.retry.name(), shown);
            let not_sent = &not_sent;
            // A response retried for its status is a failure of the loop.
            //
            // It is classified as the attempt ends (`sort`), its decision kept in it.
            let retry = layer.retry.for_call(
                Transparently(
                    move |failure: &Lost<S::Response>| match failure {
                        _ if !again() => {
                            let retried = match failure {
                                Failure::Error(e) => on.classify(e) != Decision::Stop,
                                Failure::Status { decision, .. } => *decision != Decision::Stop,
                            };
                            if retried {
                                not_sent.say(NOT_REPLAYABLE);
                            }
                            Decision::Stop
                        }
                        Failure::Error(e) => {
                            not_sent.checked(on.classify_for(e, resend), resend, || on.classify(e))
                        }
                        Failure::Status { decision, .. } => *decision,
                    },
                    move |failure: &Lost<S::Response>| match failure {
                        // Sent again only if it can be: its verdict taken then.
                        //
                        // Otherwise `classify` is asked, and takes it.
                        Failure::Error(e) => match on.transparent(e) {
                            Transparent::No => Transparent::No,
                            kind if replayable(verdicts.peek()) => {
                                verdicts.take();
                                kind
                            }
                            _ => Transparent::No,
                        },
                        _ => Transparent::No,
                    },
                ),
                move |r: &S::Response| {
                    if again() {
                        poll(on_ok, r, resend)
                    } else {
                        Decision::Stop
                    }
                },
                crate::middleware::call_trace::<S::Response, BoxError>(layer.level()),
                layer.only.host,
                once,
                resend == Resend::Any,
            );
            let (mut first, mut sent) = (Some(first), 0);
            // `n`: the loop's number for the attempt, which one sent again transparently keeps
            // (its request is stamped as the one it repeats).
            let op = move |n: u32| {
                sent += 1;
                // Nothing borrowed from the call is held across an await but what is `Sync` by
                // the bounds.
                //
                // The service is cloned here, and the request made from what the attempts own.
                //
                // The mode's future borrows only what is shared.
                let first = first.take();
                let next = first.is_none().then(|| {
                    let (shared, owned) = shared
                        .zip(owned.clone())
                        .expect("a request sent once is not retried");
                    let mode = layer.only.mode.clone();
                    (template.clone(), M::clone_attempt(shared, owned), mode)
                });
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
                            mode.stamp(&mut req, n, || limits.left());
                            let outcome = async {
                                poll_fn(|cx| svc.poll_ready(cx)).await.map_err(Into::into)?;
                                svc.call(req).await.map_err(Into::into)
                            };
                            (attempt, outcome.await)
                        }
                        (None, None) => unreachable!("each attempt has its service"),
                    };
                    let outcome = attempt.judged(outcome, verdicts).await;
                    // Sorted only where it may be sent again.
                    //
                    // Else the response is the answer: `again` says so in the loop's classifiers.
                    Failure::sort(outcome, on_ok, resend, not_sent)
                };
                crate::middleware::attempt(attempt, sent - 1)
            };
            // The figures are kept only where they go in the response.
            if Gd::PUTS {
                let (outcome, stats) = retry.call_async_numbered_with_stats(op).await;
                Failure::answer_with::<Gd>(outcome, stats)
            } else {
                Failure::answer(retry.call_async_with_attempt(op).await)
            }
        })
    }
}

impl<S: Clone, C: Clone, O: Clone, R: Clone, M: Clone> RetryService<S, C, O, R, M> {
    /// The copy of the service a call keeps, with the budget its request's host has.
    ///
    /// The loop uses it if its first attempt is not the answer.
    #[inline]
    fn for_call(&self, host: u8) -> Self {
        let mut copy = self.clone();
        copy.layer.only.host = host;
        copy
    }
}

impl<S, Req, C, O, R, M> Service<Req> for RetryService<S, C, O, R, M>
where
    Self: Serve<Req>,
{
    type Response = <Self as Serve<Req>>::Response;
    type Error = BoxError;
    type Future = ResponseFuture<Self, Req>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.poll_inner(cx)
    }

    #[inline]
    fn call(&mut self, req: Req) -> Self::Future {
        self.start(req)
    }
}
