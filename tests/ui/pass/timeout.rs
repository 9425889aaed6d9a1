//! `timeout` and `clock` in every form the attribute takes.
use retry_jitter::{retry, Policy, TimedOut};
use std::time::{Duration, Instant};

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
    limit: Duration,
    policy: Policy,
}

impl Client {
    #[retry(timeout = self.limit, policy = self.policy)]
    async fn get(&self, id: u64) -> Result<u64, ApiError> {
        Ok(id)
    }

    #[retry(timeout = "1s", max_elapsed = "10s", on = retry_jitter::transient)]
    async fn read(&mut self) -> std::io::Result<Vec<u8>> {
        Ok(Vec::new())
    }
}

async fn my_sleep(d: Duration) {
    tokio::time::sleep(d).await;
}

fn my_clock() -> Instant {
    tokio::time::Instant::now().into_std()
}

#[retry(timeout = Duration::from_millis(500), sleep = my_sleep, clock = my_clock)]
async fn on_my_runtime(s: String) -> Result<String, ApiError> {
    Ok(s)
}

// An `impl Trait` in the return type, and a body with a user macro (the nested attempt).
macro_rules! answer {
    () => {
        42
    };
}

#[retry(timeout = "100ms")]
async fn opaque() -> Result<impl std::fmt::Display, ApiError> {
    Ok(answer!())
}

fn is_send<T: Send>(_: T) {}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut c = Client { limit: Duration::from_secs(1), policy: Policy::new() };
    assert_eq!(c.get(7).await, Ok(7));
    assert!(c.read().await.is_ok());
    assert_eq!(on_my_runtime("x".into()).await, Ok("x".to_string()));
    assert_eq!(opaque().await.unwrap().to_string(), "42");
    is_send(on_my_runtime(String::new()));
    is_send(c.get(1));
}
