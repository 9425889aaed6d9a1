//! The binary `scripts/instructions.sh` runs under callgrind: `instructions FUNCTION N` calls
//! FUNCTION N times. FUNCTION is one of the pairs of `benches/support/pairs.rs` (the functions
//! criterion times in `benches/overhead.rs`), by name: `plain`, `annotated`, `plain_parse`,
//! `annotated_parse`, `plain_async`…, each on its success path; or one of the failure path's
//! functions of `benches/support/failing.rs` (the ones `benches/peers.rs` times), ours and
//! backon's: `fail4`, `fail4_backon`… (a call that fails 4 times with zero waits, then
//! succeeds; `fail4_backon_attr`, `fail4_backon_attr_async` under backon's `#[backon]`, whose
//! success path is `backon_annotated`, `backon_annotated_async`) and `draws`, `draws_backon`
//! (a fresh schedule and its first 4 waits); or a
//! budget's part of a first-try success alone: `budget_success` (`RetryBudget`),
//! `ratio_success` (`RatioBudget`'s `begin` and `succeeded_after(0)`), `throttle_success`
//! (`AdaptiveThrottle`'s `admit` and `answered(true)`), and `clock_read` (one
//! `Instant::now`, what they read). Async ones
//! are polled once with a no-op waker: on success, and with zero waits, they never wait.
//!
//! No tokio runtime is entered, except for `timeout_async_eager`, whose timer
//! (`tokio::time::sleep` itself) needs one when it is made: that the other `timeout` functions run
//! here at all shows that their timer is never made when the attempt is ready at once.
//!
//! Built with feature `metrics`, any FUNCTION with `_noop` after its name (`fail4_noop`) runs
//! with the facade's `NoopRecorder` installed as the global recorder: the events' path to a
//! recorder, which records nothing.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

#[path = "../benches/support/pairs.rs"]
mod pairs;
use pairs::*;

#[path = "../benches/support/failing.rs"]
mod failing;

// backon's attribute, `#[backon]` (backon-macros), on the same bodies: `backon_annotated`…
#[path = "../benches/support/backon_attr.rs"]
mod backon_attr;

// Built with feature `tower` (scripts/instructions.sh does): the layer's success path.
#[cfg(feature = "tower")]
#[path = "../benches/support/layers.rs"]
mod layers;

/// `n` requests through `svc`, each made ready, sent, and its future polled once.
#[cfg(feature = "tower")]
fn serve<R, S: tower::Service<R>>(n: u64, mut svc: S, request: impl Fn() -> R) {
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..n {
        assert!(svc.poll_ready(&mut cx).is_ready());
        let response = poll_once(svc.call(black_box(request())));
        black_box(response.is_ok());
    }
}

// The floor of any retry loop written in an `async fn` (issue 17's async bar): the body, then,
// after an error, one `.await` of a boxed timer. `floor_await` keeps no retry state at all (it
// retries forever); `floor_counter` keeps the smallest state there is, a count of the failures
// handed by value to an out-of-line step, with no destructor. What the plain function's future
// does not have and these do is one suspension point of their own: the state dispatch, the
// waker context kept for the timer's poll, the frame the out-of-line calls need. Rows
// `floor_await` and `floor_counter` of `scripts/instructions.sh`; the body is the pairs' `work`.

#[cold]
#[inline(never)]
fn next_wait() -> std::time::Duration {
    std::time::Duration::ZERO
}

#[cold]
#[inline(never)]
fn counted_wait(failures: u32) -> (u32, Option<std::time::Duration>) {
    match failures {
        3.. => (failures, None),
        n => (n + 1, Some(std::time::Duration::ZERO)),
    }
}

#[inline(never)]
async fn floor_await(x: &u64) -> Result<u64, u64> {
    loop {
        let out = work(*x);
        if out.is_ok() {
            return out;
        }
        Box::pin(tokio::time::sleep(next_wait())).await;
    }
}

#[inline(never)]
async fn floor_counter(x: &u64) -> Result<u64, u64> {
    let mut failures = 0;
    loop {
        let out = work(*x);
        if out.is_ok() {
            return out;
        }
        let (counted, wait) = counted_wait(failures);
        failures = counted;
        match wait {
            Some(wait) => Box::pin(tokio::time::sleep(wait)).await,
            None => return out,
        }
    }
}

#[inline(never)]
fn poll_once<F: Future>(f: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(f).poll(&mut cx) {
        Poll::Ready(out) => out,
        Poll::Pending => unreachable!("a success does not wait"),
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_default();
    let n: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    // `<row>_noop` (feature `metrics`): the row with the facade's `NoopRecorder` installed as
    // the global recorder, a recorder that records nothing.
    #[cfg(feature = "metrics")]
    let which = match which.strip_suffix("_noop") {
        Some(row) => {
            metrics::set_global_recorder(metrics::NoopRecorder).expect("the first recorder");
            row.to_owned()
        }
        None => which,
    };
    let x = 7u64;
    let s = "1234567890123";
    let flaky = std::sync::atomic::AtomicU32::new(0);
    let calls = |f: &dyn Fn() -> bool| {
        for _ in 0..n {
            black_box(f());
        }
    };
    match which.as_str() {
        "plain" => calls(&|| plain(black_box(&x)).is_ok()),
        "annotated" => calls(&|| annotated(black_box(&x)).is_ok()),
        "annotated_no_budget" => calls(&|| annotated_no_budget(black_box(&x)).is_ok()),
        "annotated_async_no_budget" => {
            calls(&|| poll_once(annotated_async_no_budget(black_box(&x))).is_ok());
        }
        "plain_by_value" => calls(&|| plain_by_value(black_box(x)).is_ok()),
        "annotated_by_value" => calls(&|| annotated_by_value(black_box(x)).is_ok()),
        "plain_on_stack" => calls(&|| plain_on_stack(black_box(&x)).is_ok()),
        "annotated_on_stack" => calls(&|| annotated_on_stack(black_box(&x)).is_ok()),
        "plain_parse" => calls(&|| plain_parse(black_box(s)).is_ok()),
        "annotated_parse" => calls(&|| annotated_parse(black_box(s)).is_ok()),
        "plain_parse_twin" => calls(&|| plain_parse_twin(black_box(s)).is_ok()),
        "plain_async" => calls(&|| poll_once(plain_async(black_box(&x))).is_ok()),
        "annotated_async" => calls(&|| poll_once(annotated_async(black_box(&x))).is_ok()),
        "plain_await" => calls(&|| poll_once(plain_await(black_box(&x))).is_ok()),
        "annotated_await" => calls(&|| poll_once(annotated_await(black_box(&x))).is_ok()),
        "plain_parse_async" => calls(&|| poll_once(plain_parse_async(black_box(s))).is_ok()),
        "annotated_parse_async" => {
            calls(&|| poll_once(annotated_parse_async(black_box(s))).is_ok());
        }
        "nested_parse_async" => calls(&|| poll_once(nested_parse_async(black_box(s))).is_ok()),
        "plain_async_failed" => calls(&|| poll_once(plain_async_failed(black_box(&x))).is_ok()),
        "annotated_async_failed" => {
            calls(&|| poll_once(annotated_async_failed(black_box(&x))).is_ok());
        }
        "timeout_async" => calls(&|| poll_once(timeout_async(black_box(&x))).is_ok()),
        "timeout_async_eager" => {
            // Entered, not run: the attempt is ready at once, the timer is never polled. Built
            // in the run of no calls too, so it cancels out.
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .expect("a tokio runtime");
            let _in = rt.enter();
            calls(&|| poll_once(timeout_async_eager(black_box(&x))).is_ok());
        }
        "floor_await" => calls(&|| poll_once(floor_await(black_box(&x))).is_ok()),
        "floor_counter" => calls(&|| poll_once(floor_counter(black_box(&x))).is_ok()),
        // backon's attribute on the one-multiply body, sync and async.
        "backon_annotated" => calls(&|| backon_attr::backon_annotated(black_box(&x)).is_ok()),
        "backon_annotated_async" => {
            calls(&|| poll_once(backon_attr::backon_annotated_async(black_box(&x))).is_ok());
        }
        "hedge_async" => calls(&|| poll_once(hedge_async(black_box(&x))).is_ok()),
        // The size of each async pair's future, in bytes (no call is made).
        "sizes" => {
            println!(
                "annotated_async_failed {}",
                size_of_val(&annotated_async_failed(&x))
            );
            println!("timeout_async {}", size_of_val(&timeout_async(&x)));
            println!("hedge_async {}", size_of_val(&hedge_async(&x)));
        }
        "plain_await_failed" => calls(&|| poll_once(plain_await_failed(black_box(&x))).is_ok()),
        "annotated_await_failed" => {
            calls(&|| poll_once(annotated_await_failed(black_box(&x))).is_ok());
        }
        "timeout_await" => calls(&|| poll_once(timeout_await(black_box(&x))).is_ok()),
        // The failure path: a call that fails 4 times with zero waits, then succeeds.
        "fail4" => calls(&|| failing::ours_flaky(black_box(&flaky)).is_ok()),
        "fail4_closure" => calls(&|| failing::closure_flaky(black_box(&flaky)).is_ok()),
        "fail4_backon" => calls(&|| failing::backon_flaky(black_box(&flaky)).is_ok()),
        "fail4_async" => {
            calls(&|| poll_once(failing::ours_flaky_async(black_box(&flaky))).is_ok());
        }
        "fail4_backon_async" => {
            calls(&|| poll_once(failing::backon_flaky_async(black_box(&flaky))).is_ok());
        }
        "fail4_backon_attr" => {
            calls(&|| backon_attr::backon_attr_flaky(black_box(&flaky)).is_ok());
        }
        "fail4_backon_attr_async" => {
            calls(&|| poll_once(backon_attr::backon_attr_flaky_async(black_box(&flaky))).is_ok());
        }
        // A fresh schedule and its first draws (one call: `failing::DRAWS` draws).
        "draws" => {
            let backoff = retry_jitter::Backoff::DEFAULT;
            calls(&|| {
                failing::ours_draws(black_box(&backoff));
                true
            });
        }
        "draws_backon" => {
            let builder = failing::backon_jittered();
            calls(&|| {
                failing::backon_draws(black_box(&builder));
                true
            });
        }
        // One request through a service answering `Ok` at once: plain, under tower's `Retry`
        // (a policy that keeps a copy and never retries), under our `RetryLayer`.
        #[cfg(feature = "tower")]
        "layer_plain" => serve(n, layers::layer_plain(), || 7u64),
        #[cfg(feature = "tower")]
        "layer_tower_retry" => serve(n, layers::layer_tower_retry(), || 7u64),
        #[cfg(feature = "tower")]
        "layer_ours" => serve(n, layers::layer_ours(), || 7u64),
        #[cfg(feature = "tower")]
        "layer_http_plain" => serve(n, layers::layer_http_plain(), layers::request),
        #[cfg(feature = "tower")]
        "layer_http_ours" => serve(n, layers::layer_http_ours(), layers::request),
        #[cfg(feature = "tower")]
        "layer_full_plain" => serve(n, layers::layer_full_plain(), layers::request_full),
        #[cfg(feature = "tower")]
        "layer_full_tower_retry" => {
            serve(n, layers::layer_full_tower_retry(), layers::request_full)
        }
        #[cfg(feature = "tower")]
        "layer_full_ours" => serve(n, layers::layer_full_ours(), layers::request_full),
        // A budget's part of a first-try success, on its own: what the retry loop calls.
        "budget_success" => {
            static BUDGET: retry_jitter::RetryBudget = retry_jitter::RetryBudget::new(500);
            calls(&|| {
                black_box(&BUDGET).succeeded_after(0);
                true
            });
        }
        "ratio_success" => {
            static BUDGET: retry_jitter::RatioBudget =
                retry_jitter::RatioBudget::new(0.2, 10, std::time::Duration::from_secs(10));
            calls(&|| {
                let b = black_box(&BUDGET);
                b.begin(retry_jitter::sleep::now);
                b.succeeded_after(0);
                true
            });
        }
        // The throttle's part of an attempt the service answers: asked, then told.
        "throttle_success" => {
            static THROTTLE: retry_jitter::AdaptiveThrottle =
                retry_jitter::AdaptiveThrottle::new(2.0, std::time::Duration::from_secs(60));
            calls(&|| {
                let t = black_box(&THROTTLE);
                let admitted = t.admit(retry_jitter::sleep::now);
                t.answered(retry_jitter::sleep::now, true);
                admitted
            });
        }
        // One reading of the system's clock, what the two rows above read once or twice.
        "clock_read" => calls(&|| {
            black_box(retry_jitter::sleep::now());
            true
        }),
        other => panic!("unknown function {other:?}"),
    }
}
