//! The per-attempt time limit a `Retry` carries as a type parameter.

use core::time::Duration;

use crate::policy::TimedOut;
use crate::policy::Unset;

/// The per-attempt time limit of a [`Retry`](crate::Retry): [`Unset`] (the default), or a
/// `Duration` set with [`Retry::timeout`](crate::Retry::timeout).
///
/// A `Duration` needs the error type `E` to implement `From<TimedOut>`.
#[diagnostic::on_unimplemented(
    message = "a timeout needs the error type `{E}` to implement `From<retry_jitter::TimedOut>`",
    label = "an attempt cut by the timeout fails with `E::from(TimedOut)`",
    note = "add `impl From<retry_jitter::TimedOut> for {E}`, or return `std::io::Error`, which has it"
)]
pub trait AttemptTimeout<E> {
    /// The limit, and how an attempt cut by it becomes an error; `None` for no limit.
    ///
    /// ```
    /// use retry_jitter::hooks::Unset;
    /// use retry_jitter::__private::AttemptTimeout;
    /// use std::time::Duration;
    ///
    /// assert!(AttemptTimeout::<std::io::Error>::limit(&Unset).is_none());
    /// let (limit, _) = AttemptTimeout::<std::io::Error>::limit(&Duration::from_secs(1)).unwrap();
    /// assert_eq!(limit, Duration::from_secs(1));
    /// ```
    fn limit(&self) -> Option<(Duration, MakeError<E>)>;
}

/// How an attempt cut by its time limit becomes the function's error (`E::from`).
#[doc(hidden)]
pub type MakeError<E> = fn(TimedOut) -> E;

impl<E> AttemptTimeout<E> for Unset {
    #[inline]
    fn limit(&self) -> Option<(Duration, MakeError<E>)> {
        None
    }
}

impl<E: From<TimedOut>> AttemptTimeout<E> for Duration {
    #[inline]
    fn limit(&self) -> Option<(Duration, MakeError<E>)> {
        Some((*self, E::from))
    }
}

/// A limit or none, chosen when the `Retry` is made.
///
/// A face whose loops differ in this alone has one type for all.
impl<E: From<TimedOut>> AttemptTimeout<E> for Option<Duration> {
    #[inline]
    fn limit(&self) -> Option<(Duration, MakeError<E>)> {
        self.map(|limit| (limit, E::from as MakeError<E>))
    }
}
