//! The binary `scripts/instructions.sh` runs under callgrind: `instructions FUNCTION N` calls
//! FUNCTION N times on its success path. FUNCTION is `plain`, `annotated`, `plain_async` or
//! `annotated_async` (polled once with a no-op waker: they never wait on success).

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use retry_jitter::retry;

#[inline(never)]
fn plain(x: &u64) -> Result<u64, u64> {
    let y = black_box(*x).wrapping_mul(31);
    if y == u64::MAX {
        Err(y)
    } else {
        Ok(y)
    }
}

#[retry]
#[inline(never)]
fn annotated(x: &u64) -> Result<u64, u64> {
    let y = black_box(*x).wrapping_mul(31);
    if y == u64::MAX {
        Err(y)
    } else {
        Ok(y)
    }
}

#[inline(never)]
async fn plain_async(x: &u64) -> Result<u64, u64> {
    plain(x)
}

#[retry]
#[inline(never)]
async fn annotated_async(x: &u64) -> Result<u64, u64> {
    plain(x)
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
    let x = 7u64;
    match which.as_str() {
        "plain" => repeat(n, || plain(black_box(&x))),
        "annotated" => repeat(n, || annotated(black_box(&x))),
        "plain_async" => repeat(n, || poll_once(plain_async(black_box(&x)))),
        "annotated_async" => repeat(n, || poll_once(annotated_async(black_box(&x)))),
        other => panic!("unknown function {other:?}"),
    }
}

fn repeat(n: u64, mut call: impl FnMut() -> Result<u64, u64>) {
    for _ in 0..n {
        let _ = black_box(call());
    }
}
