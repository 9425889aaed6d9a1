//! The chain model: the open model's calls go through a chain of services, each retrying the
//! one below, and the bottom one goes down.
//!
//! Calls arrive at the top as in the open model (Poisson, `rate` a second); `depth` tiers
//! retry: the clients call the first service, which calls the second, and so on, and the last
//! tier calls the bottom service, the open model's (FIFO, `capacity` attempts a second, down
//! from 10 s for `outage`, serving every attempt it queued, in time or not). Each tier makes
//! up to `attempts` attempts with full jitter. Only the last tier times out its attempts
//! (`timeout`); a tier above waits for the answer of the one below, which always comes once its
//! loop ends (timeouts nest, as a chain's must for any tier's retry to mean anything).
//!
//! The strategies: every tier retrying whatever fails (`every-tier`), with a `RatioBudget` of
//! its own at every tier (`every-tier+ratio`); or a tier that gave up (attempts, budget, or its
//! downstream's "don't retry") answering "don't retry" upstream, as `ChainLayer` does, so that
//! no tier above retries it (`one-tier`, `one-tier+ratio`): the retries happen at the one tier
//! next to the failure. It is the open model's engine, run with a `Plan` of `depth` tiers.

use std::fmt;

use crate::open::{Budget, Open, OpenResult, Plan};

/// How the tiers of a chain retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChainStrategy {
    /// Every tier retries every failure of the tier below.
    EveryTier,
    /// And every tier's retries take from a `RatioBudget` of its own.
    EveryTierRatio,
    /// A tier that gave up answers "don't retry": only the tier next to the failure retries.
    OneTier,
    /// And every tier's retries take from a `RatioBudget` of its own.
    OneTierRatio,
}

impl ChainStrategy {
    /// Every strategy, in table order.
    pub const ALL: [ChainStrategy; 4] = [
        ChainStrategy::EveryTier,
        ChainStrategy::EveryTierRatio,
        ChainStrategy::OneTier,
        ChainStrategy::OneTierRatio,
    ];

    /// The name used in tables, CSV and chart legends.
    pub fn name(self) -> &'static str {
        match self {
            ChainStrategy::EveryTier => "every-tier",
            ChainStrategy::EveryTierRatio => "every-tier+ratio",
            ChainStrategy::OneTier => "one-tier",
            ChainStrategy::OneTierRatio => "one-tier+ratio",
        }
    }

    /// How the calls of a chain of `depth` tiers retry under this strategy.
    fn plan(self, o: &Open, depth: u32) -> Plan {
        Plan {
            seed: o.seed_of(&[5, self as u64, u64::from(depth)]),
            depth,
            attempts: o.attempts,
            budget: match self {
                ChainStrategy::EveryTierRatio | ChainStrategy::OneTierRatio => Budget::Ratio,
                ChainStrategy::EveryTier | ChainStrategy::OneTier => Budget::None,
            },
            throttle: false,
            breaker: false,
            pushback: matches!(self, ChainStrategy::OneTier | ChainStrategy::OneTierRatio),
        }
    }
}

impl fmt::Display for ChainStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// What one strategy did in a chain of `depth` tiers: `calls_per_call_down` is the calls the
/// bottom service received per call at the top.
pub struct ChainResult {
    pub depth: u32,
    pub run: OpenResult<ChainStrategy>,
}

impl ChainResult {
    /// Calls at the bottom per call at the top, over the calls that arrived while it was
    /// down, each counted to its end.
    pub fn bottom_calls_per_call(&self) -> Option<f64> {
        self.run.calls_per_call_down
    }
}

/// Run the open model's scenario `o` through a chain of `depth` tiers under `strategy`.
pub fn run(o: &Open, strategy: ChainStrategy, depth: u32) -> ChainResult {
    let depth = depth.max(1);
    ChainResult {
        depth,
        run: o.simulate(strategy, strategy.plan(o, depth)),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A bottom service that serves one attempt a second: down or not, every attempt of the
    /// calls that arrive while it is down waits longer than its timeout, so every one fails.
    fn down() -> Open {
        Open {
            rate: 20.0,
            capacity: 1,
            outage: Duration::from_secs(5),
            recover: false,
            ..Open::default()
        }
    }

    #[test]
    fn every_tier_makes_attempts_to_the_depth_at_the_bottom_and_one_tier_attempts() {
        let o = down();
        for depth in 1..=4 {
            let every = run(&o, ChainStrategy::EveryTier, depth);
            let one = run(&o, ChainStrategy::OneTier, depth);
            assert_eq!(every.bottom_calls_per_call(), Some(4f64.powi(depth as i32)));
            assert_eq!(one.bottom_calls_per_call(), Some(4.0), "depth {depth}");
        }
    }
}
