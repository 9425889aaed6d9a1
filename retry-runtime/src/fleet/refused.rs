//! The errors of an attempt or a call the fleet's guards refused on this side: [`Throttled`]
//! and [`CircuitOpen`].

use core::fmt;
use std::io;

use crate::policy::transient::Transient;
use crate::policy::Decision;

macro_rules! refusal {
    ($(#[$doc:meta])* $name:ident, $text:literal, $io_doc:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str($text)
            }
        }

        impl std::error::Error for $name {}

        /// Not retried: the refusal is local, and retrying it at once only spins.
        ///
        /// ```
        #[doc = concat!("use retry_jitter_runtime::{transient, Decision, ", stringify!($name), "};")]
        #[doc = concat!("assert_eq!(transient(&", stringify!($name), "), Decision::Stop);")]
        /// ```
        impl Transient for $name {
            fn decision(&self) -> Decision {
                Decision::Stop
            }
        }

        #[doc = $io_doc]
        ///
        /// ```
        #[doc = concat!("use retry_jitter_runtime::{Decision, Transient, ", stringify!($name), "};")]
        #[doc = concat!("let e = std::io::Error::from(", stringify!($name), ");")]
        #[doc = concat!("assert!(e.get_ref().is_some_and(|inner| inner.is::<", stringify!($name), ">()));")]
        /// assert_eq!(e.decision(), Decision::Stop);
        /// ```
        impl From<$name> for io::Error {
            fn from(e: $name) -> Self {
                io::Error::other(e)
            }
        }
    };
}

refusal!(
    /// An attempt the [`AdaptiveThrottle`](crate::AdaptiveThrottle) rejected: it was not made.
    ///
    /// A retried function with `throttle = …` gets this as its own error type through
    /// `From<Throttled>`.
    ///
    /// The call ends ([`GiveUpReason::Throttled`](crate::GiveUpReason::Throttled)).
    ///
    /// ```
    /// use retry_jitter::Throttled;
    /// assert_eq!(Throttled.to_string(), "the attempt was throttled: the service rejects much of what it is sent");
    /// ```
    Throttled,
    "the attempt was throttled: the service rejects much of what it is sent",
    "An `io::Error` of kind `Other` holding [`Throttled`], which `transient` stops on."
);

refusal!(
    /// A call the [`CircuitBreaker`](crate::CircuitBreaker) refused while open: the body was
    /// not called.
    ///
    /// A retried function with `breaker = …` gets this as its own error type through
    /// `From<CircuitOpen>`.
    ///
    /// The call ends ([`GiveUpReason::CircuitOpen`](crate::GiveUpReason::CircuitOpen)).
    ///
    /// ```
    /// use retry_jitter::CircuitOpen;
    /// assert_eq!(CircuitOpen.to_string(), "the circuit breaker is open: the service failed too many calls");
    /// ```
    CircuitOpen,
    "the circuit breaker is open: the service failed too many calls",
    "An `io::Error` of kind `Other` holding [`CircuitOpen`], which `transient` stops on."
);
