use retry_jitter::retry;
use std::time::Duration;

async fn my_sleep(d: Duration) {
    let _ = d;
}

#[retry(sleep = my_sleep)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
