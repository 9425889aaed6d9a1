//! The server end of a chain of services: [`ChainLayer`].
//!
//! It runs each request's handler in a scope.
//!
//! The scope carries the caller's deadline down to every retry loop inside.
//!
//! It carries "already retried" back up in the answer.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::Arc;

use http::{HeaderMap, HeaderName, HeaderValue};
use http_body::{Body, Frame, SizeHint};

use super::{Layer, Service};
use crate::classify::headers::{
    GRPC_RETRY_PUSHBACK_MS, GRPC_STATUS, GRPC_TIMEOUT, X_ENVOY_EXPECTED_RQ_TIMEOUT_MS,
    X_SHOULD_RETRY,
};
use crate::middleware::hops;
use crate::policy::scope::{self, Scope};

/// The server end of a chain of services.
///
/// Use it as an axum `Router::layer` or a tonic `Server::builder().layer`.
///
/// Each request's handler runs in a scope.
///
/// Every retry loop polled inside the handler sees the scope.
///
/// That holds whatever the loop's face: `#[retry]`, [`Retry`](crate::Retry),
/// [`RetryLayer`](super::RetryLayer),
/// [`RetryMiddleware`](crate::reqwest_middleware::RetryMiddleware).
///
/// The guide's `chain` page has the walkthrough.
///
/// - **Down: the caller's deadline.**
///   - [`ChainLayer::new`] reads it from `x-envoy-expected-rq-timeout-ms`, in milliseconds.
///   - [`deadline_header`](ChainLayer::deadline_header) names another header.
///   - A gRPC request's is its `grpc-timeout` (see [`grpc`](ChainLayer::grpc)).
///   - `0` is no deadline, as Envoy reads it.
///   - Of several values, the smallest counts.
///   - A malformed or absent header is no deadline.
///   - [`deadline`](ChainLayer::deadline) sets one of the service's own.
///   - Inside the scope, every loop's deadline is the earlier of its `max_elapsed` and the
///     request's.
///   - An attempt's `timeout` is cut to what is left.
///   - No attempt starts once the deadline has passed
///     ([`GiveUpReason::Elapsed`](crate::GiveUpReason)).
///   - An attempt or call cut by the request's deadline counts for nothing in a shared breaker
///     or throttle.
///   - Each attempt a `RetryLayer` or `RetryMiddleware` sends carries the time left.
///   - The time left goes in the same header (gRPC: `grpc-timeout`).
///   - A deadline the request already carries there is lowered to it, never raised.
/// - **Up: "already retried".** The answer gets `x-should-retry: false` when:
///   - A loop inside the scope gave up on a failure it retried.
///   - Or it gave up on one it would have retried but for a limit.
///   - Or it gave up because its downstream said "don't retry".
///   - The limits: its attempts (once it retried), time, budget, throttle, breaker.
///   - A server's wait past its `cap` is a limit too.
///   - And the handler's answer is one its caller would retry.
///   - That is HTTP `5xx` or `429`; gRPC `UNAVAILABLE` or `RESOURCE_EXHAUSTED`.
///   - For gRPC, the mark is `grpc-retry-pushback-ms: -1`, in the trailers.
///   - A trailers-only answer has it in the headers.
///   - The chain's retries then happen at the one tier next to the failure.
///   - A failure no loop gave up on is left alone.
///   - So is one a single-attempt loop ended on.
///   - The reason: a tier told to fail fast leaves the retry to its caller.
///   - So is one a loop's [`CancelToken`](crate::CancelToken) ended.
///   - The reason: another replica may still serve the caller.
///   - An answer is gRPC by its own `content-type`, never the request's.
///   - [`grpc`](ChainLayer::grpc) makes every answer gRPC.
///
/// **Trust.** A request's headers are whatever its sender wrote.
///
/// [`ChainLayer::new`] believes the request's deadline.
///
/// Use it behind your own proxies and for calls from your own services.
///
/// A service outside clients reach takes [`ChainLayer::edge`].
///
/// That layer reads no deadline from the request.
///
/// Either way, one request's headers bound its own loops alone.
///
/// The scope follows the handler's future, not its spawned tasks.
///
/// Wrap a spawned future in [`in_chain`] to keep it inside.
///
/// Wrap work shared between requests in [`out_of_chain`] to exclude it.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_jitter::tower::ChainLayer;
/// use retry_jitter::{Policy, Retry};
/// use std::time::Duration;
/// use tower::{Service, ServiceExt};
///
/// // A handler whose own retry loop fails every attempt against its downstream.
/// let handler = tower::service_fn(|_req: http::Request<String>| async {
///     let policy = Policy::new().with_attempts(3).with_base(Duration::from_millis(10));
///     let out: Result<(), &str> = Retry::new(policy).call_async(|| async { Err("down") }).await;
///     let status = if out.is_ok() { 200 } else { 503 };
///     let resp = http::Response::builder().status(status).body(String::new());
///     Ok::<_, std::convert::Infallible>(resp.unwrap())
/// });
/// let mut svc = tower::ServiceBuilder::new().layer(ChainLayer::new()).service(handler);
/// let resp = svc.ready().await.unwrap().call(http::Request::new(String::new())).await.unwrap();
/// assert_eq!(resp.status(), 503);
/// assert_eq!(resp.headers()["x-should-retry"], "false"); // this tier already retried
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct ChainLayer {
    /// Where a request's deadline comes from.
    deadlines: Deadlines,
}

/// What a [`ChainLayer`] reads a request's deadline from.
///
/// It also holds the deadline the layer adds of its own.
#[derive(Clone, Debug, Default)]
struct Deadlines {
    /// `false` at the edge: nothing the request carries is read.
    trusted: bool,
    /// The HTTP deadline header's name (`None`: Envoy's).
    header: Option<HeaderName>,
    /// Every request is gRPC.
    ///
    /// Its deadline is `grpc-timeout`, its answers marked as gRPC's.
    grpc: bool,
    /// The service's own deadline for each request.
    own: Option<Duration>,
}

impl ChainLayer {
    /// A layer for a service behind your own proxies.
    ///
    /// See "Trust" above.
    ///
    /// It reads the caller's deadline from `x-envoy-expected-rq-timeout-ms` (HTTP).
    ///
    /// A gRPC request, known by its `content-type`, gives it in `grpc-timeout`.
    ///
    /// The HTTP header keeps its default name.
    ///
    /// ```
    /// use retry_jitter::tower::ChainLayer;
    /// let handler = tower::service_fn(|_: http::Request<String>| async {
    ///     Ok::<_, std::convert::Infallible>(http::Response::new(String::from("hello")))
    /// });
    /// let svc = tower::ServiceBuilder::new().layer(ChainLayer::new()).service(handler);
    /// # let _ = svc;
    /// ```
    pub fn new() -> Self {
        ChainLayer {
            deadlines: Deadlines {
                trusted: true,
                ..Deadlines::default()
            },
        }
    }

    /// A layer for a service outside clients reach.
    ///
    /// See "Trust" above.
    ///
    /// It reads no deadline from the request.
    ///
    /// The request's headers and `content-type` do not matter.
    ///
    /// It still scopes each request.
    ///
    /// It still marks a give-up "don't retry".
    ///
    /// Its only deadline is the service's own ([`deadline`](ChainLayer::deadline)).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_jitter::tower::ChainLayer;
    /// use retry_jitter::time::attempt_time_left;
    /// use std::time::Duration;
    /// use tower::{Service, ServiceExt};
    ///
    /// // The handler reports how long its loops have: the service's own 2 s, not the client's 1 ms.
    /// let handler = tower::service_fn(|_: http::Request<String>| async {
    ///     let policy = retry_jitter::Policy::new().with_attempts(1);
    ///     let left = retry_jitter::Retry::new(policy)
    ///         .timeout(Duration::from_secs(60))
    ///         .call_async(|| async {
    ///             tokio::task::yield_now().await;
    ///             Ok::<_, std::io::Error>(attempt_time_left())
    ///         })
    ///         .await
    ///         .unwrap();
    ///     let resp = http::Response::builder().header("x-left", format!("{left:?}"));
    ///     Ok::<_, std::convert::Infallible>(resp.body(String::new()).unwrap())
    /// });
    /// let layer = ChainLayer::edge().deadline(Duration::from_secs(2));
    /// let mut svc = tower::ServiceBuilder::new().layer(layer).service(handler);
    /// let req = http::Request::builder()
    ///     .header("x-envoy-expected-rq-timeout-ms", "1")
    ///     .body(String::new())
    ///     .unwrap();
    /// let resp = svc.ready().await.unwrap().call(req).await.unwrap();
    /// assert_eq!(resp.headers()["x-left"], "Some(2s)");
    /// # }
    /// ```
    pub fn edge() -> Self {
        ChainLayer {
            deadlines: Deadlines::default(),
        }
    }

    /// Give every request a deadline of the service's own.
    ///
    /// It is `deadline` from the request's arrival.
    ///
    /// Its loops' deadline is then the earliest of three.
    ///
    /// The three: their own `max_elapsed`, this one, and the caller's.
    ///
    /// The caller's counts only for [`ChainLayer::new`].
    ///
    /// ```
    /// use retry_jitter::tower::ChainLayer;
    /// use std::time::Duration;
    /// let layer = ChainLayer::edge().deadline(Duration::from_secs(5));
    /// # let _ = layer;
    /// ```
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadlines.own = Some(deadline);
        self
    }

    /// Read an HTTP request's deadline from the header `name`.
    ///
    /// It replaces `x-envoy-expected-rq-timeout-ms`; the value is in milliseconds.
    ///
    /// Give the callers' `RetryLayer`/`RetryMiddleware` the same
    /// [`deadline_header`](super::RetryLayer::deadline_header).
    ///
    /// The request's `content-type` then no longer decides.
    ///
    /// `grpc-timeout` is read only with [`grpc`](ChainLayer::grpc).
    ///
    /// ```
    /// use http::HeaderName;
    /// use retry_jitter::tower::ChainLayer;
    /// let name = HeaderName::from_static("x-request-timeout-ms");
    /// let layer = ChainLayer::new().deadline_header(name);
    /// # let _ = layer;
    /// ```
    pub fn deadline_header(mut self, name: HeaderName) -> Self {
        self.deadlines.header = Some(name);
        self
    }

    /// The service is gRPC.
    ///
    /// It is a tonic `Server`, or the gRPC routes of a mixed one.
    ///
    /// Every request's deadline is read from `grpc-timeout`.
    ///
    /// [`ChainLayer::new`] reads it; the [`edge`](ChainLayer::edge) never does.
    ///
    /// Every answer is marked as gRPC's.
    ///
    /// ```
    /// use retry_jitter::tower::ChainLayer;
    /// let layer = ChainLayer::new().grpc();
    /// # let _ = layer;
    /// ```
    pub fn grpc(mut self) -> Self {
        self.deadlines.grpc = true;
        self
    }
}

/// [`ChainLayer::new`].
///
/// ```
/// use retry_jitter::tower::ChainLayer;
/// let layer = ChainLayer::default(); // behind your own proxies, as `ChainLayer::new()`
/// # let _ = layer;
/// ```
impl Default for ChainLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl Deadlines {
    /// A request's deadline, on tokio's clock.
    ///
    /// It comes from what the request carries (where trusted) and the service's own.
    ///
    /// `None` when neither gives one.
    fn of(&self, headers: &HeaderMap) -> Option<std::time::Instant> {
        let carried = if !self.trusted {
            None
        } else if self.grpc || (self.header.is_none() && hops::is_grpc(headers)) {
            hops::least(headers, GRPC_TIMEOUT, hops::parse_grpc_timeout)
        } else {
            let name = self
                .header
                .as_ref()
                .map_or(X_ENVOY_EXPECTED_RQ_TIMEOUT_MS, |n| n.as_str());
            hops::least(headers, name, hops::parse_millis)
        };
        let left = match (carried, self.own) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        crate::sleep::tokio_now().checked_add(left)
    }
}

impl<S> Layer<S> for ChainLayer {
    type Service = ChainService<S>;

    fn layer(&self, inner: S) -> ChainService<S> {
        ChainService {
            inner,
            deadlines: self.deadlines.clone(),
        }
    }
}

/// The service a [`ChainLayer`] makes.
///
/// Each request's future runs in its scope.
///
/// ```
/// use retry_jitter::tower::{ChainLayer, ChainService};
/// use tower::Layer;
/// let svc: ChainService<()> = ChainLayer::new().layer(());
/// # let _ = svc;
/// ```
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct ChainService<S> {
    inner: S,
    deadlines: Deadlines,
}

impl<S, B, Rb> Service<http::Request<B>> for ChainService<S>
where
    S: Service<http::Request<B>, Response = http::Response<Rb>>,
{
    type Response = http::Response<ChainBody<Rb>>;
    type Error = S::Error;
    type Future = ChainFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let mut scope = Some(Scope::new(self.deadlines.of(req.headers())));
        // The handler's future may start its work when made.
        //
        // So it is made in the scope too.
        let future = scope::enter(&mut scope, || self.inner.call(req));
        ChainFuture {
            future,
            scope,
            grpc: self.deadlines.grpc,
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of a [`ChainService`].
    ///
    /// It is the handler's, polled in the request's scope.
    #[doc(hidden)]
    pub struct ChainFuture<F> {
        #[pin]
        future: F,
        scope: Option<Arc<Scope>>,
        grpc: bool,
    }
}

impl<F, Rb, E> Future for ChainFuture<F>
where
    F: Future<Output = Result<http::Response<Rb>, E>>,
{
    type Output = Result<http::Response<ChainBody<Rb>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let future = this.future;
        let response = match scope::enter(this.scope, || future.poll(cx)) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Ready(Ok(response)) => response,
        };
        let scope = this
            .scope
            .take()
            .expect("a ChainFuture polled after it ended");
        let (mut parts, body) = response.into_parts();
        // The answer's own `content-type`.
        //
        // What the client sent decides nothing here.
        let grpc = *this.grpc || hops::is_grpc(&parts.headers);
        if scope.gave_up() {
            mark(&mut parts.headers, Some(parts.status), grpc);
        }
        let body = ChainBody {
            body,
            scope: Some(scope),
            grpc,
        };
        Poll::Ready(Ok(http::Response::from_parts(parts, body)))
    }
}

/// Mark an answer its caller would retry "don't retry".
///
/// That is an HTTP `5xx` or `429` (`status`, `None` for trailers).
///
/// Or it is a gRPC `UNAVAILABLE` or `RESOURCE_EXHAUSTED` whose `grpc-status` is in `headers`.
fn mark(headers: &mut HeaderMap, status: Option<http::StatusCode>, grpc: bool) {
    if grpc {
        // 8: RESOURCE_EXHAUSTED, 14: UNAVAILABLE.
        if matches!(
            headers.get(GRPC_STATUS).map(HeaderValue::as_bytes),
            Some(b"8" | b"14")
        ) {
            headers.insert(GRPC_RETRY_PUSHBACK_MS, HeaderValue::from_static("-1"));
        }
    } else if status.is_some_and(|s| s.is_server_error() || s == 429) {
        headers.insert(X_SHOULD_RETRY, HeaderValue::from_static("false"));
    }
}

pin_project_lite::pin_project! {
    /// The body of a [`ChainService`]'s answer.
    ///
    /// It is the handler's, polled in the request's scope.
    ///
    /// A streaming answer's retry loops see the scope too.
    ///
    /// A gRPC answer's trailers are marked "don't retry" when a loop inside the scope gave up.
    ///
    /// ```
    /// use retry_jitter::tower::body::ChainBody;
    /// fn a_body<B: http_body::Body>() {}
    /// a_body::<ChainBody<String>>();
    /// ```
    #[doc(hidden)]
    pub struct ChainBody<B> {
        #[pin]
        body: B,
        scope: Option<Arc<Scope>>,
        grpc: bool,
    }
}

impl<B: Body> Body for ChainBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let this = self.project();
        let body = this.body;
        let frame = scope::enter(this.scope, || body.poll_frame(cx));
        let gave_up = || this.scope.as_ref().is_some_and(|s| s.gave_up());
        match frame {
            Poll::Ready(Some(Ok(frame))) if *this.grpc && frame.is_trailers() && gave_up() => {
                Poll::Ready(Some(Ok(match frame.into_trailers() {
                    Ok(mut trailers) => {
                        mark(&mut trailers, None, true);
                        Frame::trailers(trailers)
                    }
                    Err(frame) => frame,
                })))
            }
            frame => frame,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Run `future` in the current request's chain scope, if any.
///
/// For work a handler spawns onto another task: `tokio::spawn(in_chain(work))`.
///
/// Its retry loops then keep to the caller's deadline.
///
/// They tell the caller when they gave up, as the handler's own do.
///
/// Outside a scope, `future` runs as it is.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use retry_jitter::tower::in_chain;
/// // In a handler served under `ChainLayer`:
/// let work = tokio::spawn(in_chain(async { 1 + 1 }));
/// assert_eq!(work.await.unwrap(), 2);
/// # }
/// ```
pub fn in_chain<F: Future>(future: F) -> InChain<F> {
    InChain {
        future,
        scope: scope::current(),
    }
}

pin_project_lite::pin_project! {
    /// A future run in a chain's scope: see [`in_chain`].
    ///
    /// ```
    /// use retry_jitter::tower::in_chain;
    /// use retry_jitter::tower::future::InChain;
    /// let _: InChain<_> = in_chain(async {});
    /// ```
    #[doc(hidden)]
    pub struct InChain<F> {
        #[pin]
        future: F,
        scope: Option<Arc<Scope>>,
    }
}

impl<F: Future> Future for InChain<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let future = this.future;
        scope::enter(this.scope, || future.poll(cx))
    }
}

/// Run `future` outside every chain's scope, wherever it is polled.
///
/// It is for work shared between requests.
///
/// A fetch several requests await is such work; so is a cache's loader.
///
/// Its retry loops must keep to no single caller's deadline.
///
/// They must mark no single caller's answer.
///
/// Inside a request's scope, that request's deadline would cut such work.
///
/// And a request that sent no deadline would get another's failure.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use retry_jitter::tower::out_of_chain;
/// use tokio::sync::OnceCell;
///
/// static RATES: OnceCell<u32> = OnceCell::const_new();
/// // In a handler served under `ChainLayer`: whichever request loads the rates first, the
/// // load keeps to no request's deadline.
/// let rates = RATES.get_or_init(|| out_of_chain(async { 42 })).await;
/// assert_eq!(*rates, 42);
/// # }
/// ```
pub fn out_of_chain<F: Future>(future: F) -> OutOfChain<F> {
    OutOfChain { future }
}

pin_project_lite::pin_project! {
    /// A future run outside every chain's scope: see [`out_of_chain`].
    ///
    /// ```
    /// use retry_jitter::tower::out_of_chain;
    /// use retry_jitter::tower::future::OutOfChain;
    /// let _: OutOfChain<_> = out_of_chain(async {});
    /// ```
    #[doc(hidden)]
    pub struct OutOfChain<F> {
        #[pin]
        future: F,
    }
}

impl<F: Future> Future for OutOfChain<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let future = self.project().future;
        scope::outside(|| future.poll(cx))
    }
}
