//! The server end of a chain of services: [`ChainLayer`] runs each request's handler in a
//! scope that carries the caller's deadline down to every retry loop polled inside it, and
//! carries "already retried" back up in the answer.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use std::sync::Arc;

use http::{HeaderMap, HeaderName, HeaderValue};
use http_body::{Body, Frame, SizeHint};

use super::{Layer, Service};
use crate::middleware::hops::{self, GRPC_TIMEOUT};
use crate::run::chain::{self, Scope};

/// gRPC's header that lets a server forbid the client's retries (a negative wait).
const PUSHBACK: &str = "grpc-retry-pushback-ms";
/// The header the Stainless SDKs and [`RetryLayer`](super::RetryLayer) obey.
const SHOULD_RETRY: &str = "x-should-retry";

/// The server end of a chain of services, as an axum `Router::layer` or a tonic
/// `Server::builder().layer`: each request's handler runs in a scope that every retry loop
/// polled inside it sees, whatever its face (`#[retry]`, [`Retry`](crate::Retry),
/// [`RetryLayer`](super::RetryLayer),
/// [`RetryMiddleware`](crate::reqwest_middleware::RetryMiddleware)).
///
/// - **Down: the caller's deadline.** The request's deadline is read from `grpc-timeout` for
///   a gRPC request, from `x-envoy-expected-rq-timeout-ms` (milliseconds; another name with
///   [`deadline_header`](ChainLayer::deadline_header)) for an HTTP one; a malformed or absent
///   header is no deadline. Inside the scope every loop's deadline is the earlier of its own
///   `max_elapsed` and the caller's: an attempt's `timeout` is cut to what is left, and no
///   attempt starts once it has passed ([`GiveUpReason::Elapsed`](crate::GiveUpReason)). Each
///   attempt a `RetryLayer` or `RetryMiddleware` sends from inside the scope carries the time
///   it has left in the same header (gRPC: `grpc-timeout`).
/// - **Up: "already retried".** When a loop inside the scope gave up on a failure it would
///   have retried but for a limit (its attempts, once it retried; time, budget, throttle,
///   breaker), or because its downstream said "don't retry", and the handler's answer is one
///   its caller would retry
///   (HTTP `5xx` or `429`; gRPC `UNAVAILABLE` or `RESOURCE_EXHAUSTED`), the answer gets
///   `x-should-retry: false` (gRPC: `grpc-retry-pushback-ms: -1`, in the trailers or the
///   headers of a trailers-only answer). The retries of a chain then happen at the one tier
///   next to the failure. A failure no loop gave up on is left as it is, and so is one a loop
///   of a single attempt ended on (a tier told to fail fast leaves the retry to its caller).
///
/// The scope follows the handler's future, not the tasks it spawns: wrap a spawned future in
/// [`in_chain`] to keep it inside.
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
#[derive(Clone, Debug, Default)]
pub struct ChainLayer {
    /// The HTTP deadline header's name (`None`: Envoy's).
    deadline_header: Option<HeaderName>,
}

impl ChainLayer {
    /// A layer reading the caller's deadline from `grpc-timeout` (gRPC) or
    /// `x-envoy-expected-rq-timeout-ms` (HTTP).
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
        Self::default()
    }

    /// Read an HTTP request's deadline, in milliseconds, from the header `name` instead of
    /// `x-envoy-expected-rq-timeout-ms` (give the callers' `RetryLayer`/`RetryMiddleware`
    /// the same [`deadline_header`](super::RetryLayer::deadline_header)).
    ///
    /// ```
    /// use http::HeaderName;
    /// use retry_jitter::tower::ChainLayer;
    /// let name = HeaderName::from_static("x-request-timeout-ms");
    /// let layer = ChainLayer::new().deadline_header(name);
    /// # let _ = layer;
    /// ```
    pub fn deadline_header(mut self, name: HeaderName) -> Self {
        self.deadline_header = Some(name);
        self
    }
}

impl<S> Layer<S> for ChainLayer {
    type Service = ChainService<S>;

    fn layer(&self, inner: S) -> ChainService<S> {
        ChainService {
            inner,
            deadline_header: self.deadline_header.clone(),
        }
    }
}

/// The service a [`ChainLayer`] makes: each request's future runs in its scope.
///
/// ```
/// use retry_jitter::tower::{ChainLayer, ChainService, Layer};
/// let svc: ChainService<()> = ChainLayer::new().layer(());
/// # let _ = svc;
/// ```
#[derive(Clone, Debug)]
pub struct ChainService<S> {
    inner: S,
    deadline_header: Option<HeaderName>,
}

impl<S> ChainService<S> {
    /// The caller's deadline in `headers`, on tokio's clock: `None` when absent or malformed.
    fn deadline(&self, headers: &HeaderMap, grpc: bool) -> Option<std::time::Instant> {
        let left = if grpc {
            hops::parse_grpc_timeout(headers.get(GRPC_TIMEOUT)?.as_bytes())
        } else {
            let name = self.deadline_header.as_ref();
            let value = match name {
                Some(name) => headers.get(name),
                None => headers.get(hops::DEADLINE_HEADER),
            };
            hops::parse_millis(value?.as_bytes())
        }?;
        crate::sleep::tokio_now().checked_add(left)
    }
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
        let grpc = hops::is_grpc(req.headers());
        let mut scope = Some(Scope::new(self.deadline(req.headers(), grpc)));
        // The handler's future may start its work when it is made: made in the scope too.
        let future = chain::enter(&mut scope, || self.inner.call(req));
        ChainFuture {
            future,
            scope,
            grpc,
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of a [`ChainService`]: the handler's, polled in the request's scope.
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
        let (future, grpc) = (this.future, *this.grpc);
        let response = match chain::enter(this.scope, || future.poll(cx)) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Ready(Ok(response)) => response,
        };
        let scope = this
            .scope
            .take()
            .expect("a ChainFuture polled after it ended");
        let (mut parts, body) = response.into_parts();
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

/// Mark an answer its caller would retry "don't retry": an HTTP `5xx` or `429` (`status`,
/// `None` for trailers), a gRPC `UNAVAILABLE` or `RESOURCE_EXHAUSTED` whose `grpc-status` is in
/// `headers`.
fn mark(headers: &mut HeaderMap, status: Option<http::StatusCode>, grpc: bool) {
    if grpc {
        // 8: RESOURCE_EXHAUSTED, 14: UNAVAILABLE.
        if matches!(
            headers.get("grpc-status").map(HeaderValue::as_bytes),
            Some(b"8" | b"14")
        ) {
            headers.insert(PUSHBACK, HeaderValue::from_static("-1"));
        }
    } else if status.is_some_and(|s| s.is_server_error() || s == 429) {
        headers.insert(SHOULD_RETRY, HeaderValue::from_static("false"));
    }
}

pin_project_lite::pin_project! {
    /// The body of a [`ChainService`]'s answer: the handler's, polled in the request's scope
    /// (a streaming answer's retry loops see it too); a gRPC answer's trailers are marked
    /// "don't retry" when a loop inside the scope gave up.
    ///
    /// ```
    /// use retry_jitter::tower::ChainBody;
    /// fn a_body<B: http_body::Body>() {}
    /// a_body::<ChainBody<String>>();
    /// ```
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
        let frame = chain::enter(this.scope, || body.poll_frame(cx));
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

/// Run `future` in the chain's scope of the request being served now, if there is one: for
/// work a handler spawns onto another task (`tokio::spawn(in_chain(work))`), whose retry loops
/// then keep to the caller's deadline and tell the caller when they gave up, as the handler's
/// own do. Outside a scope, `future` runs as it is.
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
        scope: chain::current(),
    }
}

pin_project_lite::pin_project! {
    /// A future run in a chain's scope: see [`in_chain`].
    ///
    /// ```
    /// use retry_jitter::tower::{in_chain, InChain};
    /// let _: InChain<_> = in_chain(async {});
    /// ```
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
        chain::enter(this.scope, || future.poll(cx))
    }
}
