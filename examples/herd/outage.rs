//! The thundering herd: every client fails together during an outage, then all of them retry
//! against a service that has just come back with a fixed capacity.

use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::sim::{seed_for, Queue};
use crate::strategy::{nanos, Strategy};

/// The server's capacity is counted in slots of this length; calls over a slot's share fail.
pub const SLOT: u64 = 10_000_000;
/// The width of the windows calls are counted in for the peak and the chart.
pub const WINDOW: u64 = 100_000_000;

/// A client between two calls: what it needs to make the next, packed in one word so that an
/// event is 16 bytes with its time (24 unpacked: 16% more CPU at a million clients). Its calls
/// so far in the top 24 bits; its previous wait in ns, never more than `cap`, in the low 40
/// (18 minutes: `run` checks the cap fits).
#[derive(Clone, Copy, Debug)]
struct Client(u64);

impl Client {
    const WAIT_BITS: u32 = 40;
    /// The most calls a client can count.
    const MAX_CALLS: u32 = (1 << (64 - Self::WAIT_BITS)) - 1;

    fn new(calls: u32, prev: u64) -> Self {
        debug_assert!(calls <= Self::MAX_CALLS && prev >> Self::WAIT_BITS == 0);
        Client((u64::from(calls) << Self::WAIT_BITS) | prev)
    }

    /// Calls made so far.
    fn calls(self) -> u32 {
        (self.0 >> Self::WAIT_BITS) as u32
    }

    /// Its previous wait (ns), which decorrelated jitter grows from: `base` before the first.
    fn prev(self) -> u64 {
        self.0 & ((1 << Self::WAIT_BITS) - 1)
    }
}

/// One outage scenario.
#[derive(Clone, Debug)]
pub struct Outage {
    /// Clients, each making one call near t = 0.
    pub clients: u32,
    /// How long the service is down from t = 0.
    pub down: Duration,
    /// Calls per second the service serves once it is back.
    pub capacity: u32,
    /// Total calls per client, the first included.
    pub attempts: u32,
    /// Backoff base and cap of the exponential strategies.
    pub base: Duration,
    pub cap: Duration,
    /// How long a call takes to come back with its answer.
    pub rtt: Duration,
    /// First calls are spread uniformly over this long after t = 0.
    pub spread: Duration,
    pub seed: u64,
}

impl Default for Outage {
    fn default() -> Self {
        Outage {
            clients: 10_000,
            down: Duration::from_secs(5),
            capacity: 2_000,
            attempts: 10,
            base: Duration::from_millis(200),
            cap: Duration::from_secs(30),
            rtt: Duration::from_millis(10),
            spread: Duration::from_millis(100),
            seed: 1,
        }
    }
}

/// What one strategy did in the scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct OutageResult {
    pub strategy: Strategy,
    pub calls: u64,
    pub succeeded: u32,
    pub gave_up: u32,
    /// Most calls in any 100 ms window that starts after the service is back.
    pub peak_after_recovery: u64,
    /// When 99% of the clients had succeeded, if they ever did (ns).
    pub p99_done: Option<u64>,
    /// Calls in each 100 ms window from t = 0, for the chart.
    pub per_window: Vec<u64>,
}

impl Outage {
    /// Run the scenario under one strategy.
    pub fn run(&self, strategy: Strategy) -> OutageResult {
        let backoff = strategy.backoff(self.base, self.cap);
        let seed = seed_for(&[self.seed, 1, strategy as u64]);
        // The waits come from the runtime's own generator, seeded per run.
        retry_jitter::testing::seed_jitter(seed);
        let mut rng = SmallRng::seed_from_u64(seed);
        let (down, rtt) = (nanos(self.down), nanos(self.rtt));
        let per_slot = (u64::from(self.capacity) * SLOT / 1_000_000_000).max(1) as u32;

        let budget = strategy.budget();
        let n = self.clients as usize;
        // A client's state travels in its event, not in arrays indexed by client: a million
        // clients' schedules would be a cache miss on every event. Its calls so far (also the
        // retry number of its next wait, and with the budget its retries to pay back) and its
        // previous wait are all `Schedule::next` keeps; the wait is drawn by the same
        // `Backoff::delay`, so never more than the cap.
        let first_wait = nanos(backoff.base());
        assert!(
            nanos(backoff.cap()) >> Client::WAIT_BITS == 0,
            "a cap of {:?} does not fit in a client's event",
            backoff.cap()
        );
        // More calls than a client can count would never be made anyway.
        let attempts = self.attempts.min(Client::MAX_CALLS);
        let mut queue = Queue::new();
        for _ in 0..n {
            let at = rng.random_range(0..nanos(self.spread).max(1));
            queue.push(at, Client::new(0, first_wait));
        }
        // Calls seen and calls served in each slot.
        let mut seen: Vec<u32> = Vec::new();
        let mut served: Vec<u32> = Vec::new();
        let mut done_at: Vec<u64> = Vec::with_capacity(n);
        let (mut calls, mut gave_up) = (0u64, 0u32);

        while let Some((t, client)) = queue.pop() {
            calls += 1;
            let (made, prev) = (client.calls() + 1, client.prev());
            let slot = (t / SLOT) as usize;
            if seen.len() <= slot {
                seen.resize(slot + 1, 0);
                served.resize(slot + 1, 0);
            }
            seen[slot] += 1;
            let ok = t >= down && served[slot] < per_slot;
            if ok {
                served[slot] += 1;
                done_at.push(t + rtt);
                if let Some(b) = &budget {
                    b.succeeded_after(made - 1);
                }
            } else if made >= attempts || budget.as_ref().is_some_and(|b| !b.try_retry()) {
                gave_up += 1;
            } else {
                let wait = nanos(backoff.delay(made, Duration::from_nanos(prev)));
                queue.push(
                    t.saturating_add(rtt).saturating_add(wait),
                    Client::new(made, wait),
                );
            }
        }

        let slots_per_window = (WINDOW / SLOT) as usize;
        let per_window = seen
            .chunks(slots_per_window)
            .map(|w| w.iter().map(|&c| u64::from(c)).sum())
            .collect();
        let first = (down / SLOT) as usize;
        let peak_after_recovery = if seen.len() > first {
            let after = &seen[first..];
            let mut sum: u64 = after
                .iter()
                .take(slots_per_window)
                .map(|&c| u64::from(c))
                .sum();
            let mut peak = sum;
            for i in slots_per_window..after.len() {
                sum += u64::from(after[i]);
                sum -= u64::from(after[i - slots_per_window]);
                peak = peak.max(sum);
            }
            peak
        } else {
            0
        };
        done_at.sort_unstable();
        let needed = (n * 99).div_ceil(100);
        let p99_done = (needed > 0 && done_at.len() >= needed).then(|| done_at[needed - 1]);
        OutageResult {
            strategy,
            calls,
            succeeded: done_at.len() as u32,
            gave_up,
            peak_after_recovery,
            p99_done,
            per_window,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Outage {
        Outage {
            clients: 2_000,
            capacity: 400,
            ..Outage::default()
        }
    }

    #[test]
    fn every_client_succeeds_or_gives_up_and_calls_at_least_once() {
        let o = small();
        for s in Strategy::ALL {
            let r = o.run(s);
            assert_eq!(r.succeeded + r.gave_up, o.clients, "{s}");
            assert!(r.calls >= u64::from(o.clients), "{s}");
            assert_eq!(r.per_window.iter().sum::<u64>(), r.calls, "{s}");
        }
    }

    #[test]
    fn with_capacity_to_spare_and_no_outage_every_first_call_succeeds() {
        let o = Outage {
            clients: 1_000,
            down: Duration::ZERO,
            capacity: 1_000_000,
            ..Outage::default()
        };
        for s in Strategy::ALL {
            let r = o.run(s);
            assert_eq!((r.calls, r.succeeded, r.gave_up), (1_000, 1_000, 0), "{s}");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_result() {
        let o = small();
        for s in Strategy::ALL {
            assert_eq!(o.run(s), o.run(s), "{s}");
        }
        let other = Outage { seed: 2, ..small() };
        assert_ne!(o.run(Strategy::Full), other.run(Strategy::Full));
    }

    #[test]
    fn a_shared_budget_caps_the_retries_of_a_long_outage_at_what_its_tokens_allow() {
        let o = Outage {
            down: Duration::from_secs(60),
            ..Outage::default()
        };
        let full = o.run(Strategy::Full);
        let budget = o.run(Strategy::FullBudget);
        // Nothing succeeds during the outage, so nothing refills the 500 tokens: 100 retries.
        assert_eq!(budget.calls, u64::from(o.clients) + 100);
        assert!(
            budget.calls * 5 < full.calls,
            "{} vs {}",
            budget.calls,
            full.calls
        );
    }

    #[test]
    fn full_jitter_peaks_below_fixed_and_exponential_after_recovery() {
        let o = Outage::default();
        let full = o.run(Strategy::Full).peak_after_recovery;
        let fixed = o.run(Strategy::Fixed).peak_after_recovery;
        let exponential = o.run(Strategy::Exponential).peak_after_recovery;
        assert!(full < fixed, "full {full} vs fixed {fixed}");
        assert!(
            full < exponential,
            "full {full} vs exponential {exponential}"
        );
    }
}
