use retry_jitter::{retry, AdaptiveThrottle};
use std::time::Duration;

static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(60));

#[derive(Debug)]
struct ApiError;

// `ApiError` has no `From<Throttled>`: one error, at the `throttle` key.
#[retry(throttle = &THROTTLE)]
fn fetch() -> Result<u32, ApiError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
