//! The tail at scale: a service that is usually fast and sometimes stalls, called with and
//! without hedged requests.
//!
//! Client calls arrive as a Poisson process (1,000 a second by default). Every attempt's
//! latency is drawn on its own from one distribution, whatever the load (the service is not
//! slowed by the hedges it receives): with probability 99.5% a lognormal of median 10 ms and
//! σ = 0.4 (p95 19 ms, p99.5 28 ms), otherwise a stall uniform in 0.5–1.5 s — a GC pause, a
//! slow disk, a packet lost and resent. (With exactly 1% stalled the 99th percentile would sit
//! on the edge between the two modes, 30 ms or 500 ms depending on the seed, and "hedge at the
//! p99" would mean nothing; with 0.5% it is a latency of the fast mode.)
//!
//! Each client call is
//! `retry_jitter::Retry::new(policy).budget_none().hedge(…).call_async_with(exec::sleep,
//! exec::now, op)`: the crate's own hedging loop, on the virtual clock of `exec`, without a
//! budget (the model measures what hedging alone costs). The service never fails, so every call
//! ends with the first answer; a hedge is a second (or third) copy of the call, started when the
//! latest has not answered within the hedge delay.

use std::cell::{Cell, RefCell};
use std::convert::Infallible;
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use retry_jitter::hedge::{Hedge, LatencyHistogram};
use retry_jitter::{Policy, Retry};

use crate::exec;
use crate::sim::seed_for;
use crate::strategy::nanos;

/// The tail scenario: the service's latency distribution and the calls made.
#[derive(Clone, Debug)]
pub struct Tail {
    /// Client calls made.
    pub calls: u32,
    /// Client calls arriving per second (Poisson).
    pub rate: f64,
    /// Median and σ (of its logarithm) of the fast mode's lognormal latency.
    pub median: Duration,
    pub sigma: f64,
    /// The share of attempts that stall, and the range a stall's latency is uniform in.
    pub stalled: f64,
    pub stall: (Duration, Duration),
    /// Calls per client call at most, the first included (the policy's `attempts`).
    pub attempts: u32,
    pub seed: u64,
}

impl Default for Tail {
    fn default() -> Self {
        Tail {
            calls: 100_000,
            rate: 1_000.0,
            median: Duration::from_millis(10),
            sigma: 0.4,
            stalled: 0.005,
            stall: (Duration::from_millis(500), Duration::from_millis(1_500)),
            attempts: 3,
            seed: 1,
        }
    }
}

/// How client calls hedge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Hedging {
    /// No hedge: one attempt, waited for.
    None,
    /// `Hedge::After(delay)`: the delay chosen from a measured percentile, named here.
    After(Duration, &'static str),
    /// `Hedge::Percentile(histogram, p)`: the delay follows the recent p-th percentile.
    Percentile(u8),
}

impl fmt::Display for Hedging {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Hedging::None => f.pad("none"),
            Hedging::After(d, name) => f.pad(&format!("after {name} ({} ms)", d.as_millis())),
            Hedging::Percentile(p) => f.pad(&format!("p{p} (adaptive)")),
        }
    }
}

impl Hedging {
    /// The name in CSV rows: `none`, `after-p95-20ms`, `p95-adaptive`.
    pub fn slug(&self) -> String {
        match *self {
            Hedging::None => "none".to_owned(),
            Hedging::After(d, name) => format!("after-{name}-{}ms", d.as_millis()),
            Hedging::Percentile(p) => format!("p{p}-adaptive"),
        }
    }
}

/// What one way of hedging did.
#[derive(Clone, Debug, PartialEq)]
pub struct TailResult {
    pub hedging: Hedging,
    /// Every client call's latency (ns), sorted.
    pub latencies: Vec<u64>,
    /// Calls made to the service, hedges included.
    pub attempts: u64,
    /// The most calls any one client call made.
    pub most_attempts: u32,
    /// Virtual time the run took (ns).
    pub elapsed: u64,
}

impl TailResult {
    /// The `p`-th percentile latency (ns): the smallest latency at least `p`% of calls had.
    pub fn percentile(&self, p: f64) -> u64 {
        let n = self.latencies.len();
        if n == 0 {
            return 0;
        }
        let rank = ((p / 100.0 * n as f64).ceil() as usize).clamp(1, n);
        self.latencies[rank - 1]
    }

    /// Calls beyond one per client call, as a share of the client calls.
    pub fn extra(&self) -> f64 {
        let n = self.latencies.len() as f64;
        (self.attempts as f64 - n) / n.max(1.0)
    }
}

/// The service: each attempt's latency drawn from the scenario's distribution.
struct Service {
    rng: RefCell<SmallRng>,
    median: f64,
    sigma: f64,
    stalled: f64,
    stall: (u64, u64),
}

impl Service {
    fn latency(&self) -> Duration {
        let mut rng = self.rng.borrow_mut();
        if rng.random::<f64>() < self.stalled {
            return Duration::from_nanos(rng.random_range(self.stall.0..=self.stall.1));
        }
        // Box–Muller: one standard normal draw.
        let (u1, u2): (f64, f64) = (rng.random::<f64>().max(f64::MIN_POSITIVE), rng.random());
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        Duration::from_secs_f64(self.median * (self.sigma * z).exp())
    }
}

/// What the client calls of a run share.
#[derive(Default)]
struct Stats {
    latencies: Vec<u64>,
    attempts: u64,
    most_attempts: u32,
}

impl Tail {
    /// Run every client call under `hedging`, on a virtual clock.
    pub fn run(&self, hedging: Hedging) -> TailResult {
        // The same arrivals and the same service draws for every way of hedging (a hedge draws
        // one more latency, so the draws shift after the first hedge).
        let seed = seed_for(&[self.seed, 3]);
        retry_jitter::testing::seed_jitter(seed);
        let mut arrivals = SmallRng::seed_from_u64(seed_for(&[seed, 1]));
        let service = Rc::new(Service {
            rng: RefCell::new(SmallRng::seed_from_u64(seed_for(&[seed, 2]))),
            median: self.median.as_secs_f64(),
            sigma: self.sigma,
            stalled: self.stalled,
            stall: (nanos(self.stall.0), nanos(self.stall.1)),
        });
        let policy = Policy::new().with_attempts(self.attempts.max(1));
        let hedge = match hedging {
            Hedging::None => None,
            Hedging::After(delay, _) => Some(Hedge::After(delay)),
            Hedging::Percentile(p) => {
                // A histogram of this run's own (a `static` in an annotated function); leaked,
                // 520 bytes a run, as a `Hedge` holds a `&'static` one.
                let histogram: &'static LatencyHistogram =
                    Box::leak(Box::new(LatencyHistogram::new()));
                Some(Hedge::Percentile(histogram, p))
            }
        };
        let stats = Rc::new(RefCell::new(Stats {
            latencies: Vec::with_capacity(self.calls as usize),
            ..Stats::default()
        }));
        let (calls, rate) = (self.calls, self.rate);
        let st = stats.clone();
        let run = exec::run(async move {
            for _ in 0..calls {
                // Exponential gaps: a Poisson process of `rate` calls a second.
                let u: f64 = arrivals.random::<f64>().max(f64::MIN_POSITIVE);
                exec::sleep(Duration::from_secs_f64(-u.ln() / rate)).await;
                exec::spawn(client(policy, hedge, service.clone(), st.clone()));
            }
        });
        let mut stats = stats.take();
        stats.latencies.sort_unstable();
        TailResult {
            hedging,
            latencies: stats.latencies,
            attempts: stats.attempts,
            most_attempts: stats.most_attempts,
            elapsed: run.elapsed,
        }
    }
}

/// One client call, timed on the virtual clock.
async fn client(
    policy: Policy,
    hedge: Option<Hedge>,
    service: Rc<Service>,
    stats: Rc<RefCell<Stats>>,
) {
    let started = exec::nanos_now();
    let calls = Cell::new(0u32);
    let op = || {
        calls.set(calls.get() + 1);
        let latency = service.latency();
        async move {
            exec::sleep(latency).await;
            Ok::<(), Infallible>(())
        }
    };
    let outcome = match hedge {
        None => {
            Retry::new(policy)
                .budget_none()
                .call_async_with(exec::sleep, exec::now, op)
                .await
        }
        Some(hedge) => {
            Retry::new(policy)
                .budget_none()
                .hedge(hedge)
                .call_async_with(exec::sleep, exec::now, op)
                .await
        }
    };
    let Ok(()) = outcome;
    let mut stats = stats.borrow_mut();
    stats.latencies.push(exec::nanos_now() - started);
    stats.attempts += u64::from(calls.get());
    stats.most_attempts = stats.most_attempts.max(calls.get());
}

/// The four ways compared: no hedging; hedges after the unhedged run's p95 and p99 (rounded up
/// to whole milliseconds, as one would write them: `hedge = "20ms"`); and the adaptive p95.
pub fn compare(tail: &Tail) -> Vec<TailResult> {
    let none = tail.run(Hedging::None);
    let up_to_ms = |ns: u64| Duration::from_millis(ns.div_ceil(1_000_000));
    let others = [
        Hedging::After(up_to_ms(none.percentile(95.0)), "p95"),
        Hedging::After(up_to_ms(none.percentile(99.0)), "p99"),
        Hedging::Percentile(95),
    ];
    let mut results = vec![none];
    results.extend(crate::parallel(&others, "tail", |&h| tail.run(h)));
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Tail {
        Tail {
            calls: 20_000,
            ..Tail::default()
        }
    }

    #[test]
    fn without_hedging_every_call_is_one_attempt_and_the_latencies_are_the_distributions() {
        let r = small().run(Hedging::None);
        assert_eq!(r.latencies.len(), 20_000);
        assert_eq!((r.attempts, r.most_attempts), (20_000, 1));
        let ms = |p| r.percentile(p) as f64 / 1e6;
        assert!((9.0..11.0).contains(&ms(50.0)), "p50 {}", ms(50.0));
        assert!((17.0..22.0).contains(&ms(95.0)), "p95 {}", ms(95.0));
        assert!(ms(99.9) > 500.0, "p99.9 {}", ms(99.9));
        // Calls arrive at 1,000 a second: 20 s of virtual time, and then the last answers.
        assert!((19e9..22e9).contains(&(r.elapsed as f64)), "{}", r.elapsed);
    }

    #[test]
    fn hedging_at_the_p95_cuts_the_p999_tenfold_for_at_most_5_percent_more_calls() {
        let results = compare(&small());
        let (none, p95) = (&results[0], &results[1]);
        let Hedging::After(delay, "p95") = p95.hedging else {
            panic!("{}", p95.hedging)
        };
        assert!((18..=22).contains(&delay.as_millis()), "{delay:?}");
        assert!(
            none.percentile(99.9) >= 10 * p95.percentile(99.9),
            "p99.9: {} ns without, {} ns with hedging",
            none.percentile(99.9),
            p95.percentile(99.9)
        );
        assert!(p95.extra() <= 0.05, "extra calls {:.4}", p95.extra());
        // And every way of hedging cuts it tenfold, for at most 6.5% more calls.
        for r in &results[1..] {
            assert!(
                none.percentile(99.9) >= 10 * r.percentile(99.9),
                "{}",
                r.hedging
            );
            assert!(
                r.extra() > 0.0 && r.extra() <= 0.065,
                "{}: {}",
                r.hedging,
                r.extra()
            );
            // Hedging costs the median nothing (the draws differ once a hedge has drawn one).
            let (p50, none50) = (r.percentile(50.0) as f64, none.percentile(50.0) as f64);
            assert!(p50 <= none50 * 1.03, "{}: p50 {p50} vs {none50}", r.hedging);
        }
    }

    #[test]
    fn no_client_call_makes_more_than_attempts_calls() {
        for attempts in [1, 2, 3] {
            let tail = Tail {
                calls: 5_000,
                attempts,
                // Half the attempts stall: hedges are sent all the time.
                stalled: 0.5,
                ..Tail::default()
            };
            for h in [
                Hedging::After(Duration::from_millis(1), "1 ms"),
                Hedging::Percentile(50),
            ] {
                let r = tail.run(h);
                assert_eq!(r.latencies.len(), 5_000);
                assert_eq!(r.most_attempts, attempts, "{h}");
                assert!(r.attempts <= 5_000 * u64::from(attempts), "{h}");
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_run() {
        let tail = Tail {
            calls: 3_000,
            ..Tail::default()
        };
        for h in [
            Hedging::None,
            Hedging::After(Duration::from_millis(20), "p95"),
            Hedging::Percentile(95),
        ] {
            assert_eq!(tail.run(h), tail.run(h), "{h}");
        }
        let other = Tail {
            seed: 2,
            ..tail.clone()
        };
        assert_ne!(tail.run(Hedging::None), other.run(Hedging::None));
    }
}
