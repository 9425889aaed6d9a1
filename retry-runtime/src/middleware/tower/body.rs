//! Body replay: an `http::Request`'s body recorded while an attempt sends it, within a limit,
//! and sent again, the same bytes, by the next attempt.

use core::future::{poll_fn, Future};
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};

/// A request body type the layer can rebuild around a replayed body: the inner service takes
/// the same `http::Request<B>` it always did, so the replay is wrapped in a `B`. Implemented
/// for http-body-util's boxed bodies and, with feature `tonic`, `tonic::body::Body`.
pub trait ReplayBody: Body<Data = Bytes> + Send + Sized + 'static {
    /// `body`, as a `Self`.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full};
    /// use retry_jitter::tower::ReplayBody;
    ///
    /// // The layer calls this with its replaying body; any body of the same error type works.
    /// let body = Full::new(Bytes::from("x")).map_err(|never| match never {});
    /// let _: UnsyncBoxBody<Bytes, std::io::Error> = ReplayBody::from_replay(body);
    /// ```
    fn from_replay<R>(replay: R) -> Self
    where
        R: Body<Data = Bytes, Error = Self::Error> + Send + Sync + 'static;
}

impl<E: 'static> ReplayBody for http_body_util::combinators::UnsyncBoxBody<Bytes, E>
where
    Self: Send,
{
    fn from_replay<R>(replay: R) -> Self
    where
        R: Body<Data = Bytes, Error = E> + Send + Sync + 'static,
    {
        Self::new(replay)
    }
}

impl<E: 'static> ReplayBody for http_body_util::combinators::BoxBody<Bytes, E>
where
    Self: Send,
{
    fn from_replay<R>(replay: R) -> Self
    where
        R: Body<Data = Bytes, Error = E> + Send + Sync + 'static,
    {
        Self::new(replay)
    }
}

#[cfg(feature = "tonic")]
impl ReplayBody for tonic::body::Body {
    fn from_replay<R>(replay: R) -> Self
    where
        R: Body<Data = Bytes, Error = tonic::Status> + Send + Sync + 'static,
    {
        tonic::body::Body::new(replay)
    }
}

/// Where the original body is, for the next attempt.
enum Source<B> {
    /// An attempt's body holds it (or held it: it reached its end, or went over the limit).
    Sending,
    /// Given back unfinished by an attempt's body dropped midway (a connection that failed).
    Returned(B),
}

/// The bytes sent so far, shared by a call's attempts.
struct Recorded<B> {
    chunks: Vec<Bytes>,
    len: usize,
    trailers: Option<HeaderMap>,
    /// The whole body is recorded.
    complete: bool,
    /// More than the limit was sent: nothing can be replayed.
    over: bool,
    source: Source<B>,
    /// A hedge waiting for the body to be complete or given back.
    waiting: Option<Waker>,
}

impl<B> Recorded<B> {
    /// Whether a next attempt can be sent: the body is complete, or given back within the limit.
    fn replayable(&self) -> bool {
        !self.over && (self.complete || matches!(self.source, Source::Returned(_)))
    }

    fn wake(&mut self) {
        if let Some(w) = self.waiting.take() {
            w.wake();
        }
    }
}

type Shared<B> = Arc<Mutex<Recorded<B>>>;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One attempt's body: the bytes recorded so far, then the rest of the original (recorded
/// while it is sent), then the trailers.
pub(super) struct AttemptBody<B: Body> {
    prefix: VecDeque<Bytes>,
    /// In a `Mutex` only to make the replay `Sync` (for `BoxBody`) whatever `B` is: polling it
    /// goes through `&mut` (`get_mut`); only `is_end_stream` and `size_hint`, which take
    /// `&self`, lock it (uncontended: the replay has one owner).
    rest: Mutex<Option<B>>,
    trailers: Option<HeaderMap>,
    shared: Shared<B>,
    limit: usize,
}

impl<B: Body> AttemptBody<B> {
    fn rest(&mut self) -> &mut Option<B> {
        self.rest.get_mut().unwrap_or_else(|p| p.into_inner())
    }

    fn record(&self, frame: &Frame<Bytes>) {
        let mut r = lock(&self.shared);
        if r.over {
            return;
        }
        if let Some(data) = frame.data_ref() {
            if r.len + data.len() > self.limit {
                r.over = true;
                r.chunks = Vec::new();
                r.wake();
            } else {
                r.len += data.len();
                r.chunks.push(data.clone());
            }
        } else if let Some(trailers) = frame.trailers_ref() {
            r.trailers = Some(trailers.clone());
        }
    }

    fn finish(&mut self) {
        *self.rest() = None;
        let mut r = lock(&self.shared);
        r.complete = true;
        r.wake();
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for AttemptBody<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = &mut *self;
        if let Some(chunk) = this.prefix.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(chunk))));
        }
        if let Some(rest) = this.rest().as_mut() {
            let polled = Pin::new(rest).poll_frame(cx);
            return match polled {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Some(Ok(frame))) => {
                    this.record(&frame);
                    Poll::Ready(Some(Ok(frame)))
                }
                Poll::Ready(Some(Err(e))) => {
                    // A body that failed is not replayed.
                    lock(&this.shared).over = true;
                    Poll::Ready(Some(Err(e)))
                }
                Poll::Ready(None) => {
                    this.finish();
                    Poll::Ready(None)
                }
            };
        }
        Poll::Ready(this.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }

    fn is_end_stream(&self) -> bool {
        self.prefix.is_empty()
            && match &*lock(&self.rest) {
                Some(rest) => rest.is_end_stream(),
                None => self.trailers.is_none(),
            }
    }

    fn size_hint(&self) -> SizeHint {
        let prefix: u64 = self.prefix.iter().map(|c| c.len() as u64).sum();
        let rest = match &*lock(&self.rest) {
            Some(rest) => rest.size_hint(),
            None => SizeHint::with_exact(0),
        };
        let mut hint = SizeHint::new();
        hint.set_lower(rest.lower().saturating_add(prefix));
        if let Some(upper) = rest.upper() {
            hint.set_upper(upper.saturating_add(prefix));
        }
        hint
    }
}

impl<B: Body> Drop for AttemptBody<B> {
    fn drop(&mut self) {
        if let Some(rest) = self.rest().take() {
            let mut r = lock(&self.shared);
            if rest.is_end_stream() {
                r.complete = true;
            } else if !r.over {
                r.source = Source::Returned(rest);
            }
            r.wake();
        }
    }
}

/// A call's request body, replayable while it stays within the limit.
#[doc(hidden)]
pub struct Replayer<B> {
    shared: Shared<B>,
    limit: usize,
}

impl<B: Body<Data = Bytes> + Unpin> Replayer<B> {
    /// The first attempt's body, and the replayer; or the body given back when it is known to
    /// be over the limit (it is sent as it is, once).
    pub(super) fn start(body: B, limit: usize) -> Result<(AttemptBody<B>, Self), B> {
        if body.size_hint().lower() > limit as u64 {
            return Err(body);
        }
        let shared = Arc::new(Mutex::new(Recorded {
            chunks: Vec::new(),
            len: 0,
            trailers: None,
            complete: false,
            over: false,
            source: Source::Sending,
            waiting: None,
        }));
        let first = AttemptBody {
            prefix: VecDeque::new(),
            rest: Mutex::new(Some(body)),
            trailers: None,
            shared: shared.clone(),
            limit,
        };
        Ok((first, Replayer { shared, limit }))
    }

    pub(super) fn replayable(&self) -> bool {
        lock(&self.shared).replayable()
    }

    /// The next attempt's body, once the body is complete or given back (a hedge may start
    /// while the first attempt still sends it); never, when it went over the limit (the call
    /// then ends on the first attempt's answer, which drops this).
    pub(super) fn next(&self) -> impl Future<Output = AttemptBody<B>> + '_ {
        poll_fn(move |cx| {
            let mut r = lock(&self.shared);
            if r.over {
                return Poll::Pending;
            }
            let rest = match core::mem::replace(&mut r.source, Source::Sending) {
                Source::Returned(rest) => Some(rest),
                Source::Sending if r.complete => None,
                Source::Sending => {
                    r.waiting = Some(cx.waker().clone());
                    return Poll::Pending;
                }
            };
            Poll::Ready(AttemptBody {
                prefix: r.chunks.iter().cloned().collect(),
                trailers: if rest.is_none() {
                    r.trailers.clone()
                } else {
                    None
                },
                rest: Mutex::new(rest),
                shared: self.shared.clone(),
                limit: self.limit,
            })
        })
    }
}
