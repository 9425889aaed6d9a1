//! The builder: [`RetryLayer`], its setters, and the [`RetryService`] it makes.

use core::time::Duration;

use super::{ByStatus, CloneRequests, HttpRequests, Layer, TransportErrors, DEFAULT_BODY_LIMIT};
use crate::fleet::{NoBudget, SharedBudget};
use crate::hedge::{Hedge, NoHedge};
use crate::timeout::NoTimeout;
use crate::{AcceptOk, NoGiveUp, NoNotify, NoTrace, Policy, Retry, RetryAll};

/// The retry loop as a tower [`Layer`]: see the [module](super).
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
    pub(super) retry: Retry<RetryAll, NoNotify, NoGiveUp, B, NoTrace, L, D>,
    pub(super) on: On,
    pub(super) on_ok: OnOk,
    pub(super) limit: usize,
    pub(super) mode: M,
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
    /// Which errors of the inner service are retried: a [`Classify`](crate::Classify) of
    /// [`BoxError`](super::BoxError), usually a closure `Fn(&BoxError) -> D` where
    /// `D: Into<Decision>`.
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

    /// Which responses are retried: a [`ClassifyOk`](crate::ClassifyOk) of the inner service's
    /// response, usually a closure `Fn(&http::Response<B>) -> D` where `D: Into<Decision>`. A
    /// response it retries is treated like a retryable error; when retrying ends on one, it is
    /// returned.
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
    /// attempt cut fails with [`TimedOut`](crate::TimedOut), retried.
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
    pub(super) inner: S,
    pub(super) layer: RetryLayer<On, OnOk, B, L, D, M>,
}
