//! The builder: [`RetryLayer`], its own setters, and the [`RetryService`] it makes.

use super::{ByStatus, CloneRequests, HttpRequests, Layer, TransportErrors, DEFAULT_BODY_LIMIT};
use crate::fleet::NoBudget;
use crate::hedge::NoHedge;
use crate::middleware::builder::RetryBuilder;
use crate::timeout::NoTimeout;
use crate::Policy;

/// The retry loop as a tower [`Layer`]: see the [module](super). Its setters of the loop
/// (`on`, `on_ok`, `budget`, `timeout`, `hedge`, `with_name`) are [`RetryBuilder`]'s, shared
/// with [`RetryMiddleware`](crate::reqwest_middleware::RetryMiddleware); its own are the
/// request body's limit and the request mode.
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
pub type RetryLayer<
    On = TransportErrors,
    OnOk = ByStatus,
    B = NoBudget,
    L = NoTimeout,
    D = NoHedge,
    M = HttpRequests,
> = RetryBuilder<LayerFace<M>, On, OnOk, B, L, D>;

/// What a [`RetryLayer`] has that a
/// [`RetryMiddleware`](crate::reqwest_middleware::RetryMiddleware) has not: the largest
/// request body it replays, and its request mode ([`HttpRequests`] or [`CloneRequests`]).
///
/// ```
/// use retry_jitter::tower::{HttpRequests, LayerFace, RetryLayer};
/// use retry_jitter::Policy;
/// // The face is in the layer's type; users name the layer, not the face.
/// let layer: RetryLayer = RetryLayer::new(Policy::default());
/// let _: fn(LayerFace<HttpRequests>) = |_| ();
/// # let _ = layer;
/// ```
#[derive(Clone, Debug)]
pub struct LayerFace<M> {
    /// A `u32`, beside the builder's one-byte settings: the response future that carries the
    /// layer stays small enough to be moved inline (a body buffered past 4 GiB is not
    /// replayed anyway).
    pub(super) limit: u32,
    pub(super) mode: M,
}

impl RetryLayer {
    /// Retry under `policy`: transport errors by [`TransportErrors`], responses by
    /// [`ByStatus`], HTTP request bodies replayed up to [`DEFAULT_BODY_LIMIT`].
    ///
    /// ```
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// let layer = RetryLayer::new(Policy::new().with_attempts(5));
    /// # let _ = layer;
    /// ```
    pub fn new(policy: Policy) -> Self {
        let face = LayerFace {
            limit: DEFAULT_BODY_LIMIT as u32,
            mode: HttpRequests::default(),
        };
        RetryBuilder::start(policy, "tower", TransportErrors, ByStatus, face)
    }
}

impl<On, OnOk, B, L, D, M> RetryLayer<On, OnOk, B, L, D, M> {
    /// Replay request bodies of at most `limit` bytes (default [`DEFAULT_BODY_LIMIT`]); a
    /// larger body is sent once and not retried. `0` replays only empty bodies; a limit past
    /// 4 GiB is 4 GiB.
    ///
    /// ```
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// let layer = RetryLayer::new(Policy::default()).with_body_limit(1 << 20);
    /// # let _ = layer;
    /// ```
    pub fn with_body_limit(mut self, limit: usize) -> Self {
        self.face.limit = u32::try_from(limit).unwrap_or(u32::MAX);
        self
    }

    /// Take any `Req: Clone` and clone it for each attempt, instead of replaying an
    /// `http::Request`'s body. Responses are classified as before, by the layer's
    /// [`on_ok`](RetryLayer::on_ok): by default [`ByStatus`], so an `http::Response` is
    /// classified by its status in this mode too. A service that answers with anything else
    /// needs its own: `.on_ok(AcceptOk)` takes every `Ok`, `.on_ok(|r: &Resp| …)` decides.
    ///
    /// This mode does not read the request: the method rule (a `POST` without a key sent once
    /// on a `500`), [`idempotency_key`](RetryLayer::idempotency_key) and the hop headers are
    /// [`HttpRequests`]'s, and here the classifiers decide for every request. An
    /// `http::Request` keeps them when its body is one the layer replays (box it:
    /// `BodyExt::boxed`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_jitter::tower::{AcceptOk, BoxError, RetryLayer};
    /// use retry_jitter::Policy;
    /// use tower::{Service, ServiceExt};
    ///
    /// let flaky = tower::service_fn(|n: u32| async move {
    ///     if n % 2 == 0 { Err::<u32, BoxError>("even".into()) } else { Ok(n) }
    /// });
    /// let layer = RetryLayer::new(Policy::new().with_attempts(2))
    ///     .clone_requests()
    ///     .on(|_: &BoxError| true)
    ///     .on_ok(AcceptOk); // a `u32` answer: every `Ok` is the answer
    /// let mut svc = tower::ServiceBuilder::new().layer(layer).service(flaky);
    /// assert_eq!(svc.ready().await.unwrap().call(7).await.unwrap(), 7);
    /// # }
    /// ```
    pub fn clone_requests(self) -> RetryLayer<On, OnOk, B, L, D, CloneRequests> {
        let face = LayerFace {
            limit: self.face.limit,
            mode: CloneRequests,
        };
        RetryBuilder {
            retry: self.retry,
            on: self.on,
            on_ok: self.on_ok,
            writes: self.writes,
            face,
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
    pub(super) inner: S,
    pub(super) layer: RetryLayer<On, OnOk, B, L, D, M>,
}
