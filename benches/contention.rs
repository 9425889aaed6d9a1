//! Issue 53's bar for the default budget under contention: 8 threads calling the same
//! `#[retry]` function in a tight loop, its throughput with the function's own budget (the
//! default) at least 0.9× its throughput with `budget = none`. Two bodies: one multiply (the
//! loop's own cost, down to the instruction) and a 13-digit number parsed (a few ns of real
//! work, as `benches/overhead.rs`'s `parse` rows). Beside them, the one-multiply function
//! sharing a `RatioBudget`, whose calls all meet on one cache line and read the clock: what the
//! default avoids.
//!
//! Each sample runs `iters` calls on each of 8 threads at once and reports the wall time: the
//! time per iteration is the time 8 calls take side by side, so calls a second are
//! `8 / time`. `cargo bench --bench contention`.

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use retry_jitter::{retry, RatioBudget};

#[path = "support/pairs.rs"]
#[allow(dead_code)]
mod pairs;
use pairs::work;

/// The threads calling at once.
const THREADS: usize = 8;

static SHARED: RatioBudget = RatioBudget::new(0.2, 10, Duration::from_secs(10));

/// The default: the function's own `DefaultBudget`.
#[retry]
#[inline(never)]
fn with_default(x: &u64) -> Result<u64, u64> {
    work(*x)
}

#[retry(budget = none)]
#[inline(never)]
fn with_none(x: &u64) -> Result<u64, u64> {
    work(*x)
}

#[retry(budget = &SHARED)]
#[inline(never)]
fn with_ratio(x: &u64) -> Result<u64, u64> {
    work(*x)
}

// The same with a little real work, the overhead bench's `parse` body: a short number parsed.

#[retry]
#[inline(never)]
fn parse_with_default(x: &u64) -> Result<u64, u64> {
    parse(*x)
}

#[retry(budget = none)]
#[inline(never)]
fn parse_with_none(x: &u64) -> Result<u64, u64> {
    parse(*x)
}

/// A 13-digit number parsed: `x` picks one of a few, so none is folded away.
#[inline(always)]
fn parse(x: u64) -> Result<u64, u64> {
    const NUMBERS: [&str; 4] = [
        "1234567890123",
        "9876543210987",
        "5555555555555",
        "1000000000001",
    ];
    NUMBERS[(x % 4) as usize].parse().map_err(|_| x)
}

/// `iters` calls of `f` on each of the threads, started together: the wall time.
fn side_by_side(iters: u64, f: fn(&u64) -> Result<u64, u64>) -> Duration {
    let start = Barrier::new(THREADS + 1);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    let t = Instant::now();
                    for i in 0..iters {
                        let _ = black_box(f(black_box(&i)));
                    }
                    t.elapsed()
                })
            })
            .collect();
        start.wait();
        // The wall time is the slowest thread's: they all started at the barrier.
        workers
            .into_iter()
            .map(|w| w.join().unwrap())
            .max()
            .unwrap_or_default()
    })
}

fn contention(c: &mut Criterion) {
    let mut g = c.benchmark_group("eight_threads");
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    g.bench_function("budget = none", |b| {
        b.iter_custom(|iters| side_by_side(iters, with_none))
    });
    g.bench_function("default budget", |b| {
        b.iter_custom(|iters| side_by_side(iters, with_default))
    });
    g.bench_function("shared RatioBudget", |b| {
        b.iter_custom(|iters| side_by_side(iters, with_ratio))
    });
    g.bench_function("parse, budget = none", |b| {
        b.iter_custom(|iters| side_by_side(iters, parse_with_none))
    });
    g.bench_function("parse, default budget", |b| {
        b.iter_custom(|iters| side_by_side(iters, parse_with_default))
    });
    g.finish();
}

criterion_group!(benches, contention);
criterion_main!(benches);
