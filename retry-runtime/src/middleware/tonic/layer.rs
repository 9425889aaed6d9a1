//! [`ServiceConfigLayer`], the service it makes, and its future: each call routed by its path
//! to its method's [`RetryLayer`](crate::tower::RetryLayer), made once from the config.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::Arc;

use tower_layer::Layer;
use tower_service::Service;

use super::classify::{pushback_refuses, ByCodes, ChannelErrors};
use crate::classify::headers::GRPC_TIMEOUT;
use crate::classify::tonic::ServiceConfig;
use crate::classify::tonic::{
    CodeSet, HedgingPolicy, MethodConfig, Policy as MethodPolicy, RetryPolicy,
};
use crate::fleet::{RetryThrottling, SharedBudget};
use crate::hedge::Hedge;
use crate::middleware::hops;
use crate::policy::scope::{self, Scope};
use crate::policy::Unset;
use crate::tower::{BoxError, ByStatus, RetryLayer, RetryService, Settings, TransportErrors};
use crate::{Backoff, TimedOut};

/// The request body a call may replay: gRPC C-core's default retry buffer, 256 KiB. A call
/// whose request is larger is sent once (A6: it is committed).
const RETRY_BUFFER: usize = 256 * 1024;

/// An attempt's limit when its method sets no `perAttemptRecvTimeout`: never reached, but
/// what lets the call's deadline cut an attempt (the loop limits each to the time left).
const NO_LIMIT: Duration = Duration::from_secs(u32::MAX as u64);

/// The loop settings of a method with a policy: the channel's throttle (if any) as its
/// budget, an attempt's limit, and a hedge for a `hedgingPolicy`.
type Loop = Settings<Option<Arc<RetryThrottling>>, Option<Duration>, Option<Hedge>, Figures>;

/// With feature `metrics`, each call's figures go to A96's histograms ([`super::a96`]).
#[cfg(feature = "metrics")]
type Figures = crate::retry::WithStats<(Unset, Unset), fn(&crate::RetryStats)>;
#[cfg(not(feature = "metrics"))]
type Figures = (Unset, Unset);

/// The loop of one method with a policy: [`RetryLayer`]'s, classified by A6
/// ([`ChannelErrors`], [`ByCodes`]).
type Route = RetryLayer<ChannelErrors, ByCodes, Loop>;

/// A method's [`RetryLayer`] before its classifiers and budget.
type Unclassified = RetryLayer<
    TransportErrors,
    ByStatus,
    Settings<crate::fleet::HostBudgets, Option<Duration>, Option<Hedge>>,
>;

/// The service a call with a policy runs: its method's [`RetryLayer`] over the channel.
/// Public in a private module: named in the service's bounds and its future's type.
pub type Retried<S> = RetryService<Counted<S>, ChannelErrors, ByCodes, Loop>;

/// gRPC's service config applied to a tonic channel: a [`tower::Layer`](Layer) that gives each
/// call its method's `retryPolicy` or `hedgingPolicy` and the channel's `retryThrottling`
/// ([gRFC A6](https://github.com/grpc/proposal/blob/master/A6-client-retries.md)), as gRPC's
/// own clients apply them. See the [module](super) for what it does and how A6 differs from
/// this crate's defaults.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::sync::Arc;
/// use tower::{Layer, Service, ServiceExt};
///
/// let config = ServiceConfig::from_json(r#"{
///   "methodConfig": [{
///     "name": [{ "service": "helloworld.Greeter" }],
///     "retryPolicy": {
///       "maxAttempts": 4,
///       "initialBackoff": "0.1s",
///       "maxBackoff": "1s",
///       "backoffMultiplier": 2,
///       "retryableStatusCodes": ["UNAVAILABLE"]
///     }
///   }],
///   "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1 }
/// }"#).unwrap();
///
/// // A channel whose server is UNAVAILABLE twice, then answers (a tonic `Channel` in use).
/// let calls = Arc::new(AtomicU32::new(0));
/// let seen = calls.clone();
/// let channel = tower::service_fn(move |_: http::Request<tonic::body::Body>| {
///     let code = if seen.fetch_add(1, Ordering::SeqCst) < 2 { "14" } else { "0" };
///     let answer = http::Response::builder()
///         .header("content-type", "application/grpc")
///         .header("grpc-status", code)
///         .body(tonic::body::Body::empty())
///         .unwrap();
///     async move { Ok::<_, std::convert::Infallible>(answer) }
/// });
/// let mut greeter = ServiceConfigLayer::new(config).target("greeter").layer(channel);
///
/// let call = http::Request::post("http://greeter/helloworld.Greeter/SayHello")
///     .header("content-type", "application/grpc")
///     .body(tonic::body::Body::empty())
///     .unwrap();
/// let answer = greeter.ready().await.unwrap().call(call).await.unwrap();
/// assert_eq!(answer.headers()["grpc-status"], "0");
/// assert_eq!(calls.load(Ordering::SeqCst), 3);
/// # }
/// ```
///
/// A generated client takes the layer's service as it takes a `Channel`:
/// `GreeterClient::new(ServiceBuilder::new().layer(layer).service(channel))`.
#[derive(Clone, Debug)]
#[must_use = "a layer does nothing until it wraps a channel"]
pub struct ServiceConfigLayer {
    config: Arc<Config>,
    /// The target the throttle guards, as the figures name it (`grpc.target`).
    target: Arc<str>,
}

/// What a layer made of a service config keeps: the config, and each method entry's loop
/// (`None`: sent once), which holds the channel's throttle.
#[derive(Debug)]
struct Config {
    config: ServiceConfig,
    routes: Vec<Option<Entry>>,
}

/// One `methodConfig` entry with a policy, as calls run it.
#[derive(Debug)]
struct Entry {
    /// The loop of a call without a deadline: an attempt limited by `perAttemptRecvTimeout`
    /// alone, so that a first attempt answered at once costs what it costs through
    /// `RetryLayer` (no loop made, nothing allocated).
    layer: Route,
    /// The loop of a call with a deadline: every attempt limited, so that the deadline cuts
    /// the one running.
    bounded: Route,
    /// `timeout`: the call's deadline, unless its own `grpc-timeout` is shorter.
    timeout: Option<Duration>,
    /// The throttle and the codes, for the attempts a negative pushback ends (A6 counts them).
    refused: Option<(Arc<RetryThrottling>, CodeSet)>,
}

impl ServiceConfigLayer {
    /// The layer that applies `config` to the channel it wraps: one loop per method entry
    /// with a `retryPolicy` or a `hedgingPolicy`, made here, and one [`RetryThrottling`] from its
    /// `retryThrottling` (none without it), shared by every service the layer and its clones
    /// make.
    ///
    /// ```
    /// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
    /// let config = ServiceConfig::from_json(r#"{"retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}}"#);
    /// let layer = ServiceConfigLayer::new(config.unwrap());
    /// # let _ = layer;
    /// ```
    pub fn new(config: ServiceConfig) -> Self {
        let throttle = config
            .retry_throttling()
            .map(|throttling| Arc::new(throttling.budget()));
        let routes = config
            .methods()
            .iter()
            .map(|method| Entry::of(method, &throttle))
            .collect();
        ServiceConfigLayer {
            config: Arc::new(Config { config, routes }),
            target: Arc::from("unknown"),
        }
    }

    /// Name the target the layer's channel calls (its `grpc.target`, `"unknown"` unless
    /// named), for the figures of its calls. The throttle is the layer's whatever its name:
    /// one channel, one throttle.
    ///
    /// ```
    /// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
    /// let layer = ServiceConfigLayer::new(ServiceConfig::from_json("{}").unwrap())
    ///     .target("dns:///greeter.internal:443");
    /// # let _ = layer;
    /// ```
    pub fn target(mut self, name: impl Into<String>) -> Self {
        self.target = Arc::from(name.into());
        self
    }
}

impl Entry {
    /// The loop of `method`, if it has a policy.
    fn of(method: &MethodConfig, throttle: &Option<Arc<RetryThrottling>>) -> Option<Self> {
        let policy = method.policy.as_ref()?;
        let codes = match policy {
            MethodPolicy::Retry(policy) => policy.retryable_status_codes,
            MethodPolicy::Hedging(policy) => policy.non_fatal_status_codes,
        };
        let route = |bounded: bool| {
            let layer = match policy {
                MethodPolicy::Retry(policy) => retried(policy, bounded),
                MethodPolicy::Hedging(policy) => hedged(policy, bounded),
            };
            let layer = layer
                .on(ChannelErrors(codes))
                .on_ok(ByCodes(codes))
                .budget_owned(throttle.clone());
            #[cfg(feature = "metrics")]
            let layer = layer.stats(super::a96::record as fn(&crate::RetryStats));
            layer
        };
        Some(Entry {
            layer: route(false),
            bounded: route(true),
            timeout: method.timeout,
            refused: throttle.clone().map(|throttle| (throttle, codes)),
        })
    }
}

/// A [`RetryLayer`] of `attempts` whose every request is one the config vouches for
/// (`idempotent`): gRPC sends again what the config says to, whatever it does.
fn vouched(attempts: crate::Policy) -> RetryLayer {
    RetryLayer::new(attempts)
        .with_name("tonic")
        .with_body_limit(RETRY_BUFFER)
        .idempotent()
}

/// An attempt's limit: `perAttemptRecvTimeout` if set; else, for a call with a deadline
/// (`bounded`), one never reached, so that the deadline cuts the attempt.
fn limit(per_attempt: Option<Duration>, bounded: bool) -> Option<Duration> {
    per_attempt.or(bounded.then_some(NO_LIMIT))
}

/// The [`RetryLayer`] of a `retryPolicy`: its attempts, A6's backoff, its
/// `perAttemptRecvTimeout`.
fn retried(policy: &RetryPolicy, bounded: bool) -> Unclassified {
    let backoff = Backoff::grpc(
        policy.initial_backoff,
        policy.max_backoff,
        policy.backoff_multiplier,
    );
    let attempts = crate::Policy::new()
        .with_attempts(policy.max_attempts)
        .with_backoff(backoff);
    vouched(attempts)
        .timeout_maybe(limit(policy.per_attempt_recv_timeout, bounded))
        .hedge_maybe(None)
}

/// The [`RetryLayer`] of a `hedgingPolicy`: its copies, each `hedgingDelay` after the one
/// before, and no wait when none runs (A6's hedges have no backoff); a server's pushback of
/// any length is waited (no cap refuses it: the call's deadline bounds it).
fn hedged(policy: &HedgingPolicy, bounded: bool) -> Unclassified {
    let attempts = crate::Policy::new()
        .with_attempts(policy.max_attempts)
        .with_backoff(Backoff::grpc(Duration::ZERO, NO_LIMIT, 1.0));
    vouched(attempts)
        .timeout_maybe(limit(None, bounded))
        .hedge_maybe(Some(Hedge::After(policy.hedging_delay)))
}

impl<S> Layer<S> for ServiceConfigLayer {
    type Service = ServiceConfigService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ServiceConfigService {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service a [`ServiceConfigLayer`] makes over a channel `S`: each call routed to its
/// method's loop, or sent once. `Clone` as a `Channel` is: its clones share the layer's
/// throttle. A client held in a struct names it over its channel:
///
/// ```
/// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer, ServiceConfigService};
/// use tower::Layer;
///
/// struct Inventory<C> {
///     client: tonic::client::Grpc<ServiceConfigService<C>>,
/// }
///
/// fn inventory<C>(channel: C, config: ServiceConfig) -> Inventory<C> {
///     let service = ServiceConfigLayer::new(config).layer(channel);
///     Inventory { client: tonic::client::Grpc::new(service) }
/// }
/// # let _ = inventory((), ServiceConfig::from_json("{}").unwrap());
/// ```
#[derive(Clone, Debug)]
pub struct ServiceConfigService<S> {
    inner: S,
    layer: ServiceConfigLayer,
}

type Request = http::Request<tonic::body::Body>;

impl<S, B> Service<Request> for ServiceConfigService<S>
where
    S: Service<Request, Response = http::Response<B>> + Clone,
    S::Error: Into<BoxError>,
    Retried<S>: Service<Request, Response = http::Response<B>, Error = BoxError>,
{
    type Response = http::Response<B>;
    type Error = BoxError;
    type Future = ResponseFuture<<Retried<S> as Service<Request>>::Future, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        // The service made ready goes to this call; a clone of it waits for the next.
        let clone = self.inner.clone();
        let mut ready = core::mem::replace(&mut self.inner, clone);
        let config = &self.layer.config;
        let entry = config
            .config
            .method_index(req.uri().path())
            .and_then(|i| config.routes[i].as_ref());
        let Some(entry) = entry else {
            return ResponseFuture {
                call: Call::Once {
                    future: ready.call(req),
                },
                scope: None,
                labels: CallLabels::default(),
            };
        };
        let mut scope = deadline(&mut req, entry.timeout).map(|at| Scope::new(Some(at)));
        let route = match scope {
            Some(_) => &entry.bounded,
            None => &entry.layer,
        };
        let mut service = route.layer(Counted {
            inner: ready,
            refused: entry.refused.clone(),
        });
        let labels = call_labels(req.uri(), &self.layer.target);
        let future = scope::enter(&mut scope, || service.call(req));
        ResponseFuture {
            call: Call::Retried { future },
            scope,
            labels,
        }
    }
}

/// A call's A96 labels (feature `metrics`; nothing without it).
#[cfg(feature = "metrics")]
type CallLabels = Option<super::a96::Labels>;
#[cfg(not(feature = "metrics"))]
type CallLabels = ();

/// The labels of a call of `path` through a layer for `target`.
#[cfg(feature = "metrics")]
fn call_labels(uri: &http::Uri, target: &Arc<str>) -> CallLabels {
    Some(super::a96::labels(uri, target))
}
#[cfg(not(feature = "metrics"))]
fn call_labels(_: &http::Uri, _: &Arc<str>) -> CallLabels {}

/// `poll` with the call's labels set for the figures its loop hands over as it ends.
#[cfg(feature = "metrics")]
fn labelled<O>(labels: &mut CallLabels, poll: impl FnOnce() -> O) -> O {
    super::a96::within(labels, poll)
}
#[cfg(not(feature = "metrics"))]
fn labelled<O>(_: &mut CallLabels, poll: impl FnOnce() -> O) -> O {
    poll()
}

/// The call's deadline, on tokio's clock: the earliest of its `grpc-timeout`, its method's
/// `timeout` and, inside a chain's scope, its caller's. A method `timeout` shorter than the
/// request's `grpc-timeout` is written in its place, so the first attempt carries it too.
fn deadline(req: &mut Request, timeout: Option<Duration>) -> Option<std::time::Instant> {
    let theirs = hops::least(req.headers(), GRPC_TIMEOUT, hops::parse_grpc_timeout);
    if let Some(own) = timeout.filter(|own| theirs.is_none_or(|theirs| *own < theirs)) {
        req.headers_mut()
            .insert(GRPC_TIMEOUT, hops::grpc_timeout(own));
    }
    let left = match (theirs, timeout) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let own = left.and_then(|left| crate::sleep::tokio_now().checked_add(left));
    match (own, scope::caller_deadline()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

pin_project_lite::pin_project! {
    /// The future of a [`ServiceConfigService`]: a call sent once, or its method's loop,
    /// polled inside the call's deadline. Its error is a [`BoxError`]: the channel's, or a
    /// `tonic::Status` (`DEADLINE_EXCEEDED` once the call's deadline passed), which a tonic
    /// client reports as it is.
    ///
    /// ```
    /// use retry_jitter::tonic::future::ResponseFuture;
    /// fn is_a_future<F: std::future::Future>() {}
    /// is_a_future::<ResponseFuture<std::future::Ready<Result<(), retry_jitter::tower::BoxError>>, std::future::Ready<Result<(), std::io::Error>>>>();
    /// ```
    pub struct ResponseFuture<R, O> {
        #[pin]
        call: Call<R, O>,
        scope: Option<Arc<Scope>>,
        // The call's A96 labels (feature `metrics`), for the loop's figures at its end.
        labels: CallLabels,
    }
}

pin_project_lite::pin_project! {
    #[project = CallProj]
    enum Call<R, O> {
        Once { #[pin] future: O },
        Retried { #[pin] future: R },
    }
}

impl<R, O, T, E> Future for ResponseFuture<R, O>
where
    R: Future<Output = Result<T, BoxError>>,
    O: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
{
    type Output = Result<T, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        match this.call.project() {
            CallProj::Once { future } => future.poll(cx).map_err(Into::into),
            CallProj::Retried { future } => {
                let polled = labelled(this.labels, || scope::enter(this.scope, || future.poll(cx)));
                let Poll::Ready(outcome) = polled else {
                    return Poll::Pending;
                };
                let scope = this.scope.as_deref();
                // A loop that gave up inside the call's deadline tells the chain around it.
                if scope.is_some_and(Scope::gave_up) {
                    scope::mark_gave_up();
                }
                let deadline = scope.and_then(|s| s.deadline);
                Poll::Ready(outcome.map_err(|e| deadline_exceeded(e, deadline)))
            }
        }
    }
}

/// A call's error as gRPC's clients end it: any error once the call's `deadline` has passed
/// (the cut of the loop, or the channel's own timer, which reads the request's
/// `grpc-timeout`) is `DEADLINE_EXCEEDED`; the last attempt cut by `perAttemptRecvTimeout`
/// is `CANCELLED`, with C-core's message.
fn deadline_exceeded(error: BoxError, deadline: Option<std::time::Instant>) -> BoxError {
    if deadline.is_some_and(|at| crate::sleep::tokio_now() >= at) {
        return Box::new(tonic::Status::deadline_exceeded("deadline exceeded"));
    }
    if error.is::<TimedOut>() {
        let message = "retry perAttemptRecvTimeout exceeded";
        return Box::new(tonic::Status::cancelled(message));
    }
    error
}

/// The channel under a method's loop: each attempt answered with a retryable code whose
/// `grpc-retry-pushback-ms` says not to retry is counted a failure by the throttle, as A6
/// says (the loop, told "stop", counts nothing). Public in a private module.
#[derive(Clone, Debug)]
pub struct Counted<S> {
    inner: S,
    refused: Option<(Arc<RetryThrottling>, CodeSet)>,
}

impl<S, Req, B> Service<Req> for Counted<S>
where
    S: Service<Req, Response = http::Response<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = CountedFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        CountedFuture {
            future: self.inner.call(req),
            refused: self.refused.clone(),
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of a [`Counted`] channel's attempt.
    pub struct CountedFuture<F> {
        #[pin]
        future: F,
        refused: Option<(Arc<RetryThrottling>, CodeSet)>,
    }
}

impl<F, B, E> Future for CountedFuture<F>
where
    F: Future<Output = Result<http::Response<B>, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let outcome = core::task::ready!(this.future.poll(cx));
        if let (Ok(response), Some((throttle, codes))) = (&outcome, this.refused.take()) {
            if pushback_refuses(codes, response) {
                throttle.failed(crate::sleep::now);
            }
        }
        Poll::Ready(outcome)
    }
}
