//! `cargo run --example quickstart`: a flaky call retried with full jitter, each retry printed.

use std::sync::atomic::{AtomicU32, Ordering};

use retry_jitter::{retry, RetryEvent};

#[derive(Debug)]
enum ApiError {
    Unavailable(u32),
    NotFound,
}

fn is_transient(e: &ApiError) -> bool {
    matches!(e, ApiError::Unavailable(_))
}

fn log_retry(e: &ApiError, ev: &RetryEvent) {
    let ApiError::Unavailable(status) = e else {
        return;
    };
    println!(
        "  {}: call {}/{} failed with {status}; retrying in {:?}",
        ev.function, ev.attempt, ev.attempts, ev.delay
    );
}

static CALLS: AtomicU32 = AtomicU32::new(0);

/// Fails with 503 three times, then answers.
#[retry(base = "200ms", cap = "30s", attempts = 5, on = is_transient, notify = log_retry)]
async fn fetch_user(id: u64) -> Result<String, ApiError> {
    let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    if id == 0 {
        return Err(ApiError::NotFound);
    }
    if n <= 3 {
        return Err(ApiError::Unavailable(503));
    }
    Ok(format!("user #{id}"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let start = std::time::Instant::now();
    println!("fetch_user(42), a service that is down for its first three calls:");
    let user = fetch_user(42).await;
    println!("  -> {user:?} after {:?}\n", start.elapsed());

    CALLS.store(0, Ordering::SeqCst);
    println!("fetch_user(0), an error that waiting cannot fix:");
    let missing = fetch_user(0).await;
    println!(
        "  -> {missing:?} after {} call (a 4xx is never retried)",
        CALLS.load(Ordering::SeqCst)
    );
}
