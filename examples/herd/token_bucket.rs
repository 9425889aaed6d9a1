//! The model of Marc Brooker's "Fixing retries with token buckets and circuit breakers" (2022),
//! after his simulator (`mbrooker/simulator_example`, `retry_sim/`), which is the anchor where
//! it and the post's prose differ.
//!
//! Clients are Poisson sources of calls (100 clients of 10 calls/s each); a service fails each
//! attempt independently with probability `p`, whatever the load; every message takes an
//! exponential network delay (mean 10 ms), and a retry is sent as soon as the failure is known
//! (his runs have no backoff). Calls arrive for 10 s; the calls under way then finish, retries
//! included (his drain). Each client has its own strategy state; nothing is shared between
//! clients, so each client is simulated on its own, in time order. Figures: successful calls
//! per call, attempts (sent to the service) per call.
//!
//! His strategies, as his code has them:
//! - `no-retries`, `three-retries` (`NRetriesFactory(0)` and `(3)`: 1 and 4 attempts).
//! - `adaptive-10pct` (`AdaptiveRetryFactory(0.1, 5)`): one bucket per client, 5 tokens,
//!   starting full; every call adds 0.1 token when it starts (whatever its outcome), never
//!   past 5; a failed attempt is retried if the bucket holds *more than* 1 token, which takes
//!   one. No cap on the retries of one call: from a full bucket, 4 (5 → 4 → 3 → 2 → 1). Kept
//!   here in tenths of a token (integers), so that 0.1 steps do not drift as his floats may.
//! - `breaker-10pct` (`CircuitBreakerRetryFactory(NRetriesFactory(3), 0.1)`): per client,
//!   since the start, calls counted when they start and *failed attempts* (not calls) counted
//!   at each failure, this one included; while failures / calls > 0.1 a failure is not
//!   retried, else up to 3 retries. First tries always go.
//!
//! His list of failure rates has `0.75` between 0.05 and 0.1: a typo for 0.075 (the post's
//! range is 0–50%), used here as 0.075. His client-count runs split 100 calls/s in all (his
//! `rate = 100.0`) over 10, 100 and 1,000 clients; these split 1,000 calls/s (`SWEEP_RATE`,
//! as the issue that asked for them says), so that the 100-client row is the main experiment
//! at its p and the other two vary the clients around it.
//!
//! Then the crate's own guards, one per client, on a virtual clock, asked as the runtime asks
//! them, each with at most 3 retries (4 attempts):
//! - `retry-budget`: `RetryBudget::new(49).with_costs(10, 10).with_success_reward(1)`, through
//!   `SharedBudget` (see `retry_budget` for the sizing and how it differs from his bucket).
//! - `ratio-10pct`: `RatioBudget::new(0.1, 1, 10 s)`: retries up to 10% of the client's calls
//!   over the last 10 s, plus a floor of 1 a second (10 over the window; at 10 calls/s the
//!   floor alone is another 10% of the calls). Counted when the first attempt ends, as the
//!   runtime's `SharedBudget::begin`.
//! - `throttle`: `AdaptiveThrottle::new(2.0, 60 s)` (k = 2; the window, longer than the run,
//!   is "since the start"): every attempt asks it, first tries included, and every answered
//!   attempt is reported (a failure is a request without an accept); a rejected first try is
//!   a failed call of 0 attempts, a rejected retry ends its call.
//! - `breaker`: `CircuitBreaker::new(0.1, 20, 10 s, 5 s)` as the runtime uses it: asked when a
//!   call begins (refused: a failed call of 0 attempts), told when it ends. It counts *calls*
//!   after their retries: with 3 retries a call fails with probability p⁴ (6.25% at p = 0.5),
//!   below its 10%, so it opens only on a chance run of failed calls (3 of its first 20 are
//!   enough), more often as p grows, and then refuses every call, first tries included, for
//!   5 s. His breaker counts failed attempts, and stops retries from p ≈ 0.1 on.

use std::fmt;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use retry_jitter::breaker::Admission;
use retry_jitter::budget::{Charge, SharedBudget, Taken};
use retry_jitter::{AdaptiveThrottle, CircuitBreaker, RatioBudget, RetryBudget};

use crate::sim::{seed_for, set_now, virtual_now};

/// His failure rates (his `0.75` read as 0.075, see the module docs).
pub const P_VALUES: [f64; 17] = [
    0.0, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.0325, 0.05, 0.075, 0.1, 0.2,
    0.3, 0.4, 0.5,
];
/// The main experiment: 100 clients of 10 calls/s.
pub const CLIENTS: u32 = 100;
pub const RATE_PER_CLIENT: f64 = 10.0;
/// The client-count variant: `SWEEP_RATE` calls/s in all, split over these clients, at
/// `SWEEP_P`.
pub const SWEEP_CLIENTS: [u32; 3] = [10, 100, 1_000];
pub const SWEEP_RATE: f64 = 1_000.0;
pub const SWEEP_P: f64 = 0.2;
/// How long calls arrive.
pub const RUN: Duration = Duration::from_secs(10);
/// Retries per call of the strategies that cap them (his `NRetriesFactory(3)`, our guards).
pub const RETRIES: u32 = 3;
/// Runs averaged by default, at least: a row keeps adding runs until the standard error of
/// each of its two figures is at most `TARGET_SE` (or it has `MAX_RUNS`). Measured over 200
/// seeds, one run each, the noisiest rows' figures vary from run to run by up to 0.016
/// (`retry-budget`, p = 0.4), 0.048 (`breaker`, p = 0.5) and 0.069 (`throttle`, p = 0.5): a
/// client's breaker opens on a chance run of failed calls, a client's throttle latches shut
/// or keeps up (its rejections count as requests without accepts, and the 60 s window forgets
/// none within the run), so each run's mean swings with how many of its 100 clients did. At
/// 40 runs each, two seeds' rows then differ by more than 0.005 (of 8 seeds, two by up to
/// 0.023 on a throttle row, 0.016 on a breaker's, 0.008 on a `retry-budget`'s, 0.006 on a
/// `three-retries`'); the same number of runs for every row would take about 4,600 (the
/// throttle at p = 0.5), where most rows need 40 or fewer.
pub const RUNS: u32 = 40;
/// The standard error of each figure at which a row of the default stops adding runs: two
/// seeds' figures then differ by a normal draw of deviation 0.0014, over 0.005 (3.5 of them)
/// about once in 2,500 figures. At `--seed 1`, 20 rows go past `RUNS`, the most the
/// throttle's at p = 0.5 (4,607 runs) and the breaker's (2,312): 20,332 runs in all, against
/// 6,400 at 40 each.
pub const TARGET_SE: f64 = 0.001;
/// The most runs a row of the default averages.
pub const MAX_RUNS: u32 = 10_000;
/// Runs averaged when the whole demo runs (no `--model`): its tables within a few hundredths,
/// the whole demo within seconds.
pub const RUNS_IN_DEMO: u32 = 10;

/// A strategy of the token-bucket model: his four, then the crate's guards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TbStrategy {
    NoRetries,
    ThreeRetries,
    Adaptive10,
    Breaker10,
    RetryBudget,
    Ratio10,
    Throttle,
    Breaker,
}

impl TbStrategy {
    pub const ALL: [TbStrategy; 8] = [
        TbStrategy::NoRetries,
        TbStrategy::ThreeRetries,
        TbStrategy::Adaptive10,
        TbStrategy::Breaker10,
        TbStrategy::RetryBudget,
        TbStrategy::Ratio10,
        TbStrategy::Throttle,
        TbStrategy::Breaker,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TbStrategy::NoRetries => "no-retries",
            TbStrategy::ThreeRetries => "three-retries",
            TbStrategy::Adaptive10 => "adaptive-10pct",
            TbStrategy::Breaker10 => "breaker-10pct",
            TbStrategy::RetryBudget => "retry-budget",
            TbStrategy::Ratio10 => "ratio-10pct",
            TbStrategy::Throttle => "throttle",
            TbStrategy::Breaker => "breaker",
        }
    }

    /// One of his four (the others are the crate's guards).
    pub fn is_his(self) -> bool {
        matches!(
            self,
            TbStrategy::NoRetries
                | TbStrategy::ThreeRetries
                | TbStrategy::Adaptive10
                | TbStrategy::Breaker10
        )
    }
}

impl fmt::Display for TbStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The `retry-budget` guard: his bucket in tenths of a token, on the crate's `RetryBudget`.
///
/// His bucket `b` (in tenths) holds 0..=50, a retry needs `b > 10` (more than one token) and
/// takes 10. Counted as `b − 1`, it holds 0..=49 and a retry needs `b − 1 ≥ 10`: exactly
/// `RetryBudget`'s rule (a retry takes its cost if the bucket holds it). So: capacity 49,
/// retry cost 10 (one token), reward 1 (0.1 token), starting full. The threshold and the
/// costs are his; what differs is when tokens come back, `RetryBudget`'s rule: the 0.1 comes
/// only from a call that succeeds at its first attempt (his comes from every call, when it
/// starts), and a call that succeeds after retries gives back what its retries took (his
/// gives back nothing, so with `RetryBudget` a retry that works is free); and at most 3
/// retries per call (his, from a full bucket, may make 4).
pub fn retry_budget() -> RetryBudget {
    RetryBudget::new(49)
        .with_costs(10, 10)
        .with_success_reward(1)
}

/// One client's strategy state.
enum Guard {
    /// At most this many retries.
    Plain(u32),
    /// His adaptive bucket, in tenths of a token.
    Bucket(u32),
    /// His breaker: calls started, failed attempts.
    Counts {
        calls: u64,
        failures: u64,
    },
    Budget(RetryBudget),
    Ratio(Box<RatioBudget>),
    Throttle(Box<AdaptiveThrottle>),
    Breaker(Box<CircuitBreaker>),
}

/// One call of a client: attempts made, and what its retries took from a budget.
struct Call {
    made: u32,
    taken: Taken,
}

impl Guard {
    fn new(strategy: TbStrategy) -> Self {
        match strategy {
            TbStrategy::NoRetries => Guard::Plain(0),
            TbStrategy::ThreeRetries => Guard::Plain(RETRIES),
            TbStrategy::Adaptive10 => Guard::Bucket(50),
            TbStrategy::Breaker10 => Guard::Counts {
                calls: 0,
                failures: 0,
            },
            TbStrategy::RetryBudget => Guard::Budget(retry_budget()),
            TbStrategy::Ratio10 => {
                Guard::Ratio(Box::new(RatioBudget::new(0.1, 1, Duration::from_secs(10))))
            }
            TbStrategy::Throttle => Guard::Throttle(Box::new(AdaptiveThrottle::new(
                2.0,
                Duration::from_secs(60),
            ))),
            TbStrategy::Breaker => Guard::Breaker(Box::new(CircuitBreaker::new(
                0.1,
                20,
                Duration::from_secs(10),
                Duration::from_secs(5),
            ))),
        }
    }

    /// A call starts: whether its first attempt is sent.
    fn start(&mut self) -> bool {
        match self {
            Guard::Bucket(b) => *b = (*b + 1).min(50),
            Guard::Counts { calls, .. } => *calls += 1,
            Guard::Throttle(th) => return th.admit(virtual_now),
            Guard::Breaker(cb) => return cb.admit(virtual_now) != Admission::Refuse,
            Guard::Plain(_) | Guard::Budget(_) | Guard::Ratio(_) => {}
        }
        true
    }

    /// An attempt of `call` was answered, `ok` or not.
    fn answered(&mut self, call: &Call, ok: bool) {
        match self {
            Guard::Throttle(th) => th.answered(virtual_now, ok),
            // The runtime counts a call when its first attempt ends.
            Guard::Budget(b) if call.made == 1 => SharedBudget::begin(b, virtual_now),
            Guard::Ratio(b) if call.made == 1 => SharedBudget::begin(&**b, virtual_now),
            _ => {}
        }
    }

    /// `call` succeeded.
    fn succeeded(&mut self, call: &Call) {
        match self {
            Guard::Budget(b) => SharedBudget::succeeded(b, call.taken),
            Guard::Ratio(b) => SharedBudget::succeeded(&**b, call.taken),
            Guard::Breaker(cb) => {
                cb.ended(virtual_now, true);
            }
            _ => {}
        }
    }

    /// `call`'s last attempt failed: whether it is retried (taking what the retry costs).
    fn retry(&mut self, call: &mut Call) -> bool {
        let retries = call.made - 1;
        let retry = match self {
            Guard::Plain(max) => retries < *max,
            Guard::Bucket(b) => {
                let ok = *b > 10;
                if ok {
                    *b -= 10;
                }
                ok
            }
            Guard::Counts { calls, failures } => {
                *failures += 1;
                // failures / calls > 0.1, exactly (his floats agree: n / 10n is 0.1's double).
                *failures * 10 <= *calls && retries < RETRIES
            }
            Guard::Budget(b) => retries < RETRIES && take(b, &mut call.taken),
            Guard::Ratio(b) => retries < RETRIES && take(&**b, &mut call.taken),
            Guard::Throttle(th) => retries < RETRIES && th.admit(virtual_now),
            Guard::Breaker(_) => retries < RETRIES,
        };
        if !retry {
            if let Guard::Breaker(cb) = self {
                cb.ended(virtual_now, false);
            }
        }
        retry
    }
}

/// Ask `budget` for a retry as the runtime does, counting what it took.
fn take(budget: &impl SharedBudget, taken: &mut Taken) -> bool {
    let ok = budget.take_retry(Charge::Retry, virtual_now).is_some();
    if ok {
        taken.count(Charge::Retry);
    }
    ok
}

/// What one run (or a client) counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub calls: u64,
    pub successes: u64,
    /// Attempts sent to the service.
    pub attempts: u64,
}

impl Counts {
    fn add(&mut self, o: Counts) {
        self.calls += o.calls;
        self.successes += o.successes;
        self.attempts += o.attempts;
    }
}

/// The averages over the runs of one strategy, client count and failure rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TbResult {
    pub strategy: TbStrategy,
    pub clients: u32,
    pub p: f64,
    pub success_per_call: f64,
    pub attempts_per_call: f64,
    /// Runs averaged.
    pub runs: u32,
}

/// The scenario's parameters.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    /// Runs averaged per row (at least, with `target_se`).
    pub runs: u32,
    /// If set, a row adds runs past `runs` until the standard error of both its figures is at
    /// most this, or it has `MAX_RUNS`.
    pub target_se: Option<f64>,
    pub seed: u64,
}

impl Default for TokenBucket {
    fn default() -> Self {
        TokenBucket {
            runs: RUNS,
            target_se: Some(TARGET_SE),
            seed: 1,
        }
    }
}

/// A running mean and its standard error (Welford).
#[derive(Default)]
struct Mean {
    n: u32,
    mean: f64,
    /// The sum of squared deviations from the mean.
    m2: f64,
}

impl Mean {
    fn add(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / f64::from(self.n);
        self.m2 += d * (x - self.mean);
    }

    /// The standard error of the mean (infinite below 2 values).
    fn se(&self) -> f64 {
        if self.n < 2 {
            return f64::INFINITY;
        }
        let n = f64::from(self.n);
        (self.m2 / (n - 1.0) / n).sqrt()
    }
}

/// An exponential draw of mean `1 / rate` seconds, in ns.
fn exp_ns(rng: &mut SmallRng, rate: f64) -> u64 {
    let u: f64 = rng.random();
    (-(1.0 - u).ln() / rate * 1e9) as u64
}

/// One network leg: exponential, mean 10 ms (his `net_rtt`).
fn leg(rng: &mut SmallRng) -> u64 {
    exp_ns(rng, 100.0)
}

/// An attempt's two legs, there and back: the sum of two exponentials of mean 10 ms, drawn as
/// one (−ln(u₁u₂) / rate, one logarithm instead of two).
fn round_trip(rng: &mut SmallRng) -> u64 {
    let (u1, u2): (f64, f64) = (rng.random(), rng.random());
    (-((1.0 - u1) * (1.0 - u2)).ln() / 100.0 * 1e9) as u64
}

/// An arrival (not a call's answer) in the client's queue.
const ARRIVAL: u32 = u32::MAX;

impl TokenBucket {
    /// `runs` runs of `clients` clients sharing `total_rate` calls/s, averaged (with
    /// `target_se`, more runs until both figures' standard errors are at most it).
    pub fn run(&self, strategy: TbStrategy, clients: u32, total_rate: f64, p: f64) -> TbResult {
        let least = self.runs.max(1);
        let most = self.target_se.map_or(least, |_| MAX_RUNS.max(least));
        let (mut success, mut attempts) = (Mean::default(), Mean::default());
        for run in 0..most {
            let c = self.run_once(strategy, clients, total_rate, p, run);
            let calls = c.calls.max(1) as f64;
            success.add(c.successes as f64 / calls);
            attempts.add(c.attempts as f64 / calls);
            if run + 1 >= least
                && self
                    .target_se
                    .is_none_or(|se| success.se() <= se && attempts.se() <= se)
            {
                break;
            }
        }
        TbResult {
            strategy,
            clients,
            p,
            success_per_call: success.mean,
            attempts_per_call: attempts.mean,
            runs: success.n,
        }
    }

    /// One run: every client, one after the other (they share nothing).
    pub fn run_once(
        &self,
        strategy: TbStrategy,
        clients: u32,
        total_rate: f64,
        p: f64,
        run: u32,
    ) -> Counts {
        let seed = seed_for(&[
            self.seed,
            7,
            strategy as u64,
            u64::from(clients),
            total_rate.to_bits(),
            p.to_bits(),
            u64::from(run),
        ]);
        // The throttle's draws (the crate's generator) on a seed of their own: seeded alike,
        // the two generators could draw the same numbers.
        retry_jitter::testing::seed_jitter(seed_for(&[seed, 1]));
        let mut rng = SmallRng::seed_from_u64(seed);
        let rate = total_rate / f64::from(clients.max(1));
        let mut total = Counts::default();
        let mut calls = Vec::new();
        let mut answers = Vec::new();
        for _ in 0..clients {
            total.add(client(
                strategy,
                rate,
                p,
                &mut rng,
                &mut calls,
                &mut answers,
            ));
        }
        total
    }
}

/// One client's calls over the run, in time order: its next arrival, and the answers of its
/// attempts under way (`(t, call, ok)`, a handful at most: calls are 100 ms apart on average,
/// attempts 20 ms long), the earliest first (an answer before an arrival at the same instant).
fn client(
    strategy: TbStrategy,
    rate: f64,
    p: f64,
    rng: &mut SmallRng,
    calls: &mut Vec<Call>,
    answers: &mut Vec<(u64, u32, bool)>,
) -> Counts {
    let end = RUN.as_nanos() as u64;
    let mut guard = Guard::new(strategy);
    let mut counts = Counts::default();
    calls.clear();
    answers.clear();
    // His `sim_loop` starts each client after one network leg.
    let mut arrival = Some(leg(rng));
    let send = |rng: &mut SmallRng, call: &mut Call, id: u32, t: u64| {
        call.made += 1;
        // His server: `random() > failure_rate` succeeds.
        let ok = rng.random::<f64>() >= p;
        (t + round_trip(rng), id, ok)
    };
    loop {
        let first = answers
            .iter()
            .enumerate()
            .min_by_key(|&(_, a)| *a)
            .map(|(i, a)| (i, a.0));
        let (t, id, ok) = match (first, arrival) {
            (Some((_, t)), Some(a)) if a < t => (a, ARRIVAL, false),
            (Some((i, _)), _) => answers.swap_remove(i),
            (None, Some(a)) => (a, ARRIVAL, false),
            (None, None) => break,
        };
        set_now(t);
        if id == ARRIVAL {
            let next = t + exp_ns(rng, rate);
            arrival = (next <= end).then_some(next);
            counts.calls += 1;
            let id = calls.len() as u32;
            calls.push(Call {
                made: 0,
                taken: Taken::NONE,
            });
            if guard.start() {
                answers.push(send(rng, &mut calls[id as usize], id, t));
                counts.attempts += 1;
            }
            continue;
        }
        let call = &mut calls[id as usize];
        guard.answered(call, ok);
        if ok {
            counts.successes += 1;
            guard.succeeded(call);
        } else if guard.retry(call) {
            answers.push(send(rng, call, id, t));
            counts.attempts += 1;
        }
    }
    counts
}

/// Every job of the model: (strategy, clients, total calls/s, p): the main experiment, then
/// the client-count variant.
pub fn jobs() -> Vec<(TbStrategy, u32, f64, f64)> {
    let main = TbStrategy::ALL.iter().flat_map(|&s| {
        P_VALUES
            .iter()
            .map(move |&p| (s, CLIENTS, f64::from(CLIENTS) * RATE_PER_CLIENT, p))
    });
    let sweep = TbStrategy::ALL.iter().flat_map(|&s| {
        SWEEP_CLIENTS
            .iter()
            .map(move |&n| (s, n, SWEEP_RATE, SWEEP_P))
    });
    main.chain(sweep).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Calls per run of the main experiment (100 clients × 10/s × 10 s).
    const MAIN_RATE: f64 = CLIENTS as f64 * RATE_PER_CLIENT;

    /// Pooled counts of `runs` runs.
    fn pooled(strategy: TbStrategy, p: f64, runs: u32, seed: u64) -> Counts {
        let tb = TokenBucket {
            runs,
            target_se: None,
            seed,
        };
        let mut c = Counts::default();
        for run in 0..runs {
            c.add(tb.run_once(strategy, CLIENTS, MAIN_RATE, p, run));
        }
        c
    }

    /// Check a per-call mean against its exact value: the calls are independent (neither
    /// strategy has state across calls), each contributing a value of variance `var`, so the
    /// mean of `n` calls has standard error √(var / n); allow 5 of them (a false alarm about
    /// once in 1.7 million checks), and 1e-12 for the exact cases (p = 0: variance 0).
    fn close(what: &str, n: u64, got: f64, want: f64, var: f64) {
        let tol = 5.0 * (var / n as f64).sqrt() + 1e-12;
        assert!(
            (got - want).abs() <= tol,
            "{what}: {got:.5} vs {want:.5} (± {tol:.5}, {n} calls)"
        );
    }

    #[test]
    fn three_retries_and_no_retries_give_the_formulas() {
        for p in [0.0, 0.05, 0.2, 0.5] {
            for (strategy, retries) in [(TbStrategy::NoRetries, 0), (TbStrategy::ThreeRetries, 3)] {
                let c = pooled(strategy, p, 1, 11);
                let n = c.calls;
                assert!(n > 9_000, "about 10,000 calls a run: {n}");
                // Attempts = 1 + I₁ + … + I_r, I_k = 1 when the first k attempts failed (p^k):
                // E = Σ p^k; E[A²] = Σ_j Σ_k p^max(j,k) (I₀ = 1).
                let mean: f64 = (0..=retries).map(|k| p.powi(k)).sum();
                let square: f64 = (0..=retries)
                    .flat_map(|j| (0..=retries).map(move |k| p.powi(j.max(k))))
                    .sum();
                let attempts = c.attempts as f64 / n as f64;
                close(
                    &format!("{strategy} attempts at p = {p}"),
                    n,
                    attempts,
                    mean,
                    square - mean * mean,
                );
                // A call fails when all its r + 1 attempts fail: p^(r+1).
                let q = 1.0 - p.powi(retries + 1);
                let success = c.successes as f64 / n as f64;
                close(
                    &format!("{strategy} success at p = {p}"),
                    n,
                    success,
                    q,
                    q * (1.0 - q),
                );
            }
        }
    }

    #[test]
    fn the_retry_budget_is_his_bucket_from_full() {
        // From full, his bucket grants 4 retries (5 → 1, then 1 is not more than 1): so does
        // the `RetryBudget` sized as his.
        let b = retry_budget();
        let granted = (0..10)
            .filter(|_| b.take_retry(Charge::Retry, virtual_now).is_some())
            .count();
        assert_eq!(granted, 4);
        let mut his = Guard::new(TbStrategy::Adaptive10);
        let mut call = Call {
            made: 1,
            taken: Taken::NONE,
        };
        let granted = (0..10).filter(|_| his.retry(&mut call)).count();
        assert_eq!(granted, 4);
        // 0.1 token later (his 1.1, more than 1; ours 10 of 10), one more retry in both, then
        // none again.
        b.succeeded(Taken::NONE);
        his.start();
        assert!(b.take_retry(Charge::Retry, virtual_now).is_some());
        assert!(his.retry(&mut call));
        assert!(b.take_retry(Charge::Retry, virtual_now).is_none());
        assert!(!his.retry(&mut call));
    }

    #[test]
    fn no_failures_no_retries_and_the_same_seed_repeats() {
        for s in TbStrategy::ALL {
            let c = pooled(s, 0.0, 1, 3);
            assert_eq!((c.successes, c.attempts), (c.calls, c.calls), "{s}");
        }
        let a = pooled(TbStrategy::Throttle, 0.3, 1, 5);
        assert_eq!(a, pooled(TbStrategy::Throttle, 0.3, 1, 5));
        assert_ne!(a, pooled(TbStrategy::Throttle, 0.3, 1, 6));
    }

    #[test]
    fn a_target_adds_runs_only_to_the_noisy_rows() {
        let tb = TokenBucket {
            runs: 5,
            target_se: Some(0.01),
            seed: 1,
        };
        // No failures: every run gives 1 and 1, so the least runs do.
        let quiet = tb.run(TbStrategy::Throttle, CLIENTS, MAIN_RATE, 0.0);
        assert_eq!(quiet.runs, 5);
        // The throttle at p = 0.5 varies by about 0.07 from run to run: about 50 runs to a
        // standard error of 0.01.
        let noisy = tb.run(TbStrategy::Throttle, CLIENTS, MAIN_RATE, 0.5);
        assert!((20..MAX_RUNS).contains(&noisy.runs), "{noisy:?}");
        // Without a target, exactly the runs asked.
        let plain = TokenBucket {
            target_se: None,
            ..tb
        };
        assert_eq!(
            plain
                .run(TbStrategy::Throttle, CLIENTS, MAIN_RATE, 0.5)
                .runs,
            5
        );
    }

    #[test]
    fn the_guards_cut_attempts_when_failures_are_many() {
        // At p = 0.5 his bucket and ours keep attempts well below three retries' 1.875.
        let three = pooled(TbStrategy::ThreeRetries, 0.5, 1, 9);
        for s in [
            TbStrategy::Adaptive10,
            TbStrategy::Breaker10,
            TbStrategy::RetryBudget,
            TbStrategy::Ratio10,
        ] {
            let c = pooled(s, 0.5, 1, 9);
            assert!(c.attempts * 10 < three.attempts * 7, "{s}: {c:?}");
        }
    }
}
