use retry_jitter::{retry, CircuitBreaker};
use std::time::Duration;

static BREAKER: CircuitBreaker =
    CircuitBreaker::new(0.5, 20, Duration::from_secs(10), Duration::from_secs(5));

// `String` has no `From<CircuitOpen>`, and is not ours to give one: one error, at the key.
#[retry(breaker = &BREAKER)]
async fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
