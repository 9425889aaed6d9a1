use retry_jitter::{Policy, Retry};
use std::time::Duration;

fn main() {
    let retry = Retry::new(Policy::default()).timeout(Duration::from_secs(1));
    let _ = retry.call(|| std::fs::read_to_string("/etc/hosts"));
}
