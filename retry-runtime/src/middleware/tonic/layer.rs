//! [`ServiceConfigLayer`], the service it makes, and its future.
//!
//! Each call is routed by its path to its method's [`RetryLayer`](crate::tower::RetryLayer).
//!
//! Those layers are made once, from the config.

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
use crate::fleet::{AdaptiveThrottle, CircuitBreaker};
use crate::fleet::{RetryThrottling, SharedBudget};
use crate::hedge::Hedge;
use crate::http::Failed;
use crate::middleware::builder::Settings;
use crate::middleware::failure::FailedAsync;
use crate::middleware::hops;
use crate::policy::scope::{self, Scope};
use crate::policy::Unset;
use crate::policy::{CancelToken, GiveUp, RetryEvent, RetryStats};
use crate::retry::{Cancellable, GuardPair, InResponse, WithStats};
use crate::run::awaiting::{AsyncHook, HookFuture, Slots};
use crate::run::guard::{BreakerGuard, IntoErr, ThrottleGuard};
use crate::tower::future::{ResponseFuture as RetriedFuture, Serve};
use crate::tower::{BoxError, ByStatus, RetryLayer, RetryService, TransportErrors};
use crate::{Backoff, TimedOut};

/// The request body a call may replay: 256 KiB.
///
/// That is gRPC C-core's default retry buffer.
///
/// A call whose request is larger is sent once (A6: it is committed).
const RETRY_BUFFER: usize = 256 * 1024;

/// An attempt's limit when its method sets no `perAttemptRecvTimeout`.
///
/// It is never reached, but lets the call's deadline cut an attempt.
///
/// The loop limits each attempt to the time left.
const NO_LIMIT: Duration = Duration::from_secs(u32::MAX as u64);

/// The hooks a layer's calls are told of: `notify`, `give_up`, `stats`, the guards.
///
/// They are held as a [`RetryLayer`] that never runs a loop.
///
/// Each method's loop is made from that layer.
type Hooks<Gd, N, G> =
    RetryLayer<TransportErrors, ByStatus, Settings<Unset, Unset, Unset, Gd, N, G>>;

/// The loop settings of a method with a policy.
///
/// Their budget is the channel's throttle, if any.
///
/// They hold an attempt's limit, and a hedge for a `hedgingPolicy`.
///
/// They hold the user's hooks.
///
/// With feature `metrics`, A96's figures are heard after the user's `stats`.
type Loop<Gd, N, G> = Settings<
    Option<Arc<RetryThrottling>>,
    Option<Duration>,
    Option<Hedge>,
    <Gd as Figured>::Out,
    N,
    G,
>;

/// Guards with each call's figures going to A96's histograms too.
///
/// The figures go there with feature `metrics` (see [`super::a96`]).
///
/// Without that feature, the guards are as they are.
///
/// Public in a private module: in the layer's bounds only.
pub trait Figured {
    /// The guards a method's loop runs with.
    type Out;
    /// Those guards.
    fn figured(self) -> Self::Out;
}

#[cfg(feature = "metrics")]
impl<Gd: crate::retry::AlsoStats<super::a96::Record>> Figured for Gd {
    type Out = Gd::Out;
    fn figured(self) -> Self::Out {
        self.also(super::a96::Record)
    }
}

#[cfg(not(feature = "metrics"))]
impl<Gd> Figured for Gd {
    type Out = Gd;
    fn figured(self) -> Gd {
        self
    }
}

/// The loop of one method with a policy: [`RetryLayer`]'s.
///
/// Its outcomes are classified by A6 ([`ChannelErrors`], [`ByCodes`]).
type Route<Gd, N, G> = RetryLayer<ChannelErrors, ByCodes, Loop<Gd, N, G>>;

/// The service a call with a policy runs.
///
/// It is its method's [`RetryLayer`] over the channel.
///
/// Public in a private module: the service's bounds and future's type name it.
pub type Retried<S, Gd, N, G> = RetryService<Counted<S>, ChannelErrors, ByCodes, Loop<Gd, N, G>>;

/// gRPC's service config applied to a tonic channel.
///
/// It is a [`tower::Layer`](Layer) giving each call its method's `retryPolicy` or `hedgingPolicy`.
///
/// It applies the channel's `retryThrottling` too.
///
/// It applies them as gRPC's own clients do ([gRFC
/// A6](https://github.com/grpc/proposal/blob/master/A6-client-retries.md)).
///
/// See the [module](super) for what it does.
///
/// The module also says how A6 differs from this crate's defaults.
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
/// A generated client takes the layer's service as it takes a `Channel`.
///
/// For example: `GreeterClient::new(ServiceBuilder::new().layer(layer).service(channel))`.
///
/// Its calls are told to the same hooks as [`RetryLayer`]'s, set the same way:
///
/// - [`notify`](ServiceConfigLayer::notify), [`give_up`](ServiceConfigLayer::give_up),
///   [`stats`](ServiceConfigLayer::stats).
/// - [`cancel`](ServiceConfigLayer::cancel), [`throttle`](ServiceConfigLayer::throttle),
///   [`breaker`](ServiceConfigLayer::breaker).
/// - `trace` (feature `tracing`).
/// - The awaited [`notify_async`](ServiceConfigLayer::notify_async),
///   [`give_up_async`](ServiceConfigLayer::give_up_async) and
///   [`stats_async`](ServiceConfigLayer::stats_async).
///
/// Its type parameters are those hooks', as in [`RetryLayer`].
///
/// `Gd` is the guards, `N` `notify`, `G` `give_up`.
#[derive(Clone, Debug)]
#[must_use = "a layer does nothing until it wraps a channel"]
pub struct ServiceConfigLayer<Gd = (Unset, Unset), N = Unset, G = Unset> {
    config: Arc<ServiceConfig>,
    /// The channel's throttle.
    ///
    /// Every service the layer and its clones make shares the throttle.
    throttle: Option<Arc<RetryThrottling>>,
    /// The target the throttle guards, named `grpc.target` in the figures.
    target: Arc<str>,
    hooks: Hooks<Gd, N, G>,
}

/// What a service made by a layer keeps.
///
/// It keeps the config, and each method entry's loop (`None`: sent once).
///
/// The loops hold the channel's throttle.
struct Config<Gd: Figured, N, G> {
    config: Arc<ServiceConfig>,
    routes: Vec<Option<Entry<Gd, N, G>>>,
    target: Arc<str>,
}

/// One `methodConfig` entry with a policy, as calls run it.
struct Entry<Gd: Figured, N, G> {
    /// The loop of a call without a deadline.
    ///
    /// Its attempt is limited by `perAttemptRecvTimeout` alone.
    ///
    /// So a first attempt answered at once costs what it costs through `RetryLayer`.
    ///
    /// No loop is made, nothing allocated.
    layer: Route<Gd, N, G>,
    /// The loop of a call with a deadline: every attempt limited.
    ///
    /// That way the deadline cuts the attempt running.
    bounded: Route<Gd, N, G>,
    /// `timeout`: the call's deadline, unless its own `grpc-timeout` is shorter.
    timeout: Option<Duration>,
    /// The throttle and the codes, for attempts a negative pushback ends.
    ///
    /// A6 counts those attempts.
    refused: Option<(Arc<RetryThrottling>, CodeSet)>,
}

impl ServiceConfigLayer {
    /// The layer that applies `config` to the channel it wraps.
    ///
    /// It makes one loop per method entry with a `retryPolicy` or a `hedgingPolicy`.
    ///
    /// It makes one [`RetryThrottling`] from the config's `retryThrottling`, none without it.
    ///
    /// Every service the layer and its clones make shares that throttle.
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
        ServiceConfigLayer {
            config: Arc::new(config),
            throttle,
            target: Arc::from("unknown"),
            hooks: RetryLayer::new(crate::Policy::new())
                .budget_none()
                .with_name("tonic"),
        }
    }
}

impl<Gd, N, G> ServiceConfigLayer<Gd, N, G> {
    /// Name the target the layer's channel calls, for its calls' figures.
    ///
    /// The name is their `grpc.target`, `"unknown"` unless named.
    ///
    /// The throttle is the layer's whatever its name: one channel, one throttle.
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

    /// The same layer, its hooks made into others by `f`.
    ///
    /// `f` is one of the setters below, [`RetryLayer`]'s own.
    fn with_hooks<Gd2, N2, G2>(
        self,
        f: impl FnOnce(Hooks<Gd, N, G>) -> Hooks<Gd2, N2, G2>,
    ) -> ServiceConfigLayer<Gd2, N2, G2> {
        ServiceConfigLayer {
            config: self.config,
            throttle: self.throttle,
            target: self.target,
            hooks: f(self.hooks),
        }
    }

    /// Tell `hook` of each retry.
    ///
    /// The hook is told the [`Failed`] attempt (a response, or the channel's error) and the
    /// [`RetryEvent`].
    ///
    /// [`RetryLayer::notify`](crate::builder::RetryBuilder::notify) does the same.
    ///
    /// A transparent retry does not count as one.
    ///
    /// ```
    /// use retry_jitter::http::Failed;
    /// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
    /// use retry_jitter::tower::BoxError;
    /// use retry_jitter::RetryEvent;
    /// let layer = ServiceConfigLayer::new(ServiceConfig::from_json("{}").unwrap())
    ///     .notify(|f: &Failed<'_, BoxError>, ev: &RetryEvent| eprintln!("retry {}: {f}", ev.attempt));
    /// # let _ = layer;
    /// ```
    pub fn notify<N2>(self, hook: N2) -> ServiceConfigLayer<Gd, N2, G>
    where
        N2: Fn(&Failed<'_, BoxError>, &RetryEvent),
    {
        self.with_hooks(|hooks| hooks.notify(hook))
    }

    /// Tell `hook` once, when retrying ends on a failure.
    ///
    /// The hook is told what failed and why ([`GiveUp`]).
    ///
    /// [`RetryLayer::give_up`](crate::builder::RetryBuilder::give_up) does the same.
    ///
    /// ```
    /// use retry_jitter::http::Failed;
    /// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
    /// use retry_jitter::tower::BoxError;
    /// use retry_jitter::GiveUp;
    /// let layer = ServiceConfigLayer::new(ServiceConfig::from_json("{}").unwrap())
    ///     .give_up(|f: &Failed<'_, BoxError>, g: &GiveUp| eprintln!("gave up ({}): {f}", g.reason));
    /// # let _ = layer;
    /// ```
    pub fn give_up<G2>(self, hook: G2) -> ServiceConfigLayer<Gd, N, G2>
    where
        G2: Fn(&Failed<'_, BoxError>, &GiveUp),
    {
        self.with_hooks(|hooks| hooks.give_up(hook))
    }

    /// Hand each retried call's figures ([`RetryStats`]) to `hook` when it ends.
    ///
    /// `transparent_retries` is among them.
    ///
    /// [`RetryLayer::stats`](crate::builder::RetryBuilder::stats) does the same.
    ///
    /// ```
    /// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
    /// use retry_jitter::RetryStats;
    /// let layer = ServiceConfigLayer::new(ServiceConfig::from_json("{}").unwrap())
    ///     .stats(|s: &RetryStats| eprintln!("{} attempts, {} transparent", s.attempts, s.transparent_retries));
    /// # let _ = layer;
    /// ```
    pub fn stats<H: Fn(&RetryStats)>(self, hook: H) -> ServiceConfigLayer<WithStats<Gd, H>, N, G> {
        self.with_hooks(|hooks| hooks.stats(hook))
    }

    /// Await `hook` before each retry's wait, as
    /// [`RetryLayer::notify_async`](crate::builder::RetryBuilder::notify_async) does.
    ///
    /// ```
    /// use retry_jitter::hooks::HookFuture;
    /// use retry_jitter::http::Failed;
    /// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
    /// use retry_jitter::tower::BoxError;
    /// use retry_jitter::RetryEvent;
    /// let layer = ServiceConfigLayer::new(ServiceConfig::from_json("{}").unwrap()).notify_async(
    ///     |f: Failed<'_, BoxError>, ev: &RetryEvent| -> HookFuture<'_> {
    ///         let line = format!("retry {}: {f}", ev.attempt);
    ///         Box::pin(async move { eprintln!("{line}") })
    ///     },
    /// );
    /// # let _ = layer;
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn notify_async<H>(
        self,
        hook: H,
    ) -> ServiceConfigLayer<
        Gd::WithAsync<<Gd::AsyncHooks as Slots>::WithNotify<FailedAsync<H>>>,
        N,
        G,
    >
    where
        Gd: GuardPair,
        H: for<'a> Fn(Failed<'a, BoxError>, &'a RetryEvent) -> HookFuture<'a>,
    {
        self.with_hooks(|hooks| hooks.notify_async(hook))
    }

    /// Await `hook` once, when retrying ends on a failure.
    ///
    /// [`RetryLayer::give_up_async`](crate::builder::RetryBuilder::give_up_async) does the same.
    ///
    /// ```
    /// use retry_jitter::hooks::HookFuture;
    /// use retry_jitter::http::Failed;
    /// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
    /// use retry_jitter::tower::BoxError;
    /// use retry_jitter::GiveUp;
    /// let layer = ServiceConfigLayer::new(ServiceConfig::from_json("{}").unwrap()).give_up_async(
    ///     |f: Failed<'_, BoxError>, g: &GiveUp| -> HookFuture<'_> {
    ///         let line = format!("gave up ({}): {f}", g.reason);
    ///         Box::pin(async move { eprintln!("{line}") })
    ///     },
    /// );
    /// # let _ = layer;
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn give_up_async<H>(
        self,
        hook: H,
    ) -> ServiceConfigLayer<
        Gd::WithAsync<<Gd::AsyncHooks as Slots>::WithGiveUp<FailedAsync<H>>>,
        N,
        G,
    >
    where
        Gd: GuardPair,
        H: for<'a> Fn(Failed<'a, BoxError>, &'a GiveUp) -> HookFuture<'a>,
    {
        self.with_hooks(|hooks| hooks.give_up_async(hook))
    }

    /// Await `hook` with each retried call's figures when it ends.
    ///
    /// [`RetryLayer::stats_async`](crate::builder::RetryBuilder::stats_async) does the same.
    ///
    /// ```
    /// use retry_jitter::hooks::HookFuture;
    /// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
    /// use retry_jitter::RetryStats;
    /// let layer = ServiceConfigLayer::new(ServiceConfig::from_json("{}").unwrap()).stats_async(
    ///     |s: &RetryStats| -> HookFuture<'_> {
    ///         let attempts = s.attempts;
    ///         Box::pin(async move { eprintln!("{attempts} attempts") })
    ///     },
    /// );
    /// # let _ = layer;
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn stats_async<H>(
        self,
        hook: H,
    ) -> ServiceConfigLayer<Gd::WithAsync<<Gd::AsyncHooks as Slots>::WithStats<AsyncHook<H>>>, N, G>
    where
        Gd: GuardPair,
        H: for<'a> Fn(&'a RetryStats) -> HookFuture<'a>,
    {
        self.with_hooks(|hooks| hooks.stats_async(hook))
    }

    /// Stop retrying once `token` is cancelled.
    ///
    /// [`RetryLayer::cancel`](crate::builder::RetryBuilder::cancel) does the same.
    ///
    /// A wait ends at once and the call returns its last outcome.
    ///
    /// ```
    /// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
    /// use retry_jitter::CancelToken;
    /// let shutdown = CancelToken::new();
    /// let layer = ServiceConfigLayer::new(ServiceConfig::from_json("{}").unwrap()).cancel(&shutdown);
    /// # let _ = layer;
    /// ```
    pub fn cancel(
        self,
        token: &CancelToken,
    ) -> ServiceConfigLayer<Cancellable<CancelToken, Gd>, N, G>
    where
        Gd: GuardPair,
    {
        self.with_hooks(|hooks| hooks.cancel(token))
    }

    /// Ask `throttle` before every attempt of a method with a policy.
    ///
    /// [`RetryLayer::throttle`](crate::builder::RetryBuilder::throttle) does the same.
    ///
    /// A call it refuses ends `UNAVAILABLE`.
    ///
    /// This throttle works beside the config's `retryThrottling`, which bounds retries alone.
    ///
    /// ```
    /// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
    /// use retry_jitter::AdaptiveThrottle;
    /// use std::time::Duration;
    /// static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(60));
    /// let layer = ServiceConfigLayer::new(ServiceConfig::from_json("{}").unwrap()).throttle(&THROTTLE);
    /// # let _ = layer;
    /// ```
    pub fn throttle(
        self,
        throttle: &AdaptiveThrottle,
    ) -> ServiceConfigLayer<Gd::With<Gd::Breaker, ThrottleGuard<'_, IntoErr>>, N, G>
    where
        Gd: GuardPair,
    {
        self.with_hooks(|hooks| hooks.throttle(throttle))
    }

    /// Count each call of a method with a policy in `breaker`.
    ///
    /// While it is open, such a call ends at once, `UNAVAILABLE`.
    ///
    /// [`RetryLayer::breaker`](crate::builder::RetryBuilder::breaker) does the same.
    ///
    /// ```
    /// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
    /// use retry_jitter::CircuitBreaker;
    /// use std::time::Duration;
    /// static BREAKER: CircuitBreaker = CircuitBreaker::new(0.5, 20, Duration::from_secs(10), Duration::from_secs(5));
    /// let layer = ServiceConfigLayer::new(ServiceConfig::from_json("{}").unwrap()).breaker(&BREAKER);
    /// # let _ = layer;
    /// ```
    pub fn breaker(
        self,
        breaker: &CircuitBreaker,
    ) -> ServiceConfigLayer<Gd::With<BreakerGuard<'_, IntoErr>, Gd::Throttle>, N, G>
    where
        Gd: GuardPair,
    {
        self.with_hooks(|hooks| hooks.breaker(breaker))
    }

    /// The level of its calls' events (feature `tracing`; WARN unless set).
    ///
    /// [`RetryLayer::trace`](crate::builder::RetryBuilder::trace) sets it the same way.
    ///
    /// ```
    /// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
    /// let layer = ServiceConfigLayer::new(ServiceConfig::from_json("{}").unwrap())
    ///     .trace(tracing::Level::DEBUG);
    /// # let _ = layer;
    /// ```
    #[cfg(feature = "tracing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
    pub fn trace(self, level: tracing::Level) -> Self {
        self.with_hooks(|hooks| hooks.trace(level))
    }

    /// The name hooks and metrics see: [`RetryEvent::function`], `"tonic"` by default.
    ///
    /// [`RetryLayer::with_name`](crate::builder::RetryBuilder::with_name) sets it the same way.
    ///
    /// ```
    /// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
    /// let layer = ServiceConfigLayer::new(ServiceConfig::from_json("{}").unwrap()).with_name("billing");
    /// # let _ = layer;
    /// ```
    pub fn with_name(self, name: &'static str) -> Self {
        self.with_hooks(|hooks| hooks.with_name(name))
    }

    /// Put each call's figures ([`RetryStats`]) in its response's extensions, as
    /// [`RetryLayer::stats_in_response`](crate::builder::RetryBuilder::stats_in_response) does.
    ///
    /// Only a call of a method with a policy has figures: one sent once has none.
    ///
    /// ```
    /// use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
    /// let layer = ServiceConfigLayer::new(ServiceConfig::from_json("{}").unwrap()).stats_in_response();
    /// # let _ = layer;
    /// ```
    pub fn stats_in_response(self) -> ServiceConfigLayer<InResponse<Gd>, N, G> {
        self.with_hooks(|hooks| hooks.stats_in_response())
    }
}

impl<Gd: Figured + Clone, N: Clone, G: Clone> Entry<Gd, N, G> {
    /// The loop of `method`, if it has a policy, on the user's `hooks`.
    fn of(
        method: &MethodConfig,
        throttle: &Option<Arc<RetryThrottling>>,
        hooks: &Hooks<Gd, N, G>,
    ) -> Option<Self> {
        let policy = method.policy.as_ref()?;
        let codes = match policy {
            MethodPolicy::Retry(policy) => policy.retryable_status_codes,
            MethodPolicy::Hedging(policy) => policy.non_fatal_status_codes,
        };
        let route = |bounded: bool| {
            let hooks = hooks.clone();
            let layer = match policy {
                MethodPolicy::Retry(policy) => retried(hooks, policy, bounded),
                MethodPolicy::Hedging(policy) => hedged(hooks, policy, bounded),
            };
            layer
                .on(ChannelErrors(codes))
                .on_ok(ByCodes(codes))
                .budget_owned(throttle.clone())
                .with_guards(Figured::figured)
        };
        Some(Entry {
            layer: route(false),
            bounded: route(true),
            timeout: method.timeout,
            refused: throttle.clone().map(|throttle| (throttle, codes)),
        })
    }
}

/// A method's [`RetryLayer`] before its classifiers and budget.
type Unclassified<Gd, N, G> = RetryLayer<
    TransportErrors,
    ByStatus,
    Settings<Unset, Option<Duration>, Option<Hedge>, Gd, N, G>,
>;

/// The user's `hooks` under `attempts`.
///
/// The config vouches for every request (`idempotent`).
///
/// gRPC sends again what the config says to, whatever the request does.
fn vouched<Gd, N, G>(hooks: Hooks<Gd, N, G>, attempts: crate::Policy) -> Hooks<Gd, N, G> {
    hooks
        .with_policy(attempts)
        .with_body_limit(RETRY_BUFFER)
        .idempotent()
}

/// An attempt's limit: `perAttemptRecvTimeout` if set.
///
/// Else, for a call with a deadline (`bounded`), one never reached.
///
/// That lets the deadline cut the attempt.
fn limit(per_attempt: Option<Duration>, bounded: bool) -> Option<Duration> {
    per_attempt.or(bounded.then_some(NO_LIMIT))
}

/// The [`RetryLayer`] of a `retryPolicy`.
///
/// It has its attempts, A6's backoff, its `perAttemptRecvTimeout`.
fn retried<Gd, N, G>(
    hooks: Hooks<Gd, N, G>,
    policy: &RetryPolicy,
    bounded: bool,
) -> Unclassified<Gd, N, G> {
    let backoff = Backoff::grpc(
        policy.initial_backoff,
        policy.max_backoff,
        policy.backoff_multiplier,
    );
    let attempts = crate::Policy::new()
        .with_attempts(policy.max_attempts)
        .with_backoff(backoff);
    vouched(hooks, attempts)
        .timeout_maybe(limit(policy.per_attempt_recv_timeout, bounded))
        .hedge_maybe(None)
}

/// The [`RetryLayer`] of a `hedgingPolicy`.
///
/// It sends its copies, each `hedgingDelay` after the one before.
///
/// It waits nothing when none runs: A6's hedges have no backoff.
///
/// A server's pushback of any length is waited.
///
/// No cap refuses it: the call's deadline bounds it.
fn hedged<Gd, N, G>(
    hooks: Hooks<Gd, N, G>,
    policy: &HedgingPolicy,
    bounded: bool,
) -> Unclassified<Gd, N, G> {
    let attempts = crate::Policy::new()
        .with_attempts(policy.max_attempts)
        .with_backoff(Backoff::grpc(Duration::ZERO, NO_LIMIT, 1.0));
    vouched(hooks, attempts)
        .timeout_maybe(limit(None, bounded))
        .hedge_maybe(Some(Hedge::After(policy.hedging_delay)))
}

impl<S, Gd: Figured + Clone, N: Clone, G: Clone> Layer<S> for ServiceConfigLayer<Gd, N, G> {
    type Service = ServiceConfigService<S, Gd, N, G>;

    /// A service over `inner`, with a loop per method entry made now.
    ///
    /// The loops' throttle is the layer's.
    fn layer(&self, inner: S) -> Self::Service {
        let routes = self
            .config
            .methods()
            .iter()
            .map(|method| Entry::of(method, &self.throttle, &self.hooks))
            .collect();
        ServiceConfigService {
            inner,
            config: Arc::new(Config {
                config: self.config.clone(),
                routes,
                target: self.target.clone(),
            }),
        }
    }
}

/// The service a [`ServiceConfigLayer`] makes over a channel `S`.
///
/// Each call is routed to its method's loop, or sent once.
///
/// It is `Clone` as a `Channel` is: its clones share the layer's throttle.
///
/// A client held in a struct names this type over its channel.
///
/// The type names the layer's hooks too, if the layer has any:
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
pub struct ServiceConfigService<S, Gd: Figured = (Unset, Unset), N = Unset, G = Unset> {
    inner: S,
    config: Arc<Config<Gd, N, G>>,
}

impl<S: core::fmt::Debug, Gd: Figured, N, G> core::fmt::Debug
    for ServiceConfigService<S, Gd, N, G>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ServiceConfigService")
            .field("inner", &self.inner)
            .field("config", &self.config.config)
            .field("target", &self.config.target)
            .finish_non_exhaustive()
    }
}

impl<S: Clone, Gd: Figured, N, G> Clone for ServiceConfigService<S, Gd, N, G> {
    fn clone(&self) -> Self {
        ServiceConfigService {
            inner: self.inner.clone(),
            config: self.config.clone(),
        }
    }
}

type Request = http::Request<tonic::body::Body>;

impl<S, B, Gd, N, G> Service<Request> for ServiceConfigService<S, Gd, N, G>
where
    S: Service<Request, Response = http::Response<B>> + Clone,
    S::Error: Into<BoxError>,
    Gd: Figured,
    Route<Gd, N, G>: Layer<Counted<S>, Service = Retried<S, Gd, N, G>>,
    Retried<S, Gd, N, G>: Serve<Request, Response = http::Response<B>>,
{
    type Response = http::Response<B>;
    type Error = BoxError;
    type Future = ResponseFuture<RetriedFuture<Retried<S, Gd, N, G>, Request>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        // The service made ready goes to this call.
        //
        // A clone of the service waits for the next call.
        let clone = self.inner.clone();
        let mut ready = core::mem::replace(&mut self.inner, clone);
        let config = &self.config;
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
        // Made for this call: it moves into the call's future (`start_owned`), not copied.
        let service = route.layer(Counted {
            inner: ready,
            refused: entry.refused.clone(),
        });
        #[allow(clippy::let_unit_value)] // `()` without feature `metrics`
        let labels = call_labels(req.uri(), &config.target);
        let future = scope::enter(&mut scope, || service.start_owned(req));
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

/// `poll` with the call's labels set.
///
/// They label the figures its loop hands over as it ends.
#[cfg(feature = "metrics")]
fn labelled<O>(labels: &mut CallLabels, poll: impl FnOnce() -> O) -> O {
    super::a96::within(labels, poll)
}
#[cfg(not(feature = "metrics"))]
fn labelled<O>(_: &mut CallLabels, poll: impl FnOnce() -> O) -> O {
    poll()
}

/// The call's deadline, on tokio's clock.
///
/// It is the earliest of its `grpc-timeout` and its method's `timeout`.
///
/// Inside a chain's scope, its caller's counts too.
///
/// A method `timeout` shorter than the request's `grpc-timeout` is written in its place.
///
/// So the first attempt carries it too.
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
    /// The future of a [`ServiceConfigService`].
    ///
    /// It is a call sent once, or its method's loop.
    ///
    /// It is polled inside the call's deadline.
    ///
    /// Its error is a [`BoxError`]: the channel's, or a `tonic::Status`.
    ///
    /// The status is `DEADLINE_EXCEEDED` once the call's deadline passed.
    ///
    /// A tonic client reports that status as it is.
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
        // The call's A96 labels (feature `metrics`).
        //
        // They label the loop's figures at its end.
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
                Poll::Ready(outcome.map_err(|e| grpc_error(e, deadline)))
            }
        }
    }
}

/// A call's error as gRPC's clients end it.
///
/// Any error once the call's `deadline` has passed is `DEADLINE_EXCEEDED`.
///
/// That covers the loop's cut and the channel's own timer alike.
///
/// The timer reads the request's `grpc-timeout`.
///
/// The last attempt cut by `perAttemptRecvTimeout` is `CANCELLED`, with C-core's message.
///
/// A call the layer's breaker or throttle refused is `UNAVAILABLE`.
///
/// That is the code of a call no server could take.
fn grpc_error(error: BoxError, deadline: Option<std::time::Instant>) -> BoxError {
    if deadline.is_some_and(|at| crate::sleep::tokio_now() >= at) {
        return Box::new(tonic::Status::deadline_exceeded("deadline exceeded"));
    }
    if error.is::<TimedOut>() {
        let message = "retry perAttemptRecvTimeout exceeded";
        return Box::new(tonic::Status::cancelled(message));
    }
    if error.is::<crate::CircuitOpen>() || error.is::<crate::Throttled>() {
        return Box::new(tonic::Status::unavailable(error.to_string()));
    }
    error
}

/// The channel under a method's loop.
///
/// Some attempts are counted a failure by the throttle, as A6 says.
///
/// They are those answered with a retryable code and a `grpc-retry-pushback-ms` saying not to
/// retry.
///
/// The loop, told "stop", counts nothing.
///
/// Public in a private module.
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
