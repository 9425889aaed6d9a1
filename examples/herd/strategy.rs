//! The retry strategies of the outage and OCC models, each a `retry_jitter::Backoff` (and, for
//! `full+budget`, a `RetryBudget` shared by all the clients of a run). Every wait is drawn by
//! the crate's own `Backoff`, and every token taken or given back is the crate's own
//! `RetryBudget`'s; what counts the attempts and decides to retry differs by model:
//!
//! - `occ`: each client's retries are decided by a `RetryState` of its own, under a `Policy` of
//!   this backoff with the budget as its hook: the loop `#[retry]` runs, failure by failure
//!   (the model gives the budget its tokens back on a success, as the loop does).
//! - `outage`: the model itself counts each client's calls against `attempts`, draws each wait
//!   with `Backoff::delay` and asks the budget (`try_retry`, `succeeded_after`); no `RetryState`
//!   (a million of them were too slow: BENCHMARKS.md).
//!
//! The other models do not use these strategies; see the crate docs (`main.rs`).

use std::fmt;
use std::time::Duration;

use retry_jitter::{Backoff, Jitter, RetryBudget};

/// A way of waiting between attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum Strategy {
    /// No backoff: retry at once.
    None,
    /// Always 1 s.
    Fixed,
    /// Capped exponential, no jitter.
    Exponential,
    /// Capped exponential, full jitter (the default of `#[retry]`).
    Full,
    /// Capped exponential, equal jitter.
    Equal,
    /// Decorrelated jitter.
    Decorrelated,
    /// Full jitter, every retry also taking tokens from one `RetryBudget` shared by all clients.
    #[value(name = "full+budget")]
    FullBudget,
}

impl Strategy {
    /// Every strategy, in table order.
    pub const ALL: [Strategy; 7] = [
        Strategy::None,
        Strategy::Fixed,
        Strategy::Exponential,
        Strategy::Full,
        Strategy::Equal,
        Strategy::Decorrelated,
        Strategy::FullBudget,
    ];

    /// The backoff this strategy waits with, for a model whose base and cap are given.
    pub fn backoff(self, base: Duration, cap: Duration) -> Backoff {
        match self {
            Strategy::None => {
                Backoff::new(Duration::ZERO, Duration::ZERO).with_jitter(Jitter::None)
            }
            Strategy::Fixed => {
                let second = Duration::from_secs(1);
                Backoff::new(second, second).with_jitter(Jitter::None)
            }
            Strategy::Exponential => Backoff::new(base, cap).with_jitter(Jitter::None),
            Strategy::Full | Strategy::FullBudget => {
                Backoff::new(base, cap).with_jitter(Jitter::Full)
            }
            Strategy::Equal => Backoff::new(base, cap).with_jitter(Jitter::Equal),
            Strategy::Decorrelated => Backoff::new(base, cap).with_jitter(Jitter::Decorrelated),
        }
    }

    /// Whether the strategy draws its waits at random.
    #[cfg(test)]
    pub fn jittered(self) -> bool {
        matches!(
            self,
            Strategy::Full | Strategy::Equal | Strategy::Decorrelated | Strategy::FullBudget
        )
    }

    /// The budget this strategy's clients share, if any: the AWS SDKs' quota shape
    /// (500 tokens, 5 a retry, 1 back per first-try success).
    pub fn budget(self) -> Option<RetryBudget> {
        (self == Strategy::FullBudget).then(RetryBudget::default)
    }

    /// The name used in tables, CSV and chart legends.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::None => "none",
            Strategy::Fixed => "fixed",
            Strategy::Exponential => "exponential",
            Strategy::Full => "full",
            Strategy::Equal => "equal",
            Strategy::Decorrelated => "decorrelated",
            Strategy::FullBudget => "full+budget",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// A duration in whole nanoseconds of virtual time (saturating: 584 years is plenty).
pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Milliseconds, for tables.
pub fn ms(t: u64) -> f64 {
    t as f64 / 1e6
}
