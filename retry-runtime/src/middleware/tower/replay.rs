//! The request modes, and the one hook both go through to send a request again: [`Replay`],
//! in the spirit of tower's `Policy::clone_request`.

use super::body::{ReplayBody, Replayer};
use crate::middleware::writes::{self, Writes};
use crate::policy::Resend;
use core::future::{ready, Future};

/// The request mode of [`RetryLayer::new`](super::RetryLayer::new): `http::Request<B>`, its
/// body replayed.
#[derive(Clone, Copy, Debug, Default)]
pub struct HttpRequests;

/// The request mode of [`RetryLayer::clone_requests`](super::RetryLayer::clone_requests): any
/// `Req: Clone`, cloned per attempt.
#[derive(Clone, Copy, Debug, Default)]
pub struct CloneRequests;

/// What a request mode keeps of a call's request: what is shared, and what the attempts own.
pub type Kept<M, Req> = (<M as Replay<Req>>::Shared, <M as Replay<Req>>::Owned);

/// How a request mode sends a call's request again: what it keeps of the request when the
/// first attempt is sent, and the next attempt's request from that. Both modes go through it,
/// so the `Service` impl and the loop are written once.
///
/// What is kept has two parts: what the loop's classifiers read (they ask
/// [`replayable`](Replay::replayable) before a retry), shared by every attempt, hence `Sync`;
/// and what the loop's attempts own, each next request made from it (only `Send`: a cloned
/// request need not be `Sync`).
pub trait Replay<Req>: Clone + Send + Sync + 'static {
    /// What the classifiers and the attempts share of a kept request.
    type Shared: Send + Sync + 'static;
    /// What the attempts alone keep of it, cloned for each next request.
    type Owned: Clone + Send + 'static;

    /// The first attempt's request, and what is kept for the others: `None` when the request
    /// cannot be sent again (it is sent once). `limit` is the layer's body limit; `writes`,
    /// what the builder was told of the requests (an HTTP request may be given its
    /// `Idempotency-Key` here).
    fn keep(&self, req: Req, limit: usize, writes: Writes) -> (Req, Option<Kept<Self, Req>>);

    /// Whether a next attempt can be sent; if not, the call ends on the outcome in hand.
    fn replayable(shared: &Self::Shared) -> bool;

    /// Whether the request may be sent again whatever became of it (by its method and key,
    /// and `writes`), or only when a failure proves it was not applied: what the classifiers
    /// are told. Asked once the first attempt failed: a success reads nothing of the request.
    fn resend(kept: &Kept<Self, Req>, writes: Writes) -> Resend;

    /// The next attempt's request, once it can be sent (a hedge may start while the first
    /// attempt still sends the body to replay), from a clone of what the attempts own.
    fn clone_request(
        shared: &Self::Shared,
        owned: Self::Owned,
    ) -> impl Future<Output = Req> + Send + '_;
}

impl<Rb> Replay<http::Request<Rb>> for HttpRequests
where
    Rb: ReplayBody + Unpin,
    Rb::Error: Send,
{
    /// The body's replayer.
    type Shared = Replayer<Rb>;
    /// The request's head.
    type Owned = http::request::Parts;

    fn keep(
        &self,
        req: http::Request<Rb>,
        limit: usize,
        writes: Writes,
    ) -> (http::Request<Rb>, Option<Kept<Self, http::Request<Rb>>>) {
        let (mut parts, body) = req.into_parts();
        writes::add_key(writes, &parts.method, &mut parts.headers);
        match Replayer::start(body, limit) {
            Ok((first, replayer)) => {
                let first = http::Request::from_parts(parts.clone(), Rb::from_replay(first));
                (first, Some((replayer, parts)))
            }
            Err(body) => (http::Request::from_parts(parts, body), None),
        }
    }

    /// The body went over the limit, or was still being sent when its attempt ended: no.
    fn replayable(replayer: &Replayer<Rb>) -> bool {
        replayer.replayable()
    }

    fn resend((_, parts): &Kept<Self, http::Request<Rb>>, writes: Writes) -> Resend {
        writes::resend(writes, &parts.method, &parts.headers)
    }

    async fn clone_request(
        replayer: &Replayer<Rb>,
        parts: http::request::Parts,
    ) -> http::Request<Rb> {
        let body = Rb::from_replay(replayer.next().await);
        http::Request::from_parts(parts, body)
    }
}

impl<Req: Clone + Send + 'static> Replay<Req> for CloneRequests {
    /// Nothing: a cloned request can always be sent again.
    type Shared = ();
    /// The request, cloned for each attempt.
    type Owned = Req;

    fn keep(&self, req: Req, _: usize, _: Writes) -> (Req, Option<((), Req)>) {
        (req.clone(), Some(((), req)))
    }

    fn replayable(_: &()) -> bool {
        true
    }

    /// A request of the user's own type: its classifiers decide for it.
    fn resend(_: &((), Req), _: Writes) -> Resend {
        Resend::Any
    }

    fn clone_request(_: &(), req: Req) -> impl Future<Output = Req> + Send + '_ {
        ready(req)
    }
}
