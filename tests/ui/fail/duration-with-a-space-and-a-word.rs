use retry_jitter::retry;

#[retry(max_elapsed = "10 seconds")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
