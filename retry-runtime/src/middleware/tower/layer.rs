//! The builder: [`RetryLayer`], its own setters, and the [`RetryService`] it makes.

use super::{
    ByStatus, CloneBodies, CloneRequests, HttpRequests, Layer, TransportErrors, DEFAULT_BODY_LIMIT,
};
use crate::middleware::builder::{ErrorOf, RetryBuilder, Settings};
use crate::policy::AcceptOk;
use crate::Policy;

/// The retry loop as a tower [`Layer`](tower_layer::Layer): see the [module](super).
///
/// Its setters of the loop are [`RetryBuilder`]'s, shared with
/// [`RetryMiddleware`](crate::reqwest_middleware::RetryMiddleware).
///
/// They are `on`, `on_ok`, `budget`, `timeout`, `hedge`, `notify`, `give_up`, `stats`,
/// `cancel`, `throttle`, `breaker`, `trace`, `stats_in_response` and `with_name`.
///
/// Its own setters are the request body's limit and the request mode:
///
/// - `http::Request`s whose body type the layer replays (the default);
/// - any `Clone` body ([`clone_bodies`](RetryLayer::clone_bodies));
/// - any `Clone` request that is not HTTP ([`clone_requests`](RetryLayer::clone_requests)).
///
/// Its budget, unless told otherwise, is one per host ([`HostBudgets`](crate::budget::HostBudgets)).
///
/// The layer's clones and the services they make share it.
///
/// A host's retries stay within 20% of its calls, plus 10 a second.
///
/// [`budget`](RetryBuilder::budget) replaces it; [`budget_none`](RetryBuilder::budget_none)
/// turns it off.
///
/// ```
/// use retry_jitter::tower::RetryLayer;
/// use retry_jitter::{Policy, RetryBudget};
/// use std::time::Duration;
///
/// static BUDGET: RetryBudget = RetryBudget::new(500);
/// let layer = RetryLayer::new(Policy::default())
///     .budget(&BUDGET)
///     .timeout(Duration::from_secs(2))
///     .with_name("inventory");
/// # let _ = layer;
/// ```
///
/// Its type parameters are [`RetryBuilder`]'s (`C`, `O`, `R`: the loop's [`Settings`]), then
/// `M`, the request mode.
pub type RetryLayer<C = TransportErrors, O = ByStatus, R = Settings, M = HttpRequests> =
    RetryBuilder<LayerOnly<M>, C, O, R>;

/// What a [`RetryLayer`] has that a `RetryMiddleware` has not.
///
/// The largest request body it replays, and its request mode ([`HttpRequests`],
/// [`CloneBodies`] or [`CloneRequests`]).
///
/// In the layer's type, never named by a user: public in a private module.
#[derive(Clone, Debug)]
pub struct LayerOnly<M> {
    /// A `u32`, beside the builder's one-byte settings.
    ///
    /// So the response future that carries the layer stays small enough to be moved inline.
    ///
    /// A body buffered past 4 GiB is not replayed anyway.
    pub(super) limit: u32,
    /// In a call's own copy of the service, which budget its request's host has: a
    /// [`HostBudgets`](crate::budget::HostBudgets) index.
    ///
    /// In the layer, 0.
    ///
    /// A byte beside `limit`: the response future stays as large as it was.
    pub(super) host: u8,
    pub(super) mode: M,
}

impl<M> ErrorOf for LayerOnly<M> {
    type Error = super::BoxError;
}

impl RetryLayer {
    /// Retry under `policy`.
    ///
    /// Transport errors by [`TransportErrors`], responses by [`ByStatus`], HTTP request bodies
    /// replayed up to 64 KiB.
    ///
    /// ```
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// let layer = RetryLayer::new(Policy::new().with_attempts(5));
    /// # let _ = layer;
    /// ```
    pub fn new(policy: Policy) -> Self {
        let only = LayerOnly {
            limit: DEFAULT_BODY_LIMIT as u32,
            host: 0,
            mode: HttpRequests::default(),
        };
        RetryBuilder::start(policy, "tower", TransportErrors, ByStatus, only)
    }
}

impl<C, O, R, M> RetryLayer<C, O, R, M> {
    /// Replay request bodies of at most `limit` bytes (default 64 KiB).
    ///
    /// A larger body is sent once and not retried.
    ///
    /// `0` replays only empty bodies; a limit past 4 GiB is 4 GiB.
    ///
    /// ```
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// let layer = RetryLayer::new(Policy::default()).with_body_limit(1 << 20);
    /// # let _ = layer;
    /// ```
    pub fn with_body_limit(mut self, limit: usize) -> Self {
        self.only.limit = u32::try_from(limit).unwrap_or(u32::MAX);
        self
    }
}

impl<C, O, R, K> RetryLayer<C, O, R, HttpRequests<K>> {
    /// Retry `http::Request<B>`s for any `B: Clone + http_body::Body<Data = Bytes>`, the body
    /// cloned for each attempt.
    ///
    /// For a body type of your own, which the layer does not replay otherwise
    /// ([`ReplayBody`](super::body::ReplayBody)).
    ///
    /// Everything else is as for the bodies it replays:
    ///
    /// - responses by [`ByStatus`];
    /// - the method rule: a `POST` without a key is sent once on a `500`;
    /// - [`idempotency_key`](RetryLayer::idempotency_key) and the hop headers;
    /// - a body whose size hint is over [`with_body_limit`](RetryLayer::with_body_limit) bytes
    ///   is sent once.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use bytes::Bytes;
    /// use http_body::{Body, Frame};
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// use std::convert::Infallible;
    /// use std::pin::Pin;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::sync::Arc;
    /// use std::task::{Context, Poll};
    /// use tower::{Service, ServiceExt};
    ///
    /// // A body type of one's own: `Clone`, one chunk.
    /// #[derive(Clone)]
    /// struct Order(Option<Bytes>);
    /// impl Body for Order {
    ///     type Data = Bytes;
    ///     type Error = Infallible;
    ///     fn poll_frame(
    ///         mut self: Pin<&mut Self>,
    ///         _: &mut Context<'_>,
    ///     ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
    ///         Poll::Ready(self.0.take().map(|b| Ok(Frame::data(b))))
    ///     }
    /// }
    ///
    /// // An upstream that answers 500 to every call, counting them.
    /// let calls = Arc::new(AtomicU32::new(0));
    /// let seen = calls.clone();
    /// let upstream = tower::service_fn(move |_: http::Request<Order>| {
    ///     seen.fetch_add(1, Ordering::SeqCst);
    ///     async { Ok::<_, Infallible>(http::Response::builder().status(500).body(()).unwrap()) }
    /// });
    /// let layer = RetryLayer::new(Policy::default()).clone_bodies();
    /// let mut svc = tower::ServiceBuilder::new().layer(layer).service(upstream);
    /// let order = || Order(Some(Bytes::from("one order")));
    /// // A `POST` without a key answered 500 may have been applied: sent once.
    /// let post = http::Request::post("/orders").body(order()).unwrap();
    /// assert_eq!(svc.ready().await.unwrap().call(post).await.unwrap().status(), 500);
    /// assert_eq!(calls.load(Ordering::SeqCst), 1);
    /// // A `GET` is retried on the whole table: 5 calls with the default policy.
    /// let get = http::Request::get("/orders/7").body(order()).unwrap();
    /// assert_eq!(svc.ready().await.unwrap().call(get).await.unwrap().status(), 500);
    /// assert_eq!(calls.load(Ordering::SeqCst), 6);
    /// # }
    /// ```
    pub fn clone_bodies(self) -> RetryLayer<C, O, R, CloneBodies> {
        let only = LayerOnly {
            limit: self.only.limit,
            host: 0,
            mode: self.only.mode.keeping(),
        };
        RetryBuilder {
            retry: self.retry,
            on: self.on,
            on_ok: self.on_ok,
            writes: self.writes,
            #[cfg(feature = "tracing")]
            level: self.level,
            only,
        }
    }
}

/// The `on_ok` a layer may have when [`clone_requests`](RetryLayer::clone_requests) is called:
/// the default, or [`AcceptOk`].
///
/// That mode sets [`AcceptOk`].
///
/// A classifier set before it would be dropped unseen, so it is a compile error instead.
///
/// Public in a private module: a bound users meet in a message, never a trait to implement.
#[diagnostic::on_unimplemented(
    message = "`clone_requests()` sets the layer's `on_ok` to `AcceptOk`: call `.on_ok(…)` after it",
    label = "`on_ok` set before `clone_requests()`"
)]
pub trait OkBeforeCloneRequests {}

// Not offered in the message, which says what to write instead.
#[diagnostic::do_not_recommend]
impl OkBeforeCloneRequests for ByStatus {}

#[diagnostic::do_not_recommend]
impl OkBeforeCloneRequests for AcceptOk {}

impl<C, O, R, M> RetryLayer<C, O, R, M> {
    /// For a service that is not HTTP: clone any `Req: Clone` for each attempt, as tower's own
    /// `Retry` does.
    ///
    /// Every `Ok` is the answer ([`AcceptOk`]); set [`on_ok`](RetryLayer::on_ok) after this to
    /// classify them.
    ///
    /// Errors are classified by the layer's [`on`](RetryLayer::on), [`TransportErrors`] by
    /// default.
    ///
    /// Over HTTP, use the bodies the layer replays ([`RetryLayer::new`]), or
    /// [`clone_bodies`](RetryLayer::clone_bodies) for a `Clone` body of your own.
    ///
    /// This mode does not read the request. So it has:
    ///
    /// - no status table: a `503` is an answer;
    /// - no method rule: a `POST` is retried like a `GET`;
    /// - no [`idempotency_key`](RetryLayer::idempotency_key) and no hop headers.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_jitter::tower::{BoxError, RetryLayer};
    /// use retry_jitter::Policy;
    /// use tower::{Service, ServiceExt};
    ///
    /// let flaky = tower::service_fn(|n: u32| async move {
    ///     if n % 2 == 0 { Err::<u32, BoxError>("even".into()) } else { Ok(n) }
    /// });
    /// let layer = RetryLayer::new(Policy::new().with_attempts(2))
    ///     .clone_requests()
    ///     .on(|_: &BoxError| true); // a `String` error: retry every error
    /// let mut svc = tower::ServiceBuilder::new().layer(layer).service(flaky);
    /// assert_eq!(svc.ready().await.unwrap().call(7).await.unwrap(), 7);
    /// # }
    /// ```
    // The bound on the method, not the impl: an `on_ok` set before is then the message below.
    //
    // Not "the method exists but its trait bounds were not satisfied".
    pub fn clone_requests(self) -> RetryLayer<C, AcceptOk, R, CloneRequests>
    where
        O: OkBeforeCloneRequests,
    {
        let only = LayerOnly {
            limit: self.only.limit,
            host: 0,
            mode: CloneRequests,
        };
        RetryBuilder {
            retry: self.retry,
            on: self.on,
            on_ok: AcceptOk,
            writes: self.writes,
            #[cfg(feature = "tracing")]
            level: self.level,
            only,
        }
    }
}

impl<S, C: Clone, O: Clone, R: Clone, M: Clone> Layer<S> for RetryLayer<C, O, R, M> {
    type Service = RetryService<S, C, O, R, M>;

    fn layer(&self, inner: S) -> Self::Service {
        RetryService {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service a [`RetryLayer`] makes: each request runs the retry loop around `S`.
///
/// The parameters after `S` are the layer's, and default to what [`RetryLayer::new`] sets.
///
/// A layer given no other classifier, budget, timeout, hedge or request mode makes a
/// `RetryService<S>`: a type a struct field holds.
///
/// One client, built once, in an axum app's state, and called from a handler:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use axum::extract::State;
/// use axum::http::StatusCode;
/// use axum::routing::get;
/// use bytes::Bytes;
/// use http_body_util::{BodyExt, Full};
/// use hyper_util::client::legacy::{connect::HttpConnector, Client};
/// use hyper_util::rt::TokioExecutor;
/// use retry_jitter::tower::{RetryLayer, RetryService};
/// use retry_jitter::Policy;
/// use std::time::Duration;
/// use tower::{Layer, ServiceExt};
///
/// #[derive(Clone)]
/// struct App {
///     inventory: RetryService<Client<HttpConnector, Full<Bytes>>>,
///     inventory_url: String,
/// }
///
/// async fn stock(State(app): State<App>) -> Result<String, StatusCode> {
///     let req = http::Request::get(&app.inventory_url).body(Full::default()).unwrap();
///     let resp = app.inventory.oneshot(req).await.map_err(|_| StatusCode::BAD_GATEWAY)?;
///     let body = resp.into_body().collect().await.map_err(|_| StatusCode::BAD_GATEWAY)?;
///     Ok(String::from_utf8_lossy(&body.to_bytes()).into_owned())
/// }
///
/// # use std::sync::atomic::{AtomicBool, Ordering};
/// # use std::sync::Arc;
/// # // The inventory service, on loopback: down once, then up.
/// # let down = Arc::new(AtomicBool::new(true));
/// # let inventory = axum::Router::new().route("/stock", get(move || {
/// #     let answer = match down.swap(false, Ordering::SeqCst) {
/// #         true => (StatusCode::SERVICE_UNAVAILABLE, "down"),
/// #         false => (StatusCode::OK, "7 left"),
/// #     };
/// #     async move { answer }
/// # }));
/// # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// # let addr = listener.local_addr().unwrap();
/// # tokio::spawn(async move { axum::serve(listener, inventory).await.unwrap() });
/// let client = Client::builder(TokioExecutor::new()).build_http();
/// let policy = Policy::new().with_attempts(3).with_base(Duration::from_millis(10));
/// let app = axum::Router::new().route("/stock", get(stock)).with_state(App {
///     inventory: RetryLayer::new(policy).layer(client),
///     inventory_url: format!("http://{addr}/stock"),
/// });
///
/// let req = http::Request::get("/stock").body(axum::body::Body::empty()).unwrap();
/// let resp = app.oneshot(req).await.unwrap();
/// let body = resp.into_body().collect().await.unwrap().to_bytes();
/// assert_eq!(body, "7 left"); // the 503 retried
/// # }
/// ```
///
/// Its type parameters: the inner service `S`, then its [`RetryLayer`]'s.
#[derive(Clone, Debug)]
pub struct RetryService<S, C = TransportErrors, O = ByStatus, R = Settings, M = HttpRequests> {
    pub(super) inner: S,
    pub(super) layer: RetryLayer<C, O, R, M>,
}
