//! reqwest-middleware: the retry loop as a `reqwest_middleware::Middleware` (feature `reqwest-middleware`).
//!
//! [`RetryMiddleware`] is built like the closure API [`Retry`](crate::Retry).
//!
//! It runs its loop for each request of a `reqwest_middleware::ClientWithMiddleware`.
//!
//! The guide's `http_clients` page has the walkthrough.
//!
//! - **Requests.** Each attempt sends `req.try_clone()`.
//!   - A request whose body cannot be cloned (a streaming body) is sent once: its answer is
//!     the answer.
//!   - Each attempt gets a copy of the request's extensions.
//! - **Responses** are classified by [`reqwest::check`](crate::reqwest::check)'s rules
//!   ([`ByStatus`]: the status table, `Retry-After` honoured).
//!   - [`on_ok`](RetryMiddleware::on_ok) replaces that classifier.
//!   - A retried response is dropped before the retry; the one returned was never retried.
//! - **Errors** are classified by [`TransportErrors`]: reqwest's errors by their
//!   [`Transient`](crate::Transient) table.
//!   - [`on`](RetryMiddleware::on) replaces that classifier.
//! - **Writes are sent once** unless proven safe.
//!   - A non-idempotent method without an `Idempotency-Key` (nor `X-Idempotency-Key`) is
//!     retried only on proof it was not applied.
//!   - The proofs: a failed connect, an HTTP/2 stream refused or above a `GOAWAY`'s last
//!     stream id, `408`, `425`, `429`, `503`, or `x-should-retry: true`.
//!   - Never a `500`, `502`, `504` or the middleware's own `timeout`.
//!   - [`RetryMiddleware::idempotent`](RetryBuilder::idempotent) vouches for every request.
//!   - [`RetryMiddleware::idempotency_key`](RetryBuilder::idempotency_key) keys each one.
//! - **A budget per host, by default** ([`HostBudgets`](crate::budget::HostBudgets), keyed by the URL's host and port).
//!   - Each host's retries stay within 20% of its calls over 10 s, plus 10 a second.
//!   - [`budget`](RetryBuilder::budget) replaces it.
//!   - [`budget_none`](RetryBuilder::budget_none) turns it off.
//! - `budget`, `timeout` and `hedge` work as on `Retry`.
//!
//! ```no_run
//! # async fn run() -> Result<(), reqwest_middleware::Error> {
//! use retry_jitter::reqwest_middleware::RetryMiddleware;
//! use retry_jitter::{Policy, RetryBudget};
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

use http::Extensions;
use reqwest::{Request, Response};
use reqwest_middleware::{Error, Middleware, Next};

use super::builder::ErrorOf;
use super::failure::{poll, Failure, GiveUpFailed, NotifyFailed};
use super::hops;
use super::writes;
use super::ByHost;
use super::NotSent;
use crate::fleet::{CircuitOpen, Throttled};
use crate::hedge::HedgeWith;
use crate::policy::Resend;
use crate::policy::{Classify, ClassifyOk};
use crate::retry::{PutsStats, StatsOf};
use crate::run::awaiting::AwaitedHooks;
use crate::run::guard::Guard;
use crate::run::timeout::AttemptTimeout;
use crate::{Decision, Policy, TimedOut, Transient};

use crate::middleware::builder::{RetryBuilder, Settings};

/// The retry loop as a `reqwest_middleware::Middleware`: see the [module](self).
///
/// Its setters are [`RetryBuilder`]'s, shared with [`RetryLayer`](crate::tower::RetryLayer).
///
/// They are `on`, `on_ok`, `budget`, `timeout`, `hedge`, `notify`, `give_up`, `stats`,
/// `cancel`, `throttle`, `breaker`, `trace`, `stats_in_response` and `with_name`.
///
/// Its budget, unless told otherwise, is one per host ([`HostBudgets`](crate::budget::HostBudgets), shared by its clones).
///
/// [`budget`](RetryBuilder::budget) replaces it; [`budget_none`](RetryBuilder::budget_none)
/// turns it off.
///
/// ```
/// use retry_jitter::reqwest_middleware::RetryMiddleware;
/// use retry_jitter::Policy;
///
/// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
///     .with(RetryMiddleware::new(Policy::default()))
///     .build();
/// # let _ = client;
/// ```
///
/// Its type parameters are [`RetryBuilder`]'s (`C`, `O`, `R`: the loop's [`Settings`]).
pub type RetryMiddleware<C = TransportErrors, O = ByStatus, R = Settings> =
    RetryBuilder<MiddlewareOnly, C, O, R>;

// In the middleware's type, never named by a user: public in a private module.
mod own {
    use std::sync::Arc;

    use crate::middleware::builder::{hops_mut, OwnHops};
    use crate::middleware::hops::Hops;

    /// What a [`RetryMiddleware`](super::RetryMiddleware) keeps of its own: the names of the
    /// headers its attempts carry across the hop.
    #[derive(Clone, Debug, Default)]
    pub struct MiddlewareOnly {
        /// The hop's header names, when a setter named one.
        pub(super) hops: Option<Arc<Hops>>,
    }

    impl OwnHops for MiddlewareOnly {
        fn hops_mut(&mut self) -> &mut Hops {
            hops_mut(&mut self.hops)
        }
    }
}
use own::MiddlewareOnly;

impl RetryMiddleware {
    /// Retry under `policy`: errors by [`TransportErrors`], responses by [`ByStatus`].
    ///
    /// ```
    /// use retry_jitter::reqwest_middleware::RetryMiddleware;
    /// use retry_jitter::Policy;
    /// let m = RetryMiddleware::new(Policy::new().with_attempts(4));
    /// # let _ = m;
    /// ```
    pub fn new(policy: Policy) -> Self {
        let only = MiddlewareOnly::default();
        RetryBuilder::start(policy, "reqwest", TransportErrors, ByStatus, only)
    }
}

/// The default classifier of errors.
///
/// - reqwest's, by their [`Transient`] table: a timeout or a refused or broken connection
///   retries; a request that could not be built stops.
/// - [`TimedOut`] (the middleware's `timeout`): retry.
/// - Any other middleware's error: stop.
///
/// ```
/// use retry_jitter::reqwest_middleware::TransportErrors;
/// use retry_jitter::{Decision, TimedOut};
/// use retry_jitter::hooks::Classify;
///
/// let bad = reqwest::Client::new().get("not a url").build().unwrap_err();
/// assert_eq!(TransportErrors.classify(&reqwest_middleware::Error::from(bad)), Decision::Stop);
/// let cut = reqwest_middleware::Error::middleware(TimedOut);
/// assert_eq!(TransportErrors.classify(&cut), Decision::Retry);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct TransportErrors;

impl Classify<Error> for TransportErrors {
    /// For a request that may be sent again only if it was not applied (a `POST` without a
    /// key), few errors are classified.
    ///
    /// Only a failed connect, or an HTTP/2 stream the server refused or went away before
    /// processing ([`never_sent`](crate::http::never_sent)).
    ///
    /// Any other error stops, the middleware's own timeout included.
    fn classify_for(&self, error: &Error, resend: Resend) -> Decision {
        match error {
            _ if resend == Resend::Any => self.classify(error),
            Error::Reqwest(e) if e.is_connect() || crate::http::never_sent(e) => e.decision(),
            _ => Decision::Stop,
        }
    }

    fn classify(&self, error: &Error) -> Decision {
        match error {
            Error::Reqwest(e) => e.decision(),
            Error::Middleware(e) if e.is::<TimedOut>() => Decision::Retry,
            Error::Middleware(_) => Decision::Stop,
        }
    }
}

/// The default classifier of responses, by [`reqwest::check`](crate::reqwest::check)'s rules.
///
/// A success is the answer.
///
/// Any other status is as [`classify_response`](crate::http::classify_response) decides: the
/// server's word winning, `Retry-After` honoured.
///
/// The body is not read: a response retried is dropped, the last one is returned whole.
///
/// Its doc test needs a response; see `tests/middleware/clients.rs` for one from a real server.
#[derive(Clone, Copy, Debug, Default)]
pub struct ByStatus;

impl ClassifyOk<Response> for ByStatus {
    fn classify_ok(&self, response: &Response) -> Decision {
        self.classify_ok_for(response, Resend::Any)
    }

    /// For a request that may be sent again only if it was not applied (a `POST` without a
    /// key), few responses are retried.
    ///
    /// Only a refusal before processing (`408`, `425`, `429`, `503`), or a failure the server
    /// marks `x-should-retry: true`.
    fn classify_ok_for(&self, response: &Response, resend: Resend) -> Decision {
        crate::http::classify_response_now(response.status(), response.headers(), resend)
    }

    /// A response this retries is a failure, of its status.
    #[inline]
    fn failure_status(&self, response: &Response) -> Option<u16> {
        Some(response.status().as_u16())
    }
}

#[async_trait::async_trait]
impl<C, O, N, G, B, L, D, Gd> Middleware for RetryMiddleware<C, O, Settings<B, L, D, Gd, N, G>>
where
    C: Classify<Error> + Clone + Send + Sync + 'static,
    O: ClassifyOk<Response> + Send + Sync + 'static,
    N: NotifyFailed<Error> + Clone + Send + Sync + 'static,
    G: GiveUpFailed<Error> + Clone + Send + Sync + 'static,
    B: ByHost + Clone + Send + Sync + 'static,
    L: AttemptTimeout<Lost> + Clone + Send + Sync + 'static,
    D: HedgeWith + Clone + Send + Sync + 'static,
    Gd: Guard<Result<Response, Lost>> + StatsOf + PutsStats<Response>,
    Gd: Clone + Send + Sync + 'static,
    Gd::Hook: Sync,
    Gd::Awaited: AwaitedHooks<Lost> + Sync,
{
    async fn handle(
        &self,
        mut req: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<Response> {
        let (on, on_ok) = (&self.on, &self.on_ok);
        // Before the first attempt: a key given here is sent on every attempt.
        let method = req.method().clone();
        // The budget of the URL's host and port (a budget kept per host; others ask nothing).
        //
        // A URL without a host (`data:`, `file:`) is keyed as the requests without one.
        let host = self
            .retry
            .host(|| Some(req.url().authority()).filter(|a| !a.is_empty()));
        writes::add_key(self.writes, &method, req.headers_mut());
        let resend = writes::resend(self.writes, &method, req.headers());
        let extensions = &*extensions;
        let limits = self.retry.hop_limits::<Lost>();
        let hops = self.only.hops.as_deref();
        let trace = || crate::middleware::call_trace::<Response, Error>(self.level());
        // A response retried for its status is a failure of the loop.
        //
        // It is classified as the attempt ends (`sort`), its decision kept in it.
        //
        // Told with what the "not sent again" event says of the request.
        let on_failure = move |not_sent: &NotSent<'_>, failure: &Lost| match failure {
            Failure::Error(e) => {
                not_sent.checked(on.classify_for(e, resend), resend, || on.classify(e))
            }
            Failure::Status { decision, .. } => *decision,
        };
        let on_poll = move |r: &Response| poll(on_ok, r, resend);
        let Some(copy) = req.try_clone() else {
            // A streaming body: sent once (with the timeout), its answer is the answer.
            //
            // The event that says so shows the request by its method alone: it is sent away.
            //
            // Keeping its URL would cost every streaming request an allocation.
            let shown = Some(&method as &(dyn core::fmt::Display + Sync));
            let not_sent = &NotSent::new(self.level(), self.retry.name(), shown);
            let on_once = move |failure: &Lost| {
                let decision = on_failure(not_sent, failure);
                if decision != Decision::Stop {
                    not_sent.say(crate::middleware::NOT_REPLAYABLE);
                }
                decision
            };
            let once = self
                .retry
                .for_call(on_once, on_poll, trace(), host, true, false);
            let mut req = Some(req);
            let op = move || {
                let (req, next, mut ext) = (req.take(), next.clone(), extensions.clone());
                async move {
                    let mut req = req.expect("a request sent once is not retried");
                    hops::stamp(hops, req.headers_mut(), 1, limits.left());
                    Failure::sort(next.run(req, &mut ext).await, on_ok, resend, not_sent)
                }
            };
            if Gd::PUTS {
                let (outcome, stats) = once.call_async_with_stats(op).await;
                return Failure::answer_with::<Gd>(outcome, stats);
            }
            return Failure::answer(once.call_async(op).await);
        };
        #[cfg(feature = "tracing")]
        let shown = crate::middleware::describe::Described::reqwest(&req);
        #[cfg(feature = "tracing")]
        let shown = Some(&shown as &(dyn core::fmt::Display + Sync));
        #[cfg(not(feature = "tracing"))]
        let shown = None;
        let not_sent = &NotSent::new(self.level(), self.retry.name(), shown);
        let on = move |failure: &Lost| on_failure(not_sent, failure);
        let retry = self
            .retry
            .for_call(on, on_poll, trace(), host, false, resend == Resend::Any);
        let (mut first, req, mut sent) = (Some(copy), &req, 0);
        let op = move || {
            let req = first.take().or_else(|| req.try_clone());
            let (next, mut ext) = (next.clone(), extensions.clone());
            sent += 1;
            let attempt_number = sent;
            let attempt = async move {
                let mut req = req.expect("a request that cloned once clones again");
                hops::stamp(hops, req.headers_mut(), attempt_number, limits.left());
                Failure::sort(next.run(req, &mut ext).await, on_ok, resend, not_sent)
            };
            super::attempt(attempt, sent - 1)
        };
        // The figures are kept only where they go in the response.
        if Gd::PUTS {
            let (outcome, stats) = retry.call_async_with_stats(op).await;
            Failure::answer_with::<Gd>(outcome, stats)
        } else {
            Failure::answer(retry.call_async(op).await)
        }
    }
}

/// A failed attempt of the middleware, to its loop: its error, or a response retried for its
/// status.
type Lost = Failure<Error, Response>;

impl ErrorOf for MiddlewareOnly {
    type Error = Error;
}

/// The error of an attempt cut by [`RetryMiddleware::timeout`](RetryBuilder::timeout): a middleware error whose
/// source is [`TimedOut`].
///
/// ```
/// use retry_jitter::TimedOut;
/// let e = reqwest_middleware::Error::from(TimedOut);
/// assert!(e.is_middleware());
/// ```
impl From<TimedOut> for Error {
    fn from(t: TimedOut) -> Self {
        Error::middleware(t)
    }
}

/// The error of a request the middleware's [`throttle`](RetryBuilder::throttle) rejected: a
/// middleware error whose source is [`Throttled`].
///
/// ```
/// use retry_jitter::Throttled;
/// let e = reqwest_middleware::Error::from(Throttled);
/// assert!(e.is_middleware());
/// ```
impl From<Throttled> for Error {
    fn from(t: Throttled) -> Self {
        Error::middleware(t)
    }
}

/// The error of a call the middleware's [`breaker`](RetryBuilder::breaker) refused: a
/// middleware error whose source is [`CircuitOpen`].
///
/// ```
/// use retry_jitter::CircuitOpen;
/// let e = reqwest_middleware::Error::from(CircuitOpen);
/// assert!(e.is_middleware());
/// ```
impl From<CircuitOpen> for Error {
    fn from(c: CircuitOpen) -> Self {
        Error::middleware(c)
    }
}
