use retry_jitter::{retry, Policy};

const POLICY: Policy = Policy::new();

#[retry(policy = POLICY, attempts = 3)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
