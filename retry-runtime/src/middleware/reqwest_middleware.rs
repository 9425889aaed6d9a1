//! reqwest-middleware: the retry loop as a [`Middleware`] (feature `reqwest-middleware`).
//!
//! [`RetryMiddleware`] is built like the closure API [`Retry`](crate::Retry) and runs its loop
//! for each request of a `reqwest_middleware::ClientWithMiddleware`:
//!
//! - each attempt sends `req.try_clone()`; a request whose body cannot be cloned (a
//!   streaming body) is sent once, and its answer is the answer;
//! - a response is classified by [`reqwest::check`](crate::reqwest::check)'s rules
//!   ([`ByStatus`]: the status table, `Retry-After` honoured), an error by
//!   [`TransportErrors`] (reqwest's errors by their [`Transient`](crate::Transient) table);
//!   [`on_ok`](RetryMiddleware::on_ok) and [`on`](RetryMiddleware::on) replace them;
//! - a response retried is dropped before the retry; the one returned was never retried;
//! - `budget`, `timeout` and `hedge` work as on `Retry`. Each attempt gets a copy of the
//!   request's extensions.
//!
//! ```no_run
//! # async fn run() -> Result<(), reqwest_middleware::Error> {
//! use retry_runtime::reqwest_middleware::RetryMiddleware;
//! use retry_runtime::{Policy, RetryBudget};
//! use std::time::Duration;
//!
//! static BUDGET: RetryBudget = RetryBudget::new(500);
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(
//!         RetryMiddleware::new(Policy::default())
//!             .budget(&BUDGET)
//!             .timeout(Duration::from_secs(2))
//!             .with_name("users"),
//!     )
//!     .build();
//! let user = client.get("http://127.0.0.1:8080/users/1").send().await?.text().await?;
//! # let _ = user; Ok(()) }
//! ```

use core::time::Duration;

use http::Extensions;
use reqwest::{Request, Response};
use reqwest_middleware::{Error, Middleware, Next};

use crate::fleet::{Budget, NoBudget, SharedBudget};
use crate::hedge::{Hedge, HedgeWith, NoHedge};
use crate::timeout::{AttemptTimeout, NoTimeout};
use crate::{
    Classify, ClassifyOk, Decision, NoGiveUp, NoNotify, NoTrace, Policy, Retry, RetryAll, TimedOut,
    Transient,
};

/// The retry loop as a `reqwest_middleware::Middleware`: see the [module](self).
///
/// ```
/// use retry_runtime::reqwest_middleware::RetryMiddleware;
/// use retry_runtime::Policy;
///
/// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
///     .with(RetryMiddleware::new(Policy::default()))
///     .build();
/// # let _ = client;
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RetryMiddleware<
    On = TransportErrors,
    OnOk = ByStatus,
    B = NoBudget,
    L = NoTimeout,
    D = NoHedge,
> {
    /// The loop's settings; its classifiers are set per request, from `on` and `on_ok`.
    retry: Retry<RetryAll, NoNotify, NoGiveUp, B, NoTrace, L, D>,
    on: On,
    on_ok: OnOk,
}

impl RetryMiddleware {
    /// Retry under `policy`: errors by [`TransportErrors`], responses by [`ByStatus`].
    ///
    /// ```
    /// use retry_runtime::reqwest_middleware::RetryMiddleware;
    /// use retry_runtime::Policy;
    /// let m = RetryMiddleware::new(Policy::new().with_attempts(4));
    /// # let _ = m;
    /// ```
    pub fn new(policy: Policy) -> Self {
        RetryMiddleware {
            retry: Retry::new(policy).with_name("reqwest"),
            on: TransportErrors,
            on_ok: ByStatus,
        }
    }
}

impl<On, OnOk, B, L, D> RetryMiddleware<On, OnOk, B, L, D> {
    /// Which errors are retried: a [`Classify`] of `reqwest_middleware::Error`, usually a
    /// closure `Fn(&reqwest_middleware::Error) -> D` where `D: Into<Decision>`.
    ///
    /// ```
    /// use retry_runtime::reqwest_middleware::RetryMiddleware;
    /// use retry_runtime::Policy;
    /// let m = RetryMiddleware::new(Policy::default())
    ///     .on(|e: &reqwest_middleware::Error| e.is_connect());
    /// # let _ = m;
    /// ```
    pub fn on<On2>(self, on: On2) -> RetryMiddleware<On2, OnOk, B, L, D> {
        RetryMiddleware {
            retry: self.retry,
            on,
            on_ok: self.on_ok,
        }
    }

    /// Which responses are retried: a [`ClassifyOk`] of `reqwest::Response`, usually a
    /// closure `Fn(&reqwest::Response) -> D` where `D: Into<Decision>`. When retrying ends on
    /// a response it retries, that response is returned.
    ///
    /// ```
    /// use retry_runtime::reqwest_middleware::RetryMiddleware;
    /// use retry_runtime::Policy;
    /// let m = RetryMiddleware::new(Policy::default())
    ///     .on_ok(|r: &reqwest::Response| r.status() == 503);
    /// # let _ = m;
    /// ```
    pub fn on_ok<OnOk2>(self, on_ok: OnOk2) -> RetryMiddleware<On, OnOk2, B, L, D> {
        RetryMiddleware {
            retry: self.retry,
            on: self.on,
            on_ok,
        }
    }

    /// Share a budget with every other call that uses it (a `static` one: middleware lives as
    /// long as its client).
    ///
    /// ```
    /// use retry_runtime::reqwest_middleware::RetryMiddleware;
    /// use retry_runtime::{Policy, RetryBudget};
    /// static BUDGET: RetryBudget = RetryBudget::new(500);
    /// let m = RetryMiddleware::new(Policy::default()).budget(&BUDGET);
    /// # let _ = m;
    /// ```
    pub fn budget<S: SharedBudget>(self, budget: &S) -> RetryMiddleware<On, OnOk, &S, L, D> {
        RetryMiddleware {
            retry: self.retry.budget(budget),
            on: self.on,
            on_ok: self.on_ok,
        }
    }

    /// Limit each attempt to `timeout`: an attempt cut fails with a
    /// `reqwest_middleware::Error` whose source is [`TimedOut`], retried.
    ///
    /// ```
    /// use retry_runtime::reqwest_middleware::RetryMiddleware;
    /// use retry_runtime::Policy;
    /// use std::time::Duration;
    /// let m = RetryMiddleware::new(Policy::default()).timeout(Duration::from_secs(1));
    /// # let _ = m;
    /// ```
    pub fn timeout(self, timeout: Duration) -> RetryMiddleware<On, OnOk, B, Duration, D> {
        RetryMiddleware {
            retry: self.retry.timeout(timeout),
            on: self.on,
            on_ok: self.on_ok,
        }
    }

    /// Hedge each request (see [`Retry::hedge`](crate::Retry::hedge)); a request that cannot
    /// be cloned is not hedged.
    ///
    /// ```
    /// use retry_runtime::hedge::Hedge;
    /// use retry_runtime::reqwest_middleware::RetryMiddleware;
    /// use retry_runtime::Policy;
    /// use std::time::Duration;
    /// let m = RetryMiddleware::new(Policy::default()).hedge(Hedge::After(Duration::from_millis(100)));
    /// # let _ = m;
    /// ```
    pub fn hedge(self, hedge: Hedge) -> RetryMiddleware<On, OnOk, B, L, Hedge> {
        RetryMiddleware {
            retry: self.retry.hedge(hedge),
            on: self.on,
            on_ok: self.on_ok,
        }
    }

    /// The name hooks and metrics see as [`RetryEvent::function`](crate::RetryEvent::function)
    /// (default `"reqwest"`).
    ///
    /// ```
    /// use retry_runtime::reqwest_middleware::RetryMiddleware;
    /// use retry_runtime::Policy;
    /// let m = RetryMiddleware::new(Policy::default()).with_name("users");
    /// # let _ = m;
    /// ```
    pub fn with_name(mut self, name: &'static str) -> Self {
        self.retry = self.retry.with_name(name);
        self
    }
}

/// The default classifier of errors: reqwest's by their [`Transient`] table (a timeout, a
/// refused or broken connection: retry; a request that could not be built: stop);
/// [`TimedOut`] (the middleware's `timeout`): retry; any other middleware's error: stop.
///
/// ```
/// use retry_runtime::reqwest_middleware::TransportErrors;
/// use retry_runtime::{Classify, Decision, TimedOut};
///
/// let bad = reqwest::Client::new().get("not a url").build().unwrap_err();
/// assert_eq!(TransportErrors.classify(&reqwest_middleware::Error::from(bad)), Decision::Stop);
/// let cut = reqwest_middleware::Error::middleware(TimedOut);
/// assert_eq!(TransportErrors.classify(&cut), Decision::Retry);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct TransportErrors;

impl Classify<Error> for TransportErrors {
    fn classify(&self, error: &Error) -> Decision {
        match error {
            Error::Reqwest(e) => e.decision(),
            Error::Middleware(e) if e.is::<TimedOut>() => Decision::Retry,
            Error::Middleware(_) => Decision::Stop,
        }
    }
}

/// The default classifier of responses, by [`reqwest::check`](crate::reqwest::check)'s rules:
/// a success is the answer; any other status by
/// [`classify_status_with_hint`](crate::http::classify_status_with_hint) with the
/// `Retry-After` it carries. The body is not read: a response retried is dropped, the last
/// one is returned whole.
///
/// Its doc test needs a response; see `tests/middleware.rs` for one from a real server.
#[derive(Clone, Copy, Debug, Default)]
pub struct ByStatus;

impl ClassifyOk<Response> for ByStatus {
    fn classify_ok(&self, response: &Response) -> Decision {
        crate::http::classify_response_now(response.status(), response.headers())
    }
}

#[async_trait::async_trait]
impl<On, OnOk, B, L, D> Middleware for RetryMiddleware<On, OnOk, B, L, D>
where
    On: Classify<Error> + Clone + Send + Sync + 'static,
    OnOk: ClassifyOk<Response> + Send + Sync + 'static,
    B: Budget + Clone + Send + Sync + 'static,
    L: AttemptTimeout<Error> + Clone + Send + Sync + 'static,
    D: HedgeWith + Clone + Send + Sync + 'static,
{
    async fn handle(
        &self,
        req: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<Response> {
        let (on, on_ok) = (&self.on, &self.on_ok);
        let extensions = &*extensions;
        let Some(copy) = req.try_clone() else {
            // A streaming body: sent once (with the timeout), its answer is the answer.
            let once = self.retry.clone().once();
            let mut req = Some(req);
            return once
                .call_async(move || {
                    let (req, next, mut ext) = (req.take(), next.clone(), extensions.clone());
                    async move {
                        let req = req.expect("a request sent once is not retried");
                        next.run(req, &mut ext).await
                    }
                })
                .await;
        };
        let retry = self
            .retry
            .clone()
            .on(move |e: &Error| on.classify(e))
            .on_ok(move |r: &Response| on_ok.classify_ok(r));
        let (mut first, req) = (Some(copy), &req);
        retry
            .call_async(move || {
                let req = first.take().or_else(|| req.try_clone());
                let (next, mut ext) = (next.clone(), extensions.clone());
                async move {
                    let req = req.expect("a request that cloned once clones again");
                    next.run(req, &mut ext).await
                }
            })
            .await
    }
}

/// The error of an attempt cut by [`RetryMiddleware::timeout`]: a middleware error whose
/// source is [`TimedOut`].
///
/// ```
/// use retry_runtime::TimedOut;
/// let e = reqwest_middleware::Error::from(TimedOut);
/// assert!(e.is_middleware());
/// ```
impl From<TimedOut> for Error {
    fn from(t: TimedOut) -> Self {
        Error::middleware(t)
    }
}
