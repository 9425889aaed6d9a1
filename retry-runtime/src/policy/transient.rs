//! Which errors are worth retrying: the [`Transient`] trait and small combinators.

use std::io;

use crate::policy::{Classify, Decision};

/// An error type that knows whether waiting can fix it.
///
/// `#[retry(on = retry_jitter::transient)]` works for every error type implementing it.
///
/// ```
/// use retry_jitter::{transient, Decision, Transient};
///
/// enum DbError { Deadlock, Timeout, Constraint(String) }
///
/// impl Transient for DbError {
///     fn decision(&self) -> Decision {
///         match self {
///             DbError::Deadlock | DbError::Timeout => Decision::Retry,
///             DbError::Constraint(_) => Decision::Stop,
///         }
///     }
/// }
///
/// assert_eq!(transient(&DbError::Deadlock), Decision::Retry);
/// assert_eq!(transient(&DbError::Constraint("unique".into())), Decision::Stop);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `Transient`: `retry_jitter::transient` cannot classify it",
    label = "no `Transient` impl for `{Self}`",
    note = "give `on` a classifier of your own (`on = |e: &{Self}| …`, returning `bool` or `Decision`), or implement `retry_jitter::Transient` for your error type"
)]
pub trait Transient {
    /// What to do about this error.
    fn decision(&self) -> Decision;
}

/// The classifier of every [`Transient`] error: `on = retry_jitter::transient`.
///
/// ```
/// use retry_jitter::{transient, Decision};
/// use std::io;
///
/// assert_eq!(transient(&io::Error::from(io::ErrorKind::TimedOut)), Decision::Retry);
/// assert_eq!(transient(&io::Error::from(io::ErrorKind::NotFound)), Decision::Stop);
/// ```
pub fn transient<E: Transient + ?Sized>(error: &E) -> Decision {
    error.decision()
}

impl<E: Transient + ?Sized> Transient for &E {
    fn decision(&self) -> Decision {
        (**self).decision()
    }
}

impl<E: Transient + ?Sized> Transient for Box<E> {
    fn decision(&self) -> Decision {
        (**self).decision()
    }
}

/// `std::io::Error` by its [`ErrorKind`](io::ErrorKind):
///
/// | kind | decision | why |
/// |---|---|---|
/// | `TimedOut`, `WouldBlock`, `Interrupted` | retry | the operation did not finish; it may next time |
/// | `ConnectionRefused` | retry | nothing listens *yet*: a restart, a failover |
/// | `ConnectionReset`, `ConnectionAborted`, `NotConnected`, `BrokenPipe`, `UnexpectedEof` | retry | the peer or the network dropped the connection midway |
/// | `HostUnreachable`, `NetworkUnreachable`, `NetworkDown` | retry | the route may come back |
/// | everything else (`NotFound`, `PermissionDenied`, `InvalidInput`, `InvalidData`, `AlreadyExists`, `Unsupported`, `OutOfMemory`, …) | stop | the same call fails the same way again |
///
/// ```
/// use retry_jitter::{Decision, Transient};
/// use std::io::{Error, ErrorKind};
///
/// assert_eq!(Error::from(ErrorKind::ConnectionRefused).decision(), Decision::Retry);
/// assert_eq!(Error::from(ErrorKind::PermissionDenied).decision(), Decision::Stop);
/// ```
impl Transient for io::Error {
    fn decision(&self) -> Decision {
        self.kind().decision()
    }
}

/// The same table as for [`io::Error`].
///
/// ```
/// use retry_jitter::{Decision, Transient};
/// assert_eq!(std::io::ErrorKind::BrokenPipe.decision(), Decision::Retry);
/// ```
impl Transient for io::ErrorKind {
    fn decision(&self) -> Decision {
        use io::ErrorKind as K;
        Decision::from(matches!(
            self,
            K::TimedOut
                | K::WouldBlock
                | K::Interrupted
                | K::ConnectionRefused
                | K::ConnectionReset
                | K::ConnectionAborted
                | K::NotConnected
                | K::BrokenPipe
                | K::UnexpectedEof
                | K::HostUnreachable
                | K::NetworkUnreachable
                | K::NetworkDown
        ))
    }
}

/// A classifier that retries when either `first` or `second` says to: `first` is asked first,
/// and its decision stands unless it is `Stop` (so its `RetryAfter` hint wins).
///
/// ```
/// use retry_jitter::{either, transient, Decision};
/// use retry_jitter::hooks::Classify;
/// use std::io::{Error, ErrorKind};
///
/// let busy = |e: &Error| e.to_string().contains("busy");
/// let on = either(transient, busy);
/// assert_eq!(on.classify(&Error::other("server busy")), Decision::Retry);
/// assert_eq!(on.classify(&Error::from(ErrorKind::TimedOut)), Decision::Retry);
/// assert_eq!(on.classify(&Error::from(ErrorKind::NotFound)), Decision::Stop);
/// ```
pub fn either<E, A, B>(first: A, second: B) -> impl Fn(&E) -> Decision
where
    A: Classify<E>,
    B: Classify<E>,
{
    move |error| match first.classify(error) {
        Decision::Stop => second.classify(error),
        decision => decision,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use io::ErrorKind as K;

    #[test]
    fn io_error_kinds_follow_the_documented_table() {
        let retry = [
            K::TimedOut,
            K::WouldBlock,
            K::Interrupted,
            K::ConnectionRefused,
            K::ConnectionReset,
            K::ConnectionAborted,
            K::NotConnected,
            K::BrokenPipe,
            K::UnexpectedEof,
            K::HostUnreachable,
            K::NetworkUnreachable,
            K::NetworkDown,
        ];
        let stop = [
            K::NotFound,
            K::PermissionDenied,
            K::AddrInUse,
            K::AddrNotAvailable,
            K::AlreadyExists,
            K::InvalidInput,
            K::InvalidData,
            K::WriteZero,
            K::Unsupported,
            K::OutOfMemory,
            K::Other,
        ];
        for kind in retry {
            assert_eq!(
                transient(&io::Error::from(kind)),
                Decision::Retry,
                "{kind:?}"
            );
        }
        for kind in stop {
            assert_eq!(
                transient(&io::Error::from(kind)),
                Decision::Stop,
                "{kind:?}"
            );
        }
    }

    #[test]
    fn either_asks_the_second_only_when_the_first_stops() {
        let hint = core::time::Duration::from_secs(1);
        let first = |e: &u8| {
            if *e == 1 {
                Decision::RetryAfter(hint)
            } else {
                Decision::Stop
            }
        };
        let second = |e: &u8| *e == 2 || *e == 1;
        let on = either(first, second);
        assert_eq!(on(&1), Decision::RetryAfter(hint));
        assert_eq!(on(&2), Decision::Retry);
        assert_eq!(on(&3), Decision::Stop);
    }
}
