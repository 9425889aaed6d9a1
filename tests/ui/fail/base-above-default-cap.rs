use retry_jitter::retry;

#[retry(base = "1m")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
