//! retry-jitter side by side with the retry crates users compare it with: backon (its closure
//! API and its attribute, backon-macros' `#[backon]`), tokio-retry2, retry-policies,
//! exponential-backoff. One run, one machine; BENCHMARKS.md has the figures.
//!
//! `cargo bench --bench peers`

use std::hint::black_box;
use std::sync::atomic::AtomicU32;
use std::time::{Duration, SystemTime};

use backon::{BlockingRetryable, ExponentialBuilder, Retryable};
use criterion::{criterion_group, criterion_main, Criterion};
use retry_jitter::{retry, Backoff, Jitter, Policy, Retry};
use retry_policies::RetryPolicy;

// ---- the operation: succeeds at once, or fails 4 times and then succeeds ----

// The operation that succeeds: `pairs::plain`, one multiply behind `inline(never)`, its
// argument `black_box`ed at each call (benches/support/pairs.rs, the same as overhead.rs's).
#[path = "support/pairs.rs"]
#[allow(dead_code)] // only `plain` is used here; the pairs are overhead.rs's
mod pairs;
use pairs::plain as work;

// The failing operation (fails 4 times, then succeeds) and each crate's loop around it, and a
// fresh schedule's draws: benches/support/failing.rs, shared with the instruction counts of
// scripts/instructions.sh.
#[path = "support/failing.rs"]
mod failing;
use failing::*;

// backon's attribute, `#[backon]` (backon-macros): the failing call under it, shared with the
// instruction counts (its success-path functions there are pairs-shaped; here they are below).
#[path = "support/backon_attr.rs"]
#[allow(dead_code)] // `backon_annotated*` are the instruction counts'; ours are below
mod backon_attr;
use backon_attr::{backon_attr_flaky, backon_attr_flaky_async};

#[retry]
fn ours(x: &u64) -> Result<u64, u64> {
    work(x)
}

#[retry]
async fn ours_async(x: &u64) -> Result<u64, u64> {
    work(x)
}

// The same under backon's attribute, its defaults (`ExponentialBuilder::default()`, the default
// sleeper: `std::thread::sleep` sync, tokio's async).
#[backon_macros::backon]
fn backon_attr(x: &u64) -> Result<u64, u64> {
    work(x)
}

#[backon_macros::backon]
async fn backon_attr_async(x: &u64) -> Result<u64, u64> {
    work(x)
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime")
}

fn success_path(c: &mut Criterion) {
    let mut g = c.benchmark_group("success");
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_secs(1));
    let x = 7u64;
    g.bench_function("sync/plain", |b| b.iter(|| work(black_box(&x))));
    g.bench_function("sync/#[retry]", |b| b.iter(|| ours(black_box(&x))));
    let r = Retry::new(Policy::new());
    g.bench_function("sync/Retry::call", |b| {
        b.iter(|| r.call(|| work(black_box(&x))))
    });
    g.bench_function("sync/backon", |b| {
        b.iter(|| {
            (|| work(black_box(&x)))
                .retry(ExponentialBuilder::default())
                .sleep(std::thread::sleep)
                .call()
        })
    });
    g.bench_function("sync/#[backon]", |b| b.iter(|| backon_attr(black_box(&x))));
    let rt = rt();
    g.bench_function("async/plain", |b| {
        b.to_async(&rt).iter(|| async { work(black_box(&x)) })
    });
    g.bench_function("async/#[retry]", |b| {
        b.to_async(&rt).iter(|| ours_async(black_box(&x)))
    });
    g.bench_function("async/Retry::call_async", |b| {
        b.to_async(&rt)
            .iter(|| r.call_async(|| async { work(black_box(&x)) }))
    });
    g.bench_function("async/backon", |b| {
        b.to_async(&rt)
            .iter(|| (|| async { work(black_box(&x)) }).retry(ExponentialBuilder::default()))
    });
    g.bench_function("async/#[backon]", |b| {
        b.to_async(&rt).iter(|| backon_attr_async(black_box(&x)))
    });
    g.bench_function("async/tokio-retry2", |b| {
        b.to_async(&rt).iter(|| {
            let strategy = tokio_retry2::strategy::ExponentialFactorBackoff::from_millis(200, 2.0)
                .max_delay(Duration::from_secs(30))
                .map(tokio_retry2::strategy::jitter)
                .take(4);
            tokio_retry2::Retry::spawn(strategy, || async {
                work(black_box(&x)).map_err(tokio_retry2::RetryError::transient)
            })
        })
    });
    g.finish();
}

fn failure_machinery(c: &mut Criterion) {
    let mut g = c.benchmark_group("fail4_then_succeed");
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_secs(1));
    let n = AtomicU32::new(0);
    g.bench_function("sync/#[retry]", |b| b.iter(|| ours_flaky(black_box(&n))));
    g.bench_function("sync/Retry::call", |b| {
        b.iter(|| closure_flaky(black_box(&n)))
    });
    g.bench_function("sync/backon", |b| b.iter(|| backon_flaky(black_box(&n))));
    g.bench_function("sync/#[backon]", |b| {
        b.iter(|| backon_attr_flaky(black_box(&n)))
    });
    let rt = rt();
    g.bench_function("async/#[retry]", |b| {
        b.to_async(&rt).iter(|| ours_flaky_async(black_box(&n)))
    });
    g.bench_function("async/backon", |b| {
        b.to_async(&rt).iter(|| backon_flaky_async(black_box(&n)))
    });
    g.bench_function("async/#[backon]", |b| {
        b.to_async(&rt)
            .iter(|| backon_attr_flaky_async(black_box(&n)))
    });
    g.bench_function("async/tokio-retry2 (tokio sleep 0)", |b| {
        b.to_async(&rt).iter(|| {
            let strategy = tokio_retry2::strategy::FixedInterval::new(Duration::ZERO).take(4);
            tokio_retry2::Retry::spawn(strategy, || async {
                flaky(black_box(&n)).map_err(tokio_retry2::RetryError::transient)
            })
        })
    });
    g.finish();
}

fn delay_draw(c: &mut Criterion) {
    let mut g = c.benchmark_group("delay_draw");
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_secs(1));
    let base = Duration::from_millis(200);
    let cap = Duration::from_secs(30);
    for (name, jitter) in [
        ("ours/full", Jitter::Full),
        ("ours/equal", Jitter::Equal),
        ("ours/decorrelated", Jitter::Decorrelated),
        ("ours/none", Jitter::None),
    ] {
        let b = Backoff::new(base, cap).with_jitter(jitter);
        let mut k = 0u32;
        g.bench_function(name, |bench| {
            bench.iter(|| {
                k = k % 8 + 1;
                b.delay(black_box(k), base)
            })
        });
    }
    g.bench_function("backon/exponential+jitter", |bench| {
        let builder = ExponentialBuilder::default()
            .with_min_delay(base)
            .with_max_delay(cap)
            .with_jitter()
            .without_max_times();
        let mut it = backon::BackoffBuilder::build(builder);
        bench.iter(|| it.next())
    });
    // A fresh schedule each time and its first DRAWS waits (the instruction counts' row).
    let fresh = Backoff::new(base, cap);
    g.bench_function("ours/fresh schedule, 4 draws", |bench| {
        bench.iter(|| ours_draws(black_box(&fresh)))
    });
    let fresh_backon = backon_jittered();
    g.bench_function("backon/fresh, 4 draws", |bench| {
        bench.iter(|| backon_draws(black_box(&fresh_backon)))
    });
    g.bench_function("retry-policies/full", |bench| {
        let p = retry_policies::policies::ExponentialBackoff::builder()
            .retry_bounds(base, cap)
            .jitter(retry_policies::Jitter::Full)
            .build_with_max_retries(u32::MAX);
        let start = SystemTime::now();
        let mut k = 0u32;
        bench.iter(|| {
            k = k % 8 + 1;
            p.should_retry(start, black_box(k))
        })
    });
    g.bench_function("exponential-backoff", |bench| {
        let b = exponential_backoff::Backoff::new(u32::MAX, base, cap);
        let mut it = b.iter();
        bench.iter(|| it.next())
    });
    g.finish();
}

criterion_group!(benches, success_path, failure_machinery, delay_draw);
criterion_main!(benches);
