use retry_jitter::retry;

#[retry(base = "200 millis")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
