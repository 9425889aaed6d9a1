use retry_jitter::{retry, Decision, Jitter, Policy, RetryEvent};
use std::time::Duration;

const POLICY: Policy = Policy::new().with_attempts(2).with_base(Duration::ZERO);

struct Service {
    policy: Policy,
}

fn classify(e: &u16) -> Decision {
    if *e == 503 { Decision::Retry } else { Decision::Stop }
}

fn log(e: &u16, ev: &RetryEvent) {
    eprintln!("{} failed with {e}, retry in {:?}", ev.function, ev.delay);
}

async fn my_sleep(d: Duration) {
    tokio::time::sleep(d).await;
}

impl Service {
    #[retry(policy = self.policy, on = classify, notify = log)]
    fn call(&self) -> Result<(), u16> {
        Err(503)
    }
}

#[retry(attempts = 1 + 1, base = Duration::from_millis(1), cap = "1s", max_elapsed = "10s", jitter = equal)]
fn with_exprs() -> Result<(), ()> {
    Ok(())
}

#[retry(policy = &POLICY, sleep = my_sleep, crate = "::retry_jitter")]
async fn custom_sleep() -> Result<(), ()> {
    Ok(())
}

#[retry(jitter = decorrelated, base = "1ms", cap = "2ms")]
fn decorrelated() -> Result<(), ()> {
    Ok(())
}

#[retry(jitter = none, base = "1ms")]
fn none() -> Result<(), ()> {
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let s = Service { policy: Policy::new().with_attempts(2).with_base(Duration::ZERO).with_jitter(Jitter::Full) };
    assert_eq!(s.call(), Err(503));
    assert_eq!(with_exprs(), Ok(()));
    assert_eq!(custom_sleep().await, Ok(()));
    assert_eq!(decorrelated(), Ok(()));
    assert_eq!(none(), Ok(()));
}
