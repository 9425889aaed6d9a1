use retry_jitter::retry;

#[retry(jitter = random)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
