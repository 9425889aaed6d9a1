use retry_jitter::retry;

#[retry(attempts = 5_000_000_000)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
