//! The thundering herd: every client fails together during an outage, then all of them retry
//! against a service that has just come back with a fixed capacity.

use std::cell::Cell;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use retry_jitter::{
    Budget, Hooks, NoBudget, NoGiveUp, NoNotify, NoTrace, Policy, RetryAll, RetryState,
};

use crate::sim::{seed_for, Queue};
use crate::strategy::{nanos, Strategy};

/// The server's capacity is counted in slots of this length; calls over a slot's share fail.
pub const SLOT: u64 = 10_000_000;
/// The width of the windows calls are counted in for the peak and the chart.
pub const WINDOW: u64 = 100_000_000;

/// The event of a client's first call: it has no `RetryState` yet.
const FIRST: u32 = u32::MAX;

/// How many events' states are read at once, ahead of their turn (see `Outage::simulate`).
const READ_AHEAD: usize = 64;

thread_local! {
    /// The `states` of the last run on this thread.
    static SLOTS: Cell<Vec<RetryState>> = const { Cell::new(Vec::new()) };
}

/// The error of a failed call: the service is down, or over its capacity.
struct Overloaded;

/// What a run counted.
#[derive(Debug, PartialEq)]
struct Tally {
    calls: u64,
    gave_up: u32,
    /// Calls in each slot.
    seen: Vec<u32>,
    /// When each client that succeeded had its answer.
    done_at: Vec<u64>,
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
        match strategy.budget() {
            Some(budget) => self.run_with(strategy, &budget),
            None => self.run_with(strategy, NoBudget),
        }
    }

    /// Run it with `budget` shared by every client's retries (`NoBudget`: none).
    fn run_with<B: Budget>(&self, strategy: Strategy, budget: B) -> OutageResult {
        let tally = self.simulate(strategy, budget);
        self.result(strategy, tally)
    }

    /// What the runtime does for a client, on the virtual clock: the policy of its retries
    /// and the hooks that give them the shared budget.
    fn retries<B: Budget>(
        &self,
        strategy: Strategy,
        budget: B,
    ) -> (Policy, Hooks<RetryAll, NoNotify, NoGiveUp, B, NoTrace>) {
        let hooks = Hooks {
            on: RetryAll,
            notify: NoNotify,
            give_up: NoGiveUp,
            budget,
            trace: NoTrace,
        };
        (strategy.policy(self.base, self.cap, self.attempts), hooks)
    }

    /// Every call of every client, counted.
    fn simulate<B: Budget>(&self, strategy: Strategy, budget: B) -> Tally {
        // A client's retries are the runtime's to decide, as a `#[retry]` call's are: its
        // `RetryState` counts its failed calls, draws each wait, ends retrying when its attempts
        // are spent, and takes the shared budget's tokens (`Hooks::budget`).
        let (policy, hooks) = self.retries(strategy, budget);
        let seed = seed_for(&[self.seed, 1, strategy as u64]);
        // The waits come from the runtime's own generator, seeded per run.
        retry_jitter::testing::seed_jitter(seed);
        let mut rng = SmallRng::seed_from_u64(seed);
        let (down, rtt) = (nanos(self.down), nanos(self.rtt));
        let per_slot = (u64::from(self.capacity) * SLOT / 1_000_000_000).max(1) as u32;

        let n = self.clients as usize;
        // An event is a call: its time and its client's slot in `states` (16 bytes), or
        // `FIRST`: a client gets its `RetryState` when its first call fails, as in the
        // runtime's own loops, and its slot goes to another once it is done. A state is over
        // 100 bytes: too big to travel in the events the queue sorts (moving it with each call,
        // in buckets beside the queue's, took twice as long as leaving it in its slot). Its
        // clock (the system's) decides nothing: the policy has no `max_elapsed`.
        let mut queue: Queue<u32> = Queue::new();
        let mut states = SLOTS.take();
        states.clear();
        let mut free: Vec<u32> = Vec::new();
        for _ in 0..n {
            let at = rng.random_range(0..nanos(self.spread).max(1));
            queue.push(at, FIRST);
        }
        // Calls seen and calls served in each slot.
        let mut seen: Vec<u32> = Vec::new();
        let mut served: Vec<u32> = Vec::new();
        let mut done_at: Vec<u64> = Vec::with_capacity(n);
        let (mut calls, mut gave_up) = (0u64, 0u32);

        let mut unread = 0;
        while let Some((t, slot)) = queue.pop() {
            calls += 1;
            // A million clients' states are far out of cache and the events visit them in no
            // order, so each is a read from memory. Reading the next 64 at once lets the
            // processor fetch them together instead of one after the other: it halves the CPU
            // time of a million-client run, 6.8 s to 3.4 s (BENCHMARKS.md, "The herd at a
            // million clients").
            if unread == 0 {
                for &(_, next) in queue.ahead(READ_AHEAD) {
                    if let Some(state) = states.get(next as usize) {
                        std::hint::black_box(state.clone());
                    }
                }
                unread = READ_AHEAD;
            }
            unread -= 1;
            let s = (t / SLOT) as usize;
            if seen.len() <= s {
                seen.resize(s + 1, 0);
                served.resize(s + 1, 0);
            }
            seen[s] += 1;
            if t >= down && served[s] < per_slot {
                served[s] += 1;
                done_at.push(t + rtt);
                let failed = match slot {
                    FIRST => 0,
                    _ => {
                        free.push(slot);
                        states[slot as usize].failed_calls()
                    }
                };
                // The budget gets back what the client's retries took: one retry per failed
                // call, each of which took tokens (or the client would have given up).
                if let Some(b) = hooks.budget.get() {
                    b.succeeded_after(failed);
                }
                continue;
            }
            let slot = match slot {
                FIRST => match free.pop() {
                    Some(slot) => {
                        states[slot as usize] = RetryState::new(policy);
                        slot
                    }
                    None => {
                        states.push(RetryState::new(policy));
                        u32::try_from(states.len() - 1).expect("fewer than 2^32 clients")
                    }
                },
                _ => slot,
            };
            match states[slot as usize].on_error(&Overloaded, &hooks, "outage") {
                Ok(wait) => queue.push(t.saturating_add(rtt).saturating_add(nanos(wait)), slot),
                Err(_) => {
                    gave_up += 1;
                    free.push(slot);
                }
            }
        }

        // Kept for the thread's next run: its memory is already paged in.
        SLOTS.set(states);
        Tally {
            calls,
            gave_up,
            seen,
            done_at,
        }
    }

    /// The result of a run from its tally.
    fn result(&self, strategy: Strategy, tally: Tally) -> OutageResult {
        let Tally {
            calls,
            gave_up,
            seen,
            mut done_at,
        } = tally;
        let down = nanos(self.down);
        let n = self.clients as usize;
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

    /// The simulation as it reads without its storage tricks: one `RetryState` per client,
    /// indexed by client, made before its first call, no reading ahead.
    fn plainly<B: Budget>(o: &Outage, strategy: Strategy, budget: B) -> Tally {
        let (policy, hooks) = o.retries(strategy, budget);
        let seed = seed_for(&[o.seed, 1, strategy as u64]);
        retry_jitter::testing::seed_jitter(seed);
        let mut rng = SmallRng::seed_from_u64(seed);
        let (down, rtt) = (nanos(o.down), nanos(o.rtt));
        let per_slot = (u64::from(o.capacity) * SLOT / 1_000_000_000).max(1) as u32;
        let mut states = vec![RetryState::new(policy); o.clients as usize];
        let mut queue = Queue::new();
        for client in 0..o.clients as usize {
            queue.push(rng.random_range(0..nanos(o.spread).max(1)), client);
        }
        let (mut served, mut tally) = (
            Vec::new(),
            Tally {
                calls: 0,
                gave_up: 0,
                seen: Vec::new(),
                done_at: Vec::new(),
            },
        );
        while let Some((t, c)) = queue.pop() {
            tally.calls += 1;
            let s = (t / SLOT) as usize;
            tally.seen.resize(tally.seen.len().max(s + 1), 0);
            served.resize(tally.seen.len(), 0);
            tally.seen[s] += 1;
            if t >= down && served[s] < per_slot {
                served[s] += 1;
                tally.done_at.push(t + rtt);
                if let Some(b) = hooks.budget.get() {
                    b.succeeded_after(states[c].failed_calls());
                }
            } else {
                match states[c].on_error(&Overloaded, &hooks, "outage") {
                    Ok(wait) => queue.push(t + rtt + nanos(wait), c),
                    Err(_) => tally.gave_up += 1,
                }
            }
        }
        tally
    }

    #[test]
    fn the_slot_table_and_reading_ahead_change_nothing() {
        // Short outages and spreads wider than a call: clients done before others' first calls
        // fail, whose states then take their slots.
        for o in [
            small(),
            Outage {
                down: Duration::ZERO,
                capacity: 300,
                spread: Duration::from_secs(2),
                ..small()
            },
            Outage {
                down: Duration::from_millis(300),
                spread: Duration::from_secs(1),
                attempts: 4,
                seed: 3,
                ..small()
            },
        ] {
            for s in Strategy::ALL {
                let budget = s.budget();
                let plain = match &budget {
                    Some(b) => plainly(&o, s, b),
                    None => plainly(&o, s, NoBudget),
                };
                let plain = o.result(s, plain);
                assert_eq!(o.run(s), plain, "{s}");
            }
        }
    }

    #[test]
    fn a_client_makes_its_attempts_and_no_more() {
        // Down for longer than anyone waits: every client spends its attempts (the runtime's
        // count), and not one call more.
        for attempts in [1, 2, 7] {
            let o = Outage {
                down: Duration::from_secs(3_600),
                attempts,
                ..small()
            };
            for s in Strategy::ALL
                .into_iter()
                .filter(|&s| s != Strategy::FullBudget)
            {
                let r = o.run(s);
                assert_eq!(
                    (r.calls, r.gave_up),
                    (u64::from(attempts * o.clients), o.clients),
                    "{s}"
                );
            }
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
