//! The bodies: how a [`RetryService`](super::RetryService) sends a request's body again
//! ([`ReplayBody`]: cloned, or recorded while an attempt sends it, within a limit, and sent
//! again, the same bytes, by the next attempt), and the body of a
//! [`ChainService`](super::ChainService)'s response ([`ChainBody`]).

use core::future::{poll_fn, Future};
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;

pub use super::chain::ChainBody;
pub use super::replay::ByBodyType;

/// A request body type [`RetryLayer::new`](super::RetryLayer::new) can send again. The body
/// type says how a call keeps it for its next attempts ([`Kept`](ReplayBody::Kept)):
///
/// - [`Cloned`]: a `Clone` body is cloned for each attempt, nothing recorded:
///   http-body-util's `Full<Bytes>` (its `Bytes` are shared, not copied) and `Empty<Bytes>`,
///   and `String` (copied once when kept, once per retry);
/// - [`Replayer`]: any other body is recorded as the first attempt sends it and replayed,
///   wrapped in the body type again ([`WrapBody`]): http-body-util's `BoxBody` and
///   `UnsyncBoxBody`, and with feature `tonic`, `tonic::body::Body` (a `Channel`'s).
///
/// A `Clone` body of another type is cloned the same way through
/// [`clone_bodies`](super::RetryLayer::clone_bodies), with no impl of this trait.
///
/// Either way a body known, by its size hint, to be of more than the layer's
/// [`with_body_limit`](super::RetryLayer::with_body_limit) bytes is sent once, and a recorded
/// body that turns out larger as it is sent is not replayed. (A cloned body of no known size is
/// cloned whole: cloning buffers nothing. The three above know theirs.)
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::combinators::BoxBody;
/// use http_body_util::Full;
/// use retry_jitter::tower::body::{Cloned, ReplayBody, Replayer};
///
/// fn kept_by<B: ReplayBody<Kept = K>, K>() {}
/// kept_by::<Full<Bytes>, Cloned>();
/// kept_by::<String, Cloned>();
/// kept_by::<BoxBody<Bytes, std::io::Error>, Replayer<BoxBody<Bytes, std::io::Error>>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`RetryLayer` cannot send a request body of type `{Self}` again",
    label = "a request with this body cannot be retried",
    note = "if `{Self}` is `Clone`, clone it for each attempt: `RetryLayer::new(policy).clone_bodies()` keeps the status table, the method rule, `Idempotency-Key` and the hop headers",
    note = "otherwise send `Full<Bytes>`, `Empty<Bytes>` or `String`, or box the body (`BodyExt::boxed`, `BodyExt::boxed_unsync`), or implement `retry_jitter::tower::body::ReplayBody` for `{Self}`"
)]
pub trait ReplayBody: Body<Data = Bytes> + Send + Sized + 'static {
    /// How a call keeps this body for its next attempts: [`Cloned`] or [`Replayer<Self>`].
    type Kept: KeepBody<Self>;
}

/// How a call keeps a request body of type `B` for its next attempts, and makes each next
/// attempt's body from it: [`Cloned`] or [`Replayer`], the way a [`ReplayBody`] names.
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::Full;
/// use retry_jitter::tower::body::{Cloned, KeepBody};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let mut req = http::Request::post("/orders")
///     .body(Full::new(Bytes::from("one order")))
///     .unwrap();
/// let (cloned, kept) = Cloned::keep(&mut req, 64).expect("within the limit");
/// assert!(KeepBody::<Full<Bytes>>::replayable(&cloned)); // a cloned body always is
/// let (head, body) = kept.into_parts();
/// assert_eq!(head.method, http::Method::POST);
/// let _again: Full<Bytes> = cloned.replay(body).await;
/// // Over the limit: sent once, nothing kept.
/// assert!(Cloned::keep(&mut req, 4).is_none());
/// # }
/// ```
pub trait KeepBody<B>: Send + Sync + Sized + 'static {
    /// What each next attempt's body is made from, cloned for it: nothing for the recorder
    /// (the bytes are in the recorder), the body itself for [`Cloned`].
    type Owned: Clone + Send + 'static;

    /// What is kept of the first attempt's request `req` for the next ones: this, and the
    /// request's head with what their bodies are made from; `None` when the body cannot be
    /// sent again (it is known to be over `limit` bytes: it is sent once). Done in place: the
    /// recorder puts its recording body in `req`; [`Cloned`] clones `req` whole.
    fn keep(req: &mut http::Request<B>, limit: usize)
        -> Option<(Self, http::Request<Self::Owned>)>;

    /// Whether a next attempt's body can be made, as far as the body kept for the call says:
    /// asked when the attempt that ended did not say it for its own body.
    fn replayable(&self) -> bool;

    /// The next attempt's body, once it can be made (a hedge may start while the first
    /// attempt still sends the body).
    fn replay(&self, owned: Self::Owned) -> impl Future<Output = B> + Send + '_;

    /// [`replay`](KeepBody::replay), and which of the kept body's attempts it is (the first
    /// attempt's is `0`): what [`judge`](KeepBody::judge) is asked of.
    #[doc(hidden)]
    fn replay_attempt(&self, owned: Self::Owned) -> impl Future<Output = (B, u32)> + Send + '_ {
        async move { (self.replay(owned).await, 0) }
    }

    /// Once attempt `sent`'s call ended (`failed`: with an error, no answer), whether its
    /// request can be sent again, from what became of that attempt's body alone; `None` when
    /// nothing is kept per attempt (then [`replayable`](KeepBody::replayable) decides).
    #[doc(hidden)]
    fn judge(&self, sent: u32, failed: bool) -> impl Future<Output = Option<bool>> + Send + '_ {
        let _ = (sent, failed);
        core::future::ready(None)
    }

    /// Attempt `sent` ended without a verdict (cut by its timeout): the rest of the body it
    /// gives back, if it gives one back, may be sent by the next attempt.
    #[doc(hidden)]
    fn release(&self, sent: u32) {
        let _ = sent;
    }
}

/// The [`KeepBody`] of `Clone` bodies: the body itself is kept and cloned for each attempt, no
/// recorder. A `Full<Bytes>`'s clone shares its bytes (`Bytes` is reference-counted).
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::{Empty, Full};
/// use retry_jitter::tower::body::{Cloned, ReplayBody};
///
/// fn cloned<B: ReplayBody<Kept = Cloned>>() {}
/// cloned::<Full<Bytes>>();
/// cloned::<Empty<Bytes>>();
/// cloned::<String>();
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Cloned;

impl<B: Body<Data = Bytes> + Clone + Send + 'static> KeepBody<B> for Cloned {
    type Owned = B;

    /// The request cloned whole, as tower's own `Retry` policies do.
    #[inline(always)]
    fn keep(req: &mut http::Request<B>, limit: usize) -> Option<(Cloned, http::Request<B>)> {
        if known_over(req.body(), limit) {
            return None;
        }
        Some((Cloned, req.clone()))
    }

    fn replayable(&self) -> bool {
        true
    }

    fn replay(&self, body: B) -> impl Future<Output = B> + Send + '_ {
        core::future::ready(body)
    }
}

impl ReplayBody for http_body_util::Full<Bytes> {
    type Kept = Cloned;
}

impl ReplayBody for http_body_util::Empty<Bytes> {
    type Kept = Cloned;
}

impl ReplayBody for String {
    type Kept = Cloned;
}

/// A body type that can hold any body of its error type (a boxed body), so that a
/// [`Replayer`] wraps its replay in it: the inner service takes the same `http::Request<B>`
/// it always did. Implemented for http-body-util's boxed bodies and, with feature `tonic`,
/// `tonic::body::Body`.
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full};
/// use retry_jitter::tower::body::WrapBody;
///
/// // The layer calls this with its replaying body; any body of the same error type works.
/// let body = Full::new(Bytes::from("x")).map_err(|never| match never {});
/// let _: UnsyncBoxBody<Bytes, std::io::Error> = WrapBody::from_replay(body);
/// ```
pub trait WrapBody: Body<Data = Bytes> + Send + Sized + 'static {
    /// `replay`, as a `Self`.
    fn from_replay<R>(replay: R) -> Self
    where
        R: Body<Data = Bytes, Error = Self::Error> + Send + Sync + 'static;
}

impl<E: 'static> WrapBody for http_body_util::combinators::UnsyncBoxBody<Bytes, E>
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

impl<E: Send + 'static> ReplayBody for http_body_util::combinators::UnsyncBoxBody<Bytes, E>
where
    Self: Send,
{
    type Kept = Replayer<Self>;
}

impl<E: 'static> WrapBody for http_body_util::combinators::BoxBody<Bytes, E>
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

impl<E: Send + 'static> ReplayBody for http_body_util::combinators::BoxBody<Bytes, E>
where
    Self: Send,
{
    type Kept = Replayer<Self>;
}

#[cfg(feature = "tonic")]
impl WrapBody for tonic::body::Body {
    fn from_replay<R>(replay: R) -> Self
    where
        R: Body<Data = Bytes, Error = tonic::Status> + Send + Sync + 'static,
    {
        tonic::body::Body::new(replay)
    }
}

#[cfg(feature = "tonic")]
impl ReplayBody for tonic::body::Body {
    type Kept = Replayer<Self>;
}

/// How long a failed attempt's verdict waits for its transport to let go of its body (hyper's
/// connection task drops it as soon as it sees the failure): a body held past this is still
/// being sent, and not sent again.
const SETTLING: Duration = Duration::from_millis(500);

/// Where the original body is, for the next attempt.
enum Source<B> {
    /// An attempt's body holds it (or held it: it reached its end, went over the limit, or was
    /// dropped with an attempt the server answered).
    Sending,
    /// Given back unfinished by attempt `by`'s body, dropped midway (a connection that
    /// failed): the next attempt takes it once `by` is judged to have failed.
    Returned { rest: B, by: u32 },
}

/// What became of one attempt's body.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Its transport holds it, unfinished.
    Sending,
    /// Sent to its end (its last frame, or its trailers), or made of recorded bytes alone.
    Whole,
    /// Dropped unfinished: the rest of the original given back.
    GivenBack,
}

/// What may become of the rest an attempt's body gives back, by what its call came to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hand {
    /// Its call runs: the rest waits for its verdict.
    Open,
    /// Its call failed with no answer, or was cut: the rest goes to the next attempt.
    On,
    /// The server answered while the body was unfinished: the rest is dropped, never sent.
    Dropped,
}

/// One attempt's body, as its verdict reads it.
#[derive(Clone, Copy)]
struct Sent {
    fate: Fate,
    hand: Hand,
}

impl Sent {
    const fn new(fate: Fate) -> Self {
        Sent {
            fate,
            hand: Hand::Open,
        }
    }
}

/// The bytes sent so far, shared by a call's attempts.
struct Recorded<B> {
    chunks: Vec<Bytes>,
    len: usize,
    trailers: Option<HeaderMap>,
    /// The whole body is recorded.
    complete: bool,
    /// More than the limit was sent, or the body failed: nothing can be replayed.
    over: bool,
    source: Source<B>,
    /// The first attempt's body, and the later ones' (numbered from 1).
    first: Sent,
    later: Vec<Sent>,
    /// Hedges waiting for the body to be complete or given back, verdicts waiting for their
    /// body to settle: futures of the call's one loop.
    waiting: Vec<Waker>,
}

impl<B> Recorded<B> {
    /// Whether a next attempt can be sent: the body is complete, or given back within the limit.
    fn replayable(&self) -> bool {
        !self.over && (self.complete || matches!(self.source, Source::Returned { .. }))
    }

    fn sent(&mut self, id: u32) -> &mut Sent {
        match id.checked_sub(1) {
            None => &mut self.first,
            Some(i) => &mut self.later[i as usize],
        }
    }

    /// Attempt `id` sent the whole body: it is recorded.
    fn whole(&mut self, id: u32) {
        self.complete = true;
        self.sent(id).fate = Fate::Whole;
        self.wake();
    }

    fn wait(&mut self, waker: &Waker) {
        if !self.waiting.iter().any(|w| w.will_wake(waker)) {
            self.waiting.push(waker.clone());
        }
    }

    fn wake(&mut self) {
        for w in self.waiting.drain(..) {
            w.wake();
        }
    }

    /// The verdict on attempt `id`'s request once its call ended (`failed`: with no answer):
    /// `None` while its body is still being sent after a failure (its transport lets go of it
    /// soon). A body given back is handed on only by a call that failed; one the server
    /// answered before its end is not sent again, nor is its rest.
    fn verdict(&mut self, id: u32, failed: bool) -> Option<(bool, Option<B>)> {
        if self.over {
            return Some((false, None));
        }
        let sent = self.sent(id);
        match (sent.fate, failed) {
            (Fate::Whole, _) => Some((true, None)),
            (Fate::GivenBack, true) => {
                sent.hand = Hand::On;
                self.wake();
                Some((true, None))
            }
            (Fate::GivenBack | Fate::Sending, false) => {
                sent.hand = Hand::Dropped;
                let dropped = match core::mem::replace(&mut self.source, Source::Sending) {
                    Source::Returned { rest, by } if by == id => Some(rest),
                    other => {
                        self.source = other;
                        None
                    }
                };
                Some((false, dropped))
            }
            (Fate::Sending, true) => None,
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
    /// Which of the call's attempts sends it.
    id: u32,
}

impl<B: Body> AttemptBody<B> {
    fn rest(&mut self) -> &mut Option<B> {
        self.rest.get_mut().unwrap_or_else(|p| p.into_inner())
    }

    /// `frame` recorded; `end`: it is the body's last (its trailers, or the body says so).
    fn record(&self, frame: &Frame<Bytes>, end: bool) {
        let mut r = lock(&self.shared);
        if r.over {
            return;
        }
        if let Some(data) = frame.data_ref() {
            if r.len + data.len() > self.limit {
                r.over = true;
                r.chunks = Vec::new();
                r.wake();
                return;
            }
            r.len += data.len();
            r.chunks.push(data.clone());
        } else if let Some(trailers) = frame.trailers_ref() {
            r.trailers = Some(trailers.clone());
        }
        // Whole once its last frame is out, whether or not its transport polls for the end:
        // a server that answers after reading it all answers a whole body.
        if end {
            r.whole(self.id);
        }
    }

    fn finish(&mut self) {
        *self.rest() = None;
        lock(&self.shared).whole(self.id);
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
            let polled = Pin::new(&mut *rest).poll_frame(cx);
            return match polled {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Some(Ok(frame))) => {
                    let end = frame.is_trailers() || rest.is_end_stream();
                    this.record(&frame, end);
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
        let Some(rest) = self.rest().take() else {
            return;
        };
        let mut r = lock(&self.shared);
        // At its end, or past its last frame or byte (a transport that sent it need not poll
        // for the end), it is whole; what is recorded is the body.
        if r.complete || rest.is_end_stream() || rest.size_hint().exact() == Some(0) {
            r.whole(self.id);
            return;
        }
        let id = self.id;
        if r.over || r.sent(id).hand == Hand::Dropped {
            drop(r);
            return;
        }
        r.sent(id).fate = Fate::GivenBack;
        r.source = Source::Returned { rest, by: id };
        r.wake();
    }
}

/// Whether `body` is known, before it is sent, to be over `limit` bytes: it is sent once, as
/// it is, whatever keeps bodies.
fn known_over(body: &impl Body, limit: usize) -> bool {
    body.size_hint().lower() > limit as u64
}

/// A copy of `req`'s head: what a [`Replayer`] keeps beside its recording.
fn head<B>(req: &http::Request<B>) -> http::Request<()> {
    let mut head = http::Request::new(());
    *head.method_mut() = req.method().clone();
    *head.uri_mut() = req.uri().clone();
    *head.version_mut() = req.version();
    *head.headers_mut() = req.headers().clone();
    *head.extensions_mut() = req.extensions().clone();
    head
}

/// The [`KeepBody`] of bodies that are not `Clone` (a boxed body, a stream): the body is
/// recorded as the first attempt sends it, within the layer's limit, and each next attempt
/// sends the recorded bytes again, wrapped in the body type ([`WrapBody`]), then the rest of
/// the body if a failed connection gave it back unfinished. Each attempt's body decides for
/// its attempt alone: one the server answered before it was sent whole, or that went over
/// the limit, is not replayed.
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::combinators::UnsyncBoxBody;
/// use retry_jitter::tower::body::{ReplayBody, Replayer};
///
/// type Body = UnsyncBoxBody<Bytes, std::io::Error>;
/// fn recorded<B: ReplayBody<Kept = Replayer<B>>>() {}
/// recorded::<Body>();
/// ```
pub struct Replayer<B> {
    shared: Shared<B>,
    limit: usize,
}

impl<B: Body<Data = Bytes> + Unpin> Replayer<B> {
    /// The first attempt's body, and the replayer.
    fn start(body: B, limit: usize) -> (AttemptBody<B>, Self) {
        let shared = Arc::new(Mutex::new(Recorded {
            chunks: Vec::new(),
            len: 0,
            trailers: None,
            complete: false,
            over: false,
            source: Source::Sending,
            first: Sent::new(Fate::Sending),
            later: Vec::new(),
            waiting: Vec::new(),
        }));
        let first = AttemptBody {
            prefix: VecDeque::new(),
            rest: Mutex::new(Some(body)),
            trailers: None,
            shared: shared.clone(),
            limit,
            id: 0,
        };
        (first, Replayer { shared, limit })
    }

    /// The next attempt's body, once the body is complete, or given back by an attempt that
    /// failed with no answer (a hedge may start while the first attempt still sends it); never,
    /// when it went over the limit or its rest was dropped (the call then ends on the answer
    /// that did it, which drops this).
    pub(super) fn next(&self) -> impl Future<Output = AttemptBody<B>> + '_ {
        poll_fn(move |cx| {
            let mut r = lock(&self.shared);
            let r = &mut *r;
            if r.over {
                return Poll::Pending;
            }
            let rest = match core::mem::replace(&mut r.source, Source::Sending) {
                Source::Returned { rest, by } if r.sent(by).hand == Hand::On => Some(rest),
                Source::Sending if r.complete => None,
                waiting => {
                    r.source = waiting;
                    r.wait(cx.waker());
                    return Poll::Pending;
                }
            };
            let fate = if rest.is_none() {
                Fate::Whole
            } else {
                Fate::Sending
            };
            r.later.push(Sent::new(fate));
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
                id: u32::try_from(r.later.len()).unwrap_or(u32::MAX),
            })
        })
    }

    /// [`KeepBody::judge`]: at once, unless the call failed while its body is still held; then
    /// once its transport lets go of it, or [`SETTLING`] passes (still being sent: no).
    async fn judged(&self, id: u32, failed: bool) -> bool {
        let now = lock(&self.shared).verdict(id, failed);
        let (replayable, dropped) = match now {
            Some(verdict) => verdict,
            None => {
                let settled = poll_fn(|cx| {
                    let mut r = lock(&self.shared);
                    match r.verdict(id, failed) {
                        Some(verdict) => Poll::Ready(verdict),
                        None => {
                            r.wait(cx.waker());
                            Poll::Pending
                        }
                    }
                });
                match tokio::time::timeout(SETTLING, settled).await {
                    Ok(verdict) => verdict,
                    // Judged as answered: what it gives back later is dropped too.
                    Err(_) => lock(&self.shared)
                        .verdict(id, false)
                        .unwrap_or((false, None)),
                }
            }
        };
        // The user's body is dropped outside the lock.
        drop(dropped);
        replayable
    }
}

impl<B> KeepBody<B> for Replayer<B>
where
    B: WrapBody + Unpin,
    B::Error: Send,
{
    /// Nothing: the bytes are in the recorder.
    type Owned = ();

    fn keep(req: &mut http::Request<B>, limit: usize) -> Option<(Self, http::Request<()>)> {
        if known_over(req.body(), limit) {
            return None;
        }
        // The body is taken out for the recorder, an empty one in its place until then (a
        // boxed zero-sized body: no allocation).
        let empty = B::from_replay(http_body_util::Empty::new().map_err(|never| match never {}));
        let (first, replayer) = Replayer::start(core::mem::replace(req.body_mut(), empty), limit);
        *req.body_mut() = B::from_replay(first);
        Some((replayer, head(req)))
    }

    /// Asked only of an attempt that ended unjudged (cut by its timeout): the body is recorded
    /// whole, or given back within the limit.
    fn replayable(&self) -> bool {
        lock(&self.shared).replayable()
    }

    async fn replay(&self, (): ()) -> B {
        B::from_replay(self.next().await)
    }

    async fn replay_attempt(&self, (): ()) -> (B, u32) {
        let body = self.next().await;
        let id = body.id;
        (B::from_replay(body), id)
    }

    async fn judge(&self, sent: u32, failed: bool) -> Option<bool> {
        Some(self.judged(sent, failed).await)
    }

    fn release(&self, sent: u32) {
        let mut r = lock(&self.shared);
        let sent = r.sent(sent);
        if sent.hand == Hand::Open {
            sent.hand = Hand::On;
            r.wake();
        }
    }
}
