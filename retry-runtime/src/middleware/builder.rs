//! The builder `RetryLayer` and `RetryMiddleware` share: the loop's settings and the
//! classifiers, their setters written once. [`RetryLayer`](crate::tower::RetryLayer) and
//! [`RetryMiddleware`](crate::reqwest_middleware::RetryMiddleware) are this type with the
//! settings only one of them has (`F`: `LayerOnly`, `MiddlewareOnly`).

use core::time::Duration;

use std::sync::Arc;

use http::HeaderName;

use super::hops::Hops;
use super::writes::Writes;
use crate::fleet::SharedBudget;
use crate::hedge::Hedge;
use crate::policy::RetryAll;
use crate::policy::Unset;
use crate::{Policy, Retry};

/// The settings of a retry middleware, the layer or the middleware: the loop's ([`Retry`]'s
/// policy, budget, timeout, hedge, name), its classifiers of errors (`C`) and of responses
/// (`O`), and what only one of them has (`F`). Named through its aliases,
/// [`RetryLayer`](crate::tower::RetryLayer) and
/// [`RetryMiddleware`](crate::reqwest_middleware::RetryMiddleware), which add their
/// constructors.
///
/// ```
/// # #[cfg(feature = "tower")] {
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
/// # }
/// ```
///
/// Its type parameters, the same letters as [`Retry`]'s where they mean the same: `F` what only
/// one face has, `C` ([`on`](RetryBuilder::on)), `O` ([`on_ok`](RetryBuilder::on_ok)), `B`
/// ([`budget`](RetryBuilder::budget)), `L` ([`timeout`](RetryBuilder::timeout)) and `D`
/// ([`hedge`](RetryBuilder::hedge)).
#[derive(Clone, Debug)]
#[must_use = "a retry middleware does nothing until it wraps a service or joins a client"]
pub struct RetryBuilder<F, C, O, B, L, D> {
    /// The loop's settings; its classifiers are set per call, from `on` and `on_ok`.
    pub(super) retry: Retry<RetryAll, Unset, Unset, B, Unset, L, D>,
    pub(super) on: C,
    pub(super) on_ok: O,
    /// Which requests may be sent twice.
    pub(super) writes: Writes,
    pub(super) only: F,
}

impl<F, C, O, B, L, D> RetryBuilder<F, C, O, B, L, D> {
    /// Which errors are retried: a [`Classify`](crate::hooks::Classify) of the error it sees
    /// (`tower`: [`BoxError`](crate::tower::BoxError), the inner service's error boxed, which
    /// a closure may downcast; `reqwest-middleware`: `reqwest_middleware::Error`), usually a
    /// closure `Fn(&Error) -> D` where `D: Into<Decision>`.
    ///
    /// ```
    /// # #[cfg(all(feature = "tower", feature = "reqwest-middleware"))] {
    /// use retry_jitter::reqwest_middleware::RetryMiddleware;
    /// use retry_jitter::tower::{BoxError, RetryLayer};
    /// use retry_jitter::Policy;
    ///
    /// // Retry only the inner service's `std::io::Error`s.
    /// let layer = RetryLayer::new(Policy::default())
    ///     .on(|e: &BoxError| e.downcast_ref::<std::io::Error>().is_some());
    /// let m = RetryMiddleware::new(Policy::default())
    ///     .on(|e: &reqwest_middleware::Error| e.is_connect());
    /// # let _ = (layer, m);
    /// # }
    /// ```
    pub fn on<C2>(self, on: C2) -> RetryBuilder<F, C2, O, B, L, D> {
        RetryBuilder {
            retry: self.retry,
            on,
            on_ok: self.on_ok,
            writes: self.writes,
            only: self.only,
        }
    }

    /// Which responses are retried: a [`ClassifyOk`](crate::hooks::ClassifyOk) of the
    /// response (`tower`: the inner service's, an `http::Response<B>` for HTTP;
    /// `reqwest-middleware`: `reqwest::Response`), usually a closure `Fn(&Response) -> D`
    /// where `D: Into<Decision>`. A response it retries is treated like a retryable error; when
    /// retrying ends on one, it is returned.
    ///
    /// ```
    /// # #[cfg(all(feature = "tower", feature = "reqwest-middleware"))] {
    /// use retry_jitter::reqwest_middleware::RetryMiddleware;
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    ///
    /// // Retry only 503s, ignoring Retry-After.
    /// let layer = RetryLayer::new(Policy::default())
    ///     .on_ok(|r: &http::Response<String>| r.status() == 503);
    /// let m = RetryMiddleware::new(Policy::default())
    ///     .on_ok(|r: &reqwest::Response| r.status() == 503);
    /// # let _ = (layer, m);
    /// # }
    /// ```
    pub fn on_ok<O2>(self, on_ok: O2) -> RetryBuilder<F, C, O2, B, L, D> {
        RetryBuilder {
            retry: self.retry,
            on: self.on,
            on_ok,
            writes: self.writes,
            only: self.only,
        }
    }

    /// Share a budget with every other call that uses it (see [`Retry::budget`]): a `static`
    /// one, as a middleware lives as long as its client.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::{Policy, RetryBudget};
    /// static BUDGET: RetryBudget = RetryBudget::new(500);
    /// let layer = RetryLayer::new(Policy::default()).budget(&BUDGET);
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn budget<S: SharedBudget>(self, budget: &S) -> RetryBuilder<F, C, O, &S, L, D> {
        RetryBuilder {
            retry: self.retry.budget(budget),
            on: self.on,
            on_ok: self.on_ok,
            writes: self.writes,
            only: self.only,
        }
    }

    /// Limit each attempt to `timeout` (see [`Retry::timeout`]): an attempt cut fails with
    /// [`TimedOut`](crate::TimedOut) (`reqwest-middleware`: a middleware error whose source is
    /// `TimedOut`), retried.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// use std::time::Duration;
    /// let layer = RetryLayer::new(Policy::default()).timeout(Duration::from_secs(1));
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn timeout(self, timeout: Duration) -> RetryBuilder<F, C, O, B, Duration, D> {
        RetryBuilder {
            retry: self.retry.timeout(timeout),
            on: self.on,
            on_ok: self.on_ok,
            writes: self.writes,
            only: self.only,
        }
    }

    /// Hedge each request (see [`Retry::hedge`]). A hedge is a second send: a request the
    /// write rule does not let send twice (a `POST` or `PATCH` without a key, unless
    /// [`idempotent`](RetryBuilder::idempotent)) and one whose body cannot be sent again are
    /// never hedged; a hedge of a request whose body is still being sent waits for the body to
    /// be buffered.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::hedge::Hedge;
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// use std::time::Duration;
    /// let layer = RetryLayer::new(Policy::default()).hedge(Hedge::After(Duration::from_millis(50)));
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn hedge(self, hedge: Hedge) -> RetryBuilder<F, C, O, B, L, Hedge> {
        RetryBuilder {
            retry: self.retry.hedge(hedge),
            on: self.on,
            on_ok: self.on_ok,
            writes: self.writes,
            only: self.only,
        }
    }

    /// Vouch that every request through this middleware is safe to send again, whatever its
    /// method: a `POST` or a `PATCH` is retried on the whole table, like a `GET`. Without it
    /// (and without [`idempotency_key`](RetryBuilder::idempotency_key)), a request whose method
    /// is not idempotent and which carries no `Idempotency-Key` (or `X-Idempotency-Key`; an
    /// empty or blank one is none) is retried only on what proves it was not applied: a failed
    /// connect, a stream the server refused, `408`, `425`, `429`, `503`, or the server's
    /// `x-should-retry: true`.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// // An API whose POSTs are lookups: safe to repeat.
    /// let layer = RetryLayer::new(Policy::default()).idempotent();
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn idempotent(mut self) -> Self {
        self.writes = Writes::Idempotent;
        self
    }

    /// Give every request of a non-idempotent method (`POST`, `PATCH`, …) that has no
    /// `Idempotency-Key` (nor `X-Idempotency-Key`) one: a random version-4 UUID from the
    /// operating system's entropy, the same on every attempt of the call and new for each call;
    /// such a request is then retried on the whole table, as the server applies it once
    /// however often it comes. A key the caller set is kept as it is, but an empty or blank
    /// one is no key and is replaced (under its own name); a `GET` gets none.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// // A payments API that deduplicates by Idempotency-Key, as Stripe's does.
    /// let layer = RetryLayer::new(Policy::default()).idempotency_key();
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn idempotency_key(mut self) -> Self {
        self.writes = Writes::Keyed;
        self
    }

    /// The name hooks and metrics see as [`RetryEvent::function`](crate::RetryEvent::function)
    /// (default `"tower"` or `"reqwest"`).
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// let layer = RetryLayer::new(Policy::default()).with_name("billing");
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn with_name(mut self, name: &'static str) -> Self {
        self.retry = self.retry.with_name(name);
        self
    }
}

/// A middleware whose requests carry headers across the hop
/// ([`RetryLayer`](crate::tower::RetryLayer) over `http::Request`s, and
/// [`RetryMiddleware`](crate::reqwest_middleware::RetryMiddleware)): where it keeps their names. Not a trait to implement.
#[doc(hidden)]
pub trait OwnHops {
    /// The header names, its own to change.
    fn hops_mut(&mut self) -> &mut Hops;
}

/// The names a middleware keeps, behind one pointer (none until a setter names one): what it
/// adds to the future of every request is one word.
pub(crate) fn hops_mut(hops: &mut Option<Arc<Hops>>) -> &mut Hops {
    Arc::make_mut(hops.get_or_insert_with(Arc::default))
}

impl<F: OwnHops, C, O, B, L, D> RetryBuilder<F, C, O, B, L, D> {
    /// Send the time each attempt has left, in milliseconds, in the header `name` instead of
    /// Envoy's `x-envoy-expected-rq-timeout-ms`. An attempt made inside a
    /// [`ChainLayer`](crate::tower::ChainLayer)'s scope sends the smallest of its `timeout`,
    /// its loop's deadline and its caller's; a gRPC request sends `grpc-timeout` instead
    /// (lowering a larger value it carries). Outside a scope nothing is sent.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use http::HeaderName;
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// let layer = RetryLayer::new(Policy::default())
    ///     .deadline_header(HeaderName::from_static("x-request-timeout-ms"));
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn deadline_header(mut self, name: HeaderName) -> Self {
        self.only.hops_mut().deadline = Some(name);
        self
    }

    /// Send each attempt's number (1 on the first, 2 on the first retry, …) in the header
    /// `name`, so that the server sees which attempt of one logical request it answers. A gRPC
    /// request sent again carries `grpc-previous-rpc-attempts` (gRPC's A6) with or without it.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] {
    /// use http::HeaderName;
    /// use retry_jitter::tower::RetryLayer;
    /// use retry_jitter::Policy;
    /// let layer = RetryLayer::new(Policy::default())
    ///     .attempt_header(HeaderName::from_static("x-attempt"));
    /// # let _ = layer;
    /// # }
    /// ```
    pub fn attempt_header(mut self, name: HeaderName) -> Self {
        self.only.hops_mut().attempt = Some(name);
        self
    }
}

impl<F, C, O> RetryBuilder<F, C, O, Unset, Unset, Unset> {
    /// A middleware's builder: `policy`, named `name`, its default classifiers and settings.
    pub(super) fn start(policy: Policy, name: &'static str, on: C, on_ok: O, only: F) -> Self {
        RetryBuilder {
            retry: Retry::new(policy).with_name(name),
            on,
            on_ok,
            writes: Writes::ByMethod,
            only,
        }
    }
}
