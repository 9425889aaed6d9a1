use retry_jitter::retry;

#[retry(cancel = 5)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
