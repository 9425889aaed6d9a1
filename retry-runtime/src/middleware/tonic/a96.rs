//! gRFC A96's per-call retry figures (feature `metrics`): one record per call, at its end, of
//! each figure that is not zero, labelled `grpc.method` and `grpc.target`.
//!
//! The loop hands each call's [`RetryStats`] to [`record`] (the layer's `stats` hook) while the
//! call's future is polled; the labels are the call's, set for that poll ([`within`]).

use core::cell::RefCell;
use std::sync::{Arc, Once};

use http::uri::PathAndQuery;

use crate::policy::RetryStats;

/// Histogram: retries of a call (attempts after the first, hedges aside), unit `{retry}`.
pub(crate) const RETRIES: &str = "grpc.client.call.retries";
/// Histogram: transparent retries of a call (attempts sent again at once, uncounted, because
/// they never reached the server's application), unit `{transparent_retry}`.
pub(crate) const TRANSPARENT_RETRIES: &str = "grpc.client.call.transparent_retries";
/// Histogram: hedges of a call, unit `{hedge}`.
pub(crate) const HEDGES: &str = "grpc.client.call.hedges";
/// Histogram: the time a call had no attempt in flight, in seconds.
pub(crate) const RETRY_DELAY: &str = "grpc.client.call.retry_delay";

/// A call's labels: its path (`/pkg.Service/Method`: the method is it without its `/`) and
/// its layer's target. Made without an allocation (the path is the request's own bytes, the
/// target the layer's `Arc`): a call that ends with nothing to record pays no more.
pub(crate) type Labels = (Option<PathAndQuery>, Arc<str>);

std::thread_local! {
    /// The labels of the call being polled on this thread.
    static CALL: RefCell<Option<Labels>> = const { RefCell::new(None) };
}

/// The labels of a call of `uri` through a layer for `target`.
pub(crate) fn labels(uri: &http::Uri, target: &Arc<str>) -> Labels {
    (uri.path_and_query().cloned(), target.clone())
}

/// Poll a call with its labels set: moved in for the poll and back out after (no copy per
/// poll), the previous ones put back (calls nest).
pub(crate) fn within<O>(labels: &mut Option<Labels>, poll: impl FnOnce() -> O) -> O {
    struct Restore<'a> {
        ours: &'a mut Option<Labels>,
        previous: Option<Labels>,
    }
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            let previous = self.previous.take();
            let _ = CALL.try_with(|call| *self.ours = call.replace(previous));
        }
    }
    let previous = CALL.with(|call| call.replace(labels.take()));
    let _restore = Restore {
        ours: labels,
        previous,
    };
    poll()
}

/// The `stats` hook of a method's loop: [`record`], heard after the user's own `stats` hook
/// if one is set. Public in a private module: in the layer's types only.
#[derive(Clone, Copy, Debug)]
pub struct Record;

impl crate::run::stats::StatsHook for Record {
    fn stats(&self, stats: &RetryStats) {
        record(stats);
    }
}

/// A call ended: its figures that are not zero, to the recorder, with the call's labels.
pub(crate) fn record(stats: &RetryStats) {
    let retries = stats
        .attempts
        .saturating_sub(1)
        .saturating_sub(stats.hedges);
    let transparent = stats.transparent_retries;
    if retries == 0 && transparent == 0 && stats.hedges == 0 && stats.waited.is_zero() {
        return;
    }
    let Some((path, target)) = CALL.with(|call| call.borrow().clone()) else {
        return;
    };
    describe();
    let path = path.as_ref().map_or("", PathAndQuery::path);
    let method = path.strip_prefix('/').unwrap_or(path).to_owned();
    let label = |name| ::metrics::histogram!(name, "grpc.method" => method.clone(), "grpc.target" => target.to_string());
    if retries > 0 {
        label(RETRIES).record(f64::from(retries));
    }
    if transparent > 0 {
        label(TRANSPARENT_RETRIES).record(f64::from(transparent));
    }
    if stats.hedges > 0 {
        label(HEDGES).record(f64::from(stats.hedges));
    }
    if !stats.waited.is_zero() {
        label(RETRY_DELAY).record(stats.waited.as_secs_f64());
    }
}

/// The four histograms described, once per process (their units, as A96 names them).
fn describe() {
    static DESCRIBED: Once = Once::new();
    DESCRIBED.call_once(|| {
        use ::metrics::{describe_histogram, Unit};
        describe_histogram!(RETRIES, Unit::Count, "Retries of a call ({retry})");
        describe_histogram!(
            TRANSPARENT_RETRIES,
            Unit::Count,
            "Transparent retries of a call ({transparent_retry})"
        );
        describe_histogram!(HEDGES, Unit::Count, "Hedges of a call ({hedge})");
        describe_histogram!(
            RETRY_DELAY,
            Unit::Seconds,
            "Time a call had no attempt in flight"
        );
    });
}
