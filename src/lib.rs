//! Retries done right by default.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub use retry_macro::retry;
pub use retry_runtime::{
    sleep, testing, Backoff, Classify, Decision, GiveUp, Jitter, NoNotify, Notify, Policy, Retry,
    RetryAll, RetryEvent, RetryState, Schedule,
};

#[doc(hidden)]
pub mod __private {
    pub use retry_runtime::__private::*;
}
