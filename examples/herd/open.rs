//! The open model: calls keep arriving whatever happens to the ones before them, so retries
//! add to the load instead of replacing it, and an outage can leave a service *metastable*:
//! up again, yet never recovering.
//!
//! Calls arrive as a Poisson process (`rate` a second) at a service that serves `capacity`
//! attempts a second, first come first served. Each attempt has a client timeout; an attempt
//! whose client gave up is still served (wasted work). From 10 s on, for `outage`, the service
//! accepts attempts but serves none: they wait in its queue while their clients time out, so
//! when it comes back it first serves a backlog nobody waits for any more. If the attempts
//! coming in (calls and their retries) then exceed its capacity, the queue never drains, every
//! attempt waits longer than its timeout, and the retries that keep this going are the ones
//! the timeouts cause: the sustaining effect.
//!
//! Every decision is the crate's own code: each wait is drawn by `retry_jitter::Backoff`, and
//! the budgets are a shared `RetryBudget` (the AWS SDKs' bucket) or `RatioBudget` (Finagle's
//! ratio), called on a virtual clock.

use std::cell::Cell;
use std::fmt;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use retry_jitter::{Backoff, Jitter, RatioBudget, RetryBudget};

use crate::sim::{seed_for, Queue};
use crate::strategy::nanos;

/// When the outage starts.
pub const OUTAGE_START: Duration = Duration::from_secs(10);
/// How long the run goes on after the outage ends, at least (calls stop arriving then).
pub const AFTER: Duration = Duration::from_secs(30);
/// The share of arrivals goodput must keep to count as recovered.
const RECOVERED: f64 = 0.95;

/// A retry strategy of the open model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpenStrategy {
    /// One attempt per call.
    NoRetry,
    /// Full jitter, `attempts` attempts (4 by default).
    FullJitter,
    /// Full jitter and one shared `RetryBudget` (the AWS SDKs' quota).
    FullJitterBudget,
    /// Full jitter and one shared `RatioBudget` (20% of the calls, 10 a second, over 10 s).
    FullJitterRatio,
}

impl OpenStrategy {
    /// Every strategy, in table order.
    pub const ALL: [OpenStrategy; 4] = [
        OpenStrategy::NoRetry,
        OpenStrategy::FullJitter,
        OpenStrategy::FullJitterBudget,
        OpenStrategy::FullJitterRatio,
    ];

    /// The name used in tables, CSV and chart legends.
    pub fn name(self) -> &'static str {
        match self {
            OpenStrategy::NoRetry => "no-retry",
            OpenStrategy::FullJitter => "full-jitter",
            OpenStrategy::FullJitterBudget => "full-jitter+budget",
            OpenStrategy::FullJitterRatio => "full-jitter+ratio",
        }
    }
}

impl fmt::Display for OpenStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// One open-model scenario.
#[derive(Clone, Debug)]
pub struct Open {
    /// Calls arriving per second (Poisson).
    pub rate: f64,
    /// Attempts per second the service serves, first come first served.
    pub capacity: u32,
    /// How long the service serves nothing, from `OUTAGE_START`.
    pub outage: Duration,
    /// How long a client waits for an attempt's answer.
    pub timeout: Duration,
    /// Attempts per call, the first included, for the retrying strategies.
    pub attempts: u32,
    /// The ratio of `full-jitter+ratio`'s `RatioBudget` (its floor 10 a second, window 10 s).
    pub ratio: f64,
    /// The jitter of the retrying strategies (full; the anchor checks the others).
    pub jitter: Jitter,
    /// Backoff base and cap: the attribute's defaults.
    pub base: Duration,
    pub cap: Duration,
    /// Whether the run goes on after the outage (to see it recover): not for the anchor.
    pub recover: bool,
    pub seed: u64,
}

impl Default for Open {
    fn default() -> Self {
        Open {
            rate: 1_000.0,
            capacity: 2_000,
            outage: Duration::from_secs(5),
            timeout: Duration::from_secs(1),
            attempts: 4,
            ratio: 0.2,
            jitter: Jitter::Full,
            base: Duration::from_millis(200),
            cap: Duration::from_secs(30),
            recover: true,
            seed: 1,
        }
    }
}

/// What one strategy did.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenResult {
    pub strategy: OpenStrategy,
    /// Calls that arrived, and attempts they made in all.
    pub calls: u64,
    pub attempts: u64,
    /// Attempts per call over the calls that arrived and ended within the outage (none
    /// ended within a short one).
    pub calls_per_call: Option<f64>,
    /// Seconds from the end of the outage to the first second from which at least 95% of the
    /// calls arriving each second succeed, to the end of the run; `None`: never.
    pub recovery: Option<f64>,
    /// Per second of the run: calls arriving, attempts arriving at the service (the offered
    /// load), attempts answered to a client still waiting (goodput), and calls arriving in
    /// that second that eventually succeeded.
    pub arrivals: Vec<u32>,
    pub offered: Vec<u32>,
    pub goodput: Vec<u32>,
    pub succeeded: Vec<u32>,
}

/// A budget shared by a run's calls.
enum Shared {
    None,
    Bucket(RetryBudget),
    Ratio(Box<RatioBudget>),
}

impl Shared {
    fn begin(&self) {
        if let Shared::Ratio(b) = self {
            b.begin(virtual_now);
        }
    }

    fn try_retry(&self) -> bool {
        match self {
            Shared::None => true,
            Shared::Bucket(b) => b.try_retry(),
            Shared::Ratio(b) => b.try_retry(virtual_now),
        }
    }

    fn succeeded_after(&self, retries: u32) {
        match self {
            Shared::None => {}
            Shared::Bucket(b) => b.succeeded_after(retries),
            Shared::Ratio(b) => b.succeeded_after(retries),
        }
    }
}

thread_local! {
    /// The virtual time of the run on this thread, in ns from `BASE`.
    static NOW: Cell<u64> = const { Cell::new(0) };
    static BASE: Instant = Instant::now();
}

/// The run's virtual clock, as a `retry_jitter::sleep::Clock` for `RatioBudget`.
fn virtual_now() -> Instant {
    let ns = NOW.with(Cell::get);
    BASE.with(|b| *b + Duration::from_nanos(ns))
}

/// One attempt on its way, or its outcome: the call's arrival time, its attempts so far
/// (this one included once it arrived) and its previous wait.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// The next call arrives (its successor is drawn then).
    Call,
    /// A retry's attempt reaches the service.
    Retry { arrived: u64, made: u32, prev: u64 },
    /// An attempt's answer reaches its client in time.
    Answered { arrived: u64, made: u32 },
    /// The client's timeout: it decides whether to retry.
    TimedOut { arrived: u64, made: u32, prev: u64 },
}

impl Open {
    /// The time the run ends (calls stop arriving; those on their way finish): `AFTER` past
    /// the outage, and long enough for the service to drain the outage's backlog of first
    /// attempts alone (`outage × load / (1 − load)`), one and a half times over, so that
    /// whatever does not recover by then never would (below a load of 0.95).
    pub fn end(&self) -> Duration {
        if !self.recover {
            return OUTAGE_START + self.outage;
        }
        let load = self.load().min(0.95);
        let drain = self.outage.as_secs_f64() * load / (1.0 - load);
        OUTAGE_START + self.outage + AFTER + Duration::from_secs_f64(1.5 * drain)
    }

    /// The load: calls arriving over attempts served, per second.
    pub fn load(&self) -> f64 {
        self.rate / f64::from(self.capacity.max(1))
    }

    /// Run the scenario under one strategy.
    pub fn run(&self, strategy: OpenStrategy) -> OpenResult {
        let seed = seed_for(&[
            self.seed,
            4,
            strategy as u64,
            self.rate.to_bits(),
            u64::from(self.capacity),
            nanos(self.outage),
        ]);
        retry_jitter::testing::seed_jitter(seed);
        let mut rng = SmallRng::seed_from_u64(seed);
        let backoff = Backoff::new(self.base, self.cap).with_jitter(self.jitter);
        let attempts = match strategy {
            OpenStrategy::NoRetry => 1,
            _ => self.attempts.max(1),
        };
        let budget = match strategy {
            OpenStrategy::FullJitterBudget => Shared::Bucket(RetryBudget::default()),
            OpenStrategy::FullJitterRatio => Shared::Ratio(Box::new(RatioBudget::new(
                self.ratio,
                10,
                Duration::from_secs(10),
            ))),
            _ => Shared::None,
        };
        let (down_from, down_to) = (nanos(OUTAGE_START), nanos(OUTAGE_START + self.outage));
        let end = nanos(self.end());
        let timeout = nanos(self.timeout);
        let service = (1e9 / f64::from(self.capacity.max(1))) as u64;
        let seconds = end.div_ceil(1_000_000_000) as usize;
        let gap = |rng: &mut SmallRng| -> u64 {
            let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
            (-u.ln() / self.rate.max(1e-9) * 1e9) as u64
        };
        let mut result = OpenResult {
            strategy,
            calls: 0,
            attempts: 0,
            calls_per_call: None,
            recovery: None,
            arrivals: vec![0; seconds],
            offered: vec![0; seconds],
            goodput: vec![0; seconds],
            succeeded: vec![0; seconds],
        };
        let sec = |t: u64| ((t / 1_000_000_000) as usize).min(seconds - 1);
        // Calls that arrived and ended within the outage: how many, and their attempts.
        let (mut ended_down, mut attempts_down) = (0u64, 0u64);
        let mut ended = |arrived: u64, made: u32, t: u64| {
            if arrived >= down_from && t < down_to {
                ended_down += 1;
                attempts_down += u64::from(made);
            }
        };
        // The time the service is done with every attempt it has accepted.
        let mut free = 0u64;
        let mut queue = Queue::new();
        queue.push(gap(&mut rng), Event::Call);
        while let Some((t, event)) = queue.pop() {
            NOW.with(|n| n.set(t));
            // An attempt reaches the service: when is it answered, and in time?
            let mut attempt = |arrived: u64, made: u32, prev: u64, queue: &mut Queue<Event>| {
                result.attempts += 1;
                result.offered[sec(t)] += 1;
                let mut start = free.max(t);
                if (down_from..down_to).contains(&start) {
                    start = down_to;
                }
                free = start + service;
                if free - t <= timeout {
                    queue.push(free, Event::Answered { arrived, made });
                } else {
                    queue.push(
                        t + timeout,
                        Event::TimedOut {
                            arrived,
                            made,
                            prev,
                        },
                    );
                }
            };
            match event {
                Event::Call => {
                    let next = t + gap(&mut rng);
                    if next < end {
                        queue.push(next, Event::Call);
                    }
                    result.calls += 1;
                    result.arrivals[sec(t)] += 1;
                    budget.begin();
                    attempt(t, 1, nanos(self.base), &mut queue);
                }
                Event::Retry {
                    arrived,
                    made,
                    prev,
                } => attempt(arrived, made, prev, &mut queue),
                Event::Answered { arrived, made } => {
                    result.goodput[sec(t)] += 1;
                    result.succeeded[sec(arrived)] += 1;
                    budget.succeeded_after(made - 1);
                    ended(arrived, made, t);
                }
                Event::TimedOut {
                    arrived,
                    made,
                    prev,
                } => {
                    if made >= attempts {
                        ended(arrived, made, t);
                        continue;
                    }
                    // As the runtime does: the wait is drawn, then the budget asked.
                    let wait = nanos(backoff.delay(made, Duration::from_nanos(prev)));
                    if !budget.try_retry() {
                        ended(arrived, made, t);
                        continue;
                    }
                    queue.push(
                        t + wait,
                        Event::Retry {
                            arrived,
                            made: made + 1,
                            prev: wait,
                        },
                    );
                }
            }
        }
        result.calls_per_call = (ended_down > 0).then(|| attempts_down as f64 / ended_down as f64);
        result.recovery = recovery(&result, down_to, end);
        result
    }

    /// Every strategy of the open model, in `OpenStrategy::ALL`'s order.
    #[cfg(test)]
    pub fn compare(&self) -> Vec<OpenResult> {
        OpenStrategy::ALL.iter().map(|&s| self.run(s)).collect()
    }
}

/// Seconds from `down_to` to the first whole second of the run from which every second's
/// arrivals succeed at 95% or more, to the run's last whole second.
fn recovery(r: &OpenResult, down_to: u64, end: u64) -> Option<f64> {
    let first = down_to.div_ceil(1_000_000_000) as usize;
    let last = (end / 1_000_000_000) as usize; // seconds [first, last) are whole and in the run
    let ok = |s: usize| f64::from(r.succeeded[s]) >= RECOVERED * f64::from(r.arrivals[s]);
    if first >= last || !ok(last - 1) {
        return None;
    }
    let mut from = last - 1;
    while from > first && ok(from - 1) {
        from -= 1;
    }
    Some(from as f64 - down_to as f64 / 1e9)
}

/// The loads and outage lengths of the sweep.
pub const LOADS: [f64; 7] = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
pub const OUTAGES: [u64; 6] = [1, 2, 5, 10, 20, 30];

/// The anchor (seanmonstar's reqwest retry-budget figures): with the service down for good,
/// 1,000 calls a second and 3 retries make 4 calls per call whatever the jitter, and a 30%
/// ratio budget about 1.31 (4,000 vs ~1,300 requests a second).
pub fn anchor(seed: u64) -> (Vec<(Jitter, f64)>, f64) {
    let down = Open {
        rate: 1_000.0,
        outage: Duration::from_secs(40),
        attempts: 4,
        ratio: 0.3,
        recover: false,
        seed,
        ..Open::default()
    };
    let per_jitter = [
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::None,
    ]
    .into_iter()
    .map(|jitter| {
        let r = Open {
            jitter,
            ..down.clone()
        }
        .run(OpenStrategy::FullJitter);
        (jitter, r.calls_per_call.unwrap_or(0.0))
    })
    .collect();
    let ratio = down
        .run(OpenStrategy::FullJitterRatio)
        .calls_per_call
        .unwrap_or(0.0);
    (per_jitter, ratio)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn short() -> Open {
        Open {
            rate: 500.0,
            capacity: 1_000,
            ..Open::default()
        }
    }

    #[test]
    fn attempts_never_exceed_attempts_times_arrivals_and_every_call_makes_one() {
        let o = short();
        for s in OpenStrategy::ALL {
            let r = o.run(s);
            let most = if s == OpenStrategy::NoRetry { 1 } else { 4 };
            assert!(r.attempts <= most * r.calls, "{s}");
            assert!(r.attempts >= r.calls, "{s}");
            assert_eq!(
                r.arrivals.iter().map(|&a| u64::from(a)).sum::<u64>(),
                r.calls
            );
            assert_eq!(
                r.offered.iter().map(|&a| u64::from(a)).sum::<u64>(),
                r.attempts
            );
            // Every call arrived once and succeeded at most once.
            for (a, s) in r.arrivals.iter().zip(&r.succeeded) {
                assert!(s <= a);
            }
        }
    }

    #[test]
    fn no_retry_recovers_whenever_the_load_is_below_one() {
        for load in LOADS {
            for outage in [1, 10, 30] {
                let o = Open {
                    capacity: (1_000.0 / load) as u32,
                    outage: Duration::from_secs(outage),
                    ..Open::default()
                };
                let r = o.run(OpenStrategy::NoRetry);
                assert!(r.recovery.is_some(), "load {load}, outage {outage} s");
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_result_and_another_seed_another() {
        let o = short();
        for s in OpenStrategy::ALL {
            assert_eq!(o.run(s), o.run(s), "{s}");
        }
        let other = Open { seed: 2, ..short() };
        assert_ne!(
            o.run(OpenStrategy::FullJitter),
            other.run(OpenStrategy::FullJitter)
        );
    }

    #[test]
    fn the_anchor_is_four_calls_per_call_without_a_budget_and_131_with_a_30_percent_one() {
        let (per_jitter, ratio) = anchor(1);
        for (jitter, calls) in per_jitter {
            assert!((calls - 4.0).abs() <= 0.08, "{jitter:?}: {calls}");
        }
        assert!((ratio - 1.31).abs() <= 1.31 * 0.02, "ratio budget: {ratio}");
    }

    #[test]
    fn without_an_outage_every_call_succeeds_at_its_first_attempt() {
        let o = Open {
            outage: Duration::ZERO,
            ..short()
        };
        for s in OpenStrategy::ALL {
            let r = o.run(s);
            assert_eq!(r.attempts, r.calls, "{s}");
            assert_eq!(r.recovery, Some(0.0), "{s}");
        }
    }

    #[test]
    fn at_the_default_load_retries_without_a_budget_stay_metastable_and_budgets_recover() {
        let o = Open::default();
        let r = o.compare();
        assert!(r[0].recovery.is_some(), "no-retry");
        assert_eq!(r[1].recovery, None, "full-jitter");
        assert!(r[2].recovery.is_some(), "full-jitter+budget");
        assert!(r[3].recovery.is_some(), "full-jitter+ratio");
    }
}
