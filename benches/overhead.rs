//! The success path costs nothing: an annotated function that succeeds at once against the
//! identical hand-written function, sync and async. Target: ratio ≤ 1.05.
//!
//! Rows come in pairs: a body of one multiply (so the loop's own cost shows, down to the
//! instruction), a body that parses a short number (a few ns of real work), and for async a
//! body that awaits (as async fns worth retrying do: their I/O).
//!
//! The functions are in `support/pairs.rs`, shared with the instruction counts of
//! `scripts/instructions.sh`. The `stack slot` rows are the sync attribute's worst case: a
//! leaf body that keeps a value on the stack (see there).
//!
//! The headline rows take their argument by reference, as DESIGN.md's guarantee reads: a
//! by-value argument is cloned for each attempt, the first included, and must outlive the first
//! attempt for the retries; the `by value` rows show what that costs.
//!
//! `cargo bench --bench overhead`, or `bash scripts/overhead.sh` for the table of ratios.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use retry_jitter::{Policy, Retry};

#[path = "support/pairs.rs"]
mod pairs;
use pairs::*;

fn success_path(c: &mut Criterion) {
    let mut g = c.benchmark_group("success_path");
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
    let x = 7u64;
    g.bench_function("sync/plain", |b| b.iter(|| plain(black_box(&x))));
    g.bench_function("sync/#[retry]", |b| b.iter(|| annotated(black_box(&x))));
    g.bench_function("sync/#[retry] budget = none", |b| {
        b.iter(|| annotated_no_budget(black_box(&x)))
    });
    let retry = Retry::new(Policy::new());
    g.bench_function("sync/Retry::call", |b| {
        b.iter(|| retry.call(|| plain(black_box(&x))))
    });
    g.bench_function("sync/plain by value", |b| {
        b.iter(|| plain_by_value(black_box(7)))
    });
    g.bench_function("sync/#[retry] by value", |b| {
        b.iter(|| annotated_by_value(black_box(7)))
    });
    g.bench_function("sync/plain stack slot", |b| {
        b.iter(|| plain_on_stack(black_box(&x)))
    });
    g.bench_function("sync/#[retry] stack slot", |b| {
        b.iter(|| annotated_on_stack(black_box(&x)))
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let n = "1234567890123";
    g.bench_function("sync/plain parse", |b| b.iter(|| plain_parse(black_box(n))));
    g.bench_function("sync/plain parse (twin)", |b| {
        b.iter(|| plain_parse_twin(black_box(n)))
    });
    g.bench_function("sync/#[retry] parse", |b| {
        b.iter(|| annotated_parse(black_box(n)))
    });
    g.bench_function("async/plain", |b| {
        b.to_async(&rt).iter(|| plain_async(black_box(&x)))
    });
    g.bench_function("async/#[retry]", |b| {
        b.to_async(&rt).iter(|| annotated_async(black_box(&x)))
    });
    g.bench_function("async/#[retry] budget = none", |b| {
        b.to_async(&rt)
            .iter(|| annotated_async_no_budget(black_box(&x)))
    });
    g.bench_function("async/plain await", |b| {
        b.to_async(&rt).iter(|| plain_await(black_box(&x)))
    });
    g.bench_function("async/#[retry] await", |b| {
        b.to_async(&rt).iter(|| annotated_await(black_box(&x)))
    });
    g.bench_function("async/plain parse", |b| {
        b.to_async(&rt).iter(|| plain_parse_async(black_box(n)))
    });
    g.bench_function("async/#[retry] parse", |b| {
        b.to_async(&rt).iter(|| annotated_parse_async(black_box(n)))
    });
    g.bench_function("async/#[retry] parse, nested attempt", |b| {
        b.to_async(&rt).iter(|| nested_parse_async(black_box(n)))
    });
    // `timeout`: the same bodies failing with an error a timeout can make (`Failed`), plain,
    // under `#[retry]`, and under `#[retry(timeout = "1s")]`; then with a timer made eagerly
    // (`sleep = tokio::time::sleep`), which needs this runtime's time driver.
    g.bench_function("async/plain (timeout error)", |b| {
        b.to_async(&rt).iter(|| plain_async_failed(black_box(&x)))
    });
    g.bench_function("async/#[retry] (timeout error)", |b| {
        b.to_async(&rt)
            .iter(|| annotated_async_failed(black_box(&x)))
    });
    g.bench_function("async/#[retry(timeout)]", |b| {
        b.to_async(&rt).iter(|| timeout_async(black_box(&x)))
    });
    g.bench_function("async/#[retry(timeout)], timer made eagerly", |b| {
        b.to_async(&rt).iter(|| timeout_async_eager(black_box(&x)))
    });
    // Hedged, the attempt ready before the hedge delay: the hedging loop's own cost.
    g.bench_function("async/#[retry(hedge)]", |b| {
        b.to_async(&rt).iter(|| hedge_async(black_box(&x)))
    });
    g.bench_function("async/plain await (timeout error)", |b| {
        b.to_async(&rt).iter(|| plain_await_failed(black_box(&x)))
    });
    g.bench_function("async/#[retry] await (timeout error)", |b| {
        b.to_async(&rt)
            .iter(|| annotated_await_failed(black_box(&x)))
    });
    g.bench_function("async/#[retry(timeout)] await", |b| {
        b.to_async(&rt).iter(|| timeout_await(black_box(&x)))
    });
    g.finish();
}

criterion_group!(benches, success_path);
criterion_main!(benches);
