//! The recorder behind [`Replayer`].
//!
//! A body that is not `Clone` is recorded as the first attempt sends it.
//!
//! The next attempt sends it again.
//!
//! Each attempt's body has its own fate.

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

use super::{known_over, KeepBody, WrapBody};

/// How long a failed attempt's verdict waits for its transport to let go of its body.
///
/// hyper's connection task drops the body as soon as it sees the failure.
///
/// A body held past this is still being sent.
///
/// Such a body is not sent again.
const SETTLING: Duration = Duration::from_millis(500);

/// Where the original body is, for the next attempt.
enum Source<B> {
    /// An attempt's body holds it, or held it.
    ///
    /// A body that held it reached its end, or went over the limit.
    ///
    /// Or that body was dropped with an attempt the server answered.
    Sending,
    /// Given back unfinished by attempt `by`'s body, dropped midway.
    ///
    /// That happens on a failed connection.
    ///
    /// The next attempt takes it once `by` is judged to have failed.
    Returned { rest: B, by: u32 },
}

/// What became of one attempt's body.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Its transport holds it, unfinished.
    Sending,
    /// Sent to its end (its last frame, or its trailers).
    ///
    /// It may also be made of recorded bytes alone.
    Whole,
    /// Dropped unfinished: the rest of the original given back.
    GivenBack,
}

/// What may become of the rest an attempt's body gives back.
///
/// What its call came to decides.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hand {
    /// Its call runs: the rest waits for its verdict.
    Open,
    /// Its call failed with no answer, or was cut.
    ///
    /// The rest goes to the next attempt.
    On,
    /// The server answered while the body was unfinished.
    ///
    /// The rest is dropped, never sent.
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
    /// More than the limit was sent, or the body failed.
    ///
    /// Nothing can be replayed.
    over: bool,
    source: Source<B>,
    /// The first attempt's body, and later ones' (numbered from 1).
    first: Sent,
    later: Vec<Sent>,
    /// The waiting futures of the call's one loop.
    ///
    /// Hedges wait for the body to be complete or given back.
    ///
    /// Verdicts wait for their body to settle.
    waiting: Vec<Waker>,
}

impl<B> Recorded<B> {
    /// Whether a next attempt can be sent.
    ///
    /// It can when the body is complete, or given back within the limit.
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

    /// The verdict on attempt `id`'s request once its call ended.
    ///
    /// `failed`: it ended with no answer.
    ///
    /// `None` while its body is still being sent after a failure.
    ///
    /// Its transport lets go of it soon.
    ///
    /// Only a call that failed hands on a body given back.
    ///
    /// A body the server answered before its end is not sent again.
    ///
    /// Nor is its rest.
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

/// One attempt's body: the bytes recorded so far.
///
/// Then the rest of the original, recorded while it is sent.
///
/// Then the trailers.
pub(super) struct AttemptBody<B: Body> {
    prefix: VecDeque<Bytes>,
    /// In a `Mutex` only to make the replay `Sync` (for `BoxBody`) whatever `B` is.
    ///
    /// Polling it goes through `&mut` (`get_mut`).
    ///
    /// Only `is_end_stream` and `size_hint`, which take `&self`, lock it.
    ///
    /// The lock is uncontended, as the replay has one owner.
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

    /// `frame` recorded.
    ///
    /// `end`: it is the body's last (its trailers, or the body says so).
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
        // Whole once its last frame is out.
        //
        // That holds whether or not its transport polls for the end.
        //
        // A server answering after reading it all answers a whole body.
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
        // At its end, or past its last frame or byte, it is whole.
        //
        // What is recorded is the body.
        //
        // A transport that sent it need not poll for the end.
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

/// A copy of `req`'s head.
///
/// A [`Replayer`] keeps it beside its recording.
fn head<B>(req: &http::Request<B>) -> http::Request<()> {
    let mut head = http::Request::new(());
    *head.method_mut() = req.method().clone();
    *head.uri_mut() = req.uri().clone();
    *head.version_mut() = req.version();
    *head.headers_mut() = req.headers().clone();
    *head.extensions_mut() = req.extensions().clone();
    head
}

/// How a body that is not `Clone` is kept: recorded as it is sent.
///
/// A boxed body or a stream is such a body.
///
/// The first attempt records the body as it sends it.
///
/// It records within the layer's limit.
///
/// Each next attempt sends the recorded bytes again.
///
/// They are wrapped in the body type ([`WrapBody`]).
///
/// Then the attempt sends the rest, if a failed connection gave the body back unfinished.
///
/// Each attempt's body decides for its attempt alone.
///
/// A body the server answered before it was sent whole is not replayed.
///
/// Nor is one that went over the limit.
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

    /// The next attempt's body, once the body is complete.
    ///
    /// Or once an attempt that failed with no answer gave the body back.
    ///
    /// A hedge may start while the first attempt still sends the body.
    ///
    /// Never, when the body went over the limit or its rest was dropped.
    ///
    /// The call then ends on the answer that did it, which drops this.
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

    /// [`KeepBody::judge`]: at once, unless the call failed while its body is still held.
    ///
    /// The verdict then waits until the transport lets go of the body, or [`SETTLING`] passes.
    ///
    /// If the body is still being sent by then, the verdict is no.
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
        // The body is taken out for the recorder.
        //
        // An empty one is in its place until then.
        //
        // The empty one is a boxed zero-sized body: no allocation.
        let empty = B::from_replay(http_body_util::Empty::new().map_err(|never| match never {}));
        let (first, replayer) = Replayer::start(core::mem::replace(req.body_mut(), empty), limit);
        *req.body_mut() = B::from_replay(first);
        Some((replayer, head(req)))
    }

    /// Asked only of an attempt that ended unjudged (cut by its timeout).
    ///
    /// The body is recorded whole, or given back within the limit.
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
