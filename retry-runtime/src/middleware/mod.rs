//! The retry loop where services retry: client middleware, each behind its feature.
//!
//! Each face drives the closure API's loop ([`Retry`](crate::Retry)); none has a loop of its
//! own.
//!
//! A response is an `Ok` to the client, yet a 503 is worth retrying.
//!
//! So the faces classify responses with [`Retry::on_ok`](crate::Retry::on_ok).

pub(crate) mod builder;
mod by_host;
pub use by_host::ByHost;
#[cfg(all(
    feature = "tracing",
    any(feature = "tower", feature = "reqwest-middleware")
))]
pub(crate) mod describe;
pub(crate) mod failure;
mod hops;
pub(crate) use hops::HopLimits;
#[cfg(feature = "reqwest-middleware")]
pub mod reqwest_middleware;
#[cfg(feature = "tonic")]
pub mod tonic;
#[cfg(feature = "tower")]
pub mod tower;
mod writes;

/// An attempt of a face's call, `resend_count` the attempts before it.
///
/// With feature `tracing`, a resend runs in a span carrying OpenTelemetry's stable
/// `http.request.resend_count` (1, 2, …).
///
/// So a trace shows every attempt of one logical request; the first attempt has none.
#[cfg(feature = "tracing")]
pub(crate) fn attempt<F: core::future::Future>(
    future: F,
    resend_count: u32,
) -> tracing::instrument::Instrumented<F> {
    let span = match resend_count {
        0 => tracing::Span::none(),
        n => crate::run::trace::attempt_span(n),
    };
    tracing::Instrument::instrument(future, span)
}

/// An attempt of a face's call: without feature `tracing`, the future itself.
#[cfg(not(feature = "tracing"))]
#[inline]
pub(crate) fn attempt<F: core::future::Future>(future: F, _resend_count: u32) -> F {
    future
}

/// The trace of one call of a middleware (feature `tracing`): its events at `level`.
///
/// A failure is shown as [`Failed`](crate::http::Failed) shows it: an error's `Display`, a
/// response's status.
///
/// A response retried as a poll is not shown at all; nor is any header, nor a body.
#[cfg(feature = "tracing")]
#[allow(clippy::type_complexity)]
pub(crate) fn call_trace<Resp, E: core::fmt::Display>(
    level: tracing::Level,
) -> crate::run::hooks::Tracer<
    fn(&Result<Resp, failure::Failure<E, Resp>>) -> crate::run::hooks::Rendered<'_>,
> {
    fn shown<Resp, E: core::fmt::Display>(
        outcome: &Result<Resp, failure::Failure<E, Resp>>,
    ) -> crate::run::hooks::Rendered<'_> {
        match outcome {
            Err(failure) => crate::run::hooks::Rendered::Display(failure),
            Ok(_) => crate::run::hooks::Rendered::Nothing,
        }
    }
    crate::run::hooks::tracer(level, shown::<Resp, E>)
}

/// The trace of one call of a middleware: without feature `tracing`, none.
#[cfg(not(feature = "tracing"))]
#[inline]
#[allow(clippy::extra_unused_type_parameters)] // Named as with the feature: one call site.
pub(crate) fn call_trace<Resp, E>(_: Unlevelled) -> crate::policy::Unset {
    crate::policy::Unset
}

/// A middleware's level of events, without feature `tracing`: none.
#[cfg(not(feature = "tracing"))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unlevelled;

/// Tells, with feature `tracing`, that a call's request is not sent again, and why.
///
/// The "not sent again" event, at the middleware's level.
///
/// It says of the request what [`Described`](describe::Described) says: nothing, where the
/// request was not kept.
///
/// Without the feature, nothing.
#[derive(Clone, Copy)]
pub(crate) struct NotSent<'a> {
    #[cfg(feature = "tracing")]
    level: tracing::Level,
    #[cfg(feature = "tracing")]
    function: &'static str,
    #[cfg(feature = "tracing")]
    request: Option<&'a (dyn core::fmt::Display + Sync)>,
    #[cfg(not(feature = "tracing"))]
    unused: core::marker::PhantomData<&'a ()>,
}

/// Why a request is not sent again: a write (`POST`, `PATCH`…) without an idempotency key, on
/// an outcome that does not prove it was not applied.
pub(crate) const NO_KEY: &str = "a write without an idempotency key";
/// Why a request is not sent again: its body cannot be sent twice (over the replay limit, or
/// answered before it was sent whole).
pub(crate) const NOT_REPLAYABLE: &str = "a body it cannot replay";

impl<'a> NotSent<'a> {
    /// For a call of `function`, events at `level`, its request shown as `request` says.
    #[cfg(feature = "tracing")]
    pub(crate) fn new(
        level: tracing::Level,
        function: &'static str,
        request: Option<&'a (dyn core::fmt::Display + Sync)>,
    ) -> Self {
        NotSent {
            level,
            function,
            request,
        }
    }

    /// Without feature `tracing`: nothing to tell.
    #[cfg(not(feature = "tracing"))]
    pub(crate) fn new(
        _: Unlevelled,
        _: &'static str,
        _: Option<&'a (dyn core::fmt::Display + Sync)>,
    ) -> Self {
        NotSent {
            unused: core::marker::PhantomData,
        }
    }

    /// The request is not sent again, for `why`.
    #[cold]
    pub(crate) fn say(&self, why: &'static str) {
        #[cfg(feature = "tracing")]
        {
            let unknown: &(dyn core::fmt::Display + Sync) = &"a request whose head was not kept";
            let request = self.request.unwrap_or(unknown);
            crate::run::trace::not_sent_again(self.level, self.function, request, why);
        }
        let _ = why;
    }

    /// `decision` on an outcome whose request may be sent again only as `resend` says.
    ///
    /// `any` is the decision were it sent again freely.
    ///
    /// Told if the write rule alone stops it.
    #[inline]
    pub(crate) fn checked(
        &self,
        decision: crate::Decision,
        resend: crate::policy::Resend,
        any: impl FnOnce() -> crate::Decision,
    ) -> crate::Decision {
        if decision == crate::Decision::Stop
            && resend != crate::policy::Resend::Any
            && any() != crate::Decision::Stop
        {
            self.say(NO_KEY);
        }
        decision
    }
}
