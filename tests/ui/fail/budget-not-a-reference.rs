use retry_jitter::{retry, RetryBudget};

#[retry(budget = RetryBudget::new(10))]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
