//! The capacity-cut model: the retry experiment of Huang et al., "Metastable failures in the
//! wild" (OSDI '22; their code `lexiangh/Metastability`, `Retry_Metastability/`), as a
//! queueing model (issue 52).
//!
//! One server, first come first served, work-conserving, its queue unbounded, serving
//! `CAPACITY` (1,000) requests a second: each attempt brings work drawn Exp(mean 1 ms), and
//! takes that work divided by the server's speed when its service starts: 0.2 for starts in
//! `[TRIGGER_AT, TRIGGER_AT + trigger_s)` (the trigger, a capacity cut), 1.0 otherwise. Calls
//! arrive as a Poisson process of rate `load × CAPACITY` over `[0, HORIZON)`. An attempt
//! succeeds if it departs within `TIMEOUT` (3 s) of being sent; otherwise its client abandons
//! it at 3 s, and the server still serves it in full (wasted work). Nothing after `HORIZON` is
//! simulated: every figure is read within it.
//!
//! Strategies: `none` (one attempt), `immediate-4` (the OSDI client: 4 resends at the timeout,
//! 5 attempts), `full-jitter` (5 attempts, each retry sent after the timeout plus the wait
//! `retry_jitter::Backoff` draws, base 200 ms, cap 30 s, as `open.rs` draws them), and the same
//! with the crate's `RatioBudget` (10% of the calls over 10 s, a floor of 10 retries a second,
//! asked through `SharedBudget` as the runtime asks it: `begin` when a call's first attempt
//! ends, `take_retry` after the wait is drawn, a refused retry ending the call) or with its
//! `AdaptiveThrottle` (k = 2, over 60 s as in `open.rs`: every attempt asks it, first tries
//! included; a rejected first try is a failed call of 0 attempts, a rejected retry ends its
//! call).
//!
//! `defaults` is what a client gets from the crate without asking: `Policy::default()` (5
//! attempts, full jitter, base 200 ms, cap 30 s, each retry sent after the timeout plus its
//! wait, as `full-jitter`) and a `DefaultBudget` (20% of the calls over 10 s plus a floor of 10
//! retries a second) per client, as each process calling the server through one `#[retry]`
//! function has one, asked as `full-jitter+ratio`'s budget is. The model's calls come from one
//! Poisson stream with no clients of its own, so the fleet is `CapacityCut::clients` processes
//! (`DEFAULTS_CLIENTS`, 10: 90 calls a second each at load 0.9, 67.5 at 0.675; `--clients`
//! changes it), each call made by one drawn at random on a stream of its own (the arrivals and
//! the work are every strategy's). The floor is per budget, so the fleet's size matters: its
//! retries are held to 20% of the calls plus `clients` × 10 a second, 1.31 calls per call at
//! load 0.9 and 1.35 at 0.675 while every attempt fails.
//!
//! Figures, per run: `recovered` (the mean goodput, answers in time a second, over the last
//! `TAIL` (60 s) within 10% of the offered rate `load × CAPACITY`); `recovery_s` (seconds from
//! the trigger's end to the first whole second from which every 5-s mean of goodput, to the
//! end of the run, is at least 90% of the offered rate; `None`: never); and `calls_per_call`
//! (attempts sent over the last 60 s per call arriving in them). A cell of the grid is the
//! majority of `SEEDS` runs (strictly more than half recovered), its `recovery_s` their upper
//! median (so a number only when most runs have one) and its calls per call their mean.

use std::error::Error;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use retry_jitter::budget::{Charge, DefaultBudget, SharedBudget, Taken};
use retry_jitter::{AdaptiveThrottle, Backoff, Policy, RatioBudget};

use crate::chart::{self, Series};
use crate::sim::{seed_for, set_now, virtual_now, Queue};
use crate::strategy::nanos;

/// Requests a second the server serves at full speed.
pub const CAPACITY: f64 = 1_000.0;
/// The server's speed during the trigger.
pub const CUT_SPEED: f64 = 0.2;
/// The client's timeout of each attempt.
pub const TIMEOUT: Duration = Duration::from_secs(3);
/// Attempts per call of the retrying strategies, the first included.
pub const ATTEMPTS: u32 = 5;
/// The loads of the grid: the paper's, and 25% less.
pub const LOADS: [f64; 2] = [0.9, 0.675];
/// Runs per cell.
pub const SEEDS: u32 = 10;
/// The clients of the `defaults` row, each with a `DefaultBudget` of its own.
pub const DEFAULTS_CLIENTS: u32 = 10;
/// Share of the offered rate goodput must reach (recovered, and every 5-s mean of
/// `recovery_s`).
const RECOVERED: f64 = 0.9;
/// The windows of `recovery_s`'s means, in seconds.
const MEAN_OVER: usize = 5;

/// The trigger lengths of the grid: 2 to 8 s in quarter seconds, then whole seconds to 20.
pub fn triggers() -> Vec<f64> {
    (8..=32)
        .map(|q| f64::from(q) / 4.0)
        .chain((9..=20).map(f64::from))
        .collect()
}

/// The reduced grid of the no-argument demo (`Model::All`): either side of the model's
/// boundary (4-5 s) and the paper's (9-10 s), one seed; `--model capacity-cut` runs the whole
/// grid (about 3,700 runs, 40 ms each in a release build).
pub const DEMO_TRIGGERS: [f64; 4] = [3.0, 5.0, 9.0, 10.0];
pub const DEMO_SEEDS: u32 = 1;

/// A retry strategy of the capacity-cut model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CutStrategy {
    None,
    Immediate4,
    FullJitter,
    FullJitterRatio,
    FullJitterThrottle,
    /// The crate's defaults: `Policy::default()`, a `DefaultBudget` per client.
    Defaults,
}

impl CutStrategy {
    pub const ALL: [CutStrategy; 6] = [
        CutStrategy::None,
        CutStrategy::Immediate4,
        CutStrategy::FullJitter,
        CutStrategy::FullJitterRatio,
        CutStrategy::FullJitterThrottle,
        CutStrategy::Defaults,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CutStrategy::None => "none",
            CutStrategy::Immediate4 => "immediate-4",
            CutStrategy::FullJitter => "full-jitter",
            CutStrategy::FullJitterRatio => "full-jitter+ratio",
            CutStrategy::FullJitterThrottle => "full-jitter+throttle",
            CutStrategy::Defaults => "defaults",
        }
    }
}

impl fmt::Display for CutStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// The run's timeline (shortened in the tests).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapacityCut {
    /// Calls arrive over `[0, horizon)`; nothing later is simulated.
    pub horizon: Duration,
    /// When the trigger starts.
    pub trigger_at: Duration,
    /// The last stretch of the run over which `recovered` and `calls_per_call` are read.
    pub tail: Duration,
    pub seed: u64,
    /// The clients of the `defaults` row, a `DefaultBudget` each.
    pub clients: u32,
}

impl Default for CapacityCut {
    fn default() -> Self {
        CapacityCut {
            horizon: Duration::from_secs(300),
            trigger_at: Duration::from_secs(60),
            tail: Duration::from_secs(60),
            seed: 1,
            clients: DEFAULTS_CLIENTS,
        }
    }
}

/// What one run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct CutRun {
    pub recovered: bool,
    pub recovery_s: Option<f64>,
    pub calls_per_call: f64,
    /// Calls arrived, attempts sent (the throttle's rejections are not sent).
    pub calls: u64,
    pub attempts: u64,
    /// Per second: answers in time (goodput).
    pub goodput: Vec<u32>,
    /// The server's accounting: the sum of the service times, and the sum of the work
    /// (service time × speed) of every attempt, in ns.
    pub service_ns: u64,
    pub work_ns: u64,
    /// With `trace`: every attempt's (sent, start, departure, work), in ns, in sending order.
    pub trace: Vec<[u64; 4]>,
}

/// One cell of the grid: `SEEDS` runs of one strategy, load and trigger.
#[derive(Clone, Debug, PartialEq)]
pub struct CutCell {
    pub strategy: CutStrategy,
    pub load: f64,
    pub trigger_s: f64,
    /// Runs that recovered, of `seeds`.
    pub recovered_runs: u32,
    pub seeds: u32,
    pub recovery_s: Option<f64>,
    pub calls_per_call: f64,
}

impl CutCell {
    /// The majority's verdict: strictly more than half of the runs recovered.
    pub fn recovered(&self) -> bool {
        2 * self.recovered_runs > self.seeds
    }
}

/// A call on its way: attempts sent so far, its previous wait, what its retries took, and
/// its client (with per-client budgets; else 0).
#[derive(Clone, Copy, Debug)]
struct Call {
    made: u32,
    prev: u64,
    taken: Taken,
    client: u32,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// The next call arrives.
    Arrive,
    /// A retry of this call is sent.
    Retry(u32),
    /// This call's attempt is answered in time.
    Answered(u32),
    /// This call's attempt timed out.
    TimedOut(u32),
}

/// Count one at `t`'s second.
fn count(per_second: &mut [u32], t: u64) {
    if let Some(c) = per_second.get_mut((t / 1_000_000_000) as usize) {
        *c += 1;
    }
}

/// An exponential draw of mean `1 / rate` seconds, in ns.
fn exp_ns(rng: &mut SmallRng, rate: f64) -> u64 {
    let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    (-u.ln() / rate * 1e9) as u64
}

struct Sim {
    strategy: CutStrategy,
    backoff: Backoff,
    ratio: Option<Box<RatioBudget>>,
    throttle: Option<Box<AdaptiveThrottle>>,
    /// `defaults`' budgets, one per client, and the draws of each call's client.
    defaults: Option<(Vec<DefaultBudget>, SmallRng)>,
    calls: Vec<Call>,
    queue: Queue<Event>,
    /// The work's generator (the arrivals have their own, so that every strategy and trigger
    /// of a seed sees the same calls).
    work: SmallRng,
    /// When the server is done with every attempt it has been sent.
    free: u64,
    /// The trigger: `[from, to)`, in ns.
    cut: (u64, u64),
    end: u64,
    timeout: u64,
    tail_from: u64,
    /// Calls arrived and attempts sent over the tail.
    tail: (u64, u64),
    trace: Option<Vec<[u64; 4]>>,
    result: CutRun,
}

impl Sim {
    fn attempts(&self) -> u32 {
        match self.strategy {
            CutStrategy::None => 1,
            CutStrategy::Defaults => Policy::default().attempts(),
            _ => ATTEMPTS,
        }
    }

    /// The budget call `call`'s retries ask, if any.
    fn budget(&self, call: &Call) -> Option<&dyn SharedBudget> {
        match (&self.ratio, &self.defaults) {
            (Some(b), _) => Some(&**b),
            (None, Some((budgets, _))) => Some(&budgets[call.client as usize]),
            (None, None) => None,
        }
    }

    /// Send call `id`'s next attempt at `t`, if the throttle lets it go.
    fn send(&mut self, id: u32, t: u64) {
        if let Some(th) = &self.throttle {
            if !th.admit(virtual_now) {
                return; // the call ends, failed
            }
        }
        self.calls[id as usize].made += 1;
        self.result.attempts += 1;
        if t >= self.tail_from {
            self.tail.1 += 1;
        }
        let work = exp_ns(&mut self.work, CAPACITY);
        let start = self.free.max(t);
        let service = if (self.cut.0..self.cut.1).contains(&start) {
            (work as f64 / CUT_SPEED) as u64
        } else {
            work
        };
        let done = start + service;
        self.free = done;
        self.result.service_ns += service;
        self.result.work_ns += work;
        if let Some(trace) = &mut self.trace {
            trace.push([t, start, done, work]);
        }
        if done - t <= self.timeout {
            if done < self.end {
                self.queue.push(done, Event::Answered(id));
            }
        } else if t + self.timeout < self.end {
            self.queue.push(t + self.timeout, Event::TimedOut(id));
        }
    }

    fn arrive(&mut self, t: u64) {
        self.result.calls += 1;
        if t >= self.tail_from {
            self.tail.0 += 1;
        }
        let id = self.calls.len() as u32;
        let client = match &mut self.defaults {
            Some((budgets, rng)) => rng.random_range(0..budgets.len() as u32),
            None => 0,
        };
        self.calls.push(Call {
            made: 0,
            prev: 0,
            taken: Taken::NONE,
            client,
        });
        self.send(id, t);
    }

    /// Call `id`'s attempt ended at `t`, `ok` or timed out: the call ends or retries.
    fn ended(&mut self, id: u32, ok: bool, t: u64) {
        if let Some(th) = &self.throttle {
            th.answered(virtual_now, ok);
        }
        let call = self.calls[id as usize];
        if let Some(b) = self.budget(&call) {
            // The runtime counts a call when its first attempt ends.
            if call.made == 1 {
                b.begin(virtual_now);
            }
        }
        if ok {
            count(&mut self.result.goodput, t);
            if let Some(b) = self.budget(&call) {
                b.succeeded(call.taken);
            }
            return;
        }
        if call.made >= self.attempts() {
            return;
        }
        let wait = match self.strategy {
            CutStrategy::None | CutStrategy::Immediate4 => 0,
            _ => {
                let prev = if call.made == 1 {
                    nanos(self.backoff.base())
                } else {
                    call.prev
                };
                nanos(self.backoff.delay(call.made, Duration::from_nanos(prev)))
            }
        };
        self.calls[id as usize].prev = wait;
        if let Some(b) = self.budget(&call) {
            // As the runtime does: the wait is drawn, then the budget asked.
            if b.take_retry(Charge::Retry, virtual_now).is_none() {
                return;
            }
            self.calls[id as usize].taken.count(Charge::Retry);
        }
        if wait == 0 {
            self.send(id, t);
        } else if t + wait < self.end {
            self.queue.push(t + wait, Event::Retry(id));
        }
    }
}

impl CapacityCut {
    /// One run: `strategy` at `load`, a trigger of `trigger_s`, the `run`th seed.
    pub fn run(&self, strategy: CutStrategy, load: f64, trigger_s: f64, run: u32) -> CutRun {
        self.simulate(strategy, load, trigger_s, run, false)
    }

    fn simulate(
        &self,
        strategy: CutStrategy,
        load: f64,
        trigger_s: f64,
        run: u32,
        trace: bool,
    ) -> CutRun {
        let calls_seed = seed_for(&[self.seed, 52, load.to_bits(), u64::from(run)]);
        let seed = seed_for(&[calls_seed, strategy as u64, trigger_s.to_bits()]);
        retry_jitter::testing::seed_jitter(seed_for(&[seed, 1]));
        let mut arrivals = SmallRng::seed_from_u64(calls_seed);
        let end = nanos(self.horizon);
        let seconds = end.div_ceil(1_000_000_000) as usize;
        let from = nanos(self.trigger_at);
        let rate = load * CAPACITY;
        let mut sim = Sim {
            strategy,
            backoff: if strategy == CutStrategy::Defaults {
                Policy::default().backoff()
            } else {
                Backoff::new(Duration::from_millis(200), Duration::from_secs(30))
            },
            ratio: (strategy == CutStrategy::FullJitterRatio)
                .then(|| Box::new(RatioBudget::new(0.1, 10, Duration::from_secs(10)))),
            throttle: (strategy == CutStrategy::FullJitterThrottle)
                .then(|| Box::new(AdaptiveThrottle::new(2.0, Duration::from_secs(60)))),
            defaults: (strategy == CutStrategy::Defaults).then(|| {
                (
                    (0..self.clients.max(1))
                        .map(|_| DefaultBudget::new())
                        .collect(),
                    SmallRng::seed_from_u64(seed_for(&[seed, 5])),
                )
            }),
            calls: Vec::with_capacity((rate * self.horizon.as_secs_f64() * 1.01) as usize),
            queue: Queue::new(),
            work: SmallRng::seed_from_u64(seed),
            free: 0,
            cut: (
                from,
                from + nanos(Duration::from_secs_f64(trigger_s.max(0.0))),
            ),
            end,
            timeout: nanos(TIMEOUT),
            tail_from: end.saturating_sub(nanos(self.tail)),
            tail: (0, 0),
            trace: trace.then(Vec::new),
            result: CutRun {
                recovered: false,
                recovery_s: None,
                calls_per_call: 0.0,
                calls: 0,
                attempts: 0,
                goodput: vec![0; seconds],
                service_ns: 0,
                work_ns: 0,
                trace: Vec::new(),
            },
        };
        let first = exp_ns(&mut arrivals, rate);
        if first < end {
            sim.queue.push(first, Event::Arrive);
        }
        while let Some((t, event)) = sim.queue.pop() {
            set_now(t);
            match event {
                Event::Arrive => {
                    let next = t + exp_ns(&mut arrivals, rate);
                    if next < end {
                        sim.queue.push(next, Event::Arrive);
                    }
                    sim.arrive(t);
                }
                Event::Retry(id) => sim.send(id, t),
                Event::Answered(id) => sim.ended(id, true, t),
                Event::TimedOut(id) => sim.ended(id, false, t),
            }
        }
        let (tail_calls, tail_attempts) = sim.tail;
        let mut r = sim.result;
        r.trace = sim.trace.unwrap_or_default();
        r.calls_per_call = tail_attempts as f64 / tail_calls.max(1) as f64;
        let offered = rate;
        let tail_s = (end - sim.tail_from) as f64 / 1e9;
        let tail_first = (sim.tail_from / 1_000_000_000) as usize;
        let tail_goodput: u64 = r.goodput[tail_first..].iter().map(|&g| u64::from(g)).sum();
        r.recovered =
            (tail_goodput as f64 / tail_s.max(1e-9) - offered).abs() <= (1.0 - RECOVERED) * offered;
        r.recovery_s = recovery(&r.goodput, sim.cut.1, offered);
        r
    }

    /// `seeds` runs of one strategy, load and trigger, made a cell (runs in `run`'s order).
    pub fn cell(
        strategy: CutStrategy,
        load: f64,
        trigger_s: f64,
        runs: &[(bool, Option<f64>, f64)],
    ) -> CutCell {
        let seeds = runs.len() as u32;
        let mut rec: Vec<f64> = runs.iter().map(|r| r.1.unwrap_or(f64::INFINITY)).collect();
        rec.sort_by(f64::total_cmp);
        let median = rec.get(runs.len() / 2).copied().unwrap_or(f64::INFINITY);
        CutCell {
            strategy,
            load,
            trigger_s,
            recovered_runs: runs.iter().filter(|r| r.0).count() as u32,
            seeds,
            recovery_s: median.is_finite().then_some(median),
            calls_per_call: runs.iter().map(|r| r.2).sum::<f64>() / f64::from(seeds.max(1)),
        }
    }
}

/// Seconds from `cut_end` to the first whole second at or after it from which every 5-s mean of
/// goodput, to the run's end, is at least 90% of `offered`; `None`: never.
fn recovery(goodput: &[u32], cut_end: u64, offered: f64) -> Option<f64> {
    let first = cut_end.div_ceil(1_000_000_000) as usize;
    let n = goodput.len();
    if n < first + MEAN_OVER {
        return None;
    }
    let ok = |s: usize| {
        let sum: u32 = goodput[s..s + MEAN_OVER].iter().sum();
        f64::from(sum) >= RECOVERED * offered * MEAN_OVER as f64
    };
    let mut from = n - MEAN_OVER;
    if !ok(from) {
        return None;
    }
    while from > first && ok(from - 1) {
        from -= 1;
    }
    Some(from as f64 - cut_end as f64 / 1e9)
}

/// Every run of a grid: (strategy, load, trigger, seed), cell by cell.
pub fn jobs(triggers: &[f64], seeds: u32) -> Vec<(CutStrategy, f64, f64, u32)> {
    let mut jobs = Vec::new();
    for &load in &LOADS {
        for &s in &CutStrategy::ALL {
            for &trigger in triggers {
                for seed in 0..seeds {
                    jobs.push((s, load, trigger, seed));
                }
            }
        }
    }
    jobs
}

/// The cells of `jobs`' runs (each cell's `seeds` runs are consecutive).
pub fn cells(
    jobs: &[(CutStrategy, f64, f64, u32)],
    runs: &[(bool, Option<f64>, f64)],
    seeds: u32,
) -> Vec<CutCell> {
    let seeds = seeds.max(1) as usize;
    jobs.chunks(seeds)
        .zip(runs.chunks(seeds))
        .map(|(j, r)| CapacityCut::cell(j[0].0, j[0].1, j[0].2, r))
        .collect()
}

/// The first trigger from which every longer one in `cells` does not recover, for one
/// strategy and load; `None`: every trigger recovered.
pub fn boundary(cells: &[CutCell], strategy: CutStrategy, load: f64) -> Option<f64> {
    let row: Vec<&CutCell> = cells
        .iter()
        .filter(|c| c.strategy == strategy && c.load == load)
        .collect();
    let mut first = None;
    for c in row.iter().rev() {
        if c.recovered() {
            break;
        }
        first = Some(c.trigger_s);
    }
    first
}

/// The table: per load, a row per strategy, each trigger's cell `R`ecovered or `.` (not),
/// with the count of runs that recovered beside it, and the boundary.
pub fn print(
    cells: &[CutCell],
    triggers: &[f64],
    (seeds, clients): (u32, u32),
    full: bool,
    elapsed: Duration,
) {
    println!(
        "Capacity cut (Huang et al., \"Metastable failures in the wild\", OSDI '22): one FIFO \
         server of {CAPACITY}/s (work Exp(1 ms)), its speed {CUT_SPEED} for starts in [60 s, 60 s \
         + trigger); Poisson calls at load x {CAPACITY}/s for 300 s; timeout {TIMEOUT:?}, the \
         server serving abandoned attempts in full; {ATTEMPTS} attempts (none: 1); full jitter \
         base 200 ms, cap 30 s; ratio 10% + 10/s over 10 s; throttle k = 2; defaults: \
         Policy::default() (5 attempts, full jitter, 200 ms, 30 s) and a DefaultBudget (20% + \
         10/s over 10 s) per client, {clients} clients (the calls have none of their own: each is \
         made by one drawn at random), so {clients} budgets, their floors {floors}/s in all. \
         Recovered: goodput over the last 60 s within 10% of the offered rate; a cell is the \
         majority of {seeds} seed(s) (recovered runs beside it).",
        floors = clients * DefaultBudget::MIN_PER_SEC
    );
    for &load in &LOADS {
        println!();
        println!("load {load} (trigger_s across; first non-recovering trigger from which all longer fail at the right):");
        print!("{:<21}", "strategy");
        for t in triggers {
            print!("{:>6}", format!("{t}"));
        }
        println!("{:>10}", "boundary");
        for s in CutStrategy::ALL {
            print!("{:<21}", s.name());
            for &t in triggers {
                let c = cells
                    .iter()
                    .find(|c| c.strategy == s && c.load == load && c.trigger_s == t)
                    .expect("every cell ran");
                let mark = if c.recovered() { "R" } else { "." };
                print!("{:>6}", format!("{mark}{}", c.recovered_runs));
            }
            let b = boundary(cells, s, load).map_or("none".to_owned(), |b| format!("{b} s"));
            println!("{b:>10}");
        }
    }
    let runs = cells.len() as u64 * u64::from(seeds);
    if full {
        println!(
            "({runs} runs simulated in {:.2} s)\n",
            elapsed.as_secs_f64()
        );
    } else {
        println!(
            "({runs} runs simulated in {:.2} s; `--model capacity-cut` runs the whole grid: \
             2-8 s in 0.25 s steps and whole seconds to 20, {SEEDS} seeds a cell)\n",
            elapsed.as_secs_f64()
        );
    }
}

/// The CSV rows (the header is printed here too).
pub fn print_csv(cells: &[CutCell]) {
    println!("model,strategy,load,trigger_s,recovered,recovery_s,calls_per_call");
    for c in cells {
        let rec = c.recovery_s.map(|s| format!("{s:.1}")).unwrap_or_default();
        println!(
            "capacity-cut,{},{},{},{},{rec},{:.3}",
            c.strategy,
            c.load,
            c.trigger_s,
            c.recovered(),
            c.calls_per_call
        );
    }
}

/// Runs recovered (% of the seeds) against trigger_s, per strategy, a panel per load.
pub fn chart(path: &Path, cells: &[CutCell], triggers: &[f64]) -> Result<(), Box<dyn Error>> {
    let panel = |load: f64| -> Vec<Series> {
        CutStrategy::ALL
            .iter()
            .map(|&s| Series {
                name: s.name().to_owned(),
                points: cells
                    .iter()
                    .filter(|c| c.strategy == s && c.load == load)
                    .map(|c| {
                        let share = f64::from(c.recovered_runs) / f64::from(c.seeds.max(1));
                        (c.trigger_s, 100.0 * share)
                    })
                    .collect(),
            })
            .collect()
    };
    let labels: Vec<String> = LOADS
        .iter()
        .map(|l| format!("runs recovered (%), load {l}"))
        .collect();
    let panels: Vec<(&str, Vec<Series>)> = LOADS
        .iter()
        .zip(&labels)
        .map(|(&l, label)| (label.as_str(), panel(l)))
        .collect();
    chart::panels_chart(
        path,
        "Capacity cut to 20% from 60 s: runs recovered against the cut's length",
        "trigger length (s)",
        &panels,
        triggers.iter().copied().fold(0.0, f64::max),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shorter timeline, for a debug build: 60 s, the trigger at 10 s, the last 20 s read
    /// (long after a recovering run's backlog has drained: while it drains, goodput is above
    /// the offered rate, by more than 10%).
    fn short() -> CapacityCut {
        CapacityCut {
            horizon: Duration::from_secs(60),
            trigger_at: Duration::from_secs(10),
            tail: Duration::from_secs(20),
            seed: 3,
            ..CapacityCut::default()
        }
    }

    #[test]
    fn without_a_trigger_every_strategy_recovers_at_every_load_below_one() {
        let m = short();
        for load in [0.1, 0.3, 0.5, 0.675, 0.9, 0.95] {
            for s in CutStrategy::ALL {
                let r = m.run(s, load, 0.0, 0);
                assert!(r.recovered, "{s} at load {load}: {r:?}");
                // From load 0.5 a 5-s window holds 2,500 calls or more, 10% of them 5 standard
                // deviations of its Poisson count: below, a window may dip by chance.
                if load >= 0.5 {
                    assert_eq!(r.recovery_s, Some(0.0), "{s} at load {load}");
                }
                // Nothing times out: one attempt per call.
                assert_eq!(r.attempts, r.calls, "{s} at load {load}");
            }
        }
    }

    #[test]
    fn the_server_is_fifo_work_conserving_and_serves_at_its_speed() {
        let m = short();
        let load = 0.9;
        let r = m.simulate(CutStrategy::Immediate4, load, 6.0, 0, true);
        assert!(r.attempts > r.calls, "the cut caused retries");
        let cut = (10_000_000_000u64, 16_000_000_000u64);
        let mut prev_done = 0;
        let (mut busy, mut service, mut work) = (0u64, 0u64, 0u64);
        for &[sent, start, done, w] in &r.trace {
            // First come first served, and never idle while an attempt waits.
            assert_eq!(start, sent.max(prev_done));
            let speed = if (cut.0..cut.1).contains(&start) {
                CUT_SPEED
            } else {
                1.0
            };
            let expected = (w as f64 / speed) as u64;
            assert_eq!(done - start, expected);
            // Busy time, measured from the timeline (the union of the services).
            busy += done - prev_done.max(start);
            service += done - start;
            work += w;
            prev_done = done;
        }
        assert_eq!(r.trace.len() as u64, r.attempts);
        assert_eq!(busy, service);
        assert_eq!((r.service_ns, r.work_ns), (service, work));
        // Work arrives at rate × 1 ms: its mean is that of Exp(1 ms).
        let mean = work as f64 / r.attempts as f64 / 1e6;
        assert!((mean - 1.0).abs() < 0.03, "mean work {mean} ms");
    }

    #[test]
    fn at_load_one_half_the_mean_response_is_the_mm1_formula() {
        // M/M/1, λ = 500/s, μ = 1,000/s: mean time in system 1 / (μ − λ) = 2 ms.
        let r = short().simulate(CutStrategy::None, 0.5, 0.0, 0, true);
        let mean =
            r.trace.iter().map(|a| (a[2] - a[0]) as f64).sum::<f64>() / r.trace.len() as f64 / 1e6;
        assert!((mean - 2.0).abs() < 0.2, "mean response {mean} ms");
    }

    #[test]
    fn a_long_cut_leaves_immediate_retries_metastable_and_no_retry_recovers() {
        let m = short();
        // Without retries a 6 s cut at load 0.675 leaves 2,850 calls' backlog, drained at
        // 325/s spare in 9 s; with 4 immediate resends a 10 s cut at load 0.9 never drains.
        let none = m.run(CutStrategy::None, 0.675, 6.0, 0);
        assert!(none.recovered, "{none:?}");
        let imm = m.run(CutStrategy::Immediate4, 0.9, 10.0, 0);
        assert!(!imm.recovered);
        assert!(imm.calls_per_call > 4.0, "{}", imm.calls_per_call);
    }

    #[test]
    fn the_same_seed_repeats_and_cells_take_the_majority() {
        let m = short();
        let a = m.run(CutStrategy::FullJitterThrottle, 0.9, 4.0, 1);
        assert_eq!(a, m.run(CutStrategy::FullJitterThrottle, 0.9, 4.0, 1));
        let runs = [
            (true, Some(3.0), 1.0),
            (false, None, 5.0),
            (true, Some(1.0), 1.0),
        ];
        let c = CapacityCut::cell(CutStrategy::None, 0.9, 4.0, &runs);
        assert!(c.recovered());
        assert_eq!(c.recovery_s, Some(3.0));
        assert!((c.calls_per_call - 7.0 / 3.0).abs() < 1e-12);
        assert_eq!(triggers().len(), 37);
    }
}
