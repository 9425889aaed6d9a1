use retry_jitter::retry;

#[retry(max_elapsed = "1.5s")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
