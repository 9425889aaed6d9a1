//! The model of the AWS Architecture Blog's "Exponential Backoff And Jitter" (2015): clients
//! contend for one row under optimistic concurrency control.
//!
//! Each client reads the row's version, then writes conditionally on it; the server accepts the
//! write only if the version still matches (and increments it). Every message takes its own
//! network delay |normal(10 ms, 2 ms)|. A client whose write failed waits its backoff, then
//! reads again, until its write succeeds (no attempt limit here).
//!
//! The published simulator draws its first backoff with exponent 1, a ceiling of 2·base: the
//! exponential strategies here use `Backoff::new(2·base, cap)` so that the figures compare with
//! the post's charts (decorrelated jitter grows from `base` itself, as in the post).
//!
//! Each client's retries are decided by a `RetryState` of its own, as a `#[retry]` call's are.
//! `full+budget` shares one `RetryBudget` among the clients of a run: a client it refuses gives
//! up, unwritten (the only way a client here ends without writing). The runtime draws a retry's
//! wait before it asks the budget for the tokens, so a refused client has drawn one wait it
//! never waits.

use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use retry_jitter::budget::SharedBudget;
use retry_jitter::hooks::RetryState;
use retry_jitter::hooks::{AcceptOk, Budget, Hooks, RetryAll, Unset};
use retry_jitter::{Backoff, Policy};

use crate::sim::{seed_for, Queue};
use crate::strategy::{nanos, Strategy};

/// The error of a failed write: the row's version moved on.
struct Conflict;

/// The OCC scenario's parameters.
#[derive(Clone, Debug)]
pub struct Occ {
    pub base: Duration,
    pub cap: Duration,
    pub net_mean: Duration,
    pub net_sd: Duration,
    pub runs: u32,
    pub seed: u64,
}

impl Default for Occ {
    fn default() -> Self {
        Occ {
            base: Duration::from_millis(5),
            cap: Duration::from_millis(2_000),
            net_mean: Duration::from_millis(10),
            net_sd: Duration::from_millis(2),
            runs: 100,
            seed: 1,
        }
    }
}

/// The averages over the runs of one strategy at one client count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OccResult {
    pub strategy: Strategy,
    pub clients: u32,
    /// Write calls (reads not counted), averaged over runs.
    pub writes: f64,
    /// When the last client learnt its write succeeded, averaged over runs (ns).
    pub completion: f64,
}

#[derive(Clone, Copy)]
enum Event {
    ReadAtServer(usize),
    ReadReply(usize, u64),
    WriteAtServer(usize, u64),
    WriteReply(usize, bool),
}

impl Occ {
    /// The backoff a strategy uses in this model (see the module docs for the 2·base).
    pub fn backoff(&self, strategy: Strategy) -> Backoff {
        match strategy {
            Strategy::Decorrelated => strategy.backoff(self.base, self.cap),
            _ => strategy.backoff(self.base * 2, self.cap),
        }
    }

    /// `runs` runs of `clients` clients under `strategy`, averaged.
    pub fn run(&self, strategy: Strategy, clients: u32) -> OccResult {
        let (mut writes, mut completion) = (0u64, 0u64);
        for run in 0..self.runs {
            let (w, c) = self.run_once(strategy, clients, run);
            writes += w;
            completion += c;
        }
        let runs = f64::from(self.runs.max(1));
        OccResult {
            strategy,
            clients,
            writes: writes as f64 / runs,
            completion: completion as f64 / runs,
        }
    }

    /// One run: (write calls, completion time in ns).
    pub fn run_once(&self, strategy: Strategy, clients: u32, run: u32) -> (u64, u64) {
        match strategy.budget() {
            Some(budget) => self.run_with(strategy, clients, run, &budget),
            None => self.run_with(strategy, clients, run, Unset),
        }
    }

    /// One run with `budget` shared by the clients' retries (`Unset`: none).
    fn run_with<B: Budget>(
        &self,
        strategy: Strategy,
        clients: u32,
        run: u32,
        budget: B,
    ) -> (u64, u64) {
        let seed = seed_for(&[
            self.seed,
            2,
            strategy as u64,
            u64::from(clients),
            u64::from(run),
        ]);
        retry_jitter::testing::seed_jitter(seed);
        let mut rng = SmallRng::seed_from_u64(seed);
        let (mean, sd) = (self.net_mean.as_secs_f64(), self.net_sd.as_secs_f64());
        let mut delay = move || {
            // Box–Muller: one normal draw, its absolute value as the message's delay.
            let (u1, u2): (f64, f64) = (rng.random::<f64>().max(f64::MIN_POSITIVE), rng.random());
            let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            ((mean + sd * z).abs() * 1e9) as u64
        };
        // Each client's retries are decided by a `RetryState` of its own, as a `#[retry]`
        // call's are, under a policy of no attempt limit to speak of (`u32::MAX` calls).
        let policy = Policy::new()
            .with_backoff(self.backoff(strategy))
            .with_attempts(u32::MAX);
        let hooks = Hooks {
            on: RetryAll,
            notify: Unset,
            give_up: Unset,
            budget,
            trace: Unset,
            on_ok: AcceptOk,
            guard: Unset,
        };
        let n = clients as usize;
        let mut states = vec![RetryState::new(policy); n];
        let mut queue = Queue::new();
        for client in 0..n {
            queue.push(delay(), Event::ReadAtServer(client));
        }
        let (mut version, mut writes, mut last_done) = (0u64, 0u64, 0u64);
        while let Some((t, event)) = queue.pop() {
            match event {
                Event::ReadAtServer(c) => queue.push(t + delay(), Event::ReadReply(c, version)),
                Event::ReadReply(c, v) => {
                    writes += 1;
                    queue.push(t + delay(), Event::WriteAtServer(c, v));
                }
                Event::WriteAtServer(c, v) => {
                    let ok = v == version;
                    if ok {
                        version += 1;
                    }
                    queue.push(t + delay(), Event::WriteReply(c, ok));
                }
                Event::WriteReply(c, true) => {
                    last_done = last_done.max(t);
                    // Every failed write was retried, each retry taking the budget's tokens.
                    if let Some(b) = hooks.budget.get() {
                        b.succeeded(states[c].taken());
                    }
                }
                Event::WriteReply(c, false) => {
                    match states[c].on_error(&Conflict, &hooks, "occ") {
                        Ok(wait) => {
                            queue.push(t + nanos(wait) + delay(), Event::ReadAtServer(c));
                        }
                        // Only the shared budget refuses: the client gives up, done, unwritten.
                        Err(_) => last_done = last_done.max(t),
                    }
                }
            }
        }
        (writes, last_done)
    }
}

/// The client counts of the default sweep: 10, 30, …, 190.
pub fn sweep() -> Vec<u32> {
    (10..=190).step_by(20).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_client_writes_once_without_contention() {
        let occ = Occ::default();
        for s in Strategy::ALL {
            let (writes, done) = occ.run_once(s, 1, 0);
            assert_eq!(writes, 1, "{s}");
            assert!(done > 0 && done < nanos(Duration::from_millis(100)), "{s}");
        }
    }

    #[test]
    fn at_least_one_write_per_client_and_the_same_seed_repeats() {
        let occ = Occ {
            runs: 3,
            ..Occ::default()
        };
        for s in Strategy::ALL {
            let r = occ.run(s, 30);
            assert!(r.writes >= 30.0, "{s}");
            assert_eq!(r, occ.run(s, 30), "{s}");
        }
    }

    /// AWS's own simulator (`src/backoff_simulator.py` of
    /// github.com/aws-samples/aws-arch-backoff-simulator, the code behind the 2015 post's charts)
    /// at 100 clients: |normal(10 ms, 2 ms)| per message, base 5 ms, cap 2 s, the n-th backoff's
    /// ceiling `min(cap, 2^n · 5 ms)` from n = 1, no attempt limit, 100 runs averaged.
    ///
    /// Measured over 30 seeds of 100 runs each, AWS's simulator (seeds 0–29, run with Python 3;
    /// the Python 2.7 it was written for gives the same figures seed for seed, checked on seeds
    /// 0–2) and this model (`--seed 1` to `30`), the mean and the standard deviation of one
    /// seed's 100-run average:
    ///
    /// | | AWS write calls | ours | AWS completion | ours |
    /// |---|---:|---:|---:|---:|
    /// | exponential | 1,855.7 (6.0) | 1,856.5 (4.7) | 63,444 ms (371) | 63,524 ms (356) |
    /// | full jitter | 795.9 (0.7) | 795.9 (0.8) | 4,888 ms (49) | 4,894 ms (52) |
    ///
    /// The default seed's figures (1,853 calls in 63.1 s, 796 in 4.9 s: the simulations page's)
    /// may differ from AWS's mean by one seed's spread (the larger of the two measured) and the
    /// uncertainty of AWS's 30-seed mean (its spread over √30): the bound is four times their
    /// quadratic sum (1.3% and 2.4% for exponential, 0.4% and 4.3% for full jitter). Each of our
    /// 30 seeds came within two thirds of it (the default seed within a fifth), so another seed
    /// would pass as well, and a change that moves the model by more than the seeds do fails.
    #[test]
    fn at_100_clients_the_model_gives_aws_simulators_figures_within_the_seed_noise() {
        /// A figure: AWS's mean over `AWS_SEEDS` seeds, its spread and ours (one seed's).
        struct Figure {
            aws: f64,
            aws_sd: f64,
            our_sd: f64,
        }
        const AWS_SEEDS: f64 = 30.0;
        let figure = |aws, aws_sd, our_sd| Figure {
            aws,
            aws_sd,
            our_sd,
        };
        // (strategy, write calls, completion in ms)
        let table = [
            (
                Strategy::Exponential,
                figure(1_855.7, 6.0, 4.7),
                figure(63_444.0, 371.0, 356.0),
            ),
            (
                Strategy::Full,
                figure(795.9, 0.7, 0.8),
                figure(4_888.0, 49.0, 52.0),
            ),
        ];
        let occ = Occ::default();
        // AWS's parameters.
        let ms = Duration::from_millis;
        assert_eq!((occ.base, occ.cap, occ.runs), (ms(5), ms(2_000), 100));
        assert_eq!((occ.net_mean, occ.net_sd), (ms(10), ms(2)));
        for (s, _, _) in &table {
            let b = occ.backoff(*s);
            for n in 1..12 {
                let aws = ms((5 << n).min(2_000));
                assert_eq!(b.ceiling(n), aws, "{s}: the ceiling of backoff {n}");
            }
        }
        for (s, calls, done) in &table {
            let r = occ.run(*s, 100);
            for (what, ours, f) in [
                ("write calls", r.writes, calls),
                ("completion (ms)", r.completion / 1e6, done),
            ] {
                let one_seed = f.aws_sd.max(f.our_sd);
                let bound = 4.0 * (one_seed.powi(2) + f.aws_sd.powi(2) / AWS_SEEDS).sqrt();
                assert!(
                    (ours - f.aws).abs() <= bound,
                    "{s}: {what} {ours:.1}, AWS's simulator {} ± {bound:.1}",
                    f.aws
                );
            }
        }
    }

    #[test]
    fn at_100_clients_every_jittered_strategy_writes_less_than_exponential() {
        let occ = Occ {
            runs: 10,
            ..Occ::default()
        };
        let exponential = occ.run(Strategy::Exponential, 100).writes;
        for s in Strategy::ALL.into_iter().filter(|s| s.jittered()) {
            let writes = occ.run(s, 100).writes;
            assert!(
                writes < exponential,
                "{s}: {writes} vs exponential {exponential}"
            );
        }
    }
}
