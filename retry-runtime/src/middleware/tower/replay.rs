//! The request modes, and the one hook both go through to send a request again: [`Replay`],
//! in the spirit of tower's `Policy::clone_request`.

use core::future::{ready, Future};
use std::sync::Mutex;

use super::body::{ReplayBody, Replayer};

/// The request mode of [`RetryLayer::new`](super::RetryLayer::new): `http::Request<B>`, its
/// body replayed.
#[derive(Clone, Copy, Debug, Default)]
pub struct HttpRequests;

/// The request mode of [`RetryLayer::clone_requests`](super::RetryLayer::clone_requests): any
/// `Req: Clone`, cloned per attempt.
#[derive(Clone, Copy, Debug, Default)]
pub struct CloneRequests;

/// How a request mode sends a call's request again: what it keeps of the request when the
/// first attempt is sent, and the next attempt's request from that. Both modes go through it,
/// so the `Service` impl and the loop are written once.
///
/// What is kept is shared by the loop's attempts and its classifiers (which ask
/// [`replayable`](Replay::replayable) before a retry), hence `Sync`.
pub trait Replay<Req>: Clone + Send + Sync + 'static {
    /// What a call keeps of its request for the next attempts.
    type Kept: Send + Sync + 'static;

    /// The first attempt's request, and what is kept for the others: `None` when the request
    /// cannot be sent again (it is sent once). `limit` is the layer's body limit.
    fn keep(&self, req: Req, limit: usize) -> (Req, Option<Self::Kept>);

    /// Whether a next attempt can be sent; if not, the call ends on the outcome in hand.
    fn replayable(kept: &Self::Kept) -> bool;

    /// The next attempt's request, once it can be sent (a hedge may start while the first
    /// attempt still sends the body to replay).
    fn clone_request(kept: &Self::Kept) -> impl Future<Output = Req> + Send + '_;
}

/// What an HTTP call keeps: the request's head and its body's replayer.
#[doc(hidden)]
pub struct HttpKept<Rb> {
    parts: http::request::Parts,
    replayer: Replayer<Rb>,
}

impl<Rb> Replay<http::Request<Rb>> for HttpRequests
where
    Rb: ReplayBody + Unpin,
    Rb::Error: Send,
{
    type Kept = HttpKept<Rb>;

    fn keep(
        &self,
        req: http::Request<Rb>,
        limit: usize,
    ) -> (http::Request<Rb>, Option<HttpKept<Rb>>) {
        let (parts, body) = req.into_parts();
        match Replayer::start(body, limit) {
            Ok((first, replayer)) => {
                let first = http::Request::from_parts(parts.clone(), Rb::from_replay(first));
                (first, Some(HttpKept { parts, replayer }))
            }
            Err(body) => (http::Request::from_parts(parts, body), None),
        }
    }

    /// The body went over the limit, or was still being sent when its attempt ended: no.
    fn replayable(kept: &HttpKept<Rb>) -> bool {
        kept.replayer.replayable()
    }

    fn clone_request(kept: &HttpKept<Rb>) -> impl Future<Output = http::Request<Rb>> + Send + '_ {
        // The head is cloned now: only the `Sync` replayer is borrowed across the await.
        let parts = kept.parts.clone();
        async move {
            let body = Rb::from_replay(kept.replayer.next().await);
            http::Request::from_parts(parts, body)
        }
    }
}

impl<Req: Clone + Send + 'static> Replay<Req> for CloneRequests {
    /// In a `Mutex` only to make it `Sync` whatever `Req` is (locked once per retry).
    type Kept = Mutex<Req>;

    fn keep(&self, req: Req, _: usize) -> (Req, Option<Mutex<Req>>) {
        (req.clone(), Some(Mutex::new(req)))
    }

    fn replayable(_: &Mutex<Req>) -> bool {
        true
    }

    fn clone_request(kept: &Mutex<Req>) -> impl Future<Output = Req> + Send + '_ {
        let req = kept.lock().unwrap_or_else(|p| p.into_inner()).clone();
        ready(req)
    }
}
