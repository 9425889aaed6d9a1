//! The classifier hooks: what decides, error by error and value by value, whether a call is
//! retried (`on`, `on_ok`).
//!
//! And their stand-ins when none is given.

use crate::policy::Decision;

/// Decides, error by error, whether a failed call is retried.
///
/// Implemented for every `Fn(&E) -> D` where `D: Into<Decision>` (so `bool` works), and for
/// [`RetryAll`].
///
/// ```
/// use retry_jitter::Decision;
/// use retry_jitter::hooks::Classify;
///
/// let on = |e: &u16| *e >= 500;
/// assert_eq!(on.classify(&503), Decision::Retry);
/// assert_eq!(on.classify(&404), Decision::Stop);
/// ```
pub trait Classify<E> {
    /// What to do about `error`.
    fn classify(&self, error: &E) -> Decision;

    /// What to do about `error`, a failure of a request that may be sent again only as
    /// `resend` says.
    ///
    /// The middleware faces call this.
    ///
    /// By default it is [`classify`](Classify::classify): a user's classifier decides for every
    /// request.
    ///
    /// The faces' default error classifiers narrow it.
    ///
    /// For [`Resend::IfNotApplied`] they retry only an error that proves the request was never
    /// sent.
    ///
    /// ```
    /// use retry_jitter::hooks::Resend;
    /// use retry_jitter::Decision;
    /// use retry_jitter::hooks::Classify;
    ///
    /// let on = |e: &u16| *e >= 500;
    /// assert_eq!(on.classify_for(&503, Resend::IfNotApplied), Decision::Retry);
    /// ```
    fn classify_for(&self, error: &E, resend: Resend) -> Decision {
        let _ = resend;
        self.classify(error)
    }

    /// Whether `error` proves its attempt never reached the server's application.
    ///
    /// Then the loop sends it again at once, uncounted: gRFC A6's transparent retry.
    ///
    /// `No` but for the gRPC layer's classifier of channel errors.
    ///
    /// The loop asks; not for implementors.
    #[doc(hidden)]
    #[inline]
    fn transparent(&self, error: &E) -> Transparent {
        let _ = error;
        Transparent::No
    }
}

/// What an error proves of where its attempt went, for a transparent retry
/// ([`Classify::transparent`]).
///
/// gRPC C-core's `StreamNetworkState`. Not for users.
///
/// ```
/// use retry_jitter::__private::Transparent;
/// use retry_jitter::hooks::Classify;
/// let on = |_: &u16| true;
/// assert_eq!(on.transparent(&503), Transparent::No);
/// ```
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transparent {
    /// Nothing: the attempt may have run.
    No,
    /// It reached the server's transport, which did not hand it on: sent again once per
    /// attempt.
    ///
    /// An HTTP/2 stream refused, or beyond a `GOAWAY`.
    NotSeenByServer,
    /// It never left the client: its connection closed before it was written.
    ///
    /// Sent again until the call's deadline, or once per attempt when the call has none.
    NotSentOnWire,
}

/// Whether a failed request may be sent again whatever became of it.
///
/// It is what the middleware faces know of a request: its method, its `Idempotency-Key`, the
/// builder's `.idempotent()`.
///
/// Handed to their classifiers by [`Classify::classify_for`] and
/// [`ClassifyOk::classify_ok_for`].
///
/// ```
/// use retry_jitter::hooks::Resend;
/// assert_eq!(Resend::default(), Resend::Any);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Resend {
    /// It may: applying it twice is applying it once.
    ///
    /// An idempotent method, an idempotency key, or the user vouched for it.
    #[default]
    Any,
    /// Only when the failure proves it was not applied:
    ///
    /// - it was never sent: a failed connect, an HTTP/2 stream the server refused or went away
    ///   before processing;
    /// - the server refused it before processing it: `408`, `425`, `429`, `503`;
    /// - or the server says it may be retried.
    IfNotApplied,
}

impl<E, D: Into<Decision>, F: Fn(&E) -> D> Classify<E> for F {
    fn classify(&self, error: &E) -> Decision {
        self(error).into()
    }
}

/// A classifier made of two closures: `classify`'s, and [`Classify::transparent`]'s.
///
/// A middleware face's: only the face knows whether a request may be sent again.
#[cfg(feature = "tower")]
pub(crate) struct Transparently<C, T>(pub C, pub T);

#[cfg(feature = "tower")]
impl<E, C: Fn(&E) -> Decision, T: Fn(&E) -> Transparent> Classify<E> for Transparently<C, T> {
    #[inline]
    fn classify(&self, error: &E) -> Decision {
        (self.0)(error)
    }
    #[inline]
    fn transparent(&self, error: &E) -> Transparent {
        (self.1)(error)
    }
}

/// The classifier used when none is given: every error is retried.
///
/// ```
/// use retry_jitter::Decision;
/// use retry_jitter::hooks::{Classify, RetryAll};
/// assert_eq!(RetryAll.classify(&"any error"), Decision::Retry);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct RetryAll;

impl<E> Classify<E> for RetryAll {
    fn classify(&self, _: &E) -> Decision {
        Decision::Retry
    }
}

/// Decides, value by value, whether an `Ok` is retried (`on_ok`: poll until ready).
///
/// Implemented for every `Fn(&T) -> D` where `D: Into<Decision>`, and for [`AcceptOk`].
///
/// So `bool` works: `true` = try again. [`AcceptOk`] takes every value.
///
/// ```
/// use retry_jitter::Decision;
/// use retry_jitter::hooks::ClassifyOk;
///
/// #[derive(PartialEq)]
/// enum Job { Pending, Done }
/// let pending = |job: &Job| *job == Job::Pending;
/// assert_eq!(pending.classify_ok(&Job::Pending), Decision::Retry);
/// assert_eq!(pending.classify_ok(&Job::Done), Decision::Stop);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot classify a `{T}`, the `Ok` value it is handed",
    label = "each `Ok` is a `{T}`",
    note = "`on_ok` takes a `Fn(&{T}) -> D` where `D: Into<Decision>` (a `bool`: `true` = try again), or `AcceptOk`, which takes every value",
    note = "`RetryLayer`'s default, `retry_jitter::tower::ByStatus`, classifies `http::Response`s: over a service that answers with anything else, add `.on_ok(AcceptOk)` or `.on_ok(|r: &{T}| …)`"
)]
pub trait ClassifyOk<T> {
    /// What to do about `value`: [`Decision::Stop`] takes it.
    fn classify_ok(&self, value: &T) -> Decision;

    /// What to do about `value`, the answer to a request that may be sent again only as
    /// `resend` says (see [`Classify::classify_for`]).
    ///
    /// By default [`classify_ok`](ClassifyOk::classify_ok).
    ///
    /// The faces' default response classifiers narrow it.
    ///
    /// For [`Resend::IfNotApplied`] they retry only a refusal before processing, or a response
    /// the server marks as safe to retry.
    ///
    /// ```
    /// use retry_jitter::hooks::Resend;
    /// use retry_jitter::Decision;
    /// use retry_jitter::hooks::ClassifyOk;
    ///
    /// let busy = |status: &u16| *status == 503;
    /// assert_eq!(busy.classify_ok_for(&503, Resend::IfNotApplied), Decision::Retry);
    /// ```
    fn classify_ok_for(&self, value: &T, resend: Resend) -> Decision {
        let _ = resend;
        self.classify_ok(value)
    }

    /// The status of `value`, a response, where this classifies responses by their status.
    ///
    /// There a response it retries is a failure: the faces' default `ByStatus`, a 503, a 429.
    ///
    /// `None` for every other classifier, whose retried values are polls: answers not yet the
    /// one wanted.
    ///
    /// The faces ask; not for implementors.
    #[doc(hidden)]
    #[inline]
    fn failure_status(&self, value: &T) -> Option<u16> {
        let _ = value;
        None
    }

    /// Whether a response [`failure_status`](ClassifyOk::failure_status) marks, when this does
    /// not retry it, still ends its call as a failure.
    ///
    /// Then no budget hears of a success.
    ///
    /// gRPC's service config layer does this: a code not retried is returned as it is, counted
    /// neither way.
    ///
    /// The caller gets the response either way.
    ///
    /// The faces ask; not for implementors.
    #[doc(hidden)]
    #[inline]
    fn stop_is_failure(&self) -> bool {
        false
    }
}

// Not recommended: a classifier of the wrong type is reported as this trait's message.
//
// Not as "expected a `Fn(&T)` closure".
#[diagnostic::do_not_recommend]
impl<T, D: Into<Decision>, F: Fn(&T) -> D> ClassifyOk<T> for F {
    #[inline]
    fn classify_ok(&self, value: &T) -> Decision {
        self(value).into()
    }
}

/// The `on_ok` used when none is given: every `Ok` is a success (and costs nothing).
///
/// ```
/// use retry_jitter::Decision;
/// use retry_jitter::hooks::{AcceptOk, ClassifyOk};
/// assert_eq!(AcceptOk.classify_ok(&"any value"), Decision::Stop);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct AcceptOk;

impl<T> ClassifyOk<T> for AcceptOk {
    #[inline]
    fn classify_ok(&self, _: &T) -> Decision {
        Decision::Stop
    }
}
