//! The request modes, and [`Replay`].
//!
//! [`Replay`] is the one hook every mode goes through to send a request again.
//!
//! It is in the spirit of tower's `Policy::clone_request`.

use super::body::{ByBodyType, Cloned, KeepBody, ReplayBody};
use crate::middleware::writes::{self, Writes};
use crate::policy::Resend;
use bytes::Bytes;
use core::future::{ready, Future};
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use crate::middleware::builder::{hops_mut, OwnHops};
use crate::middleware::hops::{self, Hops};
use core::time::Duration;

/// The HTTP request mode: `http::Request<B>`.
///
/// Its body is sent again as `K` keeps it.
///
/// Each attempt carries the headers of the hop
/// ([`deadline_header`](super::RetryLayer::deadline_header),
/// [`attempt_header`](super::RetryLayer::attempt_header)).
///
/// It is read for the method rule and the [`idempotency_key`](super::RetryLayer::idempotency_key).
///
/// `K` is [`ByBodyType`] for [`RetryLayer::new`](super::RetryLayer::new).
///
/// With it, the body type's [`ReplayBody`] says how.
///
/// `K` is [`Cloned`] for [`RetryLayer::clone_bodies`](super::RetryLayer::clone_bodies)
/// (any `Clone` body).
///
/// ```
/// use retry_jitter::tower::{CloneBodies, HttpRequests};
/// let _ = HttpRequests::<retry_jitter::tower::body::ByBodyType>::default();
/// let _ = CloneBodies::default();
/// ```
#[derive(Clone, Debug, Default)]
pub struct HttpRequests<Bodies = ByBodyType> {
    /// The hop's header names, when a setter named one.
    hops: Option<Arc<Hops>>,
    keep: PhantomData<Bodies>,
}

/// The request mode of [`RetryLayer::clone_bodies`](super::RetryLayer::clone_bodies).
///
/// `http::Request<B>` for any `B: Clone + http_body::Body`.
///
/// The body is cloned for each attempt.
///
/// Read like [`RetryLayer::new`](super::RetryLayer::new)'s requests.
///
/// ```
/// use retry_jitter::tower::{CloneBodies, HttpRequests};
/// use retry_jitter::tower::body::Cloned;
/// let _: HttpRequests<Cloned> = CloneBodies::default();
/// ```
#[doc(hidden)]
pub type CloneBodies = HttpRequests<Cloned>;

/// How an [`HttpRequests`] mode keeps a body of type `B`.
///
/// It names the [`KeepBody`] it uses.
///
/// Public in a private module, not a trait to implement.
///
/// [`ByBodyType`] asks the body type; [`Cloned`] clones any `Clone` body.
pub trait BodyMode<B>: Clone + Send + Sync + 'static {
    /// The body's keeper.
    type Kept: KeepBody<B>;
}

impl<B: ReplayBody> BodyMode<B> for ByBodyType {
    type Kept = B::Kept;
}

impl<B: http_body::Body<Data = Bytes> + Clone + Send + 'static> BodyMode<B> for Cloned {
    type Kept = Cloned;
}

impl<K> OwnHops for super::layer::LayerOnly<HttpRequests<K>> {
    fn hops_mut(&mut self) -> &mut Hops {
        hops_mut(&mut self.mode.hops)
    }
}

/// The request mode of [`RetryLayer::clone_requests`](super::RetryLayer::clone_requests).
///
/// It takes any `Req: Clone`, cloned per attempt, not read.
///
/// ```
/// use retry_jitter::tower::CloneRequests;
/// let _ = CloneRequests;
/// ```
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CloneRequests;

/// What a request mode keeps of a call's request.
///
/// One part is shared, the other the attempts own.
pub type Saved<M, Req> = (<M as Replay<Req>>::Shared, <M as Replay<Req>>::Owned);

/// How a request mode sends a call's request again.
///
/// It says what it keeps of the request when the first attempt is sent.
///
/// It makes the next attempt's request from that.
///
/// Every mode goes through it.
///
/// So the `Service` impl and the loop are written once.
///
/// What is kept has two parts.
///
/// - What the attempts and the loop's classifiers read, shared by every attempt, hence `Sync`.
/// - Each attempt is [judged](Replay::judge) by its own request's fate.
/// - What the loop's attempts own, each next request made from it.
/// - That part is only `Send`: a cloned request need not be `Sync`.
#[diagnostic::on_unimplemented(
    message = "`RetryLayer::new` cannot send a `{Req}` again: it retries `http::Request`s",
    label = "a `{Req}` cannot be retried by this layer",
    note = "an `http::Request<B>` is retried when the layer can send its body `B` again: `Full<Bytes>`, `Empty<Bytes>`, `String`, a boxed body (`BodyExt::boxed`, `BodyExt::boxed_unsync`), or any `Clone` body with `RetryLayer::new(policy).clone_bodies()`",
    note = "a request that is not HTTP and is `Clone` is cloned for each attempt: `RetryLayer::new(policy).clone_requests()`"
)]
pub trait Replay<Req>: Clone + Send + Sync + 'static {
    /// What the classifiers and attempts share of a kept request.
    type Shared: Send + Sync + 'static;
    /// What the attempts alone keep, cloned for each next request.
    type Owned: Clone + Send + 'static;

    /// What is kept of the first attempt's request `req` for the others.
    ///
    /// `None` when the request cannot be sent again.
    ///
    /// The request is then sent once.
    ///
    /// `limit` is the layer's body limit.
    ///
    /// `writes` is what the builder was told of the requests.
    ///
    /// An HTTP request may be given its `Idempotency-Key` here.
    ///
    /// Done in place: `req` is then sent as it is.
    ///
    /// The first attempt's request carries what crosses the hop ([`stamp`](Replay::stamp)).
    ///
    /// `left` is asked only by a mode that sends it.
    fn keep(
        &self,
        req: &mut Req,
        limit: usize,
        writes: Writes,
        left: impl FnOnce() -> Option<Duration>,
    ) -> Option<Saved<Self, Req>>;

    /// Whether a next attempt can be sent, after an unjudged attempt.
    ///
    /// See [`judge`](Replay::judge).
    ///
    /// If not, the call ends on the outcome in hand.
    fn replayable(shared: &Self::Shared) -> bool;

    /// Whether the request may be sent again whatever became of it.
    ///
    /// Its method, key and `writes` decide.
    ///
    /// If not, it may only when a failure proves it was not applied.
    ///
    /// This is what the classifiers are told.
    ///
    /// Asked once the first attempt failed: a success reads nothing of the request.
    fn resend(kept: &Saved<Self, Req>, writes: Writes) -> Resend;

    /// The method and URI of the request whose head the attempts own.
    ///
    /// An event says them (feature `tracing`).
    ///
    /// A request that is not HTTP has none.
    #[cfg(feature = "tracing")]
    fn target(head: &Self::Owned) -> Option<(http::Method, http::Uri)> {
        let _ = head;
        None
    }

    /// The next attempt's request, from a clone of the owned part.
    ///
    /// Made once it can be sent.
    ///
    /// That matters to a hedge: it may start while the first attempt still sends the body.
    fn clone_request(
        shared: &Self::Shared,
        owned: Self::Owned,
    ) -> impl Future<Output = Req> + Send + '_;

    /// [`clone_request`](Replay::clone_request), and which of the kept request's attempts it is.
    ///
    /// The first attempt's is `0`.
    ///
    /// [`judge`](Replay::judge) is asked of this number.
    fn clone_attempt(
        shared: &Self::Shared,
        owned: Self::Owned,
    ) -> impl Future<Output = (Req, u32)> + Send + '_ {
        async move { (Self::clone_request(shared, owned).await, 0) }
    }

    /// Once attempt `sent` ended, whether its request can be resent.
    ///
    /// `failed`: it ended with an error, no answer.
    ///
    /// Decided from what became of that attempt's request alone.
    ///
    /// `None` when the mode keeps nothing per attempt.
    ///
    /// Then [`replayable`](Replay::replayable) decides.
    fn judge(
        shared: &Self::Shared,
        sent: u32,
        failed: bool,
    ) -> impl Future<Output = Option<bool>> + Send + '_ {
        let _ = (shared, sent, failed);
        ready(None)
    }

    /// Attempt `sent` ended without a verdict: cut by its timeout.
    ///
    /// The next attempt may send what attempt `sent` gives back of its request.
    #[inline]
    fn release(shared: &Self::Shared, sent: u32) {
        let _ = (shared, sent);
    }

    /// The authority of `req` (`host[:port]`, perhaps after a `user@`).
    ///
    /// A budget kept per host is found by it.
    ///
    /// None for a request that is not HTTP, or whose URI is relative.
    #[inline]
    fn authority(req: &Req) -> Option<&str> {
        let _ = req;
        None
    }

    /// Write what crosses the hop into attempt `attempt`'s request.
    ///
    /// `attempt` is 1-based.
    ///
    /// The attempt has `left` of time.
    ///
    /// `left` is the smallest of its timeout, its loop's deadline and its caller's.
    ///
    /// `left` is asked only by a mode that sends it.
    ///
    /// Nothing is written but for an HTTP request.
    #[inline]
    fn stamp(&self, _req: &mut Req, _attempt: u32, _left: impl FnOnce() -> Option<Duration>) {}
}

impl<B: Send + 'static, K: BodyMode<B>> Replay<http::Request<B>> for HttpRequests<K> {
    /// How the mode keeps the body: a recorder, or nothing.
    type Shared = K::Kept;
    /// The request's head, with what the body is made from.
    ///
    /// That is nothing, or the body.
    type Owned = http::Request<<K::Kept as KeepBody<B>>::Owned>;

    #[inline(always)] // layer_full_ours, layer_http_ours (scripts/instructions.sh): +2 without it
    fn keep(
        &self,
        req: &mut http::Request<B>,
        limit: usize,
        writes: Writes,
        left: impl FnOnce() -> Option<Duration>,
    ) -> Option<Saved<Self, http::Request<B>>> {
        if writes::needs_key(writes, req.method(), req.headers()) {
            writes::give_key(req.headers_mut());
        }
        // Kept with the head too.
        //
        // Each next attempt writes its own over it.
        self.stamp_headers(req.headers_mut(), 1, left);
        K::Kept::keep(req, limit)
    }

    fn replayable(kept: &K::Kept) -> bool {
        kept.replayable()
    }

    #[inline]
    fn authority(req: &http::Request<B>) -> Option<&str> {
        req.uri().authority().map(http::uri::Authority::as_str)
    }

    fn resend((_, head): &Saved<Self, http::Request<B>>, writes: Writes) -> Resend {
        writes::resend(writes, head.method(), head.headers())
    }

    #[cfg(feature = "tracing")]
    fn target(head: &Self::Owned) -> Option<(http::Method, http::Uri)> {
        Some((head.method().clone(), head.uri().clone()))
    }

    async fn clone_request(kept: &K::Kept, head: Self::Owned) -> http::Request<B> {
        <Self as Replay<http::Request<B>>>::clone_attempt(kept, head)
            .await
            .0
    }

    async fn clone_attempt(kept: &K::Kept, head: Self::Owned) -> (http::Request<B>, u32) {
        let (parts, body) = head.into_parts();
        let (body, sent) = kept.replay_attempt(body).await;
        (http::Request::from_parts(parts, body), sent)
    }

    fn judge(
        kept: &K::Kept,
        sent: u32,
        failed: bool,
    ) -> impl Future<Output = Option<bool>> + Send + '_ {
        kept.judge(sent, failed)
    }

    #[inline]
    fn release(kept: &K::Kept, sent: u32) {
        kept.release(sent);
    }

    #[inline]
    fn stamp(
        &self,
        req: &mut http::Request<B>,
        attempt: u32,
        left: impl FnOnce() -> Option<Duration>,
    ) {
        self.stamp_headers(req.headers_mut(), attempt, left);
    }
}

/// A request no one can make: a second impl.
///
/// So an HTTP mode's `Req` is read from the request given.
///
/// It is never guessed from the one impl above.
///
/// A `u32` handed to `RetryLayer::new`'s service is then reported as a `u32`.
///
/// The error says a `u32` cannot be retried, and what to do.
///
/// Without this impl, the error would blame a closure.
///
/// It would say the closure should have taken an `http::Request`.
#[diagnostic::do_not_recommend]
impl<K: Clone + Send + Sync + 'static> Replay<core::convert::Infallible> for HttpRequests<K> {
    type Shared = ();
    type Owned = core::convert::Infallible;

    fn keep(
        &self,
        req: &mut core::convert::Infallible,
        _: usize,
        _: Writes,
        _: impl FnOnce() -> Option<Duration>,
    ) -> Option<((), core::convert::Infallible)> {
        match *req {}
    }

    fn replayable(_: &()) -> bool {
        false
    }

    fn resend(_: &((), core::convert::Infallible), _: Writes) -> Resend {
        Resend::Any
    }

    fn clone_request(
        _: &(),
        req: core::convert::Infallible,
    ) -> impl Future<Output = core::convert::Infallible> + Send + '_ {
        ready(req)
    }
}

impl<K> HttpRequests<K> {
    /// The same mode, its bodies kept by `K2`.
    ///
    /// The hop's header names are kept.
    pub(super) fn keeping<K2>(self) -> HttpRequests<K2> {
        HttpRequests {
            hops: self.hops,
            keep: PhantomData,
        }
    }

    /// [`Replay::stamp`] on a request's headers.
    #[inline]
    fn stamp_headers(
        &self,
        headers: &mut http::HeaderMap,
        attempt: u32,
        left: impl FnOnce() -> Option<Duration>,
    ) {
        // A first attempt outside every scope, nothing named.
        //
        // There is nothing to say and nothing to read.
        if attempt <= 1 && self.hops.is_none() && !crate::policy::scope::in_scope() {
            return;
        }
        hops::stamp(self.hops.as_deref(), headers, attempt, left());
    }
}

impl<Req: Clone + Send + 'static> Replay<Req> for CloneRequests {
    /// Nothing: a cloned request can always be sent again.
    type Shared = ();
    /// The request, cloned for each attempt.
    type Owned = Req;

    #[inline(always)] // layer_full_ours, layer_http_ours (scripts/instructions.sh): +2 without it
    fn keep(
        &self,
        req: &mut Req,
        _: usize,
        _: Writes,
        _: impl FnOnce() -> Option<Duration>,
    ) -> Option<((), Req)> {
        Some(((), req.clone()))
    }

    fn replayable(_: &()) -> bool {
        true
    }

    /// A request of the user's own type.
    ///
    /// The classifiers decide for it.
    fn resend(_: &((), Req), _: Writes) -> Resend {
        Resend::Any
    }

    fn clone_request(_: &(), req: Req) -> impl Future<Output = Req> + Send + '_ {
        ready(req)
    }
}

/// The verdict on the request of the attempt that just ended.
///
/// That attempt hands it to the classifiers.
///
/// The loop classifies an attempt's outcome as soon as its future returns it.
///
/// No other attempt is polled in between.
///
/// So the one slot is never read for another attempt.
#[derive(Default)]
pub(super) struct Verdicts(AtomicU8);

impl Verdicts {
    const NONE: u8 = 0;
    const YES: u8 = 1;
    const NO: u8 = 2;

    /// What [`take`](Verdicts::take) would say, left for it to say.
    #[inline]
    pub(super) fn peek(&self) -> Option<bool> {
        match self.0.load(Ordering::Relaxed) {
            Self::NONE => None,
            said => Some(said == Self::YES),
        }
    }

    /// Whether the just-ended attempt's request can be resent, if that attempt said.
    ///
    /// Said once; an attempt cut by its timeout says nothing.
    #[inline]
    pub(super) fn take(&self) -> Option<bool> {
        // A load and a store, no read-modify-write.
        //
        // Only the call's own task touches it.
        let said = self.0.load(Ordering::Relaxed);
        if said == Self::NONE {
            return None;
        }
        self.0.store(Self::NONE, Ordering::Relaxed);
        Some(said == Self::YES)
    }
}

/// A kept request's attempt, until its outcome is judged.
///
/// Dropped unjudged (cut by its timeout), it still releases to the next attempt.
///
/// What it releases is what its request gave back.
pub(super) struct Attempt<'a, M: Replay<Req>, Req> {
    shared: Option<&'a M::Shared>,
    sent: u32,
}

impl<'a, M: Replay<Req>, Req> Attempt<'a, M, Req> {
    /// Attempt `sent` of the kept request.
    ///
    /// `shared` is `None` for a request sent once.
    #[inline]
    pub(super) fn new(shared: Option<&'a M::Shared>, sent: u32) -> Self {
        Attempt { shared, sent }
    }

    /// Its call ended with `outcome`.
    ///
    /// The verdict on its request goes to `verdicts`.
    ///
    /// Then the outcome is handed on.
    #[inline]
    pub(super) async fn judged<R, E>(
        mut self,
        outcome: Result<R, E>,
        verdicts: &Verdicts,
    ) -> Result<R, E> {
        if let Some(shared) = self.shared {
            // Cut while waiting, it still releases what it gives back.
            let verdict = M::judge(shared, self.sent, outcome.is_err()).await;
            self.shared = None;
            if let Some(replayable) = verdict {
                let said = if replayable {
                    Verdicts::YES
                } else {
                    Verdicts::NO
                };
                verdicts.0.store(said, Ordering::Relaxed);
            }
        }
        outcome
    }
}

impl<M: Replay<Req>, Req> Drop for Attempt<'_, M, Req> {
    #[inline]
    fn drop(&mut self) {
        if let Some(shared) = self.shared {
            M::release(shared, self.sent);
        }
    }
}
