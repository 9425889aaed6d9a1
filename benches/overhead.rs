//! The success path costs nothing: an annotated function that succeeds at once against the
//! identical hand-written function, sync and async. Target: ratio ≤ 1.05.
//!
//! `cargo bench --bench overhead`

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use retry_jitter::{retry, Policy, Retry};

#[inline(never)]
fn plain(x: u64) -> Result<u64, u64> {
    let y = black_box(x).wrapping_mul(31);
    if y == u64::MAX {
        Err(y)
    } else {
        Ok(y)
    }
}

#[retry]
#[inline(never)]
fn annotated(x: u64) -> Result<u64, u64> {
    let y = black_box(x).wrapping_mul(31);
    if y == u64::MAX {
        Err(y)
    } else {
        Ok(y)
    }
}

#[inline(never)]
async fn plain_async(x: u64) -> Result<u64, u64> {
    plain(x)
}

#[retry]
#[inline(never)]
async fn annotated_async(x: u64) -> Result<u64, u64> {
    plain(x)
}

fn success_path(c: &mut Criterion) {
    let mut g = c.benchmark_group("success_path");
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
    g.bench_function("sync/plain", |b| b.iter(|| plain(black_box(7))));
    g.bench_function("sync/#[retry]", |b| b.iter(|| annotated(black_box(7))));
    let retry = Retry::new(Policy::new());
    g.bench_function("sync/Retry::call", |b| {
        b.iter(|| retry.call(|| plain(black_box(7))))
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    g.bench_function("async/plain", |b| {
        b.to_async(&rt).iter(|| plain_async(black_box(7)))
    });
    g.bench_function("async/#[retry]", |b| {
        b.to_async(&rt).iter(|| annotated_async(black_box(7)))
    });
    g.finish();
}

criterion_group!(benches, success_path);
criterion_main!(benches);
