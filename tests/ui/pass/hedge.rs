//! `hedge` in every form it takes, with the arguments hedged attempts share; the future is
//! `Send` (tokio::spawn takes it) whenever the body's is.
use retry_jitter::{retry, TimedOut};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, PartialEq)]
enum ApiError {
    TimedOut,
}

impl From<TimedOut> for ApiError {
    fn from(_: TimedOut) -> Self {
        ApiError::TimedOut
    }
}

struct Client {
    hedge_after: Duration,
}

impl Client {
    #[retry(hedge = self.hedge_after)]
    async fn get(&self, id: u64, tag: String) -> Result<(u64, String), ApiError> {
        Ok((id, tag))
    }

    #[retry(hedge = "p99", timeout = "1s", max_elapsed = "5s", on = |_e| true)]
    async fn read(&self, (a, b): (u32, u32)) -> Result<u32, ApiError> {
        Ok(a + b)
    }
}

#[retry(hedge = "50ms", attempts = 2)]
async fn by_value<T: Clone + Send + Sync + 'static>(value: T, mut count: u32) -> Result<T, ApiError> {
    count += 1;
    let _ = count;
    Ok(value)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let c = Client { hedge_after: Duration::from_millis(20) };
    assert_eq!(c.get(7, "t".into()).await, Ok((7, "t".to_string())));
    assert_eq!(tokio::spawn(by_value(String::from("v"), 0)).await.unwrap(), Ok("v".to_string()));
    let c = Arc::new(Client { hedge_after: Duration::ZERO });
    assert_eq!(tokio::spawn(async move { c.read((1, 2)).await }).await.unwrap(), Ok(3));
}
