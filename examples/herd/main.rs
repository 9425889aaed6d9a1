//! The herd demo: thousands of simulated clients retrying after a failure, strategy by strategy,
//! hedging against a slow tail, and retries multiplying down a chain of services.
//!
//! `cargo run --release --example herd` runs every model with its defaults in a few seconds,
//! prints the tables and writes SVG charts (to `target/herd` unless `--out` says otherwise).
//! Every wait is drawn by `retry_jitter::Backoff`, the code `#[retry]` runs, and every budget,
//! throttle and breaker is the crate's own. What decides each model's retries:
//!
//! - `occ`: a `retry_jitter::hooks::RetryState` per client (with the shared `RetryBudget` as its hook
//!   for `full+budget`): the runtime's own loop, failure by failure.
//! - `outage`: the model's own loop: it counts each client's calls against `--attempts`, draws
//!   the wait with `Backoff::delay` and asks the shared `RetryBudget`.
//! - `open` and `chain`: the model's own loop too (`open::Sim::decide`, for every tier of a
//!   chain): its count of attempts, `Backoff::delay`, and the crate's `RetryBudget`,
//!   `RatioBudget`, `DefaultBudget` (the `defaults` row: the budget every `#[retry]` function
//!   and `Retry` has unless told otherwise, one per client), `AdaptiveThrottle` and
//!   `CircuitBreaker` asked as the runtime asks them;
//!   the "don't retry" a chain's tier answers upstream is the model's flag (`Plan::pushback`),
//!   not `ChainLayer`'s headers.
//! - `tail`: the crate's whole hedging loop, `Retry::hedge(…).call_async_with` (with
//!   `budget_none()`: what hedging alone costs), on a virtual clock (`exec`); its service never
//!   fails, so its extra calls are hedges, never retries.
//!
//! `sim` is the event queue the models share, and decides nothing.

mod capacity_cut;
mod chain;
mod chart;
mod collapse;
mod exec;
mod occ;
mod open;
mod outage;
mod sim;
mod strategy;
mod tail;
mod token_bucket;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::chain::{ChainResult, ChainStrategy};
use crate::chart::Series;
use crate::occ::{Occ, OccResult};
use crate::open::{Open, OpenResult, OpenStrategy};
use crate::outage::{Outage, OutageResult, WINDOW};
use crate::strategy::{ms, Strategy};
use crate::tail::{Tail, TailResult};
use crate::token_bucket::{TbResult, TbStrategy, TokenBucket};

/// Simulate thousands of clients retrying a failed call, and compare retry strategies.
#[derive(Parser, Debug)]
#[command(name = "herd", about, long_about = None)]
struct Args {
    /// Which model to run.
    #[arg(long, value_enum, default_value_t = Model::All)]
    model: Model,
    /// Clients: for outage, how many fail together (default 10000); for occ, one client count
    /// instead of the sweep 10, 30, …, 190; for tail, the client calls made (default 100000);
    /// for the `defaults` rows of open, collapse and capacity-cut, the clients the calls are
    /// split among, each with a `DefaultBudget` of its own (default 10, 1 and 10).
    #[arg(long)]
    clients: Option<u32>,
    /// Runs averaged: OCC's per strategy and client count (default 100); token-bucket's per
    /// row (default at least 40, and on the noisier rows more, up to 10,000, until each
    /// figure's standard error is at most 0.001, so that two seeds agree to 0.005; 10 in the
    /// whole demo; a given count is each row's); collapse's per second (default 10; its
    /// collapse share counts at least 100).
    #[arg(long)]
    runs: Option<u32>,
    /// Seed of every random draw: the same seed gives the same tables.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Total calls per client (call), the first included: for outage (default 10) retries, for
    /// open (default 4) retries, for tail (default 3) hedges.
    #[arg(long)]
    attempts: Option<u32>,
    /// Outage, open and chain: how long the service is down, in seconds (open and chain: from
    /// 10 s on; chain: the bottom service).
    #[arg(long, default_value_t = 5.0)]
    outage_secs: f64,
    /// Outage: calls per second the service serves once it is back; open: attempts per second
    /// it serves, first come first served.
    #[arg(long, default_value_t = 2000)]
    capacity: u32,
    /// Open and chain: calls arriving per second (Poisson; chain: at the top).
    #[arg(long, default_value_t = 1000.0)]
    rate: f64,
    /// Open: the client's timeout of each attempt, in seconds.
    #[arg(long, default_value_t = 1.0)]
    timeout: f64,
    /// Open: the ratio of full-jitter+ratio's `RatioBudget` (its floor 10 a second over 10 s);
    /// chain: of each tier's in every-tier+ratio and one-tier+ratio.
    #[arg(long, default_value_t = 0.2)]
    ratio: f64,
    /// Chain: the tiers that retry, the clients included (the chain is run at every depth
    /// from 1 to this one).
    #[arg(long, default_value_t = 3)]
    depth: u32,
    /// Where the SVG charts go.
    #[arg(long, default_value = "target/herd")]
    out: PathBuf,
    /// Machine-readable rows on stdout instead of the tables:
    /// `model,strategy,clients,calls,completion_ms` (for outage, completion is when 99% of
    /// clients had succeeded, empty if they never did; for occ, calls are write calls; for
    /// tail, the strategy is the hedging, calls include hedges and completion is the 99.9th
    /// percentile latency). The open model's rows follow a header of their own:
    /// `model,strategy,rate,capacity,outage_s,calls_per_call,recovery_s` (`recovery_s` a number
    /// of seconds or `never`; `calls_per_call` empty when no call ended within the outage). The
    /// chain model's:
    /// `model,strategy,depth,rate,capacity,outage_s,bottom_calls_per_call,recovery_s`
    /// (`bottom_calls_per_call` over the calls that arrived while the bottom was down). The
    /// token-bucket model's: `model,strategy,clients,p,success_per_call,attempts_per_call`
    /// (model `token-bucket` for the main experiment, 10 calls/s per client;
    /// `token-bucket-clients` for the client-count variant, 1,000 calls/s in all). The collapse
    /// model's: `model,strategy,t,successes_per_s,retries_per_s,timeouts_per_s`. The
    /// capacity-cut model's: `model,strategy,load,trigger_s,recovered,recovery_s,calls_per_call`.
    #[arg(long)]
    csv: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Model {
    Outage,
    Occ,
    Tail,
    Open,
    Chain,
    TokenBucket,
    CapacityCut,
    Collapse,
    All,
}

fn main() -> Result<(), Box<dyn Error>> {
    let args = Args::parse();
    std::fs::create_dir_all(&args.out)?;
    if args.csv
        && !matches!(
            args.model,
            Model::Open | Model::Chain | Model::TokenBucket | Model::CapacityCut | Model::Collapse
        )
    {
        println!("model,strategy,clients,calls,completion_ms");
    }
    if matches!(args.model, Model::Outage | Model::All) {
        let scenario = Outage {
            clients: args.clients.unwrap_or(10_000),
            down: Duration::from_secs_f64(args.outage_secs.max(0.0)),
            capacity: args.capacity,
            attempts: args.attempts.unwrap_or(10).max(1),
            seed: args.seed,
            ..Outage::default()
        };
        let started = Instant::now();
        let results = parallel(&Strategy::ALL, "outage", |&s| scenario.run(s));
        let elapsed = started.elapsed();
        let chart = args.out.join("outage.svg");
        outage_chart(&chart, &scenario, &results)?;
        if args.csv {
            for r in &results {
                let done = r
                    .p99_done
                    .map(|t| format!("{:.1}", ms(t)))
                    .unwrap_or_default();
                println!(
                    "outage,{},{},{},{done}",
                    r.strategy, scenario.clients, r.calls
                );
            }
        } else {
            print_outage(&scenario, &results, elapsed);
            print_budget_savings(&scenario);
        }
        eprintln!("chart: {}", chart.display());
    }
    if matches!(args.model, Model::Occ | Model::All) {
        let occ = Occ {
            runs: args.runs.unwrap_or(100).max(1),
            seed: args.seed,
            ..Occ::default()
        };
        let sweep = args.clients.map_or_else(occ::sweep, |n| vec![n.max(1)]);
        let jobs: Vec<(Strategy, u32)> = Strategy::ALL
            .iter()
            .flat_map(|&s| sweep.iter().map(move |&n| (s, n)))
            .collect();
        let started = Instant::now();
        let results = parallel(&jobs, "occ", |&(s, n)| occ.run(s, n));
        let elapsed = started.elapsed();
        let charts = [
            args.out.join("occ_calls.svg"),
            args.out.join("occ_completion.svg"),
        ];
        occ_charts(&charts, &results)?;
        if args.csv {
            for r in &results {
                let (s, n) = (r.strategy, r.clients);
                println!("occ,{s},{n},{:.1},{:.1}", r.writes, ms(r.completion as u64));
            }
        } else {
            print_occ(&occ, &sweep, &results, elapsed);
        }
        for c in &charts {
            eprintln!("chart: {}", c.display());
        }
    }
    if matches!(args.model, Model::Tail | Model::All) {
        let scenario = Tail {
            calls: args.clients.unwrap_or(100_000).max(1),
            attempts: args.attempts.unwrap_or(3).max(1),
            seed: args.seed,
            ..Tail::default()
        };
        let started = Instant::now();
        let results = tail::compare(&scenario);
        let elapsed = started.elapsed();
        let chart = args.out.join("tail.svg");
        tail_chart(&chart, &scenario, &results)?;
        if args.csv {
            for r in &results {
                let p999 = ms(r.percentile(99.9));
                let name = r.hedging.slug();
                println!("tail,{name},{},{},{p999:.1}", scenario.calls, r.attempts);
            }
        } else {
            print_tail(&scenario, &results, elapsed);
        }
        eprintln!("chart: {}", chart.display());
    }
    if matches!(args.model, Model::Open | Model::All) {
        // The load × outage map takes a few seconds more: `--model open` alone draws it.
        run_open(&args, args.model == Model::Open)?;
    }
    if matches!(args.model, Model::Chain | Model::All) {
        run_chain(&args)?;
    }
    if matches!(args.model, Model::TokenBucket | Model::All) {
        run_token_bucket(&args)?;
    }
    if matches!(args.model, Model::Collapse | Model::All) {
        run_collapse(&args)?;
    }
    if matches!(args.model, Model::CapacityCut | Model::All) {
        // The whole grid takes minutes: `--model capacity-cut` alone runs it.
        run_capacity_cut(&args, args.model == Model::CapacityCut)?;
    }
    Ok(())
}

/// The capacity-cut model (`capacity_cut`): every strategy at both loads, each trigger's cell
/// the majority of its seeds (the whole grid with `full`, else a few triggers, one seed); its
/// table or CSV rows, and its chart.
fn run_capacity_cut(args: &Args, full: bool) -> Result<(), Box<dyn Error>> {
    let model = capacity_cut::CapacityCut {
        seed: args.seed,
        clients: args
            .clients
            .unwrap_or(capacity_cut::DEFAULTS_CLIENTS)
            .max(1),
        ..Default::default()
    };
    let (triggers, seeds) = if full {
        (capacity_cut::triggers(), capacity_cut::SEEDS)
    } else {
        (
            capacity_cut::DEMO_TRIGGERS.to_vec(),
            capacity_cut::DEMO_SEEDS,
        )
    };
    let jobs = capacity_cut::jobs(&triggers, seeds);
    let started = Instant::now();
    let runs = parallel(&jobs, "capacity-cut", |&(s, load, trigger, seed)| {
        let r = model.run(s, load, trigger, seed);
        (r.recovered, r.recovery_s, r.calls_per_call)
    });
    let elapsed = started.elapsed();
    let cells = capacity_cut::cells(&jobs, &runs, seeds);
    let chart = args.out.join("capacity_cut.svg");
    capacity_cut::chart(&chart, &cells, &triggers)?;
    if args.csv {
        capacity_cut::print_csv(&cells);
    } else {
        capacity_cut::print(&cells, &triggers, (seeds, model.clients), full, elapsed);
    }
    eprintln!("chart: {}", chart.display());
    Ok(())
}

/// The token-bucket model: every strategy at every failure rate (100 clients), then at 10, 100
/// and 1,000 clients (p = 0.2); its table or CSV rows, and its charts.
fn run_token_bucket(args: &Args) -> Result<(), Box<dyn Error>> {
    // The demo (every model) averages fewer runs, as it runs a smaller capacity-cut grid:
    // `--model token-bucket` alone averages enough that two seeds agree (at least
    // `token_bucket::RUNS`, more on a row until its standard errors reach `TARGET_SE`). A
    // given `--runs` is every row's.
    let (runs, target_se) = match (args.runs, args.model) {
        (Some(runs), _) => (runs, None),
        (None, Model::All) => (token_bucket::RUNS_IN_DEMO, None),
        (None, _) => (token_bucket::RUNS, Some(token_bucket::TARGET_SE)),
    };
    let tb = TokenBucket {
        runs: runs.max(1),
        target_se,
        seed: args.seed,
    };
    let jobs = token_bucket::jobs();
    let started = Instant::now();
    let results = parallel(&jobs, "token-bucket", |&(s, n, rate, p)| {
        tb.run(s, n, rate, p)
    });
    let elapsed = started.elapsed();
    let (main, sweep) = results.split_at(TbStrategy::ALL.len() * token_bucket::P_VALUES.len());
    let charts = [
        args.out.join("token_bucket.svg"),
        args.out.join("token_bucket_guards.svg"),
    ];
    token_bucket_charts(&charts, main)?;
    if args.csv {
        println!("model,strategy,clients,p,success_per_call,attempts_per_call");
        for (model, rows) in [("token-bucket", main), ("token-bucket-clients", sweep)] {
            for r in rows {
                println!(
                    "{model},{},{},{},{:.4},{:.4}",
                    r.strategy, r.clients, r.p, r.success_per_call, r.attempts_per_call
                );
            }
        }
    } else {
        print_token_bucket(&tb, main, sweep, elapsed);
    }
    for c in &charts {
        eprintln!("chart: {}", c.display());
    }
    Ok(())
}

fn print_token_bucket(tb: &TokenBucket, main: &[TbResult], sweep: &[TbResult], elapsed: Duration) {
    println!(
        "Token bucket (Brooker, \"Fixing retries with token buckets and circuit breakers\", \
         2022): {} clients of {}/s calls (Poisson) for {:?}; each attempt fails with \
         probability p; retries at once, at most {} (adaptive-10pct: as its bucket allows); \
         {}.",
        token_bucket::CLIENTS,
        token_bucket::RATE_PER_CLIENT,
        token_bucket::RUN,
        token_bucket::RETRIES,
        match tb.target_se {
            None => format!("{} runs averaged", tb.runs),
            Some(se) => format!(
                "{} runs averaged, more on a row (up to {}) until each figure's standard error \
                 is at most {se}; most runs on a row: {}",
                tb.runs,
                token_bucket::MAX_RUNS,
                main.iter().chain(sweep).map(|r| r.runs).max().unwrap_or(0)
            ),
        }
    );
    for (title, value) in [
        (
            "success per call",
            (|r: &TbResult| r.success_per_call) as fn(&TbResult) -> f64,
        ),
        ("attempts per call", |r: &TbResult| r.attempts_per_call),
    ] {
        println!();
        print!("{:<18}", title);
        for s in TbStrategy::ALL {
            print!("{:>15}", s.name());
        }
        println!();
        for p in token_bucket::P_VALUES {
            print!("{:<18}", format!("p = {p}"));
            for s in TbStrategy::ALL {
                let r = main
                    .iter()
                    .find(|r| r.strategy == s && r.p == p)
                    .expect("every strategy ran at every p");
                print!("{:>15.4}", value(r));
            }
            println!();
        }
    }
    println!();
    println!(
        "Client count: {}/s calls in all, split over the clients, p = {}: success per call / \
         attempts per call",
        token_bucket::SWEEP_RATE,
        token_bucket::SWEEP_P
    );
    print!("{:<18}", "clients");
    for s in TbStrategy::ALL {
        print!("{:>15}", s.name());
    }
    println!();
    for n in token_bucket::SWEEP_CLIENTS {
        print!("{:<18}", format!("{n} clients"));
        for s in TbStrategy::ALL {
            let r = sweep
                .iter()
                .find(|r| r.strategy == s && r.clients == n)
                .expect("every strategy ran at every count");
            print!(
                "{:>15}",
                format!("{:.3}/{:.3}", r.success_per_call, r.attempts_per_call)
            );
        }
        println!();
    }
    let simulations: u64 = main.iter().chain(sweep).map(|r| u64::from(r.runs)).sum();
    println!(
        "({simulations} simulations in {:.2} s)\n",
        elapsed.as_secs_f64()
    );
}

/// Success and attempts per call against p (in %), 100 clients: his strategies, then the
/// crate's guards beside three-retries (a chart draws 7 lines at most).
fn token_bucket_charts(paths: &[PathBuf; 2], main: &[TbResult]) -> Result<(), Box<dyn Error>> {
    let series = |strategies: &[TbStrategy], value: fn(&TbResult) -> f64| -> Vec<Series> {
        strategies
            .iter()
            .map(|&s| Series {
                name: s.name().to_owned(),
                points: main
                    .iter()
                    .filter(|r| r.strategy == s)
                    .map(|r| (100.0 * r.p, value(r)))
                    .collect(),
            })
            .collect()
    };
    let his: Vec<TbStrategy> = TbStrategy::ALL.into_iter().filter(|s| s.is_his()).collect();
    let ours: Vec<TbStrategy> = std::iter::once(TbStrategy::ThreeRetries)
        .chain(TbStrategy::ALL.into_iter().filter(|s| !s.is_his()))
        .collect();
    for (path, strategies, whose) in [
        (&paths[0], &his, "his strategies"),
        (&paths[1], &ours, "the crate's guards"),
    ] {
        chart::panels_chart(
            path,
            &format!("100 clients, 10 calls/s each, each attempt failing with p: {whose}"),
            "attempt failure rate p (%)",
            &[
                (
                    "successful calls (%)",
                    series(strategies, |r| 100.0 * r.success_per_call),
                ),
                (
                    "attempts per 100 calls",
                    series(strategies, |r| 100.0 * r.attempts_per_call),
                ),
            ],
            50.0,
        )?;
    }
    Ok(())
}

/// The collapse model (`collapse`): every strategy's runs, the first `--runs` (default 10)
/// averaged second by second, at least 100 counted for the share that collapse; its table or
/// CSV rows, and its chart.
fn run_collapse(args: &Args) -> Result<(), Box<dyn Error>> {
    let model = collapse::Collapse {
        runs: args.runs.unwrap_or(collapse::RUNS).max(1),
        seed: args.seed,
        clients: args.clients.unwrap_or(collapse::DEFAULTS_CLIENTS).max(1),
        ..Default::default()
    };
    let jobs = model.jobs();
    let started = Instant::now();
    let runs = parallel(&jobs, "collapse", |&(s, run)| model.run_once(s, run));
    let elapsed = started.elapsed();
    let results: Vec<_> = collapse::CollapseStrategy::ALL
        .iter()
        .map(|&s| {
            let mine: Vec<_> = jobs
                .iter()
                .zip(&runs)
                .filter(|(j, _)| j.0 == s)
                .map(|(_, r)| r.clone())
                .collect();
            model.summarize(s, &mine)
        })
        .collect();
    let chart = args.out.join("collapse.svg");
    collapse::chart(&chart, &model, &results)?;
    if args.csv {
        collapse::print_csv(&results);
    } else {
        collapse::print(&model, &results, elapsed);
    }
    eprintln!("chart: {}", chart.display());
    Ok(())
}

/// The open and chain models' scenario, from the command line.
fn open_scenario(args: &Args) -> Result<Open, Box<dyn Error>> {
    if !(0.0..=10.0).contains(&args.ratio) {
        return Err(format!("--ratio {} is not in 0.0..=10.0", args.ratio).into());
    }
    Ok(Open {
        rate: args.rate.max(1e-3),
        capacity: args.capacity.max(1),
        outage: Duration::from_secs_f64(args.outage_secs.max(0.0)),
        timeout: Duration::from_secs_f64(args.timeout.max(0.0)),
        attempts: args.attempts.unwrap_or(4).max(1),
        ratio: args.ratio,
        seed: args.seed,
        clients: args.clients.unwrap_or(open::DEFAULTS_CLIENTS).max(1),
        ..Open::default()
    })
}

/// A CSV row's calls per call (empty when none) and recovery (`never` when none).
fn csv_cells(calls_per_call: Option<f64>, recovery: Option<f64>) -> (String, String) {
    let cpc = calls_per_call
        .map(|c| format!("{c:.3}"))
        .unwrap_or_default();
    let rec = recovery.map_or("never".to_owned(), |s| format!("{s:.1}"));
    (cpc, rec)
}

/// The chain model: every strategy at every depth up to `--depth`, its table or CSV rows, and
/// its chart of bottom calls per call by depth.
fn run_chain(args: &Args) -> Result<(), Box<dyn Error>> {
    let scenario = open_scenario(args)?;
    let depth = args.depth.clamp(1, 8);
    let jobs: Vec<(ChainStrategy, u32)> = ChainStrategy::ALL
        .iter()
        .flat_map(|&s| (1..=depth).map(move |d| (s, d)))
        .collect();
    let started = Instant::now();
    let results = parallel(&jobs, "chain", |&(s, d)| chain::run(&scenario, s, d));
    let elapsed = started.elapsed();
    let chart = args.out.join("chain.svg");
    chain_chart(&chart, &scenario, &results)?;
    if args.csv {
        println!("model,strategy,depth,rate,capacity,outage_s,bottom_calls_per_call,recovery_s");
        for r in &results {
            let (cpc, rec) = csv_cells(r.bottom_calls_per_call(), r.run.recovery);
            println!(
                "chain,{},{},{},{},{},{cpc},{rec}",
                r.run.strategy,
                r.depth,
                scenario.rate,
                scenario.capacity,
                scenario.outage.as_secs_f64()
            );
        }
    } else {
        print_chain(&scenario, depth, &results, elapsed);
    }
    eprintln!("chart: {}", chart.display());
    Ok(())
}

fn print_chain(o: &Open, depth: u32, results: &[ChainResult], elapsed: Duration) {
    println!(
        "Chain: calls arrive at {}/s (Poisson) at the top of a chain of services; each tier \
         retries the one below ({} attempts, full jitter, base {:?}, cap {:?}); the last calls \
         the bottom service, {} attempts/s first come first served, timing out after {:?}, \
         which from {:?} on serves nothing for {:?}; the ratio budgets {}, 10/s, 10 s, one per \
         tier",
        o.rate,
        o.attempts,
        o.base,
        o.cap,
        o.capacity,
        o.timeout,
        open::OUTAGE_START,
        o.outage,
        o.ratio
    );
    println!();
    println!(
        "Calls at the bottom per call at the top, over the calls that arrived while it was \
         down (recovered after the outage), by the tiers that retry:"
    );
    print!("{:<20}", "strategy");
    for d in 1..=depth {
        print!("{:>18}", format!("depth {d}"));
    }
    println!();
    for s in ChainStrategy::ALL {
        print!("{:<20}", s.name());
        for r in results.iter().filter(|r| r.run.strategy == s) {
            let cpc = r
                .bottom_calls_per_call()
                .map_or("-".to_owned(), |c| format!("{c:.2}"));
            print!("{:>18}", format!("{cpc} ({})", recovery(r.run.recovery)));
        }
        println!();
    }
    println!(
        "({} runs of the chain model simulated in {:.2} s)\n",
        results.len(),
        elapsed.as_secs_f64()
    );
}

fn chain_chart(path: &Path, o: &Open, results: &[ChainResult]) -> Result<(), Box<dyn Error>> {
    let series: Vec<Series> = ChainStrategy::ALL
        .iter()
        .map(|&s| Series {
            name: s.name().to_owned(),
            points: results
                .iter()
                .filter(|r| r.run.strategy == s)
                .filter_map(|r| Some((f64::from(r.depth), r.bottom_calls_per_call()?)))
                .collect(),
        })
        .collect();
    let title = format!(
        "The bottom down {:.0} s, {}/s calls, {} attempts per tier: bottom calls per call",
        o.outage.as_secs_f64(),
        o.rate,
        o.attempts
    );
    let axes = chart::Axes {
        log_y: true,
        x_max: None,
        whole_x: true,
    };
    chart::line_chart(
        path,
        &title,
        (
            "tiers that retry (depth)",
            "calls at the bottom per call (log scale)",
        ),
        &series,
        axes,
    )
}

/// The open model: the scenario strategy by strategy, its chart, the check of its accounting
/// (`open::accounting`), and (with `with_map`) the sweep over load and outage length.
fn run_open(args: &Args, with_map: bool) -> Result<(), Box<dyn Error>> {
    let scenario = open_scenario(args)?;
    let started = Instant::now();
    let results = parallel(&OpenStrategy::ALL, "open", |&s| scenario.run(s));
    let loads: &[f64] = if with_map { &open::LOADS } else { &[] };
    let jobs: Vec<(f64, u64, OpenStrategy)> = loads
        .iter()
        .flat_map(|&l| {
            open::OUTAGES
                .iter()
                .flat_map(move |&o| OpenStrategy::ALL.iter().map(move |&s| (l, o, s)))
        })
        .collect();
    let sweep = parallel(&jobs, "open sweep", |&(load, outage, s)| {
        let o = Open {
            capacity: (scenario.rate / load).round().max(1.0) as u32,
            outage: Duration::from_secs(outage),
            ..scenario.clone()
        };
        (o.clone(), o.run(s))
    });
    let accounting = open::accounting(args.seed);
    let elapsed = started.elapsed();
    let chart = args.out.join("open.svg");
    open_chart(&chart, &scenario, &results)?;
    if args.csv {
        println!("model,strategy,rate,capacity,outage_s,calls_per_call,recovery_s");
        let row = |o: &Open, r: &OpenResult| {
            let (cpc, rec) = csv_cells(r.calls_per_call, r.recovery);
            println!(
                "open,{},{},{},{},{cpc},{rec}",
                r.strategy,
                o.rate,
                o.capacity,
                o.outage.as_secs_f64()
            );
        };
        for r in &results {
            row(&scenario, r);
        }
        for (o, r) in &sweep {
            row(o, r);
        }
    } else {
        print_open(&scenario, &results, &accounting, &sweep, elapsed);
    }
    eprintln!("chart: {}", chart.display());
    Ok(())
}

fn print_open(
    o: &Open,
    results: &[OpenResult],
    (per_jitter, ratio): &(Vec<(retry_jitter::Jitter, f64)>, f64),
    sweep: &[(Open, OpenResult)],
    elapsed: Duration,
) {
    println!(
        "Open: calls arrive at {}/s (Poisson) at a service serving {} attempts/s first come \
         first served (load {:.2}); each attempt times out after {:?}; from {:?} on the service \
         serves nothing for {:?} (it queues what comes); full jitter (base {:?}, cap {:?}), {} \
         attempts; the ratio budget {}, 10/s, 10 s",
        o.rate,
        o.capacity,
        o.load(),
        o.timeout,
        open::OUTAGE_START,
        o.outage,
        o.base,
        o.cap,
        o.attempts,
        o.ratio
    );
    println!();
    println!(
        "{:<20} {:>26} {:>24} {:>24}",
        "strategy", "calls per call while down", "recovered after outage", "refused while healthy"
    );
    for r in results {
        let cpc = r
            .calls_per_call
            .map_or("-".to_owned(), |c| format!("{c:.2}"));
        println!(
            "{:<20} {:>26} {:>24} {:>24}",
            r.strategy.name(),
            cpc,
            recovery(r.recovery),
            r.refused_healthy
        );
    }
    println!(
        "defaults: the crate's defaults, Policy::default() (5 attempts, full jitter, base 200 ms, \
         cap 30 s) and a DefaultBudget (20% of the calls over 10 s + 10 retries/s) per client: {} \
         clients ({:.0} calls/s each; the model's calls have no clients of their own, each is \
         made by one drawn at random), so {} budgets, whose floors are per budget: a service down \
         longer than their window receives at most 1 + 0.2 + {} x 10 / {} = {:.2} calls per call",
        o.clients,
        o.rate / f64::from(o.clients.max(1)),
        o.clients,
        o.clients,
        o.rate,
        o.defaults_bound()
    );
    let jitters: Vec<String> = per_jitter
        .iter()
        .map(|(j, c)| format!("{j:?} {c:.2}"))
        .collect();
    let counted = per_jitter.iter().all(|&(_, c)| c == 4.0) && (ratio - 1.31).abs() <= 1.31 * 0.02;
    println!(
        "Accounting check (arithmetic known before the run, not a finding): the service down \
         for the whole run, 1,000 calls/s, 4 attempts, counting the calls that end inside the \
         outage, so each failed every attempt: calls per call {} (4 whatever the jitter); with a \
         30% RatioBudget {ratio:.2} (its formula: 1 + 0.3 + 10/1,000 = 1.31): {}",
        jitters.join(", "),
        if counted {
            "as computed"
        } else {
            "NOT as computed"
        }
    );
    println!();
    if sweep.is_empty() {
        println!(
            "({} runs of the open model simulated in {:.2} s; `--model open` adds the map of \
             recovery by load and outage)\n",
            results.len() + 5,
            elapsed.as_secs_f64()
        );
        return;
    }
    println!(
        "Recovered (seconds after the outage) or never (metastable within the run), by load \
         (rate / capacity) and outage:"
    );
    for s in OpenStrategy::ALL {
        print!("{:<20}", s.name());
        for outage in open::OUTAGES {
            print!("{:>8}", format!("{outage} s"));
        }
        println!();
        for load in open::LOADS {
            print!("{:<20}", format!("  load {load:.1}"));
            for outage in open::OUTAGES {
                let (_, r) = sweep
                    .iter()
                    .find(|(o, r)| {
                        r.strategy == s
                            && o.outage.as_secs() == outage
                            && (o.rate / f64::from(o.capacity) - load).abs() < 0.01
                    })
                    .expect("every cell ran");
                print!("{:>8}", recovery(r.recovery));
            }
            println!();
        }
    }
    println!(
        "({} runs of the open model simulated in {:.2} s)\n",
        results.len() + sweep.len() + 5,
        elapsed.as_secs_f64()
    );
}

/// A recovery time for the tables.
fn recovery(r: Option<f64>) -> String {
    r.map_or("never".to_owned(), |s| format!("{s:.0} s"))
}

fn open_chart(path: &Path, o: &Open, results: &[OpenResult]) -> Result<(), Box<dyn Error>> {
    let per_second = |values: &[u32]| -> Vec<(f64, f64)> {
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| (i as f64 + 0.5, f64::from(v)))
            .collect()
    };
    let series = |value: fn(&OpenResult) -> &[u32]| -> Vec<Series> {
        results
            .iter()
            .map(|r| Series {
                name: r.strategy.name().to_owned(),
                points: per_second(value(r)),
            })
            .collect()
    };
    let title = format!(
        "{}/s calls, capacity {}/s, a {:.0} s outage from 10 s",
        o.rate,
        o.capacity,
        o.outage.as_secs_f64()
    );
    chart::panels_chart(
        path,
        &title,
        "time (s)",
        &[
            ("goodput (answers in time per s)", series(|r| &r.goodput)),
            ("offered load (attempts per s)", series(|r| &r.offered)),
        ],
        // To the last event: the calls on their way go on after arrivals stop.
        results.iter().map(|r| r.offered.len()).max().unwrap_or(0) as f64,
    )
}

/// Run `work` on every job on all cores, keeping the jobs' order; a progress bar on a terminal.
fn parallel<J: Sync, R: Send>(jobs: &[J], what: &str, work: impl Fn(&J) -> R + Sync) -> Vec<R> {
    let bar = ProgressBar::with_draw_target(Some(jobs.len() as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:40}] {pos}/{len} {elapsed}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix(what.to_owned());
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let r = work(job);
                results.lock().expect("no thread panicked")[i] = Some(r);
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    results
        .into_inner()
        .expect("no thread panicked")
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

fn print_outage(o: &Outage, results: &[OutageResult], elapsed: Duration) {
    println!(
        "Outage: {} clients fail together; the service is down {:?}, then serves {} calls/s \
         ({} attempts per client, base {:?}, cap {:?})",
        o.clients, o.down, o.capacity, o.attempts, o.base, o.cap
    );
    println!();
    println!(
        "{:<13} {:>9} {:>22} {:>14} {:>8}",
        "strategy", "calls", "peak per 100 ms after", "99% done at", "gave up"
    );
    for r in results {
        let done = r
            .p99_done
            .map_or("never".to_owned(), |t| format!("{:.2} s", ms(t) / 1e3));
        println!(
            "{:<13} {:>9} {:>22} {:>14} {:>8}",
            r.strategy.name(),
            r.calls,
            r.peak_after_recovery,
            done,
            r.gave_up
        );
    }
    println!(
        "({} strategies simulated in {:.2} s)\n",
        results.len(),
        elapsed.as_secs_f64()
    );
}

/// What the shared budget saves when the outage is long: the same scenario with a 60 s outage,
/// full jitter with and without the budget.
fn print_budget_savings(o: &Outage) {
    let long = Outage {
        down: Duration::from_secs(60),
        ..o.clone()
    };
    let full = long.run(Strategy::Full);
    let budget = long.run(Strategy::FullBudget);
    let saved = full.calls.saturating_sub(budget.calls);
    println!(
        "A 60 s outage, same clients: full jitter makes {} calls ({} give up); with one shared \
         retry budget (500 tokens, 5 a retry) {} calls ({} give up): {} calls, {:.0}%, never \
         reach the service.\n",
        full.calls,
        full.gave_up,
        budget.calls,
        budget.gave_up,
        saved,
        100.0 * saved as f64 / full.calls.max(1) as f64
    );
}

fn print_occ(occ: &Occ, sweep: &[u32], results: &[OccResult], elapsed: Duration) {
    println!(
        "OCC (AWS \"Exponential Backoff And Jitter\", 2015): clients contend for one row; \
         base {:?}, cap {:?}, {} runs averaged.",
        occ.base, occ.cap, occ.runs
    );
    println!(
        "The first backoff's ceiling is 2·base ({:?}), as in the post's simulator; decorrelated \
         grows from base.",
        occ.base * 2
    );
    for (title, value) in [
        (
            "write calls",
            (|r: &OccResult| format!("{:.0}", r.writes)) as fn(&OccResult) -> String,
        ),
        ("completion (ms)", |r: &OccResult| {
            format!("{:.0}", ms(r.completion as u64))
        }),
    ] {
        println!();
        print!("{:<16}", title);
        for s in Strategy::ALL {
            print!("{:>13}", s.name());
        }
        println!();
        for &n in sweep {
            print!("{:<16}", format!("{n} clients"));
            for s in Strategy::ALL {
                let r = results
                    .iter()
                    .find(|r| r.strategy == s && r.clients == n)
                    .expect("every strategy ran at every count");
                print!("{:>13}", value(r));
            }
            println!();
        }
    }
    println!(
        "({} simulations in {:.2} s)\n",
        results.len() as u64 * u64::from(occ.runs),
        elapsed.as_secs_f64()
    );
}

fn outage_chart(path: &Path, o: &Outage, results: &[OutageResult]) -> Result<(), Box<dyn Error>> {
    let window_s = WINDOW as f64 / 1e9;
    let series: Vec<Series> = results
        .iter()
        .map(|r| Series {
            name: r.strategy.name().to_owned(),
            points: r
                .per_window
                .iter()
                .enumerate()
                .map(|(i, &c)| (i as f64 * window_s, c as f64))
                .collect(),
        })
        .collect();
    let title = format!(
        "{} clients after a {:.0} s outage: calls per 100 ms",
        o.clients,
        o.down.as_secs_f64()
    );
    let axes = chart::Axes {
        log_y: true,
        x_max: Some(o.down.as_secs_f64() + 25.0),
        whole_x: false,
    };
    chart::line_chart(
        path,
        &title,
        ("time (s)", "calls per 100 ms (log scale)"),
        &series,
        axes,
    )
}

fn occ_charts(paths: &[PathBuf; 2], results: &[OccResult]) -> Result<(), Box<dyn Error>> {
    let series = |value: fn(&OccResult) -> f64| -> Vec<Series> {
        Strategy::ALL
            .iter()
            .map(|&s| Series {
                name: s.name().to_owned(),
                points: results
                    .iter()
                    .filter(|r| r.strategy == s)
                    .map(|r| (f64::from(r.clients), value(r)))
                    .collect(),
            })
            .collect()
    };
    chart::line_chart(
        &paths[0],
        "OCC: write calls vs clients",
        ("clients", "write calls (mean per run)"),
        &series(|r| r.writes),
        chart::Axes::default(),
    )?;
    chart::line_chart(
        &paths[1],
        "OCC: completion time vs clients",
        ("clients", "completion time (ms, mean per run)"),
        &series(|r| r.completion / 1e6),
        chart::Axes::default(),
    )
}

fn print_tail(t: &Tail, results: &[TailResult], elapsed: Duration) {
    println!(
        "Tail: {} calls at {}/s; each attempt answers in lognormal(median {:?}, σ {}) or, {}% \
         of the time, stalls {:?}–{:?}; at most {} calls per call, hedges included",
        t.calls,
        t.rate,
        t.median,
        t.sigma,
        t.stalled * 100.0,
        t.stall.0,
        t.stall.1,
        t.attempts
    );
    println!();
    println!(
        "{:<22} {:>9} {:>9} {:>9} {:>12}",
        "hedging", "p50", "p99", "p99.9", "extra calls"
    );
    let lat = |ns: u64| format!("{:.1} ms", ms(ns));
    for r in results {
        println!(
            "{:<22} {:>9} {:>9} {:>9} {:>11.2}%",
            r.hedging.to_string(),
            lat(r.percentile(50.0)),
            lat(r.percentile(99.0)),
            lat(r.percentile(99.9)),
            100.0 * r.extra()
        );
    }
    println!(
        "({} runs of the crate's hedging loop simulated in {:.2} s)\n",
        results.len(),
        elapsed.as_secs_f64()
    );
}

fn tail_chart(path: &Path, t: &Tail, results: &[TailResult]) -> Result<(), Box<dyn Error>> {
    let series: Vec<Series> = results
        .iter()
        .map(|r| Series {
            name: r.hedging.to_string(),
            points: chart::ccdf(&r.latencies, 1e-6),
        })
        .collect();
    let title = format!(
        "{} calls, {}% of attempts stalling: share of calls slower than x",
        thousands(u64::from(t.calls)),
        t.stalled * 100.0
    );
    chart::ccdf_chart(
        path,
        &title,
        ("latency (ms, log scale)", "calls slower (log scale)"),
        &series,
    )
}

/// 100000 as "100,000".
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
