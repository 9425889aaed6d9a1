use retry_jitter::retry;

#[retry(base = "100ms", cap = "5s", base = "200ms")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
