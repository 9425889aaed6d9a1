//! The retry loop where services retry: client middleware, each behind its feature. Each face
//! drives the closure API's loop ([`Retry`](crate::Retry)); none has a loop of its own. A
//! response is an `Ok` to the client, yet a 503 is worth retrying: the faces classify
//! responses with [`Retry::on_ok`](crate::Retry::on_ok).

mod builder;
mod hops;
pub(crate) use hops::HopLimits;
#[cfg(feature = "reqwest-middleware")]
pub mod reqwest_middleware;
#[cfg(feature = "tower")]
pub mod tower;
mod writes;

/// An attempt of a face's call, `resend_count` the attempts before it: with feature `tracing`,
/// a resend runs in a span carrying OpenTelemetry's stable `http.request.resend_count` (1, 2,
/// …), so that a trace shows every attempt of one logical request; the first attempt has none.
#[cfg(feature = "tracing")]
pub(crate) fn attempt<F: core::future::Future>(
    future: F,
    resend_count: u32,
) -> tracing::instrument::Instrumented<F> {
    let span = match resend_count {
        0 => tracing::Span::none(),
        n => {
            tracing::info_span!(target: crate::run::trace::TARGET, "retry_attempt", "http.request.resend_count" = n)
        }
    };
    tracing::Instrument::instrument(future, span)
}

/// An attempt of a face's call: without feature `tracing`, the future itself.
#[cfg(not(feature = "tracing"))]
#[inline(always)]
pub(crate) fn attempt<F: core::future::Future>(future: F, _resend_count: u32) -> F {
    future
}
