//! tower: the retry loop as a [`Layer`] (feature `tower`), for hyper's client, tonic's
//! `Channel` and any other tower service.
//!
//! [`RetryLayer`] is built like the closure API [`Retry`](crate::Retry), and its service runs
//! the same loop `#[retry]` runs: full jitter, budgets, `timeout`, hedging, `Retry-After`.
//!
//! - **Requests.** An `http::Request<B>` is made replayable whatever its body: the body is
//!   buffered while it is sent, up to a limit ([`DEFAULT_BODY_LIMIT`], 64 KiB;
//!   [`RetryLayer::with_body_limit`]), and each retry sends the same bytes again. A body larger
//!   than the limit is sent once and never retried — no error for that: the first answer is
//!   the answer. A body still being sent when its attempt ends (a streaming upload) is not
//!   retried either. The inner service takes the body type it always did, so the layer must
//!   be able to wrap its replay in that type ([`ReplayBody`]): http-body-util's `BoxBody` and
//!   `UnsyncBoxBody`, and with feature `tonic`, `tonic::body::Body` (a `Channel`'s). Other
//!   request types: [`RetryLayer::clone_requests`] clones them.
//! - **Responses** are classified by [`classify_status`](crate::http::classify_status),
//!   honouring `Retry-After` ([`ByStatus`]); with feature `tonic`, a response whose headers
//!   carry `grpc-status` (a trailers-only gRPC error, as tonic servers send) by
//!   [`tonic::classify`](crate::tonic::classify) instead. [`RetryLayer::on_ok`] replaces it.
//!   A response that is retried is dropped before the retry; the one handed to the caller is
//!   never retried, so a streaming response is read only by the caller.
//! - **Errors** of the inner service (its `Error: Into<BoxError>`) are classified by
//!   [`TransportErrors`]; [`RetryLayer::on`] replaces it. The service's error is [`BoxError`].
//!
//! ```
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! use bytes::Bytes;
//! use http_body_util::{combinators::BoxBody, BodyExt, Full};
//! use retry_runtime::tower::RetryLayer;
//! use retry_runtime::Policy;
//! use std::convert::Infallible;
//! use std::sync::atomic::{AtomicU32, Ordering};
//! use std::sync::Arc;
//! use tower::{Service, ServiceExt};
//!
//! type Body = BoxBody<Bytes, Infallible>;
//!
//! // An upstream that answers 503 twice, then 200 with the body it received.
//! let calls = Arc::new(AtomicU32::new(0));
//! let seen = calls.clone();
//! let upstream = tower::service_fn(move |req: http::Request<Body>| {
//!     let n = seen.fetch_add(1, Ordering::SeqCst);
//!     async move {
//!         let body = req.into_body().collect().await?.to_bytes();
//!         let status = if n < 2 { 503 } else { 200 };
//!         Ok::<_, Infallible>(http::Response::builder().status(status).body(body).unwrap())
//!     }
//! });
//! let mut svc = tower::ServiceBuilder::new()
//!     .layer(RetryLayer::new(Policy::default()).with_name("upstream"))
//!     .service(upstream);
//! let req = http::Request::post("/orders").body(Full::from("one order").boxed()).unwrap();
//! let resp = svc.ready().await.unwrap().call(req).await.unwrap();
//! assert_eq!((resp.status().as_u16(), resp.body().as_ref()), (200, &b"one order"[..]));
//! assert_eq!(calls.load(Ordering::SeqCst), 3);
//! # }
//! ```

use core::future::{poll_fn, Future};
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
pub use tower_layer::Layer;
pub use tower_service::Service;

use crate::fleet::{Budget, NoBudget, SharedBudget};
use crate::hedge::{Hedge, HedgeWith, NoHedge};
use crate::timeout::{AttemptTimeout, NoTimeout};
pub use crate::AcceptOk;
use crate::{
    Classify, ClassifyOk, Decision, NoGiveUp, NoNotify, NoTrace, Policy, Retry, RetryAll, TimedOut,
    Transient,
};

/// The error of a [`RetryLayer`]'s service: the inner service's error, boxed (tower's
/// convention), or [`TimedOut`] when an attempt ran past [`RetryLayer::timeout`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The largest request body replayed by default: 64 KiB. A larger body is sent once.
pub const DEFAULT_BODY_LIMIT: usize = 64 * 1024;

/// The retry loop as a tower [`Layer`]: see the [module](self).
///
/// ```
/// use retry_runtime::tower::RetryLayer;
/// use retry_runtime::{Policy, RetryBudget};
/// use std::time::Duration;
///
/// static BUDGET: RetryBudget = RetryBudget::new(500);
/// let layer = RetryLayer::new(Policy::default())
///     .budget(&BUDGET)
///     .timeout(Duration::from_secs(2))
///     .with_name("inventory");
/// # let _ = layer;
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use = "a RetryLayer does nothing until it wraps a service"]
pub struct RetryLayer<
    On = TransportErrors,
    OnOk = ByStatus,
    B = NoBudget,
    L = NoTimeout,
    D = NoHedge,
    M = HttpRequests,
> {
    /// The loop's settings; its classifiers are set per call, from `on` and `on_ok`.
    retry: Retry<RetryAll, NoNotify, NoGiveUp, B, NoTrace, L, D>,
    on: On,
    on_ok: OnOk,
    limit: usize,
    mode: M,
}

impl RetryLayer {
    /// Retry under `policy`: transport errors by [`TransportErrors`], responses by
    /// [`ByStatus`], HTTP request bodies replayed up to [`DEFAULT_BODY_LIMIT`].
    ///
    /// ```
    /// use retry_runtime::tower::RetryLayer;
    /// use retry_runtime::Policy;
    /// let layer = RetryLayer::new(Policy::new().with_attempts(5));
    /// # let _ = layer;
    /// ```
    pub fn new(policy: Policy) -> Self {
        RetryLayer {
            retry: Retry::new(policy).with_name("tower"),
            on: TransportErrors,
            on_ok: ByStatus,
            limit: DEFAULT_BODY_LIMIT,
            mode: HttpRequests,
        }
    }
}

impl<On, OnOk, B, L, D, M> RetryLayer<On, OnOk, B, L, D, M> {
    /// Which errors of the inner service are retried: a [`Classify`] of [`BoxError`], usually
    /// a closure `Fn(&BoxError) -> D` where `D: Into<Decision>`.
    ///
    /// ```
    /// use retry_runtime::tower::{BoxError, RetryLayer};
    /// use retry_runtime::Policy;
    /// let layer = RetryLayer::new(Policy::default()).on(|_: &BoxError| true);
    /// # let _ = layer;
    /// ```
    pub fn on<On2>(self, on: On2) -> RetryLayer<On2, OnOk, B, L, D, M> {
        RetryLayer {
            retry: self.retry,
            on,
            on_ok: self.on_ok,
            limit: self.limit,
            mode: self.mode,
        }
    }

    /// Which responses are retried: a [`Classify`] of the inner service's response, usually a
    /// closure `Fn(&http::Response<B>) -> D` where `D: Into<Decision>`. A response it retries
    /// is treated like a retryable error; when retrying ends on one, it is returned.
    ///
    /// ```
    /// use retry_runtime::tower::RetryLayer;
    /// use retry_runtime::Policy;
    /// // Retry only 503s, ignoring Retry-After.
    /// let layer = RetryLayer::new(Policy::default())
    ///     .on_ok(|r: &http::Response<String>| r.status() == 503);
    /// # let _ = layer;
    /// ```
    pub fn on_ok<OnOk2>(self, on_ok: OnOk2) -> RetryLayer<On, OnOk2, B, L, D, M> {
        RetryLayer {
            retry: self.retry,
            on: self.on,
            on_ok,
            limit: self.limit,
            mode: self.mode,
        }
    }

    /// Share a budget with every other call that uses it (see
    /// [`Retry::budget`](crate::Retry::budget)).
    ///
    /// ```
    /// use retry_runtime::tower::RetryLayer;
    /// use retry_runtime::{Policy, RetryBudget};
    /// static BUDGET: RetryBudget = RetryBudget::new(500);
    /// let layer = RetryLayer::new(Policy::default()).budget(&BUDGET);
    /// # let _ = layer;
    /// ```
    pub fn budget<S: SharedBudget>(self, budget: &S) -> RetryLayer<On, OnOk, &S, L, D, M> {
        RetryLayer {
            retry: self.retry.budget(budget),
            on: self.on,
            on_ok: self.on_ok,
            limit: self.limit,
            mode: self.mode,
        }
    }

    /// Limit each attempt to `timeout` (see [`Retry::timeout`](crate::Retry::timeout)): an
    /// attempt cut fails with [`TimedOut`], retried.
    ///
    /// ```
    /// use retry_runtime::tower::RetryLayer;
    /// use retry_runtime::Policy;
    /// use std::time::Duration;
    /// let layer = RetryLayer::new(Policy::default()).timeout(Duration::from_secs(1));
    /// # let _ = layer;
    /// ```
    pub fn timeout(self, timeout: Duration) -> RetryLayer<On, OnOk, B, Duration, D, M> {
        RetryLayer {
            retry: self.retry.timeout(timeout),
            on: self.on,
            on_ok: self.on_ok,
            limit: self.limit,
            mode: self.mode,
        }
    }

    /// Hedge each request (see [`Retry::hedge`](crate::Retry::hedge)). A hedge of a request
    /// whose body is still being sent waits for the body to be buffered.
    ///
    /// ```
    /// use retry_runtime::hedge::Hedge;
    /// use retry_runtime::tower::RetryLayer;
    /// use retry_runtime::Policy;
    /// use std::time::Duration;
    /// let layer = RetryLayer::new(Policy::default()).hedge(Hedge::After(Duration::from_millis(50)));
    /// # let _ = layer;
    /// ```
    pub fn hedge(self, hedge: Hedge) -> RetryLayer<On, OnOk, B, L, Hedge, M> {
        RetryLayer {
            retry: self.retry.hedge(hedge),
            on: self.on,
            on_ok: self.on_ok,
            limit: self.limit,
            mode: self.mode,
        }
    }

    /// The name hooks and metrics see as [`RetryEvent::function`](crate::RetryEvent::function)
    /// (default `"tower"`).
    ///
    /// ```
    /// use retry_runtime::tower::RetryLayer;
    /// use retry_runtime::Policy;
    /// let layer = RetryLayer::new(Policy::default()).with_name("billing");
    /// # let _ = layer;
    /// ```
    pub fn with_name(mut self, name: &'static str) -> Self {
        self.retry = self.retry.with_name(name);
        self
    }

    /// Replay request bodies of at most `limit` bytes (default [`DEFAULT_BODY_LIMIT`]); a
    /// larger body is sent once and not retried. `0` replays only empty bodies.
    ///
    /// ```
    /// use retry_runtime::tower::RetryLayer;
    /// use retry_runtime::Policy;
    /// let layer = RetryLayer::new(Policy::default()).with_body_limit(1 << 20);
    /// # let _ = layer;
    /// ```
    pub fn with_body_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// Take any `Req: Clone` and clone it for each attempt, instead of replaying an
    /// `http::Request`'s body; every `Ok` response is the answer unless
    /// [`on_ok`](RetryLayer::on_ok) says otherwise (set it after this).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_runtime::tower::{BoxError, RetryLayer};
    /// use retry_runtime::Policy;
    /// use tower::{Service, ServiceExt};
    ///
    /// let flaky = tower::service_fn(|n: u32| async move {
    ///     if n % 2 == 0 { Err::<u32, BoxError>("even".into()) } else { Ok(n) }
    /// });
    /// let layer = RetryLayer::new(Policy::new().with_attempts(2))
    ///     .clone_requests()
    ///     .on(|_: &BoxError| true);
    /// let mut svc = tower::ServiceBuilder::new().layer(layer).service(flaky);
    /// assert_eq!(svc.ready().await.unwrap().call(7).await.unwrap(), 7);
    /// # }
    /// ```
    pub fn clone_requests(self) -> RetryLayer<On, AcceptOk, B, L, D, CloneRequests> {
        RetryLayer {
            retry: self.retry,
            on: self.on,
            on_ok: AcceptOk,
            limit: self.limit,
            mode: CloneRequests,
        }
    }
}

impl<S, On: Clone, OnOk: Clone, B: Clone, L: Clone, D: Clone, M: Clone> Layer<S>
    for RetryLayer<On, OnOk, B, L, D, M>
{
    type Service = RetryService<S, On, OnOk, B, L, D, M>;

    fn layer(&self, inner: S) -> Self::Service {
        RetryService {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service a [`RetryLayer`] makes: each request runs the retry loop around `S`.
#[derive(Clone, Debug)]
pub struct RetryService<S, On, OnOk, B, L, D, M> {
    inner: S,
    layer: RetryLayer<On, OnOk, B, L, D, M>,
}

/// The request mode of [`RetryLayer::new`]: `http::Request<B>`, its body replayed.
#[derive(Clone, Copy, Debug, Default)]
pub struct HttpRequests;

/// The request mode of [`RetryLayer::clone_requests`]: any `Req: Clone`, cloned per attempt.
#[derive(Clone, Copy, Debug, Default)]
pub struct CloneRequests;

/// The default classifier of the inner service's errors: the first cause down the source
/// chain that says something decides.
///
/// - [`TimedOut`] (the layer's own timeout): retry;
/// - an `std::io::Error`: by its [`Transient`] table (a refused or reset connection is
///   retried);
/// - with feature `tonic`, a `tonic::Status`: by [`tonic::classify`](crate::tonic::classify);
/// - hyper's client errors by their message: a failed connect, or a connection closed before
///   the response: retry;
/// - anything else: stop.
///
/// ```
/// use retry_runtime::tower::{BoxError, TransportErrors};
/// use retry_runtime::{Classify, Decision, TimedOut};
///
/// let refused: BoxError = std::io::Error::from(std::io::ErrorKind::ConnectionRefused).into();
/// assert_eq!(TransportErrors.classify(&refused), Decision::Retry);
/// assert_eq!(TransportErrors.classify(&BoxError::from(TimedOut)), Decision::Retry);
/// assert_eq!(TransportErrors.classify(&BoxError::from("invalid uri")), Decision::Stop);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct TransportErrors;

impl Classify<BoxError> for TransportErrors {
    fn classify(&self, error: &BoxError) -> Decision {
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&**error);
        while let Some(e) = cause {
            if e.is::<TimedOut>() {
                return Decision::Retry;
            }
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                return io.decision();
            }
            #[cfg(feature = "tonic")]
            if let Some(status) = e.downcast_ref::<tonic::Status>() {
                return status.decision();
            }
            let message = e.to_string();
            // hyper-util's legacy client (`client error (Connect)`), hyper's closed connection.
            if message == "client error (Connect)"
                || message == "connection closed before message completed"
            {
                return Decision::Retry;
            }
            cause = e.source();
        }
        Decision::Stop
    }
}

/// The default classifier of responses: by status with `Retry-After`
/// ([`classify_response`](crate::http::classify_response)); with feature `tonic`, a response
/// carrying `grpc-status` in its headers by [`tonic::classify`](crate::tonic::classify). A
/// success status is decided without reading a header (nor, with `tonic`, more than one).
///
/// ```
/// use retry_runtime::tower::ByStatus;
/// use retry_runtime::{ClassifyOk, Decision};
/// use std::time::Duration;
///
/// let ok = http::Response::new(());
/// assert_eq!(ByStatus.classify_ok(&ok), Decision::Stop); // not a failure: the answer
/// let busy = http::Response::builder().status(503).header("retry-after", "1").body(()).unwrap();
/// assert_eq!(ByStatus.classify_ok(&busy), Decision::RetryAfter(Duration::from_secs(1)));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ByStatus;

impl<T> ClassifyOk<http::Response<T>> for ByStatus {
    fn classify_ok(&self, response: &http::Response<T>) -> Decision {
        let headers = response.headers();
        #[cfg(feature = "tonic")]
        if let Some(code) = headers.get("grpc-status") {
            let code = tonic::Code::from_bytes(code.as_bytes());
            return crate::tonic::classify(code, headers);
        }
        crate::http::classify_response_now(response.status(), headers)
    }
}

/// A request body type the layer can rebuild around a replayed body: the inner service takes
/// the same `http::Request<B>` it always did, so the replay is wrapped in a `B`. Implemented
/// for http-body-util's boxed bodies and, with feature `tonic`, `tonic::body::Body`.
pub trait ReplayBody: Body<Data = Bytes> + Send + Sized + 'static {
    /// `body`, as a `Self`.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full};
    /// use retry_runtime::tower::ReplayBody;
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
struct Replay<B: Body> {
    prefix: VecDeque<Bytes>,
    /// In a `Mutex` only to make the replay `Sync` (for `BoxBody`) whatever `B` is: polling it
    /// goes through `&mut` (`get_mut`); only `is_end_stream` and `size_hint`, which take
    /// `&self`, lock it (uncontended: the replay has one owner).
    rest: Mutex<Option<B>>,
    trailers: Option<HeaderMap>,
    shared: Shared<B>,
    limit: usize,
}

impl<B: Body> Replay<B> {
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

impl<B: Body<Data = Bytes> + Unpin> Body for Replay<B> {
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

impl<B: Body> Drop for Replay<B> {
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
struct Replayer<B> {
    shared: Shared<B>,
    limit: usize,
}

impl<B: Body<Data = Bytes> + Unpin> Replayer<B> {
    /// The first attempt's body, and the replayer (`None` when the body is known to be over
    /// the limit: it is sent as it is, once).
    fn start(body: B, limit: usize) -> Result<(Replay<B>, Self), B> {
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
        let first = Replay {
            prefix: VecDeque::new(),
            rest: Mutex::new(Some(body)),
            trailers: None,
            shared: shared.clone(),
            limit,
        };
        Ok((first, Replayer { shared, limit }))
    }

    fn replayable(&self) -> bool {
        lock(&self.shared).replayable()
    }

    /// The next attempt's body, once the body is complete or given back (a hedge may start
    /// while the first attempt still sends it); never, when it went over the limit (the call
    /// then ends on the first attempt's answer, which drops this).
    fn next(&self) -> impl Future<Output = Replay<B>> + '_ {
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
            Poll::Ready(Replay {
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

/// The loop's future, boxed: what a call becomes once its first attempt failed (or at once,
/// with a timeout, a hedge or a `max_elapsed`, which act during the first attempt).
pub type BoxFuture<R> = Pin<Box<dyn Future<Output = Result<R, BoxError>> + Send>>;

/// The first attempt, for the loop's first call of the operation: still to be awaited, or
/// already answered (and not accepted).
enum First<F, R> {
    Sent(F),
    Answered(Result<R, BoxError>),
}

/// What a call keeps to retry after its first attempt: the service to clone, the layer, the
/// request (or its head and its recorded body). A [`ResponseFuture`] uses it only when the
/// first attempt did not succeed.
pub trait Resume: Sized {
    /// The inner service's future.
    type Future: Future<Output = Result<Self::Response, Self::Error>>;
    /// The inner service's response.
    type Response;
    /// The inner service's error.
    type Error: Into<BoxError>;

    /// The first attempt's outcome: the answer, when it succeeded (the loop's bookkeeping of a
    /// first success done); otherwise the loop, from that failure on.
    fn first(
        self,
        outcome: Result<Self::Response, Self::Error>,
    ) -> Result<Self::Response, BoxFuture<Self::Response>>;
}

pin_project_lite::pin_project! {
    /// The future of a [`RetryService`]: the first attempt's future itself, polled in place (a
    /// first-attempt success boxes no retry loop; a replayed HTTP body is still recorded as it
    /// is sent), and the boxed loop only once it failed.
    pub struct ResponseFuture<T: Resume> {
        #[pin]
        state: State<T::Future, T::Response>,
        resume: Option<T>,
    }
}

pin_project_lite::pin_project! {
    #[project = StateProj]
    enum State<F, R> {
        First { #[pin] future: F },
        Looping { future: BoxFuture<R> },
    }
}

impl<T: Resume> ResponseFuture<T> {
    fn first(future: T::Future, resume: T) -> Self {
        ResponseFuture {
            state: State::First { future },
            resume: Some(resume),
        }
    }

    fn looping(future: BoxFuture<T::Response>) -> Self {
        ResponseFuture {
            state: State::Looping { future },
            resume: None,
        }
    }
}

impl<T: Resume> Future for ResponseFuture<T> {
    type Output = Result<T::Response, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            let outcome = match this.state.as_mut().project() {
                StateProj::Looping { future } => return future.as_mut().poll(cx),
                StateProj::First { future } => match future.poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(outcome) => outcome,
                },
            };
            let resume = this
                .resume
                .take()
                .expect("a ResponseFuture polled after it ended");
            match resume.first(outcome) {
                Ok(response) => return Poll::Ready(Ok(response)),
                Err(future) => this.state.set(State::Looping { future }),
            }
        }
    }
}

/// A [`RetryService`] call of an `http::Request`, kept for its retries.
pub struct HttpCall<S, Rb, On, OnOk, B, L, D> {
    template: S,
    layer: RetryLayer<On, OnOk, B, L, D, HttpRequests>,
    parts: http::request::Parts,
    replayer: Option<Replayer<Rb>>,
}

impl<S, Rb, On, OnOk, B, L, D> HttpCall<S, Rb, On, OnOk, B, L, D>
where
    S: Service<http::Request<Rb>> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send,
    S::Response: Send,
    Rb: ReplayBody + Unpin,
    Rb::Error: Send,
    On: Classify<BoxError> + Clone + Send + Sync + 'static,
    OnOk: ClassifyOk<S::Response> + Clone + Send + Sync + 'static,
    B: Budget + Clone + Send + Sync + 'static,
    L: AttemptTimeout<BoxError> + Clone + Send + Sync + 'static,
    D: HedgeWith + Clone + Send + Sync + 'static,
{
    /// The loop, its first attempt `first`.
    fn looping(self, first: First<S::Future, S::Response>) -> BoxFuture<S::Response> {
        let HttpCall {
            template,
            layer,
            parts,
            replayer,
        } = self;
        Box::pin(async move {
            let retry = match replayer {
                Some(_) => layer.retry,
                None => layer.retry.once(),
            };
            let replayer = replayer.as_ref();
            // A request whose body cannot be sent again (it went over the limit, or was still
            // being sent when its attempt ended) ends the call on that attempt's outcome.
            let again = || replayer.is_some_and(Replayer::replayable);
            let (on, on_ok) = (&layer.on, &layer.on_ok);
            let retry = retry
                .on(move |e: &BoxError| {
                    if again() {
                        on.classify(e)
                    } else {
                        Decision::Stop
                    }
                })
                .on_ok(move |r: &S::Response| {
                    if again() {
                        on_ok.classify_ok(r)
                    } else {
                        Decision::Stop
                    }
                });
            let mut first = Some(first);
            retry
                .call_async(move || {
                    // Nothing borrowed from the call is held across an await but what is
                    // `Sync` by the bounds: the service and the request head are cloned here.
                    let first = first.take();
                    let next = first.is_none().then(|| (template.clone(), parts.clone()));
                    async move {
                        match (first, next, replayer) {
                            (Some(First::Sent(first)), _, _) => first.await.map_err(Into::into),
                            (Some(First::Answered(outcome)), _, _) => outcome,
                            (None, Some((mut svc, parts)), Some(replayer)) => {
                                let body = Rb::from_replay(replayer.next().await);
                                poll_fn(|cx| svc.poll_ready(cx)).await.map_err(Into::into)?;
                                let req = http::Request::from_parts(parts, body);
                                svc.call(req).await.map_err(Into::into)
                            }
                            _ => unreachable!("a request sent once is not retried"),
                        }
                    }
                })
                .await
        })
    }
}

impl<S, Rb, On, OnOk, B, L, D> Resume for HttpCall<S, Rb, On, OnOk, B, L, D>
where
    S: Service<http::Request<Rb>> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send,
    S::Response: Send,
    Rb: ReplayBody + Unpin,
    Rb::Error: Send,
    On: Classify<BoxError> + Clone + Send + Sync + 'static,
    OnOk: ClassifyOk<S::Response> + Clone + Send + Sync + 'static,
    B: Budget + Clone + Send + Sync + 'static,
    L: AttemptTimeout<BoxError> + Clone + Send + Sync + 'static,
    D: HedgeWith + Clone + Send + Sync + 'static,
{
    type Future = S::Future;
    type Response = S::Response;
    type Error = S::Error;

    fn first(
        self,
        outcome: Result<S::Response, S::Error>,
    ) -> Result<S::Response, BoxFuture<S::Response>> {
        accept_first(outcome, &self.layer).map_err(|outcome| self.looping(First::Answered(outcome)))
    }
}

impl<S, Rb, On, OnOk, B, L, D> Service<http::Request<Rb>>
    for RetryService<S, On, OnOk, B, L, D, HttpRequests>
where
    S: Service<http::Request<Rb>> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send,
    S::Response: Send,
    Rb: ReplayBody + Unpin,
    Rb::Error: Send,
    On: Classify<BoxError> + Clone + Send + Sync + 'static,
    OnOk: ClassifyOk<S::Response> + Clone + Send + Sync + 'static,
    B: Budget + Clone + Send + Sync + 'static,
    L: AttemptTimeout<BoxError> + Clone + Send + Sync + 'static,
    D: HedgeWith + Clone + Send + Sync + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<HttpCall<S, Rb, On, OnOk, B, L, D>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: http::Request<Rb>) -> Self::Future {
        let (parts, body) = req.into_parts();
        let (first, replayer) = match Replayer::start(body, self.layer.limit) {
            Ok((first, replayer)) => (Rb::from_replay(first), Some(replayer)),
            Err(body) => (body, None),
        };
        // The first attempt goes to the service made ready; the others to clones of it.
        let first = self
            .inner
            .call(http::Request::from_parts(parts.clone(), first));
        let call = HttpCall {
            template: self.inner.clone(),
            layer: self.layer.clone(),
            parts,
            replayer,
        };
        if call.layer.retry.first_attempt_alone::<BoxError>() {
            ResponseFuture::first(first, call)
        } else {
            ResponseFuture::looping(call.looping(First::Sent(first)))
        }
    }
}

/// A [`RetryService`] call of a cloned request, kept for its retries.
pub struct CloneCall<S, Req, On, OnOk, B, L, D> {
    template: S,
    layer: RetryLayer<On, OnOk, B, L, D, CloneRequests>,
    req: Req,
}

impl<S, Req, On, OnOk, B, L, D> CloneCall<S, Req, On, OnOk, B, L, D>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send,
    S::Response: Send,
    Req: Clone + Send + 'static,
    On: Classify<BoxError> + Clone + Send + Sync + 'static,
    OnOk: ClassifyOk<S::Response> + Clone + Send + Sync + 'static,
    B: Budget + Clone + Send + Sync + 'static,
    L: AttemptTimeout<BoxError> + Clone + Send + Sync + 'static,
    D: HedgeWith + Clone + Send + Sync + 'static,
{
    /// The loop, its first attempt `first`.
    fn looping(self, first: First<S::Future, S::Response>) -> BoxFuture<S::Response> {
        let CloneCall {
            template,
            layer,
            req,
        } = self;
        Box::pin(async move {
            let (on, on_ok) = (&layer.on, &layer.on_ok);
            let retry = layer
                .retry
                .on(move |e: &BoxError| on.classify(e))
                .on_ok(move |r: &S::Response| on_ok.classify_ok(r));
            let mut first = Some(first);
            retry
                .call_async(move || {
                    let first = first.take();
                    let next = first.is_none().then(|| (template.clone(), req.clone()));
                    async move {
                        match (first, next) {
                            (Some(First::Sent(first)), _) => first.await.map_err(Into::into),
                            (Some(First::Answered(outcome)), _) => outcome,
                            (None, Some((mut svc, req))) => {
                                poll_fn(|cx| svc.poll_ready(cx)).await.map_err(Into::into)?;
                                svc.call(req).await.map_err(Into::into)
                            }
                            (None, None) => unreachable!("each attempt has its service"),
                        }
                    }
                })
                .await
        })
    }
}

/// A first attempt's outcome, taken when `on_ok` accepts it (with the loop's bookkeeping of a
/// first success); otherwise handed back, boxed as the loop's error type, for the loop.
fn accept_first<R, E: Into<BoxError>, On, OnOk: ClassifyOk<R>, B: Budget, L, D, M>(
    outcome: Result<R, E>,
    layer: &RetryLayer<On, OnOk, B, L, D, M>,
) -> Result<R, Result<R, BoxError>> {
    match outcome {
        Ok(response) if layer.on_ok.classify_ok(&response) == Decision::Stop => {
            layer.retry.first_succeeded::<R, BoxError>();
            Ok(response)
        }
        outcome => Err(outcome.map_err(Into::into)),
    }
}

impl<S, Req, On, OnOk, B, L, D> Resume for CloneCall<S, Req, On, OnOk, B, L, D>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send,
    S::Response: Send,
    Req: Clone + Send + 'static,
    On: Classify<BoxError> + Clone + Send + Sync + 'static,
    OnOk: ClassifyOk<S::Response> + Clone + Send + Sync + 'static,
    B: Budget + Clone + Send + Sync + 'static,
    L: AttemptTimeout<BoxError> + Clone + Send + Sync + 'static,
    D: HedgeWith + Clone + Send + Sync + 'static,
{
    type Future = S::Future;
    type Response = S::Response;
    type Error = S::Error;

    fn first(
        self,
        outcome: Result<S::Response, S::Error>,
    ) -> Result<S::Response, BoxFuture<S::Response>> {
        accept_first(outcome, &self.layer).map_err(|outcome| self.looping(First::Answered(outcome)))
    }
}

impl<S, Req, On, OnOk, B, L, D> Service<Req> for RetryService<S, On, OnOk, B, L, D, CloneRequests>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send,
    S::Response: Send,
    Req: Clone + Send + 'static,
    On: Classify<BoxError> + Clone + Send + Sync + 'static,
    OnOk: ClassifyOk<S::Response> + Clone + Send + Sync + 'static,
    B: Budget + Clone + Send + Sync + 'static,
    L: AttemptTimeout<BoxError> + Clone + Send + Sync + 'static,
    D: HedgeWith + Clone + Send + Sync + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<CloneCall<S, Req, On, OnOk, B, L, D>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        let first = self.inner.call(req.clone());
        let call = CloneCall {
            template: self.inner.clone(),
            layer: self.layer.clone(),
            req,
        };
        if call.layer.retry.first_attempt_alone::<BoxError>() {
            ResponseFuture::first(first, call)
        } else {
            ResponseFuture::looping(call.looping(First::Sent(first)))
        }
    }
}
