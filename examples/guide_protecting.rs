use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use retry_jitter::{retry, CircuitBreaker, GiveUp, RetryBudget};

// Shared by every call in the process, usually `static`s.
// A token bucket in the AWS SDKs' shape (theirs holds 500): a retry takes 5 tokens, a
// first-try success gives 1 back; empty, errors are returned without retrying.
static BUDGET: RetryBudget = RetryBudget::new(100);
// Opens when half of the last 10 s's calls (20 at least) failed; after 500 ms a probe goes.
static BREAKER: CircuitBreaker =
    CircuitBreaker::new(0.5, 20, Duration::from_secs(10), Duration::from_millis(500));

#[retry(
    attempts = 4,
    base = "10ms",
    cap = "100ms",
    on = retry_jitter::transient,
    budget = &BUDGET,
    breaker = &BREAKER,
    give_up = count_give_up
)]
async fn call_service() -> io::Result<&'static str> {
    service::call()
}

static GIVE_UPS: Mutex<BTreeMap<&'static str, u32>> = Mutex::new(BTreeMap::new());

fn count_give_up(_: &io::Error, g: &GiveUp) {
    *GIVE_UPS
        .lock()
        .unwrap()
        .entry(g.reason.as_str())
        .or_default() += 1;
}

async fn many_calls(n: u32) -> u32 {
    let mut ok = 0;
    for _ in 0..n {
        ok += u32::from(call_service().await.is_ok());
    }
    ok
}

#[tokio::main]
async fn main() {
    service::DOWN.store(true, Ordering::SeqCst);
    let ok = many_calls(200).await;
    println!(
        "the service down: 200 calls, {ok} answered, {} attempts reached it (up to 800 without a budget or a breaker)",
        service::ATTEMPTS.swap(0, Ordering::SeqCst)
    );
    println!("  how they ended: {:?}", GIVE_UPS.lock().unwrap());

    service::DOWN.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(600)).await; // the breaker's break, then a probe
    let ok = many_calls(200).await;
    println!(
        "the service back: 200 calls, {ok} answered, {} attempts reached it",
        service::ATTEMPTS.load(Ordering::SeqCst)
    );
}

/// A stand-in for a service that is down (every attempt refused) or up.
mod service {
    use super::*;

    pub static DOWN: AtomicBool = AtomicBool::new(false);
    pub static ATTEMPTS: AtomicU32 = AtomicU32::new(0);

    pub fn call() -> io::Result<&'static str> {
        ATTEMPTS.fetch_add(1, Ordering::SeqCst);
        if DOWN.load(Ordering::SeqCst) {
            Err(io::ErrorKind::ConnectionRefused.into())
        } else {
            Ok("ok")
        }
    }
}
